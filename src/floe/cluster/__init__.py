"""Scale-out: the same project on a Spark cluster with its catalog in PostgreSQL.

- :mod:`floe.cluster.manager`: ``floe cluster up | down | status | env``, a loopback
  cluster (PostgreSQL, Spark standalone master and worker) under ``$FLOE_HOME/cluster``;
- :mod:`floe.cluster.guard`: the ``cluster`` target refuses to run a model anywhere
  but on a cluster;
- :mod:`floe.cluster.eventlog`: where an application's tasks ran, from its event log.

The contract is ``docs/cluster.md``; the choice of driver is
``docs/decisions/0011-cluster-target-dbt-as-spark-driver.md``.
"""

from floe.cluster.guard import ClusterTargetError, require_cluster_session
from floe.cluster.processes import ClusterError

__all__ = ["ClusterError", "ClusterTargetError", "require_cluster_session"]
