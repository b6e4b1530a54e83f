"""The ``cluster`` target's promise: every model runs on the cluster, or the build fails.

The floe adapter calls :func:`require_cluster_session` when a target says
``require_cluster: true`` (``profiles/profiles.yml``), before any model runs and again
before each Python model. It refuses:

- a session whose master is local (``local[*]``): the model would run in this process —
  also what happens when a process already holds a local session (a JVM's master
  cannot change), so a cluster build needs a process of its own;
- a catalog in a SQLite file: one machine's file, not a shared catalog;
- a cluster that grants no executor within the timeout (no worker, or its cores are
  taken): tasks would wait forever.

See ``docs/decisions/0011-cluster-target-dbt-as-spark-driver.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from floe.cluster.processes import wait_until
from floe.runtime.settings import Settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

EXECUTOR_TIMEOUT = 120.0


class ClusterTargetError(RuntimeError):
    """A model would run somewhere other than the cluster; the message says how to fix it."""


def _loopback_hint(settings: Settings) -> str:
    if (settings.cluster_dir / "state.json").is_file():
        return (
            f' A loopback cluster is recorded in {settings.cluster_dir}: eval "$(floe cluster env)"'
            " points floe at it."
        )
    return " floe cluster up starts one on this machine (docs/cluster.md)."


def executor_count(spark: SparkSession) -> int:
    """Executors registered with this driver (the driver itself not counted)."""
    sc = spark.sparkContext._jsc.sc()
    return int(sc.getExecutorMemoryStatus().size()) - 1


def require_shared_catalog(settings: Settings) -> None:
    """Raise :class:`ClusterTargetError` if the catalog is a SQLite file (one machine's)."""
    if settings.is_sqlite:
        raise ClusterTargetError(
            f"the cluster target needs a shared catalog, but FLOE_CATALOG_URI is the SQLite "
            f"file {settings.sqlite_path}: point it at PostgreSQL (floe catalog migrate moves "
            "the entries)." + _loopback_hint(settings)
        )


def require_cluster_session(
    spark: SparkSession, settings: Settings, timeout: float = EXECUTOR_TIMEOUT
) -> None:
    """Raise :class:`ClusterTargetError` unless ``spark`` runs its tasks on a cluster."""
    master = spark.sparkContext.master or ""
    if master.split("[", 1)[0] in ("local", "local-cluster"):
        raise ClusterTargetError(
            f"the cluster target runs every model on a cluster, but this process's Spark "
            f"master is {master!r}. Set FLOE_SPARK_MASTER (spark://…, yarn, k8s://…) and run "
            "dbt in a process of its own (a running SparkSession's master cannot change)."
            + _loopback_hint(settings)
        )
    require_shared_catalog(settings)
    if executor_count(spark) > 0:
        return
    if not wait_until(lambda: executor_count(spark) > 0, timeout, interval=1.0):
        raise ClusterTargetError(
            f"the cluster at {master} granted this build no executor within {timeout:.0f}s: "
            "is a worker running, with free cores and FLOE_EXECUTOR_MEMORY available? "
            "(floe cluster status shows it)"
        )
