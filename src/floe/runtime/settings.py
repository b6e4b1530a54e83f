"""Every setting floe reads from the environment, read in one place.

:meth:`Settings.from_env` is the only code in floe that reads ``FLOE_*`` variables (and
the few others it honours: ``DBT_PROJECT_DIR``, ``AWS_ENDPOINT_URL``, ``AWS_REGION``,
``AWS_DEFAULT_REGION``). Entry points (CLI commands, dbt Python models, the adapter)
build a ``Settings`` once and pass it, or values from it, to everything else. The
variables, their defaults and meaning are listed in ``docs/runtime.md`` and in the
README's configuration table.

Every path is absolute so Spark, pyiceberg and dbt agree whatever their cwd.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

# WAL + busy timeout: a CTAS followed by CACHE TABLE and a MERGE in one session hit
# SQLITE_BUSY without them (docs/runtime.md, "Catalog").
SQLITE_URI_PARAMS = "journal_mode=WAL&busy_timeout=30000"

# Jar key (floe.runtime.jars.JARS) -> the variable that overrides where it is found.
JAR_OVERRIDE_VARS = {
    "iceberg": "FLOE_ICEBERG_JAR",
    "sqlite": "FLOE_SQLITE_JDBC_JAR",
    "postgresql": "FLOE_POSTGRESQL_JDBC_JAR",
}

DEFAULT_AWS_REGION = "us-east-1"
DEFAULT_DRIVER_HOST = "127.0.0.1"

# Where schema version UUIDs of landed records resolve (floe.registry.backends.BACKENDS;
# "file" is an alias of "local"). Listed here so a typo fails when Settings are read.
REGISTRY_BACKENDS = ("local", "file", "glue")

# Hostile-input caps of the stream decode (docs/feeds.md, "Hostile input"). A Kinesis
# record carries at most 10 MiB; its base64 text in a JSONL envelope is 4/3 of that.
DEFAULT_MAX_RECORD_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_INFLATED_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_DEPTH = 128
DEFAULT_SPLIT_BYTES = 64 * 1024 * 1024
DECODE_ENGINES = ("auto", "python", "jvm")
# The driver JVM's JIT: "late-c2" (hot methods reach C2 after 10x HotSpot's default
# counts, so a build's many short-lived paths stay in C1) or "hotspot" (the JVM's own
# thresholds). docs/decisions/0060-late-c2-jit.md.
JIT_MODES = ("late-c2", "hotspot")
# The driver JVM's garbage collector: "parallel" (throughput; short pauses do not matter
# to a batch of Spark tasks) or "g1" (HotSpot's default). docs/decisions/0070.
GC_MODES = ("parallel", "g1")


def sqlite_file(catalog_uri: str) -> Path | None:
    """The file of a ``jdbc:sqlite:`` catalog URI (its options cut off), else None."""
    if not catalog_uri.startswith("jdbc:sqlite:"):
        return None
    return Path(catalog_uri.removeprefix("jdbc:sqlite:").split("?", 1)[0])


# A landed file younger than this (by modification time) may still be being written.
DEFAULT_SETTLE_SECONDS = 5.0
# How long a writer waits for another writer's lock (docs/reliability.md).
DEFAULT_LOCK_TIMEOUT = 600.0

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


class SettingsError(ValueError):
    """An environment variable holds a value floe cannot use; the message names it."""


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{name}={raw!r} is not a boolean: use 1/true or 0/false")


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise SettingsError(f"{name}={raw!r} is not a positive integer")
    return value


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also rejects NaN
        raise SettingsError(f"{name}={raw!r} is not a number of seconds >= 0")
    return value


def _choice(env: Mapping[str, str], name: str, default: str, choices: tuple[str, ...]) -> str:
    value = (env.get(name) or default).strip().lower()
    if value not in choices:
        raise SettingsError(f"{name}={env.get(name)!r}: use one of {', '.join(choices)}")
    return value


def _memory(env: Mapping[str, str], name: str, default: str) -> str:
    """A JVM memory size such as ``512m`` or ``2g`` (what Spark's ``*.memory`` settings take)."""
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    digits, unit = raw[:-1], raw[-1:].lower()
    if unit.isdigit():
        digits, unit = raw, ""
    if not digits.isdigit() or int(digits) < 1 or unit not in ("", "k", "m", "g", "t"):
        raise SettingsError(f"{name}={raw!r} is not a memory size: use e.g. 512m or 2g")
    return raw


def child_environment(overrides: Mapping[str, str]) -> dict[str, str]:
    """This process's environment plus ``overrides``: the ``env`` of a child process.

    Kept here so that reading the environment stays in this module.
    """
    return {**os.environ, **overrides}


def _uri(value: str | None) -> str | None:
    """A location as a URI: a path becomes an absolute ``file:`` URI, a URI is kept."""
    if not value:
        return None
    if "://" in value or value.startswith("file:"):
        return value
    return Path(value).expanduser().resolve().as_uri()


def _find_project(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / "dbt_project.yml").is_file():
            return folder
    return None


@dataclass(frozen=True)
class Settings:
    """Locations and knobs of one floe environment (one lakehouse).

    Construct with :meth:`from_env`; the defaults below are those of an empty
    environment except for the four locations, which ``from_env`` derives from
    ``FLOE_HOME``.
    """

    # -- where the lakehouse lives
    home: Path
    landing: Path
    warehouse: str
    catalog_uri: str
    catalog_name: str = "lake"
    catalog_user: str | None = None
    catalog_password: str | None = field(default=None, repr=False)
    # -- the dbt project (None: found from the working directory, see dbt_project_dir)
    project_dir: Path | None = None
    # -- the environment dbt builds into (an Iceberg branch per table; docs/envs.md)
    env: str | None = None
    # -- Spark (local sessions; a cluster brings its own)
    spark_master: str | None = None
    spark_cores: str = "*"
    driver_memory: str = "4g"
    spark_ui: bool = False
    shuffle_partitions: int = 4
    spark_log_level: str = "ERROR"
    # A cold `dbt` starts Spark while dbt parses (ADR 0043); false: when it first connects.
    spark_prestart: bool = True
    # The driver JVM's class-data-sharing archive (floe.runtime.cds; ADR 0052): None off.
    spark_cds: Path | None = None
    # Where a cold start remembers the driver's command line (floe.runtime.launcher): None off.
    spark_launch_cache: Path | None = None
    # -- Spark on a cluster (spark://, yarn, k8s:// masters; docs/cluster.md)
    driver_host: str = DEFAULT_DRIVER_HOST
    executor_memory: str = "1g"
    event_log_dir: str | None = None
    # -- `floe cluster up`: the loopback cluster's worker and PostgreSQL
    cluster_cores: int = 2
    cluster_memory: str = "2g"
    cluster_pg_bin: Path | None = None
    cluster_run_as: str = "postgres"
    # -- jars
    allow_maven: bool = False
    iceberg_jar: str | None = None
    sqlite_jdbc_jar: str | None = None
    postgresql_jdbc_jar: str | None = None
    # -- schema registry (Glue backend)
    glue_endpoint: str | None = None
    aws_region: str = DEFAULT_AWS_REGION
    # -- stream ingestion (docs/feeds.md)
    registry_backend: str = "local"  # where the decode resolves schema version UUIDs
    # Brokers of the kafka / kinesis feed kinds (docs/streams.md); never in YAML.
    kafka_bootstrap_servers: str | None = None
    kinesis_endpoint: str | None = None
    settle_seconds: float = DEFAULT_SETTLE_SECONDS
    # -- the writer lock (docs/reliability.md)
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    decode_max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    decode_max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    decode_max_inflated_bytes: int = DEFAULT_MAX_INFLATED_BYTES
    decode_max_depth: int = DEFAULT_MAX_DEPTH
    decode_split_bytes: int = DEFAULT_SPLIT_BYTES
    # Who decodes landed stream files: "auto" (the JVM decoder where its jar is built and
    # the schema allows it, Python for the rest), "python" (every line in Python) or
    # "jvm" (as auto, but a missing jar is an error). docs/decisions/0058.
    decode_engine: str = "auto"
    # The driver JVM's JIT thresholds (JIT_MODES; local sessions' executors share them).
    jvm_jit: str = "late-c2"
    # The driver JVM's garbage collector (GC_MODES; local sessions' executors share it).
    jvm_gc: str = "parallel"
    # -- privacy (docs/privacy.md): the salt of irreversible hashes and the key of
    # deterministic encryption; secrets, so kept out of repr
    privacy_salt: str | None = field(default=None, repr=False)
    privacy_key: str | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``env`` (default: this process's environment)."""
        env = dict(os.environ if env is None else env)
        home = Path(env.get("FLOE_HOME", ".floe")).expanduser().resolve()
        landing = Path(env.get("FLOE_LANDING", home / "landing")).expanduser().resolve()
        warehouse = _uri(env.get("FLOE_WAREHOUSE")) or (home / "warehouse").as_uri()
        catalog_uri = env.get("FLOE_CATALOG_URI") or (
            f"jdbc:sqlite:{home / 'catalog.db'}?{SQLITE_URI_PARAMS}"
        )
        project = env.get("FLOE_PROJECT_DIR") or env.get("DBT_PROJECT_DIR")
        return cls(
            home=home,
            landing=landing,
            warehouse=warehouse,
            catalog_uri=catalog_uri,
            catalog_user=env.get("FLOE_CATALOG_USER") or None,
            catalog_password=env.get("FLOE_CATALOG_PASSWORD") or None,
            project_dir=Path(project).expanduser().resolve() if project else None,
            env=env.get("FLOE_ENV") or None,
            spark_master=env.get("FLOE_SPARK_MASTER") or None,
            spark_cores=env.get("FLOE_SPARK_CORES") or "*",
            driver_memory=env.get("FLOE_DRIVER_MEMORY") or "4g",
            spark_ui=_flag(env, "FLOE_SPARK_UI", False),
            shuffle_partitions=_positive_int(env, "FLOE_SHUFFLE_PARTITIONS", 4),
            spark_log_level=env.get("FLOE_SPARK_LOG_LEVEL") or "ERROR",
            spark_prestart=_flag(env, "FLOE_SPARK_PRESTART", True),
            spark_cds=_cds_archive(env.get("FLOE_SPARK_CDS")),
            spark_launch_cache=_launch_cache(env.get("FLOE_SPARK_LAUNCH_CACHE")),
            driver_host=env.get("FLOE_DRIVER_HOST") or DEFAULT_DRIVER_HOST,
            executor_memory=_memory(env, "FLOE_EXECUTOR_MEMORY", "1g"),
            event_log_dir=_uri(env.get("FLOE_SPARK_EVENT_LOG")),
            cluster_cores=_positive_int(env, "FLOE_CLUSTER_CORES", 2),
            cluster_memory=_memory(env, "FLOE_CLUSTER_MEMORY", "2g"),
            cluster_pg_bin=(
                Path(env["FLOE_CLUSTER_PG_BIN"]).expanduser().resolve()
                if env.get("FLOE_CLUSTER_PG_BIN")
                else None
            ),
            cluster_run_as=env.get("FLOE_CLUSTER_RUN_AS") or "postgres",
            allow_maven=_flag(env, "FLOE_ALLOW_MAVEN", False),
            iceberg_jar=env.get(JAR_OVERRIDE_VARS["iceberg"]) or None,
            sqlite_jdbc_jar=env.get(JAR_OVERRIDE_VARS["sqlite"]) or None,
            postgresql_jdbc_jar=env.get(JAR_OVERRIDE_VARS["postgresql"]) or None,
            glue_endpoint=env.get("FLOE_GLUE_ENDPOINT") or env.get("AWS_ENDPOINT_URL") or None,
            aws_region=(
                env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or DEFAULT_AWS_REGION
            ),
            registry_backend=_choice(env, "FLOE_REGISTRY_BACKEND", "local", REGISTRY_BACKENDS),
            kafka_bootstrap_servers=env.get("FLOE_KAFKA_BOOTSTRAP_SERVERS") or None,
            kinesis_endpoint=(
                env.get("FLOE_KINESIS_ENDPOINT") or env.get("AWS_ENDPOINT_URL") or None
            ),
            settle_seconds=_seconds(env, "FLOE_SETTLE_SECONDS", DEFAULT_SETTLE_SECONDS),
            lock_timeout=_seconds(env, "FLOE_LOCK_TIMEOUT", DEFAULT_LOCK_TIMEOUT),
            decode_max_line_bytes=_positive_int(
                env, "FLOE_DECODE_MAX_LINE_BYTES", DEFAULT_MAX_LINE_BYTES
            ),
            decode_max_record_bytes=_positive_int(
                env, "FLOE_DECODE_MAX_RECORD_BYTES", DEFAULT_MAX_RECORD_BYTES
            ),
            decode_max_inflated_bytes=_positive_int(
                env, "FLOE_DECODE_MAX_INFLATED_BYTES", DEFAULT_MAX_INFLATED_BYTES
            ),
            decode_max_depth=_positive_int(env, "FLOE_DECODE_MAX_DEPTH", DEFAULT_MAX_DEPTH),
            decode_split_bytes=_positive_int(env, "FLOE_DECODE_SPLIT_BYTES", DEFAULT_SPLIT_BYTES),
            decode_engine=_choice(env, "FLOE_DECODE_ENGINE", "auto", DECODE_ENGINES),
            jvm_jit=_choice(env, "FLOE_JVM_JIT", "late-c2", JIT_MODES),
            jvm_gc=_choice(env, "FLOE_JVM_GC", "parallel", GC_MODES),
            privacy_salt=env.get("FLOE_PRIVACY_SALT") or None,
            privacy_key=env.get("FLOE_PRIVACY_KEY") or None,
        )

    # -- derived places

    @property
    def is_sqlite(self) -> bool:
        return self.catalog_uri.startswith("jdbc:sqlite:")

    @property
    def sqlite_path(self) -> Path | None:
        return sqlite_file(self.catalog_uri)

    @property
    def warehouse_path(self) -> Path | None:
        """The warehouse as a local directory, when it is one."""
        parsed = urlparse(self.warehouse)
        return Path(parsed.path) if parsed.scheme == "file" else None

    @property
    def state_dir(self) -> Path:
        """Checkpoints, ledgers and other engine state that is not a table."""
        return self.home / "state"

    @property
    def registry_dir(self) -> Path:
        """The file-backed schema registry (``registry.json`` inside)."""
        return self.state_dir / "registry"

    @property
    def privacy_dir(self) -> Path:
        """Local privacy state: the development secrets file and the erasure lock."""
        return self.state_dir / "privacy"

    @property
    def spark_master_url(self) -> str:
        """``FLOE_SPARK_MASTER``, else ``local[FLOE_SPARK_CORES]``."""
        return self.spark_master or f"local[{self.spark_cores}]"

    @property
    def is_local_master(self) -> bool:
        """Spark runs inside this process (``local``, ``local[N]``, ``local[*]``...)."""
        return self.spark_master_url.split("[", 1)[0] in ("local", "local-cluster")

    @property
    def cluster_dir(self) -> Path:
        """State of the loopback cluster of ``floe cluster up`` (pids, logs, data)."""
        return self.home / "cluster"

    def jar_override(self, key: str) -> str | None:
        """The path set for jar ``key`` (``iceberg``, ``sqlite``, ``postgresql``), if any."""
        overrides = {
            "iceberg": self.iceberg_jar,
            "sqlite": self.sqlite_jdbc_jar,
            "postgresql": self.postgresql_jdbc_jar,
        }
        if key not in overrides:
            raise KeyError(f"no jar {key!r}: known jars are {', '.join(overrides)}")
        return overrides[key]

    def dbt_project_dir(self) -> Path:
        """The dbt project: ``project_dir`` if set, else the nearest ``dbt_project.yml``
        above the working directory, else above floe's own source (an editable install).
        """
        if self.project_dir is not None:
            return self.project_dir
        return find_dbt_project()

    @property
    def schemas_dir(self) -> Path:
        """``schemas/`` (schemas as code): in ``project_dir`` when set, else in the working
        directory when it has one, else in the dbt project found by :meth:`dbt_project_dir`.

        The path may not exist; readers report that with the path.
        """
        if self.project_dir is not None:
            return self.project_dir / "schemas"
        here = Path("schemas").resolve()
        if here.is_dir():
            return here
        try:
            return self.dbt_project_dir() / "schemas"
        except FileNotFoundError:
            return here

    def ensure_dirs(self) -> None:
        for path in (self.home, self.landing, self.state_dir):
            path.mkdir(parents=True, exist_ok=True)
        if self.warehouse_path is not None:
            self.warehouse_path.mkdir(parents=True, exist_ok=True)
        if self.sqlite_path is not None:
            self.sqlite_path.parent.mkdir(parents=True, exist_ok=True)
        if self.event_log_dir and urlparse(self.event_log_dir).scheme == "file":
            # Spark refuses to start when its event log directory is missing.
            Path(urlparse(self.event_log_dir).path).mkdir(parents=True, exist_ok=True)


def find_dbt_project() -> Path:
    """The nearest ``dbt_project.yml`` above the working directory, else above floe's own
    source (an editable install); FileNotFoundError says how to name one."""
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        found = _find_project(start)
        if found is not None:
            return found
    raise FileNotFoundError(
        "no dbt_project.yml found above the working directory; set FLOE_PROJECT_DIR"
    )


def default_cds_archive() -> Path:
    """Where `make setup` writes the driver's class-data-sharing archive: inside this
    Python environment, so a new venv (new jars, a new class path) never meets an old
    archive (floe.runtime.cds)."""
    return Path(sys.prefix) / "share" / "floe" / "spark-cds.jsa"


def _launch_cache(value: str | None) -> Path | None:
    """FLOE_SPARK_LAUNCH_CACHE: unset = inside this Python environment (beside the CDS
    archive), off/false/0 = none, else a directory."""
    if value is None or value.strip() == "":
        return Path(sys.prefix) / "share" / "floe" / "spark-launch"
    if value.strip().lower() in ("off", "false", "0", "no"):
        return None
    return Path(value).expanduser().resolve()


def _cds_archive(value: str | None) -> Path | None:
    """FLOE_SPARK_CDS: unset = the environment's archive (used if `make setup` wrote it),
    off/false/0 = none, else a path."""
    if value is None or value.strip() == "":
        return default_cds_archive()
    if value.strip().lower() in ("off", "false", "0", "no"):
        return None
    return Path(value).expanduser().resolve()
