"""A plain-Python reading of docs/scd2.md: the dim_customer that the landed loads should produce.

Written independently of the SQL (dicts and loops, no Spark) so the tests compare
two implementations of the contract rather than the materialization with itself.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

SENTINEL = date(9999, 12, 31)
MASTER_ATTRS = ("first_name", "last_name", "employer_name")
ADDRESS_ATTRS = ("email_id", "city", "country")
ATTRS = MASTER_ATTRS + ADDRESS_ATTRS


@dataclass(frozen=True)
class Load:
    load_date: date
    kind: str
    master: list[dict]
    address: list[dict]


def read_loads(landing: Path) -> list[Load]:
    """Every landed customer load, oldest first (files of one load in name order)."""
    root = landing / "customers"
    by_date: dict[str, dict[str, object]] = {}
    for table in ("customer_master", "customer_address"):
        for folder in sorted((root / table).glob("load_date=*")):
            day = folder.name.split("=", 1)[1]
            entry = by_date.setdefault(day, {"customer_master": [], "customer_address": []})
            entry["kind"] = json.loads((folder / "_manifest.json").read_text())["kind"]
            for f in sorted(folder.glob("*.csv")):
                rel = f.relative_to(landing).as_posix()
                with f.open(newline="") as fh:
                    for row in csv.DictReader(fh):
                        clean = {k: (v if v != "" else None) for k, v in row.items()}
                        clean["customer_id"] = int(clean["customer_id"])
                        clean["_file"] = rel
                        entry[table].append(clean)
    return [
        Load(date.fromisoformat(d), e["kind"], e["customer_master"], e["customer_address"])
        for d, e in sorted(by_date.items())
    ]


def _desc_key(row: dict, attrs: tuple[str, ...]) -> tuple:
    # Spark's `order by x desc` puts NULLs last; the latest row sorts first.
    def part(v):
        return (0, v) if v is not None else (-1, "")

    return tuple(part(row.get(c)) for c in ("row_audit_ts", "_file", "rec_source_status", *attrs))


def _apply(state: dict[int, dict], rows: list[dict], kind: str, attrs) -> dict[int, dict]:
    latest: dict[int, dict] = {}
    for row in rows:
        cur = latest.get(row["customer_id"])
        if cur is None or _desc_key(row, attrs) > _desc_key(cur, attrs):
            latest[row["customer_id"]] = row
    new = {} if kind == "full" else dict(state)
    for cid, row in latest.items():
        if row.get("rec_source_status") == "D":
            new.pop(cid, None)
        else:
            new[cid] = row
    return new


def expected_dim(
    landing: Path, initial_eff: date = date(2022, 7, 1), up_to: date | None = None
) -> list[tuple]:
    """Rows (customer_sk, customer_id, *ATTRS, rec_eff_dt, rec_exp_dt) sorted by sk."""
    loads = [ld for ld in read_loads(landing) if up_to is None or ld.load_date <= up_to]
    master: dict[int, dict] = {}
    address: dict[int, dict] = {}
    rows: list[dict] = []
    current: dict[int, dict] = {}
    next_sk = 1
    for i, load in enumerate(loads):
        eff = initial_eff if i == 0 else load.load_date
        master = _apply(master, load.master, load.kind, MASTER_ATTRS)
        address = _apply(address, load.address, load.kind, ADDRESS_ATTRS)
        versions = {
            cid: tuple(m[a] for a in MASTER_ATTRS)
            + tuple((address.get(cid) or {}).get(a) for a in ADDRESS_ATTRS)
            for cid, m in master.items()
        }
        for cid in sorted(set(current) - set(versions)):
            current.pop(cid)["rec_exp_dt"] = eff - timedelta(days=1)
        inserts = []
        for cid in sorted(versions):
            row = current.get(cid)
            if row is not None and row["attrs"] == versions[cid]:
                continue
            if row is not None:
                current.pop(cid)["rec_exp_dt"] = eff - timedelta(days=1)
            inserts.append(cid)
        for cid in inserts:
            row = {
                "sk": next_sk,
                "id": cid,
                "attrs": versions[cid],
                "rec_eff_dt": eff,
                "rec_exp_dt": SENTINEL,
            }
            next_sk += 1
            rows.append(row)
            current[cid] = row
    return [(r["sk"], r["id"], *r["attrs"], r["rec_eff_dt"], r["rec_exp_dt"]) for r in rows]
