"""``floe cluster up | down | status | env`` (``docs/cluster.md``)."""

from __future__ import annotations

import json
import shlex
import time

import click

from floe.runtime.settings import Settings


def _fail(exc: Exception) -> None:
    raise click.ClickException(str(exc)) from exc


@click.group()
def cluster() -> None:
    """A loopback cluster: PostgreSQL catalog, Spark standalone master and worker.

    State, pids and logs live in $FLOE_HOME/cluster. The worker's cores and memory
    come from FLOE_CLUSTER_CORES / FLOE_CLUSTER_MEMORY (or --cores / --memory).
    """


@cluster.command()
@click.option("--cores", type=click.IntRange(min=1), help="Worker cores [FLOE_CLUSTER_CORES: 2].")
@click.option("--memory", help="Worker memory for executors, e.g. 2g [FLOE_CLUSTER_MEMORY: 2g].")
@click.option(
    "--timeout", default=180.0, show_default=True, help="Seconds to wait for each service."
)
def up(cores: int | None, memory: str | None, timeout: float) -> None:
    """Start what is not running yet, wait until each service is healthy."""
    from dataclasses import replace

    from floe.cluster.manager import LoopbackCluster
    from floe.cluster.processes import ClusterError

    settings = Settings.from_env()
    if cores is not None:
        settings = replace(settings, cluster_cores=cores)
    if memory is not None:
        settings = replace(settings, cluster_memory=memory)
    started = time.perf_counter()
    try:
        report = LoopbackCluster(settings).up(timeout=timeout)
    except ClusterError as exc:
        _fail(exc)
        return
    for name in report.already_running:
        click.echo(f"{name:<9} already running")
    for name in report.started:
        click.echo(f"{name:<9} started in {report.seconds[name]:.1f}s")
    click.echo(f"cluster up in {time.perf_counter() - started:.1f}s")
    click.echo('point floe at it: eval "$(floe cluster env)"   (then dbt build --target cluster)')


@cluster.command()
def down() -> None:
    """Stop the worker, the master and PostgreSQL started by `up` (data is kept)."""
    from floe.cluster.manager import LoopbackCluster
    from floe.cluster.processes import ClusterError

    try:
        stopped = LoopbackCluster(Settings.from_env()).down()
    except ClusterError as exc:
        _fail(exc)
        return
    click.echo(f"stopped: {', '.join(stopped)}" if stopped else "nothing was running")


@cluster.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(as_json: bool) -> None:
    """What runs where: each service's state, pid, address, logs."""
    from floe.cluster.manager import LoopbackCluster
    from floe.cluster.processes import ClusterError

    cl = LoopbackCluster(Settings.from_env())
    try:
        rows = cl.status()
    except ClusterError as exc:
        _fail(exc)
        return
    if as_json:
        click.echo(json.dumps([row.__dict__ for row in rows], indent=2))
        return
    click.echo(f"loopback cluster in {cl.root}")
    for row in rows:
        state = f"running pid {row.pid}" if row.running else "stopped"
        click.echo(f"{row.name:<9} {state:<18} {row.address or '-'}")
        click.echo(f"{'':<9} {row.detail}")


@cluster.command()
@click.option("--json", "as_json", is_flag=True, help="A JSON object instead of shell exports.")
def env(as_json: bool) -> None:
    """Variables that point floe's cluster target at this cluster: eval "$(floe cluster env)"."""
    from floe.cluster.manager import LoopbackCluster
    from floe.cluster.processes import ClusterError

    try:
        values = LoopbackCluster(Settings.from_env()).env()
    except ClusterError as exc:
        _fail(exc)
        return
    if as_json:
        click.echo(json.dumps(values, indent=2))
    else:
        click.echo("".join(f"export {k}={shlex.quote(v)}\n" for k, v in values.items()), nl=False)
