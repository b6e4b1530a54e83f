"""Demo content of the DMS sports feeds (seed 'relational replication': dms_sample).

Day 0 lands a full load; each later day one CDC file. The CDC files carry the cases a
correct merge must get right (and the seed's job gets wrong): several changes to one
key in one file, two changes of one key with the same ``last_update_time`` (the later
row in the file wins), deletes of keys that never existed, updates of keys never
inserted (an upsert), and from day 2 on a new column (``sporting_event.attendance``)
the earlier files do not have. Columns and their types come from each feed's YAML
declaration; the layout (file names, op column first) from floe.feeds.kinds.dms.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING

from floe.feeds.declarations import FeedError
from floe.feeds.kinds.dms import op_column, timestamp_column
from floe.generator.synth import DmsDay

if TYPE_CHECKING:
    from floe.feeds.declarations import Feed
    from floe.generator.base import GenerateOptions

SPORTS = ["baseball", "football"]
TEAMS = ["Rams", "Bears", "Jets", "Mets", "Cubs", "Sox", "Giants", "Colts", "Twins", "Reds"]
STADIUMS = ["Field", "Park", "Dome", "Arena", "Stadium", "Grounds"]
SURFACES = ["Grass", "FieldTurf", "AstroTurf"]
ROOFS = ["Open", "Dome", "Retractable"]
POSITIONS = ["P", "C", "1B", "2B", "3B", "SS", "LF", "CF", "RF", "DH"]
HANDS = ["R", "L", "B"]


class _Taken(set[tuple]):
    """Every key a table ever had, and the largest first key part among them (kept on
    ``add``), so a new key costs O(1), not a scan of every key so far."""

    def __init__(self) -> None:
        super().__init__()
        self.top = 0

    def add(self, key: tuple) -> None:
        super().add(key)
        if isinstance(key[0], int):  # the default next key counts up integer keys
            self.top = max(self.top, key[0])


@dataclass(frozen=True)
class SportsTable:
    """How one replicated table's rows are made and changed, and how its keys grow."""

    make: Callable[[random.Random, tuple], dict]
    change: Callable[[random.Random, dict, date], dict]
    rows: Callable[[int], int]  # rows of the full load at a scale
    initial_keys: Callable[[int], list[tuple]] = field(
        default=lambda n: [(i,) for i in range(1, n + 1)]
    )
    next_key: Callable[[_Taken, random.Random], tuple] = field(
        default=lambda taken, rng: (taken.top + 1,)
    )
    # column -> (first day index it is landed, value maker): the source table evolved
    added: dict[str, tuple[int, Callable[[random.Random], object]]] = field(default_factory=dict)

    def __call__(self, feed: Feed, opts: GenerateOptions) -> _Replica:
        return _Replica(self, feed, opts)


def _sporting_event(rng: random.Random, key: tuple) -> dict:
    start = datetime(2022, 7, 1, 18) + timedelta(days=rng.randrange(120), hours=rng.randrange(4))
    return {
        "id": key[0],
        "sport_type_name": rng.choice(SPORTS),
        "home_team_id": rng.randrange(1, 63),
        "away_team_id": rng.randrange(1, 63),
        "location_id": rng.randrange(1, 64),
        "start_date_time": start,
        "start_date": start.date(),
        "sold_out": rng.choice([0, 0, 1]),
    }


def _sporting_event_change(rng: random.Random, row: dict, day: date) -> dict:
    if rng.random() < 0.5:
        # the seed's change: `set start_date = current_date where id=11 and sold_out=0`
        return {**row, "start_date": day}
    return {**row, "sold_out": 1 - row["sold_out"]}


def _mlb(rng: random.Random, key: tuple) -> dict:
    return {
        "mlb_id": key[0],
        "season": key[1],
        "mlb_name": f"Player {key[0]}",
        "mlb_pos": rng.choice(POSITIONS),
        "mlb_team": rng.choice(TEAMS),
        "bats": rng.choice(HANDS),
        "throws": rng.choice(HANDS[:2]),
        "birth_year": 1980 + rng.randrange(20),
    }


def _mlb_change(rng: random.Random, row: dict, day: date) -> dict:
    if rng.random() < 0.5:
        return {**row, "bats": rng.choice(HANDS)}
    return {**row, "mlb_team": rng.choice(TEAMS)}


def _nfl(rng: random.Random, key: tuple) -> dict:
    return {
        "sport_location_id": key[0],
        "stadium": f"{rng.choice(TEAMS)} {rng.choice(STADIUMS)}",
        "seating_capacity": 40000 + rng.randrange(50000),
        "location": f"City {key[0]}",
        "surface": rng.choice(SURFACES),
        "roof": rng.choice(ROOFS),
        "team": rng.choice(TEAMS),
        "opened": 1920 + rng.randrange(100),
    }


def _nfl_change(rng: random.Random, row: dict, day: date) -> dict:
    return {**row, "seating_capacity": row["seating_capacity"] + rng.randrange(-500, 500)}


