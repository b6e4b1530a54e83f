"""`floe dev`: the warm session (serve, start in the background, status, stop, watch)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import click

from floe.dev.protocol import DevServerError, read_server_info, state_dir
from floe.runtime.settings import Settings, child_environment

# How long `floe dev --detach` waits for the server to be ready (Spark start + parse).
READY_TIMEOUT = 600.0


@click.group(invoke_without_command=True)
@click.option(
    "--detach",
    is_flag=True,
    help="Start the server in the background, wait until it is ready, and return.",
)
@click.pass_context
def dev(ctx: click.Context, detach: bool) -> None:
    """Keep one warm SparkSession that plain `dbt ...` commands in the project run in.

    Without a subcommand: serve in the foreground until Ctrl-C (docs/dev.md).
    """
    if ctx.invoked_subcommand is not None:
        return
    settings = Settings.from_env()
    try:
        if detach:
            pid, log = start_detached(settings)
            click.echo(f"floe dev: warm session ready (pid {pid}; log {log})")
            return
        from floe.dev.server import serve

        serve(settings)
    except DevServerError as exc:
        raise click.ClickException(str(exc)) from exc


def start_detached(settings: Settings, timeout: float = READY_TIMEOUT) -> tuple[int, Path]:
    """Start ``floe dev`` as a background process; (its pid, its log) once it is ready."""
    from floe.dev.client import is_alive

    running = read_server_info(settings)
    if running is not None and is_alive(running):
        return running.pid, state_dir(settings) / "server.log"
    log = state_dir(settings) / "server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    env = child_environment({"FLOE_HOME": str(settings.home)})
    with log.open("ab") as handle:
        proc = subprocess.Popen(
            [sys.executable, "-m", "floe.cli", "dev"],
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = read_server_info(settings)
        if info is not None and info.pid == proc.pid:
            return proc.pid, log
        if proc.poll() is not None:
            raise DevServerError(
                f"floe dev exited with code {proc.returncode} before it was ready; see {log}"
            )
        time.sleep(0.2)
    proc.terminate()
    raise DevServerError(f"floe dev was not ready after {timeout:g} s; see {log}")


@dev.command()
def status() -> None:
    """Is a warm session serving this lakehouse? Its pid, commands run, memory."""
    from floe.dev.client import Refused, request

    settings = Settings.from_env()
    info = read_server_info(settings)
    if info is None:
        click.echo(f"no warm session for {settings.home} (`floe dev` starts one)")
        raise SystemExit(1)
    try:
        answer = request(info, "status")
    except (OSError, Refused) as exc:
        click.echo(f"stale state file: the warm session (pid {info.pid}) does not answer ({exc})")
        raise SystemExit(1) from exc
    running = answer.get("running") or "nothing"
    click.echo(
        f"warm session pid {answer['pid']} on 127.0.0.1:{info.port} for {answer['home']}: "
        f"{answer['commands']} commands run, running {running}, RSS {answer.get('rss_mb')} MiB"
    )


@dev.command()
def stop() -> None:
    """Stop the warm session after its running command (if any)."""
    from floe.dev.client import Refused, is_alive, request

    settings = Settings.from_env()
    info = read_server_info(settings)
    if info is None or not is_alive(info):
        click.echo(f"no warm session for {settings.home}")
        return
    try:
        request(info, "stop")
    except (OSError, Refused) as exc:
        raise click.ClickException(f"could not stop pid {info.pid}: {exc}") from exc
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and is_alive(info):
        time.sleep(0.2)
    click.echo(f"floe dev: stopped the warm session (pid {info.pid})")


@dev.command()
@click.option("--interval", default=0.3, show_default=True, help="Seconds between file scans.")
def watch(interval: float) -> None:
    """On saving a model or YAML file, rebuild that model and its tests in the warm session."""
    from floe.dev.watch import watch_project

    settings = Settings.from_env()
    try:
        watch_project(settings, interval=interval)
    except DevServerError as exc:
        raise click.ClickException(str(exc)) from exc


@dev.command("install-entry")
@click.option(
    "--bin-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where to write `dbt` (default: this environment's bin/, beside dbt's own).",
)
def install_entry(bin_dir: Path | None) -> None:
    """Make `dbt` ask the warm session before importing dbt (falls back to dbt's CLI)."""
    from floe.dev.entry import SCRIPT

    target = (bin_dir or Path(sys.executable).parent) / "dbt"
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(".dbt.floe.tmp")
    tmp.write_text(SCRIPT.format(python=sys.executable))
    tmp.chmod(0o755)
    tmp.replace(target)
    click.echo(f"floe dev: {target} asks a warm session first, else runs dbt's CLI")


@dev.command("spark-archive")
@click.option(
    "--path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write it (default: this environment's, which floe uses when present).",
)
def spark_archive(path: Path | None) -> None:
    """Write the driver JVM's class-data-sharing archive: Spark then starts in about
    half the time (docs/decisions/0052-class-data-sharing-for-spark.md)."""
    from floe.runtime.cds import ArchiveError, write_archive
    from floe.runtime.settings import default_cds_archive

    target = path or default_cds_archive()
    try:
        written = write_archive(target)
    except ArchiveError as exc:
        raise click.ClickException(f"{exc} (floe runs without it, only slower)") from exc
    size = written.stat().st_size / 2**20
    click.echo(f"floe dev: {written} ({size:.0f} MB): Spark's classes, loaded once")


@dev.command("build-jvm")
def build_jvm() -> None:
    """Compile floe's JVM decoder against pyspark's jars (needs a JDK's javac;
    docs/decisions/0058-jvm-decoder-fast-path.md). Without it, Python decodes every line."""
    import subprocess

    from floe.runtime.jars import build_decode_jar

    try:
        jar = build_decode_jar()
    except (OSError, subprocess.CalledProcessError) as exc:
        raise click.ClickException(f"the JVM decoder did not compile: {exc}") from exc
    click.echo(f"floe dev: {jar}: the JVM stream decoder")
