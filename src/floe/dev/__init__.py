"""The analyst's edit-run loop: a warm session that ordinary dbt commands reuse.

``floe dev`` starts a long-lived server process (:mod:`floe.dev.server`) holding one
SparkSession with the Iceberg catalog open and running dbt commands through dbt's
programmatic runner. A plain ``dbt run/build/compile/show/test ...`` typed in the project
finds it from the floe adapter plug-in (:func:`floe.dev.client.forward_dbt_cli`) and runs
there, its output and exit code streamed back; with no server it runs cold as before,
after a one-line hint. ``floe dev watch`` rebuilds a model (and its tests) in the warm
session each time its file is saved (:mod:`floe.dev.watch`).

The contract is ``docs/dev.md``; why a server-side dbtRunner:
``docs/decisions/0029-warm-dev-session.md``.
"""

from floe.dev.protocol import DevServerError, ServerInfo, read_server_info

__all__ = ["DevServerError", "ServerInfo", "read_server_info"]
