"""``floe cluster up | down | status | env``: a loopback cluster under ``$FLOE_HOME/cluster``.

Three services, started in this order and stopped in the reverse one:

- ``postgres``: the Iceberg catalog database (:mod:`floe.cluster.postgres`);
- ``master``: the Spark standalone master (:mod:`floe.cluster.standalone`);
- ``worker``: one Spark worker with ``FLOE_CLUSTER_CORES`` cores and
  ``FLOE_CLUSTER_MEMORY`` for executors.

``state.json`` in the cluster directory records each service's pid (with its start
time: :class:`~floe.cluster.processes.ProcessRef`) and ports, so ``up`` run twice
starts nothing twice, ``down`` stops exactly those processes, and ``status`` says
what runs where. ``env`` gives the variables that point floe's ``cluster`` target at it
(``docs/cluster.md``).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from floe.cluster.postgres import SUPERUSER, Postgres
from floe.cluster.processes import ClusterError, ProcessRef, free_port, stop_group
from floe.cluster.standalone import Standalone, master_state, worker_registered
from floe.runtime.settings import Settings

SERVICES = ("postgres", "master", "worker")


@dataclass
class Service:
    """One service as recorded in ``state.json``."""

    name: str
    process: ProcessRef | None = None
    ports: dict[str, int] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "process": self.process.to_json() if self.process else None,
            "ports": self.ports,
            "details": self.details,
        }

    @classmethod
    def from_json(cls, name: str, data: dict[str, Any] | None) -> Service:
        data = data or {}
        return cls(
            name=name,
            process=ProcessRef.from_json(data.get("process")),
            ports={k: int(v) for k, v in (data.get("ports") or {}).items()},
            details=dict(data.get("details") or {}),
        )


@dataclass
class UpReport:
    started: list[str] = field(default_factory=list)
    already_running: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ServiceStatus:
    name: str
    running: bool
    pid: int | None
    address: str | None
    detail: str


class LoopbackCluster:
    """The cluster of one ``FLOE_HOME`` (``settings.cluster_dir``)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root = settings.cluster_dir
        self.spark = Standalone(self.root)
        self._postgres: Postgres | None = None

    @property
    def postgres(self) -> Postgres:
        if self._postgres is None:
            self._postgres = Postgres.for_cluster(
                self.root, self.settings.cluster_pg_bin, self.settings.cluster_run_as
            )
        return self._postgres

    # -- state

    @property
    def state_file(self) -> Path:
        return self.root / "state.json"

    @property
    def env_file(self) -> Path:
        return self.root / "env"

    @property
    def event_log_dir(self) -> Path:
        return self.root / "events"

    def load(self) -> dict[str, Service]:
        try:
            data = json.loads(self.state_file.read_text())
        except FileNotFoundError:
            data = {}
        except (OSError, ValueError) as exc:
            raise ClusterError(f"cannot read {self.state_file}: {exc}; remove it") from exc
        return {name: Service.from_json(name, data.get(name)) for name in SERVICES}

    def save(self, services: dict[str, Service]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({n: s.to_json() for n, s in services.items()}, indent=2))
        tmp.replace(self.state_file)

    def running(self, service: Service, services: dict[str, Service]) -> bool:
        """Alive and healthy: PostgreSQL takes logins, the master is ALIVE and lists the worker."""
        if service.process is None or not service.process.alive():
            return False
        if service.name == "postgres":
            return self.postgres.accepts_logins(service.ports["port"])
        if service.name == "master":
            state = master_state(service.ports["webui"])
            return state is not None and state.get("status") == "ALIVE"
        master = services["master"]
        return "webui" in master.ports and worker_registered(
            master.ports["webui"], service.ports["port"]
        )

    # -- up / down

    def up(self, timeout: float = 180.0) -> UpReport:
        """Start whatever is not running yet; on failure stop what this call started."""
        self.root.mkdir(parents=True, exist_ok=True)
        services = self.load()
        report = UpReport()
        try:
            for name in SERVICES:
                service = services[name]
                if self.running(service, services):
                    report.already_running.append(name)
                    continue
                if service.process is not None and service.process.alive():
                    # Running but unhealthy (e.g. a worker lost its master): start afresh.
                    self._stop(service)
                started = time.perf_counter()
                self._start(service, services, timeout)
                report.seconds[name] = time.perf_counter() - started
                report.started.append(name)
                self.save(services)
        except BaseException:
            for name in reversed(report.started):
                self._stop(services[name])
                services[name].process = None
            self.save(services)
            raise
        self.write_env_file()
        return report

    def _port(self, service: Service, key: str) -> int:
        """The port this service had (kept across restarts while free), else a free one."""
        from floe.cluster.processes import port_open

        port = service.ports.get(key)
        if port is None or port_open(port):
            port = free_port()
        service.ports[key] = port
        return port

    def _start(self, service: Service, services: dict[str, Service], timeout: float) -> None:
        if service.name == "postgres":
            self.postgres.init()
            port = self._port(service, "port")
            service.process = self.postgres.start(port, timeout)
            service.details = {"data_dir": str(self.postgres.data_dir)}
        elif service.name == "master":
            port, webui = self._port(service, "port"), self._port(service, "webui")
            service.process = self.spark.start_master(port, webui, timeout)
            service.details = {"url": f"spark://127.0.0.1:{port}"}
        else:
            master = services["master"]
            port, webui = self._port(service, "port"), self._port(service, "webui")
            cores, memory = self.settings.cluster_cores, self.settings.cluster_memory
            service.process = self.spark.start_worker(
                master.details["url"], master.ports["webui"], port, webui, cores, memory, timeout
            )
            service.details = {"cores": cores, "memory": memory}

    def _stop(self, service: Service) -> bool:
        if service.name == "postgres":
            stopped = self.postgres.stop()
            if service.process is not None and service.process.alive():
                stopped = stop_group(service.process) or stopped
            return stopped
        return service.process is not None and stop_group(service.process)

    def down(self) -> list[str]:
        """Stop the recorded services (worker, master, postgres); return those stopped."""
        services = self.load()
        stopped = []
        for name in reversed(SERVICES):
            service = services[name]
            if service.process is None and name != "postgres":
                continue
            if name == "postgres" and not self.postgres.initialized:
                continue
            if self._stop(service):
                stopped.append(name)
            service.process = None
            self.save(services)
        return stopped

    # -- what runs where

    def env(self) -> dict[str, str]:
        """Variables pointing floe's ``cluster`` target at this cluster (needs it up)."""
        services = self.load()
        missing = [n for n in SERVICES if not self.running(services[n], services)]
        if missing:
            raise ClusterError(
                f"the loopback cluster in {self.root} is not running ({', '.join(missing)} "
                "down): run floe cluster up"
            )
        return {
            "FLOE_TARGET": "cluster",
            "FLOE_HOME": str(self.settings.home),
            "FLOE_WAREHOUSE": self.settings.warehouse,
            "FLOE_SPARK_MASTER": services["master"].details["url"],
            "FLOE_CATALOG_URI": self.postgres.uri(services["postgres"].ports["port"]),
            "FLOE_CATALOG_USER": SUPERUSER,
            "FLOE_CATALOG_PASSWORD": self.postgres.password(),
            "FLOE_SPARK_EVENT_LOG": self.event_log_dir.as_uri(),
        }

    def write_env_file(self) -> None:
        """``$FLOE_HOME/cluster/env`` (mode 0600): ``source`` it, or ``eval "$(floe cluster env)"``."""
        import shlex

        self.event_log_dir.mkdir(parents=True, exist_ok=True)
        text = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in self.env().items())
        fd = os.open(self.env_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(text)

    def status(self) -> list[ServiceStatus]:
        services = self.load()
        rows = []
        for name in SERVICES:
            service = services[name]
            running = self.running(service, services)
            pid = service.process.pid if service.process and running else None
            if name == "postgres":
                port = service.ports.get("port")
                address = self.postgres.uri(port) if port else None
                detail = f"data {self.postgres.data_dir}, log {self.postgres.log}"
            elif name == "master":
                address = service.details.get("url")
                webui = service.ports.get("webui")
                detail = f"ui http://127.0.0.1:{webui}, log {self.spark.master_log}"
                state = master_state(webui) if running and webui else None
                if state is not None:
                    detail += (
                        f", {state.get('aliveworkers', 0)} worker(s), "
                        f"{len(state.get('activeapps', []))} running / "
                        f"{len(state.get('completedapps', []))} finished application(s)"
                    )
            else:
                port = service.ports.get("port")
                address = f"127.0.0.1:{port}" if port else None
                detail = (
                    f"{service.details.get('cores', '?')} cores, "
                    f"{service.details.get('memory', '?')}, "
                    f"ui http://127.0.0.1:{service.ports.get('webui')}, "
                    f"work {self.spark.work_dir}, log {self.spark.worker_log}"
                )
            rows.append(ServiceStatus(name, running, pid, address, detail))
        return rows
