"""Privacy: PII tags, masking functions, erasure and rectification (docs/privacy.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from floe.runtime import Settings


def session_hook(spark: SparkSession, settings: Settings) -> None:
    """The privacy room's session hook: its SQL masking functions in ``spark``.

    The edges (CLI, adapter, test fixtures) register it with
    ``floe.runtime.add_session_hook``; one function, so registering it twice runs it once.
    """
    # Function-local: floe.privacy.functions imports pandas, which `floe --help` and a
    # dbt process that opens no connection must not pay for.
    from floe.privacy.functions import register_functions

    register_functions(spark, settings)
