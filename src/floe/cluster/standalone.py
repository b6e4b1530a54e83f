"""The loopback cluster's Spark: a standalone master and one worker from pyspark's own jars.

Both run ``spark-class`` of the installed pyspark (``org.apache.spark.deploy.master.Master``
and ``...worker.Worker``), bound to 127.0.0.1 on free ports, each in its own process
group with its output in ``$FLOE_HOME/cluster/logs``. The worker starts the executors
of every application (a ``dbt build --target cluster`` driver) in its work directory
``$FLOE_HOME/cluster/worker``. Health is read from the master's JSON endpoint
(``http://127.0.0.1:<webui>/json/``): the master is ``ALIVE`` and lists the worker.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from floe.cluster.processes import (
    ClusterError,
    ProcessRef,
    get_json,
    log_tail,
    start_detached,
    wait_until,
)

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
# The daemons only schedule; executors get the worker's memory (FLOE_CLUSTER_MEMORY).
DAEMON_MEMORY = "512m"


def spark_home() -> Path:
    """The installed pyspark package, which is a Spark distribution (bin/, jars/)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise ClusterError("pyspark is not installed in this environment: run make setup")
    return Path(spec.origin).parent


@dataclass(frozen=True)
class Standalone:
    """Master and worker of the loopback cluster in ``root`` (``$FLOE_HOME/cluster``)."""

    root: Path

    @property
    def master_log(self) -> Path:
        return self.root / "logs" / "master.log"

    @property
    def worker_log(self) -> Path:
        return self.root / "logs" / "worker.log"

    @property
    def work_dir(self) -> Path:
        return self.root / "worker"

    def _env(self) -> dict[str, str]:
        home = spark_home()
        return {
            "SPARK_HOME": str(home),
            "SPARK_DAEMON_MEMORY": DAEMON_MEMORY,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": str(self.root / "logs"),
        }

    def _spark_class(self) -> str:
        return str(spark_home() / "bin" / "spark-class")

    def start_master(self, port: int, webui_port: int, timeout: float) -> ProcessRef:
        ref = start_detached(
            [
                self._spark_class(),
                MASTER_CLASS,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(webui_port),
            ],
            self.master_log,
            self._env(),
            cwd=self.root,
        )
        healthy = wait_until(
            lambda: not ref.alive() or master_alive(webui_port), timeout, interval=1.0
        )
        if not healthy or not ref.alive():
            raise ClusterError(
                f"the Spark master did not come up on port {port} within {timeout:.0f}s:\n"
                + log_tail(self.master_log)
            )
        return ref

    def start_worker(
        self,
        master_url: str,
        master_webui_port: int,
        port: int,
        webui_port: int,
        cores: int,
        memory: str,
        timeout: float,
    ) -> ProcessRef:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        ref = start_detached(
            [
                self._spark_class(),
                WORKER_CLASS,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(webui_port),
                "--cores",
                str(cores),
                "--memory",
                memory,
                "--work-dir",
                str(self.work_dir),
                master_url,
            ],
            self.worker_log,
            self._env(),
            cwd=self.root,
        )
        healthy = wait_until(
            lambda: not ref.alive() or worker_registered(master_webui_port, port),
            timeout,
            interval=1.0,
        )
        if not healthy or not ref.alive():
            raise ClusterError(
                f"the Spark worker did not register with {master_url} within {timeout:.0f}s:\n"
                + log_tail(self.worker_log)
            )
        return ref


def master_state(webui_port: int) -> dict[str, Any] | None:
    """The master's ``/json/`` document (workers, applications, status), if it answers."""
    state = get_json(f"http://127.0.0.1:{webui_port}/json/")
    return state if isinstance(state, dict) else None


def master_alive(webui_port: int) -> bool:
    state = master_state(webui_port)
    return state is not None and state.get("status") == "ALIVE"


def worker_registered(master_webui_port: int, worker_port: int) -> bool:
    """The master lists an ALIVE worker on 127.0.0.1:``worker_port``."""
    state = master_state(master_webui_port)
    if state is None:
        return False
    return any(
        w.get("port") == worker_port and w.get("state") == "ALIVE" for w in state.get("workers", [])
    )
