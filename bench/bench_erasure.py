"""Erasure: time to erase one data subject (`floe forget`, hygiene included).

Two warehouses, each in a temporary lakehouse:

- **demo**: the demo generator's customer feeds and customer_events stream built with
  dbt (raw, staging, SCD2 dim_customer, the merge-on-read fct_customer_purchases, the
  masked twins); scale FLOE_BENCH_ERASURE_DEMO_SCALE (default 200, 0 skips it), days 3;
- **large**: FLOE_BENCH_ERASURE_CUSTOMERS customers (default 1,000,000; 0 skips it)
  written straight into tables shaped like raw.customer_master, marts.dim_customer
  (1.2 versions per customer, merge-on-read) and marts.fct_customer_purchases (3
  purchases per customer, merge-on-read), each appended in 4 commits so there is
  history to expire. The project's own tags drive the erasure.

Printed per warehouse: rows per table, then the dry run (plan) time, the erasure time
and the tables touched with their rows.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEMO_SCALE = int(os.environ.get("FLOE_BENCH_ERASURE_DEMO_SCALE", "200"))
CUSTOMERS = int(os.environ.get("FLOE_BENCH_ERASURE_CUSTOMERS", "1000000"))
COMMITS = 4


def _erase(spark: Any, settings: Any, tags: Any, subject: str) -> None:
    from floe.privacy.erasure import forget
    from floe.privacy.subject import Subject

    parsed = Subject.parse(subject)
    started = time.perf_counter()
    dry = forget(spark, settings, tags, parsed, dry_run=True)
    planned = time.perf_counter() - started
    started = time.perf_counter()
    done = forget(spark, settings, tags, parsed)
    erased = time.perf_counter() - started
    print(f"  dry run (plan): {planned:.1f}s")
    print(f"  erasure ({done.status}): {erased:.1f}s")
    for t in dry.plan.touched_tables():
        print(f"    {t.table}: {t.rows} row(s){'' if t.rows else ' (history only)'}")
    if dry.plan.quarantine and dry.plan.quarantine.rows:
        print(f"    raw.quarantine: {dry.plan.quarantine.rows} record(s)")


def _home(name: str) -> Any:
    from floe.runtime import Settings

    home = Path(tempfile.mkdtemp(prefix=f"floe-bench-erasure-{name}-")) / "floe"
    return Settings.from_env({"FLOE_HOME": str(home), "FLOE_SETTLE_SECONDS": "0"})


def demo(spark: Any) -> None:
    from floe.dbt_runner import run_dbt
    from floe.generator import GenerateOptions, generate
    from floe.privacy.tags import PrivacyTags
    from floe.runtime import use_settings

    settings = _home("demo")
    use_settings(spark, settings)
    generate(GenerateOptions(landing=settings.landing, days=3, scale=DEMO_SCALE), ["customers"])
    generate(
        GenerateOptions(landing=settings.landing, days=1, scale=DEMO_SCALE, bad_share=0.02),
        ["streams.customer_events"],
    )
    target = Path(tempfile.mkdtemp(prefix="floe-bench-erasure-target-"))
    started = time.perf_counter()
    run = run_dbt(
        ["build", "-s", "+dim_customer_masked", "+fct_customer_purchases_masked"],
        project=ROOT,
        target_path=target,
        quiet=True,
    )
    if not run.success:
        raise RuntimeError(f"dbt build failed: {run.failures or run.exception}")
    print(f"demo warehouse (scale {DEMO_SCALE}) built in {time.perf_counter() - started:.0f}s")
    import json

    tags = PrivacyTags.from_manifest(json.loads((target / "manifest.json").read_text()))
    cid = spark.sql(
        "select customer_id from marts.dim_customer group by customer_id "
        "having count(*) > 1 order by customer_id limit 1"
    ).first()[0]
    for table in ("raw.customer_master", "marts.dim_customer", "marts.fct_customer_purchases"):
        print(f"  {table}: {spark.table(table).count()} rows")
    _erase(spark, settings, tags, f"customer_id={cid}")


def large(spark: Any) -> None:
    from pyspark.sql import functions as F

    from floe.docsite.coverage import parse_manifest
    from floe.privacy.tags import PrivacyTags
    from floe.runtime import use_settings

    settings = _home("large")
    use_settings(spark, settings)
    tags = PrivacyTags.from_manifest(parse_manifest(ROOT, ROOT / "profiles"))
    mor = (
        "tblproperties ('format-version'='2', 'write.delete.mode'='merge-on-read', "
        "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')"
    )
    spark.sql("create namespace if not exists raw")
    spark.sql("create namespace if not exists marts")
    spark.sql(
        "create table raw.customer_master (customer_id bigint, first_name string, "
        "last_name string, employer_name string, _source_file string) using iceberg"
    )
    spark.sql(
        "create table marts.dim_customer (customer_sk string, customer_id bigint, "
        "first_name string, last_name string, email_id string, city string, "
        f"rec_eff_dt date, rec_exp_dt date) using iceberg {mor}"
    )
    spark.sql(
        "create table marts.fct_customer_purchases (customerid string, firstname string, "
        f"lastname string, phonenumber string, transactionamount int) using iceberg {mor}"
    )
    started = time.perf_counter()
    step = CUSTOMERS // COMMITS
    for i in range(COMMITS):
        ids = spark.range(i * step + 1, (i + 1) * step + 1).withColumnRenamed("id", "cid")
        name = F.concat(F.lit("name"), (F.col("cid") % 997).cast("string"))
        ids.select(
            F.col("cid").alias("customer_id"),
            name.alias("first_name"),
            name.alias("last_name"),
            F.lit("Acme").alias("employer_name"),
            F.lit(f"customers/customer_master/load_date=2022-07-0{i + 1}/part-00000.csv").alias(
                "_source_file"
            ),
        ).writeTo("raw.customer_master").append()
        versions = ids.select(
            "cid", F.explode(F.when(F.col("cid") % 5 == 0, F.array(F.lit(0), F.lit(1)))
                             .otherwise(F.array(F.lit(0)))).alias("v")
        )  # fmt: skip
        versions.select(
            F.sha2(F.concat_ws("-", "cid", "v"), 256).alias("customer_sk"),
            F.col("cid").alias("customer_id"),
            name.alias("first_name"),
            name.alias("last_name"),
            F.concat(F.col("cid").cast("string"), F.lit("@example.com")).alias("email_id"),
            F.lit("Lyon").alias("city"),
            F.date_add(F.lit("2022-07-01").cast("date"), F.col("v")).alias("rec_eff_dt"),
            F.when(F.col("v") == 0, F.lit("2022-07-02"))
            .otherwise(F.lit("9999-12-31"))
            .cast("date")
            .alias("rec_exp_dt"),
        ).writeTo("marts.dim_customer").append()
        ids.select("cid", F.explode(F.array(F.lit(1), F.lit(2), F.lit(3))).alias("n")).select(
            F.col("cid").cast("string").alias("customerid"),
            name.alias("firstname"),
            name.alias("lastname"),
            F.concat(F.lit("+1-555-"), (F.col("cid") % 10000).cast("string")).alias("phonenumber"),
            (F.col("n") * 10).cast("int").alias("transactionamount"),
        ).writeTo("marts.fct_customer_purchases").append()
    print(
        f"large warehouse ({CUSTOMERS:,} customers) written in {time.perf_counter() - started:.0f}s"
    )
    for table in ("raw.customer_master", "marts.dim_customer", "marts.fct_customer_purchases"):
        files = spark.sql(f"select count(*) from {table}.files").first()[0]
        print(f"  {table}: {spark.table(table).count():,} rows, {files} data files")
    _erase(spark, settings, tags, f"customer_id={CUSTOMERS // 2 // 5 * 5}")


def main() -> None:
    from floe.runtime import Settings, get_spark

    spark = get_spark(Settings.from_env())
    if DEMO_SCALE:
        print("-- demo warehouse")
        demo(spark)
    if CUSTOMERS:
        print("-- large warehouse")
        large(spark)


if __name__ == "__main__":
    main()
