"""`floe stream`: continuous (or availableNow) decode of the landed streams."""

from __future__ import annotations

import signal
import threading
import time
from typing import TYPE_CHECKING, TextIO

import click

from floe.runtime import Settings

if TYPE_CHECKING:
    from floe.streaming.bus import BatchSummary


@click.command()
@click.option(
    "--window",
    default="100 seconds",
    show_default=True,
    help="Micro-batch interval (processingTime trigger; the seed's Glue window).",
)
@click.option(
    "--max-files-per-trigger", default=50, show_default=True, help="Files per micro-batch."
)
@click.option(
    "--available-now",
    is_flag=True,
    help="Process everything landed (and on the brokers) so far, then stop (a catch-up run).",
)
def stream(window: str, max_files_per_trigger: int, available_now: bool) -> None:
    """Decode landed stream feeds and consume the kafka / kinesis feeds, continuously.

    Landed files go through one Structured Streaming query; broker feeds get one
    exactly-once micro-batch each per window (as ``floe consume``), taking turns with
    the file batches. Stops cleanly on SIGINT/SIGTERM after the batch in progress; a
    restart resumes from the checkpoint under $FLOE_HOME/state/stream and from the
    positions committed with the rows (docs/streams.md).
    """
    from floe.feeds import load_feeds
    from floe.runtime import get_spark
    from floe.runtime.locking import WriterLockTimeout, writer_lock
    from floe.streaming.bus import BusJob, bus_feeds
    from floe.streaming.job import StreamJob

    settings = Settings.from_env()
    seconds = window_seconds(window)
    # The session start creates the fixed schemas (a catalog write): under the writer
    # lock, like every batch (docs/reliability.md).
    try:
        with writer_lock(settings, "floe stream"):
            spark = get_spark(settings)
    except WriterLockTimeout as exc:
        raise click.ClickException(str(exc)) from exc
    job = StreamJob(
        spark,
        settings,
        max_files_per_trigger=max_files_per_trigger,
        window=window,
        available_now=available_now,
    )
    brokers = bus_feeds(load_feeds(job.project_dir))  # type: ignore[arg-type]
    if not job.streams and not brokers:
        raise click.ClickException(
            "no stream, kafka or kinesis feeds are declared (meta.floe.kind)"
        )
    bus = BusJob(
        spark,
        settings,
        job.project_dir,  # type: ignore[arg-type]
        brokers,
        window_seconds=seconds,
        turn=job.turn,
        owner="floe stream",
        on_batch=_echo_batch,
    )
    query = job.start() if job.streams else None
    stopper: list[threading.Thread] = []

    def on_signal(signum: int, _frame: object) -> None:
        if stopper:
            return
        click.echo(f"signal {signum}: stopping after the current batch", err=True)
        bus.stop.set()
        if query is None:
            return
        # Off the main thread: request_stop waits for the running batch.
        thread = threading.Thread(target=job.request_stop, args=(query,), daemon=True)
        stopper.append(thread)
        thread.start()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    names = ", ".join(f.name for f in [*job.streams, *brokers])
    click.echo(f"floe stream: {names} under {settings.landing}, every {window}")
    next_bus = 0.0
    try:
        while (query is not None and query.isActive) or (brokers and not bus.stop.is_set()):
            if query is not None and query.isActive:
                query.awaitTermination(1.0)
            elif query is not None and query.exception() is not None and not job.stopping:
                # The file query failed while a broker batch ran: say so, don't go on.
                raise click.ClickException(f"the landed-files stream failed: {query.exception()}")
            job.poll_reference()
            if brokers and not bus.stop.is_set() and time.monotonic() >= next_bus:
                started = time.monotonic()
                read = bus.run_once()
                if available_now and not read:
                    bus.stop.set()  # the brokers are caught up
                next_bus = started + (0.0 if available_now else seconds)
            elif query is None or not query.isActive:
                bus.stop.wait(1.0)  # brokers only now: sleep until their next window
    except Exception as exc:  # the stop request aborts a batch that started meanwhile
        if not job.stopping and not bus.stop.is_set():
            raise click.ClickException(str(exc)) from exc
    for thread in stopper:
        thread.join()
    done = [b for b in job.batches if len(b) > 2]
    click.echo(
        f"floe stream stopped: {len(job.batches)} batch(es), {len(done)} with new files, "
        f"{len(bus.batches)} broker batch(es), {sum(b.records_in for b in bus.batches)} "
        "record(s)"
    )


