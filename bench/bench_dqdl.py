"""DQDL: a 16-rule Glue ruleset in floe's one pass vs the same rules one query each.

Glue Data Quality (Deequ underneath) plans a ruleset's analyzers together too; the
naive alternative a port would write is one query per rule. Both run here on the same
Iceberg table, side by side (a b a b ...), with `store=False` so that only the
evaluation is timed; the load average is printed with the figures (a shared machine:
only side-by-side figures compare).

Scale: FLOE_BENCH_DQDL_ROWS (default 2,000,000); FLOE_BENCH_DQDL_REPEAT (default 3, best of).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

ROWS = int(os.environ.get("FLOE_BENCH_DQDL_ROWS", "2000000"))
REPEAT = int(os.environ.get("FLOE_BENCH_DQDL_REPEAT", "3"))
TABLE = "dq.bench_dqdl_orders"

RULES = [
    "RowCount > 0",
    'IsComplete "id"',
    'Completeness "email" > 0.95',
    'IsUnique "id"',
    'ColumnValues "country" in ["US", "DE", "FR", "NL", "PL"]',
    'ColumnValues "status" in ["new", "paid", "shipped"]',
    'ColumnValues "amount" between -1 and 1001',
    'ColumnValues "quantity" >= 0',
    'ColumnLength "email" <= 64',
    'Mean "amount" between 0 and 1000',
    'StandardDeviation "amount" < 1000',
    'Sum "quantity" > 0',
    'DistinctValuesCount "country" = 5',
    'Entropy "status" > 1',
    'ColumnCorrelation "amount" "quantity" < 0.5',
    'ColumnDataType "code" = "INTEGER"',
]


def main() -> None:

    from bench.bench_dq import write_orders
    from floe.quality.dqdl import explain, verify_ruleset
    from floe.runtime import Settings, get_spark, use_settings

    home = Path(tempfile.mkdtemp(prefix="floe_bench_dqdl_"))
    settings = Settings.from_env({"FLOE_HOME": str(home)})
    spark = get_spark(settings)
    use_settings(spark, settings)
    write_orders(spark, TABLE, ROWS)

    ruleset = "Rules = [ " + ", ".join(RULES) + " ]"
    the_plan, _ = explain(spark, TABLE, ruleset)
    print(f"rows {ROWS:,}; {len(RULES)} rules; passes {the_plan.passes}; best of {REPEAT}")

    def one_pass() -> object:
        return verify_ruleset(spark, TABLE, ruleset, store=False)

    def per_rule() -> object:
        return [verify_ruleset(spark, TABLE, f"Rules = [ {r} ]", store=False) for r in RULES]

    one_pass()  # warm up
    times: dict[str, list[float]] = {"one pass": [], "one query per rule": []}
    for _ in range(REPEAT):
        for name, fn in (("one pass", one_pass), ("one query per rule", per_rule)):
            started = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - started)
    best = {name: min(values) for name, values in times.items()}
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    for name, seconds in best.items():
        print(f"{name:>20}: {seconds:.2f}s")
    print(
        f"one query per rule / one pass: {best['one query per rule'] / best['one pass']:.2f}x "
        f"(load average {load})"
    )


if __name__ == "__main__":
    main()
