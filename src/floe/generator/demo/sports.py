"""AWS DMS landings for a small sports schema (SPEC §3, §7; seed 'relational replication').

Layout: `dms/dms_sample/<table>/LOAD00000001.parquet` (full load, no `Op`) on day 0,
then one CDC file a day, `dms/dms_sample/<table>/<yyyymmdd-hhmmssfff>.parquet`, with
`Op` (I/U/D) as first column and DMS's `last_update_time` control column.

The CDC files carry the cases a correct merge must get right (and the seed's job
gets wrong): several changes to one key in one file, two changes of one key with
the same `last_update_time` (the later row in the file wins), deletes of keys that
never existed, updates of keys never inserted (an upsert), and from day 2 on a new
column (`sporting_event.attendance`) the earlier files do not have.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from floe.generator.base import GenerateOptions, WriteReport, write_landed

SCHEMA = "dms_sample"
ADDED_COLUMN_DAY = 2  # sporting_event gains `attendance` from this day index on

SPORTS = ["baseball", "football"]
TEAMS = ["Rams", "Bears", "Jets", "Mets", "Cubs", "Sox", "Giants", "Colts", "Twins", "Reds"]
STADIUMS = ["Field", "Park", "Dome", "Arena", "Stadium", "Grounds"]
SURFACES = ["Grass", "FieldTurf", "AstroTurf"]
ROOFS = ["Open", "Dome", "Retractable"]
POSITIONS = ["P", "C", "1B", "2B", "3B", "SS", "LF", "CF", "RF", "DH"]
HANDS = ["R", "L", "B"]


@dataclass(frozen=True)
class TableSpec:
    """One replicated table: its columns (pyarrow types), key and row factory."""

    name: str
    columns: list[tuple[str, Any]]
    key: tuple[str, ...]
    make: Callable[[random.Random, tuple], dict]
    change: Callable[[random.Random, dict, date], dict]


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


def _specs() -> list[TableSpec]:
    import pyarrow as pa

    return [
        TableSpec(
            "sporting_event",
            [
                ("id", pa.int64()),
                ("sport_type_name", pa.string()),
                ("home_team_id", pa.int32()),
                ("away_team_id", pa.int32()),
                ("location_id", pa.int32()),
                ("start_date_time", pa.timestamp("us")),
                ("start_date", pa.date32()),
                ("sold_out", pa.int32()),
            ],
            ("id",),
            _sporting_event,
            _sporting_event_change,
        ),
        TableSpec(
            "mlb_data",
            [
                ("mlb_id", pa.int32()),
                ("season", pa.int32()),
                ("mlb_name", pa.string()),
                ("mlb_pos", pa.string()),
                ("mlb_team", pa.string()),
                ("bats", pa.string()),
                ("throws", pa.string()),
                ("birth_year", pa.int32()),
            ],
            ("mlb_id", "season"),
            _mlb,
            _mlb_change,
        ),
        TableSpec(
            "nfl_stadium_data",
            [
                ("sport_location_id", pa.int32()),
                ("stadium", pa.string()),
                ("seating_capacity", pa.int32()),
                ("location", pa.string()),
                ("surface", pa.string()),
                ("roof", pa.string()),
                ("team", pa.string()),
                ("opened", pa.int32()),
            ],
            ("sport_location_id",),
            _nfl,
            _nfl_change,
        ),
    ]


def _initial_keys(spec: TableSpec, n: int) -> list[tuple]:
    if spec.name == "mlb_data":
        # composite key: a few seasons per player; 506560 is the seed's player
        players = [506560 + i for i in range(max(1, n // 3))]
        return [(p, s) for p in players for s in (2020, 2021, 2022)][:n]
    return [(i,) for i in range(1, n + 1)]


def _next_key(spec: TableSpec, taken: set[tuple], rng: random.Random) -> tuple:
    if spec.name == "mlb_data":
        while True:
            key = (600000 + rng.randrange(10**5), 2022)
            if key not in taken:
                return key
    key = (max((k[0] for k in taken), default=0) + 1,)
    return key


def _parquet(columns: list[tuple[str, Any]], rows: list[dict]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field(name, typ) for name, typ in columns])
    table = pa.Table.from_pylist(rows, schema=schema)
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="snappy")
    return buf.getvalue()


def _scale_rows(spec: TableSpec, scale: int) -> int:
    # a few hundred rows at the default scale (1000); the stadium table stays small
    sizes = {"sporting_event": scale // 2, "mlb_data": scale // 3, "nfl_stadium_data": 40}
    return max(12, sizes[spec.name])


def generate(opts: GenerateOptions) -> WriteReport:
    report = WriteReport([], [])
    _run(opts, report)
    return report


def expected_state(opts: GenerateOptions) -> dict[str, dict[tuple, dict]]:
    """The rows every replicated table must hold after all days: the generator's truth."""
    return _run(opts, None)