def window_seconds(window: str) -> float:
    """``--window`` text (``100 seconds``, ``2 minutes``, ``500 ms``) in seconds."""
    units = {"ms": 0.001, "millisecond": 0.001, "second": 1.0, "sec": 1.0, "s": 1.0}
    units |= {"minute": 60.0, "min": 60.0, "m": 60.0, "hour": 3600.0, "h": 3600.0}
    parts = window.split()
    try:
        amount = float(parts[0])
        unit = parts[1].lower() if len(parts) > 1 else "second"
        return amount * (units[unit] if unit in units else units[unit.removesuffix("s")])
    except (IndexError, KeyError, ValueError):
        raise click.BadParameter(
            f"{window!r}: give an amount and a unit, e.g. '100 seconds' or '2 minutes'",
            param_hint="--window",
        ) from None


def _echo_batch(b: BatchSummary) -> None:
    click.echo(
        f"batch {b.feed}: {b.segments} segment(s), {b.records_in} in, {b.loaded} loaded, "
        f"{b.quarantined} quarantined",
        err=True,
    )


@click.command()
@click.argument("feeds", nargs=-1)
@click.option(
    "--window-seconds",
    default=100.0,
    show_default=True,
    help="Seconds between micro-batches (the seed's Glue window).",
)
@click.option("--max-records", type=int, help="Records per feed per batch (back-pressure).")
@click.option("--max-bytes", type=int, help="Payload bytes per feed per batch (back-pressure).")
@click.option("--until-idle", is_flag=True, help="Batch until nothing new is read, then stop.")
def consume(
    feeds: tuple[str, ...],
    window_seconds: float,
    max_records: int | None,
    max_bytes: int | None,
    until_idle: bool,
) -> None:
    """Consume the kafka / kinesis feeds (all, or FEEDS) exactly once into raw.<feed>.

    Stops cleanly on SIGINT/SIGTERM after the batch in progress; a restart resumes
    from the positions committed with the rows (docs/streams.md).
    """
    from floe.feeds import load_feeds
    from floe.runtime import get_spark
    from floe.streaming.bus import BusJob, bus_feeds

    settings = Settings.from_env()
    project_dir = settings.dbt_project_dir()
    chosen = bus_feeds(load_feeds(project_dir), feeds)
    if not chosen:
        raise click.ClickException("no kafka or kinesis feeds are declared")
    job = BusJob(
        get_spark(settings),
        settings,
        project_dir,
        chosen,
        window_seconds=window_seconds,
        max_records=max_records,
        max_bytes=max_bytes,
        on_batch=_echo_batch,
    )

    def on_signal(signum: int, _frame: object) -> None:
        click.echo(f"signal {signum}: stopping after the current batch", err=True)
        job.stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    names = ", ".join(f.name for f in chosen)
    click.echo(f"floe consume: {names}, every {window_seconds:g} s", err=True)
    job.run(until_idle=until_idle)
    total = sum(b.records_in for b in job.batches)
    click.echo(f"floe consume stopped: {len(job.batches)} batch(es), {total} record(s)")


@click.command()
@click.argument("feed")
@click.option(
    "--input",
    "source",
    type=click.File("r"),
    default="-",
    show_default=True,
    help="JSON records, one object a line.",
)
@click.option("--version", "version", type=int, help="Registry version (default: the latest).")
@click.option("--compress", is_flag=True, help="zlib-compress the payloads (Glue framing 0x05).")
def produce(feed: str, source: TextIO, version: int | None, compress: bool) -> None:
    """Frame JSON records with FEED's registry schema and send them where it reads.

    A kafka feed's topic, a kinesis feed's stream, or a new landing file of a stream
    feed (docs/streams.md).
    """
    import json

    from floe.feeds import find_feed, load_feeds
    from floe.streaming.produce import ProduceError
    from floe.streaming.produce import produce as run

    settings = Settings.from_env()
    project_dir = settings.dbt_project_dir()
    records = []
    for number, line in enumerate(source, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise click.ClickException(f"input line {number} is not JSON: {exc}") from exc
    try:
        done = run(
            find_feed(load_feeds(project_dir), feed),
            records,
            settings=settings,
            project_dir=project_dir,
            version=version,
            compress=compress,
        )
    except ProduceError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"{done.count} record(s), schema version {done.version}, to {done.target}")
