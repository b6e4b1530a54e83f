"""dbt's entry point for the `floe` adapter type (see floe.adapter)."""

from dbt.adapters.base import AdapterPlugin

from dbt.include import floe as floe_include
from floe.adapter import FloeAdapter, FloeCredentials

Plugin = AdapterPlugin(
    adapter=FloeAdapter,  # type: ignore[arg-type]
    credentials=FloeCredentials,
    include_path=floe_include.PACKAGE_PATH,
    dependencies=["spark"],
)
