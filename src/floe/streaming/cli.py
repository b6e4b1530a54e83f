"""`floe stream`: continuous (or availableNow) decode of the landed streams."""

from __future__ import annotations

import signal
import threading

import click

from floe.runtime import Settings


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
    help="Process everything landed so far, then stop (a catch-up run).",
)
def stream(window: str, max_files_per_trigger: int, available_now: bool) -> None:
    """Decode landed stream feeds into raw.<feed> / raw.quarantine as they arrive.

    Stops cleanly on SIGINT/SIGTERM after the batch in progress; a restart
    resumes from the checkpoint under $FLOE_HOME/state/stream.
    """
    from floe.runtime import get_spark
    from floe.runtime.locking import WriterLockTimeout, writer_lock
    from floe.streaming.job import StreamJob

    settings = Settings.from_env()
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
    query = job.start()
    stopper: list[threading.Thread] = []

    def on_signal(signum: int, _frame: object) -> None:
        if stopper:
            return
        click.echo(f"signal {signum}: stopping after the current batch", err=True)
        # Off the main thread: request_stop waits for the running batch.
        thread = threading.Thread(target=job.request_stop, args=(query,), daemon=True)
        stopper.append(thread)
        thread.start()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    names = ", ".join(f.name for f in job.streams)
    click.echo(f"floe stream: {names} under {settings.landing}, every {window}")
    try:
        while query.isActive:
            query.awaitTermination(1.0)
            job.poll_reference()
    except Exception as exc:  # the stop request aborts a batch that started meanwhile
        if not job.stopping:
            raise click.ClickException(str(exc)) from exc
    for thread in stopper:
        thread.join()
    done = [b for b in job.batches if len(b) > 2]
    click.echo(f"floe stream stopped: {len(job.batches)} batch(es), {len(done)} with new files")