def _mlb_keys(n: int) -> list[tuple]:
    # composite key: a few seasons per player; 506560 is the seed's player
    players = [506560 + i for i in range(max(1, n // 3))]
    return [(p, s) for p in players for s in (2020, 2021, 2022)][:n]


def _mlb_next_key(taken: set[tuple], rng: random.Random) -> tuple:
    while True:
        key = (600000 + rng.randrange(10**5), 2022)
        if key not in taken:
            return key


sporting_event = SportsTable(
    _sporting_event,
    _sporting_event_change,
    rows=lambda scale: max(12, scale // 2),
    added={"attendance": (2, lambda rng: 20000 + rng.randrange(40000))},
)
mlb_data = SportsTable(
    _mlb,
    _mlb_change,
    rows=lambda scale: max(12, scale // 3),
    initial_keys=_mlb_keys,
    next_key=_mlb_next_key,
)
nfl_stadium_data = SportsTable(_nfl, _nfl_change, rows=lambda scale: 40)


class _Replica:
    """One table's landed history: the full load, then a CDC file a day."""

    def __init__(self, table: SportsTable, feed: Feed, opts: GenerateOptions) -> None:
        self.table, self.feed, self.opts = table, feed, opts
        self.state: dict[tuple, dict] = {}

    def days(self) -> Iterator[DmsDay]:
        spec, feed = self.table, self.feed
        op, ts = op_column(feed), timestamp_column(feed)
        rng = self.opts.rng(f"dms:{feed.name}")
        live: dict[tuple, dict] = {}
        ever = _Taken()
        self.state = live
        declared = feed.column_types()
        for day_index, load_date in enumerate(self.opts.load_dates()):
            base = datetime.combine(load_date, time(1, 0))
            columns = [(n, t) for n, t in declared if spec.added.get(n, (0, None))[0] <= day_index]
            if day_index == 0:
                for key in spec.initial_keys(spec.rows(self.opts.scale)):
                    live[key] = spec.make(rng, key)
                    ever.add(key)
                rows = [{**row, ts: base} for _, row in sorted(live.items())]
                yield DmsDay(True, load_date, base, columns, rows)
                continue
            events = _day_events(spec, rng, live, ever, load_date, base, columns, op, ts)
            yield DmsDay(False, load_date, base, columns, events)


def expected_state(feed: Feed, opts: GenerateOptions) -> dict[tuple, dict]:
    """The rows the replicated table must hold after all days: the generator's truth.

    ``feed`` names its content here (``meta.floe.demo: sports.<attribute>``).
    """
    module, _, attribute = str(feed.option("demo") or "").partition(".")
    maker = globals().get(attribute) if module == "sports" else None
    if maker is None:
        raise FeedError(f"feed {feed.id}: its demo content is not in floe.generator.demo.sports")
    replica = maker(feed, opts)
    for _ in replica.days():
        pass
    return replica.state


def _day_events(
    spec: SportsTable,
    rng: random.Random,
    live: dict[tuple, dict],
    ever: _Taken,
    load_date: date,
    base: datetime,
    columns: list[tuple[str, str]],
    op_col: str,
    ts_col: str,
) -> list[dict]:
    """One day's CDC rows in capture order (the order DMS writes them in the file)."""
    names = [c for c, _ in columns]
    events: list[tuple[datetime, int, dict]] = []  # (last_update_time, arrival, row)

    def emit(op: str, row: dict, at: datetime) -> None:
        for column, (_, make) in spec.added.items():
            if column in names and op != "D" and row.get(column) is None:
                row[column] = make(rng)  # row may be live[key]: keep it
        full = {c: row.get(c) for c in names}
        events.append((at, len(events), {op_col: op, **full, ts_col: at}))

    def at(seconds: int) -> datetime:
        return base + timedelta(seconds=seconds)

    n = len(live)
    keys = sorted(live)
    changed = rng.sample(keys, min(len(keys), max(2, n // 20)))
    # 1. plain updates, one key changed three times in the file (the last wins)
    for i, key in enumerate(changed):
        live[key] = spec.change(rng, live[key], load_date)
        emit("U", live[key], at(10 + i))
        if i == 0:
            live[key] = spec.change(rng, live[key], load_date)
            emit("U", live[key], at(1000))
            live[key] = spec.change(rng, live[key], load_date)
            emit("U", live[key], at(2000))
    # 2. a tie: two updates of one key with the same last_update_time; the later row
    #    in the file is the later change (DMS writes changes in commit order)
    tied = changed[-1]
    first = spec.change(rng, live[tied], load_date)
    emit("U", first, at(3000))
    live[tied] = spec.change(rng, first, load_date)
    emit("U", live[tied], at(3000))
    # 3. inserts, one inserted then updated in the same file
    for j in range(max(1, n // 50)):
        key = spec.next_key(ever, rng)
        ever.add(key)
        live[key] = spec.make(rng, key)
        emit("I", live[key], at(100 + j))
        if j == 0:
            live[key] = spec.change(rng, live[key], load_date)
            emit("U", live[key], at(4000))
    # 4. an update of a key never inserted (the replica missed its insert): an upsert
    key = spec.next_key(ever, rng)
    ever.add(key)
    live[key] = spec.make(rng, key)
    emit("U", live[key], at(150))
    # 5. deletes, one of a key updated earlier in the same file
    skip = {*changed, key}
    untouched = [k for k in sorted(live) if k not in skip]
    for k in rng.sample(untouched, min(len(untouched), max(1, n // 100))):
        emit("D", live.pop(k), at(5000))
    victim = changed[1 % len(changed)]
    if victim in live and victim != tied:
        emit("D", live.pop(victim), at(5500))
    # 6. a delete of a key that never existed: a no-op
    ghost = spec.next_key(ever, rng)
    emit("D", spec.make(rng, ghost), at(6000))
    return [row for _, _, row in sorted(events, key=lambda e: (e[0], e[1]))]