def _run(opts: GenerateOptions, report: WriteReport | None) -> dict[str, dict[tuple, dict]]:
    import pyarrow as pa

    state: dict[str, dict[tuple, dict]] = {}
    for spec in _specs():
        rng = opts.rng(f"dms:{spec.name}")
        live: dict[tuple, dict] = {}
        ever: set[tuple] = set()
        folder = opts.landing / "dms" / SCHEMA / spec.name
        columns = list(spec.columns)
        for day_index, load_date in enumerate(opts.load_dates()):
            base = datetime.combine(load_date, time(1, 0))
            if day_index == 0:
                for key in _initial_keys(spec, _scale_rows(spec, opts.scale)):
                    live[key] = spec.make(rng, key)
                    ever.add(key)
                rows = [{**row, "last_update_time": base} for _, row in sorted(live.items())]
                cols = [*columns, ("last_update_time", pa.timestamp("us"))]
                if report is not None:
                    write_landed(folder / "LOAD00000001.parquet", _parquet(cols, rows), report)
                continue
            if spec.name == "sporting_event" and day_index == ADDED_COLUMN_DAY:
                columns.append(("attendance", pa.int32()))
            events = _day_events(spec, rng, live, ever, load_date, base, columns)
            cols = [("Op", pa.string()), *columns, ("last_update_time", pa.timestamp("us"))]
            name = f"{load_date:%Y%m%d}-{base:%H%M%S}000.parquet"
            if report is not None:
                write_landed(folder / name, _parquet(cols, events), report)
        state[spec.name] = live
    return state


def _day_events(
    spec: TableSpec,
    rng: random.Random,
    live: dict[tuple, dict],
    ever: set[tuple],
    load_date: date,
    base: datetime,
    columns: list[tuple[str, Any]],
) -> list[dict]:
    """One day's CDC rows in capture order (the order DMS writes them in the file)."""
    names = [c for c, _ in columns]
    events: list[tuple[datetime, int, dict]] = []  # (last_update_time, arrival, row)

    def emit(op: str, row: dict, at: datetime) -> None:
        if "attendance" in names and op != "D" and row.get("attendance") is None:
            row["attendance"] = 20000 + rng.randrange(40000)  # row may be live[key]: keep it
        full = {c: row.get(c) for c in names}
        events.append((at, len(events), {"Op": op, **full, "last_update_time": at}))

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
        key = _next_key(spec, ever, rng)
        ever.add(key)
        live[key] = spec.make(rng, key)
        emit("I", live[key], at(100 + j))
        if j == 0:
            live[key] = spec.change(rng, live[key], load_date)
            emit("U", live[key], at(4000))
    # 4. an update of a key never inserted (the replica missed its insert): an upsert
    key = _next_key(spec, ever, rng)
    ever.add(key)
    live[key] = spec.make(rng, key)
    emit("U", live[key], at(150))
    # 5. deletes, one of a key updated earlier in the same file
    untouched = [k for k in sorted(live) if k not in changed and k != key]
    for k in rng.sample(untouched, min(len(untouched), max(1, n // 100))):
        emit("D", live.pop(k), at(5000))
    victim = changed[1 % len(changed)]
    if victim in live and victim != tied:
        emit("D", live.pop(victim), at(5500))
    # 6. a delete of a key that never existed: a no-op
    ghost = _next_key(spec, ever, rng)
    emit("D", spec.make(rng, ghost), at(6000))
    return [row for _, _, row in sorted(events, key=lambda e: (e[0], e[1]))]
