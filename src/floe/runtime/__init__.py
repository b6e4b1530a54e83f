"""Runtime: settings, jars, Spark configuration and catalog access, in one place.

The contract (variables, catalog, jars, Spark configuration) is ``docs/runtime.md``.
"""

from floe.runtime.catalog import open_catalog
from floe.runtime.jars import JarNotFoundError, resolve_jars
from floe.runtime.session import (
    SCHEMAS,
    NoSessionError,
    add_session_hook,
    ensure_schemas,
    get_spark,
    session_settings,
    spark_conf,
    use_settings,
)
from floe.runtime.settings import Settings

__all__ = [
    "SCHEMAS",
    "JarNotFoundError",
    "NoSessionError",
    "Settings",
    "add_session_hook",
    "ensure_schemas",
    "get_spark",
    "open_catalog",
    "resolve_jars",
    "session_settings",
    "spark_conf",
    "use_settings",
]
