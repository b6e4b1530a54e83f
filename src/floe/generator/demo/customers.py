"""Demo content of the customer master/address feeds (seed 'SCD2 dim_customer').

Both feeds come from one simulated customer base (``master`` and ``address`` give each
feed its table). Day 0 is a full extract. Later days are change-only loads (rec_source_status
I/U/D), except every fourth day, which is a full extract again (deletes by
absence). Along the way: attribute updates, new customers, deletes, one customer
deleted and back two days later, duplicate rows per key within a load (latest
row_audit_ts wins) and NULL attributes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from floe.feeds.kinds.csv_loads import Load

if TYPE_CHECKING:
    from floe.feeds.declarations import Feed
    from floe.generator.base import GenerateOptions

STATUS = "rec_source_status"

FIRST = ["Ava", "Ben", "Chloe", "Dan", "Ema", "Finn", "Gia", "Hugo", "Ines", "Jon", "Kai", "Lea"]
LAST = ["Ng", "Ortiz", "Patel", "Quinn", "Rossi", "Silva", "Tan", "Ueda", "Vega", "Wong"]
EMPLOYERS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", None]
CITIES = [
    ("Seattle", "USA"),
    ("Austin", "USA"),
    ("Toronto", "Canada"),
    ("Lyon", "France"),
    ("Pune", "India"),
    ("Osaka", "Japan"),
]


@dataclass(frozen=True)
class Customer:
    customer_id: int
    first_name: str | None
    last_name: str | None
    employer_name: str | None
    email_id: str | None
    city: str | None
    country: str | None
    has_address: bool = True


def _new_customer(rng: random.Random, customer_id: int) -> Customer:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    city, country = rng.choice(CITIES)
    return Customer(
        customer_id=customer_id,
        first_name=first,
        last_name=last if rng.random() > 0.02 else None,
        employer_name=rng.choice(EMPLOYERS),
        email_id=f"{first}.{last}.{customer_id}@example.com".lower(),
        city=city,
        country=country,
        has_address=rng.random() > 0.03,
    )


def _change(rng: random.Random, c: Customer) -> Customer:
    what = rng.randrange(4)
    if what == 0:
        return replace(c, employer_name=rng.choice(EMPLOYERS))
    if what == 1:
        city, country = rng.choice(CITIES)
        return replace(c, city=city, country=country, has_address=True)
    if what == 2:
        return replace(c, email_id=f"{c.customer_id}.{rng.randrange(10**6)}@example.org")
    return replace(c, last_name=rng.choice(LAST))


def _master_row(c: Customer, ts: datetime) -> dict[str, str]:
    return {
        "customer_id": str(c.customer_id),
        "first_name": _s(c.first_name),
        "last_name": _s(c.last_name),
        "employer_name": _s(c.employer_name),
        "row_audit_ts": _ts(ts),
    }


def _address_row(c: Customer, ts: datetime) -> dict[str, str]:
    return {
        "customer_id": str(c.customer_id),
        "email_id": _s(c.email_id),
        "city": _s(c.city),
        "country": _s(c.country),
        "row_audit_ts": _ts(ts),
    }


def _s(value: str | None) -> str:
    return "" if value is None else value


def _ts(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%d %H:%M:%S")


def is_full_load(day_index: int) -> bool:
    return day_index == 0 or day_index % 4 == 0


def master(feed: Feed, opts: GenerateOptions) -> list[Load]:
    """The customer_master loads."""
    return _simulate(opts)["master"]


def address(feed: Feed, opts: GenerateOptions) -> list[Load]:
    """The customer_address loads (customers without an address have no row)."""
    return _simulate(opts)["address"]


def _simulate(opts: GenerateOptions) -> dict[str, list[Load]]:
    rng = opts.rng("customers")
    loads: dict[str, list[Load]] = {"master": [], "address": []}
    live: dict[int, Customer] = {}
    deleted: dict[int, Customer] = {}
    returning: dict[int, int] = {}  # day index -> customer_id to bring back
    next_id = 1001
    for day_index, load_date in enumerate(opts.load_dates()):
        base_ts = datetime.combine(load_date, datetime.min.time()) + timedelta(hours=1)
        # (customer_id, status, customer, row_audit_ts) in arrival order
        events: list[tuple[int, str, Customer, datetime]] = []

        def ts(seconds: int, _base: datetime = base_ts) -> datetime:
            return _base + timedelta(seconds=seconds)

        if day_index == 0:
            for _ in range(opts.scale):
                live[next_id] = _new_customer(rng, next_id)
                next_id += 1
        else:
            n_changes = max(1, opts.scale // 20)
            n_inserts = max(1, opts.scale // 100)
            n_deletes = max(1, opts.scale // 200)
            ids = sorted(live)
            for i, cid in enumerate(rng.sample(ids, min(n_changes, len(ids)))):
                live[cid] = _change(rng, live[cid])
                events.append((cid, "U", live[cid], ts(rng.randrange(3600))))
                if i == 0 or rng.random() < 0.1:  # changed again the same day: latest wins
                    live[cid] = _change(rng, live[cid])
                    events.append((cid, "U", live[cid], ts(3600 + rng.randrange(3600))))
            for _ in range(n_inserts):
                live[next_id] = _new_customer(rng, next_id)
                events.append((next_id, "I", live[next_id], ts(rng.randrange(7200))))
                next_id += 1
            changed = {e[0] for e in events}
            candidates = [cid for cid in sorted(live) if cid not in changed]
            for cid in rng.sample(candidates, min(n_deletes, len(candidates))):
                deleted[cid] = live.pop(cid)
                events.append((cid, "D", deleted[cid], ts(7200 + rng.randrange(3600))))
                returning.setdefault(day_index + 2, cid)
            back = returning.pop(day_index, None)
            if back is not None and back in deleted:
                live[back] = _change(rng, deleted.pop(back))
                events.append((back, "I", live[back], ts(9000)))
        for table, load in _day(load_date, day_index, live, events, base_ts).items():
            loads[table].append(load)
    return loads


def _day(
    load_date: date,
    day_index: int,
    live: dict[int, Customer],
    events: list[tuple[int, str, Customer, datetime]],
    base_ts: datetime,
) -> dict[str, Load]:
    if is_full_load(day_index):
        kind = "full"
        latest = {cid: ts for cid, _, _, ts in events}
        master = [_master_row(c, latest.get(cid, base_ts)) for cid, c in sorted(live.items())]
        address = [
            _address_row(c, latest.get(cid, base_ts))
            for cid, c in sorted(live.items())
            if c.has_address
        ]
    else:
        kind = "changes"
        master = [{**_master_row(c, t), STATUS: st} for _, st, c, t in events]
        address = [
            {**_address_row(c, t), STATUS: st}
            for _, st, c, t in events
            if c.has_address or st == "D"
        ]
    return {"master": Load(load_date, kind, master), "address": Load(load_date, kind, address)}
