"""Customer master/address loads (SPEC §3, seed 'SCD2 dim_customer').

Day 0 is a full extract. Later days are change-only loads (rec_source_status
I/U/D), except every fourth day, which is a full extract again (deletes by
absence). Along the way: attribute updates, new customers, deletes, one customer
deleted and back two days later, duplicate rows per key within a load (latest
row_audit_ts wins) and NULL attributes.
"""

from __future__ import annotations

import csv
import io
import random
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from floe.generator.base import GenerateOptions, WriteReport, manifest_bytes, write_landed

MASTER_COLUMNS = ["customer_id", "first_name", "last_name", "employer_name", "row_audit_ts"]
ADDRESS_COLUMNS = ["customer_id", "email_id", "city", "country", "row_audit_ts"]

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


def _master_row(c: Customer, ts: datetime) -> list[str]:
    return [
        str(c.customer_id),
        *(_s(v) for v in (c.first_name, c.last_name, c.employer_name)),
        _ts(ts),
    ]


def _address_row(c: Customer, ts: datetime) -> list[str]:
    return [str(c.customer_id), *(_s(v) for v in (c.email_id, c.city, c.country)), _ts(ts)]


def _s(value: str | None) -> str:
    return "" if value is None else value


def _ts(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%d %H:%M:%S")


def _csv(header: list[str], rows: list[list[str]]) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode()


def is_full_load(day_index: int) -> bool:
    return day_index == 0 or day_index % 4 == 0


def generate(opts: GenerateOptions) -> WriteReport:
    rng = opts.rng("customers")
    report = WriteReport([], [])
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
        _write_day(opts, report, load_date, day_index, live, events, base_ts)
    return report


def _write_day(
    opts: GenerateOptions,
    report: WriteReport,
    load_date: date,
    day_index: int,
    live: dict[int, Customer],
    events: list[tuple[int, str, Customer, datetime]],
    base_ts: datetime,
) -> None:
    root = opts.landing / "customers"
    part = f"load_date={load_date.isoformat()}"
    if is_full_load(day_index):
        kind = "full"
        latest = {cid: ts for cid, _, _, ts in events}
        master = [_master_row(c, latest.get(cid, base_ts)) for cid, c in sorted(live.items())]
        address = [
            _address_row(c, latest.get(cid, base_ts))
            for cid, c in sorted(live.items())
            if c.has_address
        ]
        m_header, a_header = MASTER_COLUMNS, ADDRESS_COLUMNS
    else:
        kind = "changes"
        master = [[*_master_row(c, t), st] for _, st, c, t in events]
        address = [
            [*_address_row(c, t), st] for _, st, c, t in events if c.has_address or st == "D"
        ]
        m_header = [*MASTER_COLUMNS, "rec_source_status"]
        a_header = [*ADDRESS_COLUMNS, "rec_source_status"]
    for table, header, rows in (
        ("customer_master", m_header, master),
        ("customer_address", a_header, address),
    ):
        folder = root / table / part
        write_landed(folder / "part-00000.csv", _csv(header, rows), report)
        # The manifest last: it declares a complete load.
        write_landed(folder / "_manifest.json", manifest_bytes(kind), report)
