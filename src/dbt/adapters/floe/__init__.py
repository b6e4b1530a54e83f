"""dbt's entry point for the `floe` adapter type (see floe.adapter)."""

# Before anything heavy: a `dbt ...` command line runs in the warm session of `floe dev`
# when one serves this lakehouse, and this process exits with its code (docs/dev.md).
from floe.dev.client import forward_dbt_cli

forward_dbt_cli()

# Cold: the JVM starts now, while dbt reads and parses the project (ADR 0043).
from floe.dev.coldstart import prestart_for_dbt_cli  # noqa: E402

prestart_for_dbt_cli()

from dbt.adapters.base import AdapterPlugin  # noqa: E402

from dbt.include import floe as floe_include  # noqa: E402
from floe.adapter import FloeAdapter, FloeCredentials  # noqa: E402

Plugin = AdapterPlugin(
    adapter=FloeAdapter,  # type: ignore[arg-type]
    credentials=FloeCredentials,
    include_path=floe_include.PACKAGE_PATH,
    dependencies=["spark"],
)
