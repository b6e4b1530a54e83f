"""The one place that says how floe's Spark is configured (``docs/runtime.md``).

Used by the dbt profile (through the floe adapter), the CLI and the tests. Every knob
comes from a :class:`~floe.runtime.settings.Settings`; nothing here reads the
environment (it only writes the variables child processes need).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from floe.runtime.jars import resolve_jars
from floe.runtime.settings import Settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")
SCHEMAS = ("raw", "staging", "intermediate", "marts", "snapshots", "dq", "audit")


def spark_conf(settings: Settings | None = None) -> dict[str, str]:
    """Spark configuration for an embedded (local[*]) session on `settings`."""
    s = settings or Settings.from_env()
    jar_names = ("iceberg", "sqlite") if s.is_sqlite else ("iceberg", "postgresql")
    jars = resolve_jars(jar_names, s)
    cat = f"spark.sql.catalog.{s.catalog_name}"
    conf = {
        "spark.master": s.spark_master_url,
        "spark.app.name": "floe",
        "spark.driver.memory": s.driver_memory,
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": str(s.spark_ui).lower(),
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        # Small local machine: few shuffle partitions, AQE to coalesce further.
        "spark.sql.shuffle.partitions": str(s.shuffle_partitions),
        "spark.default.parallelism": "4",
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        # No Hive metastore (no Derby, no metastore_db/): Iceberg's catalog is the catalog.
        "spark.sql.catalogImplementation": "in-memory",
        "spark.sql.warehouse.dir": str(s.home / "spark-warehouse"),
        "spark.driver.extraJavaOptions": (
            f"-Dderby.system.home={s.home} -Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()}"
        ),
        "spark.sql.extensions": (
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
        ),
        cat: "org.apache.iceberg.spark.SparkCatalog",
        f"{cat}.type": "jdbc",
        f"{cat}.uri": s.catalog_uri,
        f"{cat}.warehouse": s.warehouse,
        f"{cat}.jdbc.schema-version": "V1",
        # pyiceberg and other processes write the same catalog: never serve stale metadata.
        f"{cat}.cache-enabled": "false",
        "spark.sql.defaultCatalog": s.catalog_name,
    }
    if s.catalog_user:
        conf[f"{cat}.jdbc.user"] = s.catalog_user
    if s.catalog_password:
        conf[f"{cat}.jdbc.password"] = s.catalog_password
    if jars.paths:
        conf["spark.jars"] = ",".join(jars.paths)
        # JDBC drivers must be on the driver's system class path (DriverManager).
        conf["spark.driver.extraClassPath"] = os.pathsep.join(jars.paths)
    if jars.maven:
        conf["spark.jars.packages"] = ",".join(jars.maven)
    return conf


def get_spark(settings: Settings | None = None) -> SparkSession:
    """The process's SparkSession on floe's catalog, created on first use.

    Creates the fixed schemas (Iceberg namespaces) so two-part names resolve.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    s = settings or Settings.from_env()
    s.ensure_dirs()
    os.environ.setdefault("PYSPARK_PYTHON", _python())
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder
    for key, value in spark_conf(s).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(s.spark_log_level)
    ensure_schemas(spark)
    register_functions(spark, s)
    return spark


def ensure_schemas(spark: SparkSession) -> None:
    existing = {row[0] for row in spark.sql("show namespaces").collect()}
    for schema in (*SCHEMAS, "default"):
        if schema not in existing:
            spark.sql(f"create namespace if not exists {schema}")


def _python() -> str:
    import sys

    return sys.executable


def use_settings(spark: SparkSession, settings: Settings) -> None:
    """Point this running session (and this process's FLOE_* variables) at another lakehouse.

    Tests use it to give each scenario a fresh catalog without a new JVM: the
    catalog's options are runtime settings, and Spark's catalog manager is reset
    so the next statement loads the catalog with them. The variables are written so
    that code building its own ``Settings.from_env()`` later (dbt Python models, child
    processes) sees the same lakehouse.
    """
    settings.ensure_dirs()
    os.environ["FLOE_HOME"] = str(settings.home)
    os.environ["FLOE_LANDING"] = str(settings.landing)
    os.environ["FLOE_WAREHOUSE"] = settings.warehouse
    os.environ["FLOE_CATALOG_URI"] = settings.catalog_uri
    cat = f"spark.sql.catalog.{settings.catalog_name}"
    spark.conf.set(f"{cat}.uri", settings.catalog_uri)
    spark.conf.set(f"{cat}.warehouse", settings.warehouse)
    spark.catalog.clearCache()
    spark._jsparkSession.sessionState().catalogManager().reset()
    ensure_schemas(spark)
    register_functions(spark, settings)


def register_functions(spark: SparkSession, settings: Settings) -> None:
    """floe's SQL functions (the masking functions of docs/privacy.md) in ``spark``."""
    from floe.privacy.functions import register_functions as register_privacy

    register_privacy(spark, settings)
