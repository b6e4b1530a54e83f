"""Runtime: settings, jars, Spark configuration and catalog access, in one place.

The contract (variables, catalog, jars, Spark configuration) is ``docs/runtime.md``.
"""

from floe.runtime.catalog import open_catalog
from floe.runtime.jars import JarNotFoundError, resolve_jars
from floe.runtime.settings import Settings
from floe.runtime.spark import SCHEMAS, ensure_schemas, get_spark, spark_conf, use_settings

__all__ = [
    "SCHEMAS",
    "JarNotFoundError",
    "Settings",
    "ensure_schemas",
    "get_spark",
    "open_catalog",
    "resolve_jars",
    "spark_conf",
    "use_settings",
]
