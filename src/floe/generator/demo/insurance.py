"""Demo content of the insurance policy feed (seed 'Handle UPSERT data operations').

The layout (floe.feeds.kinds.flagged_csv) puts day 0 in ``full/`` and later days in ``cdc/``:

- `insurance/full/full-load-<yyyymmdd>.csv` (day 0, header row): the seed's sample of 25
  policies. Six rows survive in the seed verbatim; the other 19 are synthesized here,
  including 100462 and 100475, which the seed's CDC file changes.
- `insurance/cdc/cdc-load-<yyyymmdd>.csv` (no header, first column U or I): day 1 is
  the seed's `cdc-load.csv` with its five changes (100462 expiry to 2024-12-31, 100463
  insured value to 1,000,000, 100475 now in a flood zone, 110001 and 110002 new; the
  seed kept two of the five rows, the other three are synthesized). Later days carry
  a few random updates and inserts, never touching the seed's five policies, so the
  mart shows the seed's result whatever the number of days.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from floe.feeds.declarations import Feed
    from floe.generator.base import GenerateOptions


@dataclass(frozen=True)
class Policy:
    policy_id: int
    expiry_date: date
    location_name: str
    state_code: str
    region_name: str
    insured_value: int
    business_type: str
    earthquake_coverage: str
    flood_coverage: str

    def row(self) -> list[str]:
        return [
            str(self.policy_id),
            self.expiry_date.isoformat(),
            self.location_name,
            self.state_code,
            self.region_name,
            str(self.insured_value),
            self.business_type,
            self.earthquake_coverage,
            self.flood_coverage,
        ]


def _p(line: str) -> Policy:
    f = line.split(",")
    return Policy(
        int(f[0]), date.fromisoformat(f[1]), f[2], f[3], f[4], int(f[5]), f[6], f[7], f[8]
    )


# The six full-load rows the seed kept, verbatim.
SEED_FULL = [
    _p("200358,2023-01-05,Urban,WI,Midwest,928300,Office Bldg,N,N"),
    _p("100463,2023-03-27,Urban,NY,East,15480000,Office Bldg,Y,Y"),
    _p("100617,2023-03-27,Urban,VT,Northeast,8861500,Office Bldg,N,N"),
    _p("100580,2023-03-30,Urban,NH,Northeast,97920,Office Bldg,Y,Y"),
    _p("100503,2023-03-31,Urban,NJ,East,1761960,Office Bldg,N,N"),
    _p("100611,2023-04-25,Urban,NJ,East,1595500,Office Bldg,Y,Y"),
]
# Synthesized so the seed's CDC changes have something to change.
SYNTH_FULL = [
    _p("100462,2023-02-14,Urban,NY,East,2450000,Retail,N,N"),
    _p("100475,2023-02-20,Rural,LA,South,310500,Farming,N,N"),
]
SEED_CDC_KEYS = (100462, 100463, 100475, 110001, 110002)

STATES = [
    ("NY", "East"),
    ("NJ", "East"),
    ("VT", "Northeast"),
    ("NH", "Northeast"),
    ("WI", "Midwest"),
    ("IL", "Midwest"),
    ("TX", "South"),
    ("CA", "West"),
]
BUSINESS = ["Office Bldg", "Retail", "Farming", "Apartment", "Hospitality", "Manufacturing"]


def _synth(rng: random.Random, policy_id: int) -> Policy:
    state, region = rng.choice(STATES)
    return Policy(
        policy_id=policy_id,
        expiry_date=date(2023, 1, 1) + timedelta(days=rng.randrange(365)),
        location_name=rng.choice(["Urban", "Rural"]),
        state_code=state,
        region_name=region,
        insured_value=rng.randrange(50, 20000) * 1000,
        business_type=rng.choice(BUSINESS),
        earthquake_coverage=rng.choice("YN"),
        flood_coverage=rng.choice("YN"),
    )


def _seed_cdc(live: dict[int, Policy]) -> list[tuple[str, Policy]]:
    return [
        ("U", replace(live[100462], expiry_date=date(2024, 12, 31))),
        # the seed's two surviving rows, verbatim
        ("U", _p("100463,2023-03-27,Urban,NY,East,1000000,Office Bldg,Y,Y")),
        ("U", replace(live[100475], flood_coverage="Y")),
        ("I", _p("110001,2024-03-31,Urban,CA,WEST,210000,Office Bldg,N,N")),
        ("I", _p("110002,2024-04-30,Rural,TX,South,485000,Farming,N,Y")),
    ]


class _Policies:
    def __init__(self, feed: Feed, opts: GenerateOptions) -> None:
        self.feed, self.opts = feed, opts
        self.state: dict[int, Policy] = {}

    def days(self) -> Iterator[tuple[date, bool, list[list[str]]]]:
        """(load date, is the full load, CSV rows: op flag first on change days)."""
        opts = self.opts
        rng = opts.rng("insurance")
        live: dict[int, Policy] = {}
        self.state = live
        next_id = 110003
        for day_index, load_date in enumerate(opts.load_dates()):
            if day_index == 0:
                taken = {p.policy_id for p in SEED_FULL + SYNTH_FULL}
                extra: list[Policy] = []
                while len(taken) < 25:
                    pid = 100400 + rng.randrange(400)
                    if pid not in taken and pid not in SEED_CDC_KEYS:
                        taken.add(pid)
                        extra.append(_synth(rng, pid))
                policies = sorted(SEED_FULL + SYNTH_FULL + extra, key=lambda p: p.expiry_date)
                live.update({p.policy_id: p for p in policies})
                yield load_date, True, [p.row() for p in policies]
                continue
            if day_index == 1:
                changes = _seed_cdc(live)
            else:
                changes = []
                candidates = sorted(k for k in live if k not in SEED_CDC_KEYS)
                for pid in rng.sample(candidates, min(3, len(candidates))):
                    changes.append(
                        ("U", replace(live[pid], insured_value=live[pid].insured_value + 1000))
                    )
                # the same policy twice in one file: the later line wins
                pid = candidates[day_index % len(candidates)]
                changes.append(("U", replace(live[pid], business_type="Retail")))
                changes.append(("U", replace(live[pid], business_type="Hospitality")))
                changes.append(("I", _synth(rng, next_id)))
                next_id += 1
            for _, policy in changes:
                live[policy.policy_id] = policy
            yield load_date, False, [[op, *p.row()] for op, p in changes]


def policies(feed: Feed, opts: GenerateOptions) -> _Policies:
    """The policy feed's days."""
    return _Policies(feed, opts)


def expected_state(feed: Feed, opts: GenerateOptions) -> dict[int, Policy]:
    """The policies the mart must hold after every generated day."""
    run = _Policies(feed, opts)
    for _ in run.days():
        pass
    return run.state
