"""Find the JVM jars floe needs, in one place (``docs/runtime.md``, "Jars").

Order: an explicit override (``Settings.iceberg_jar`` etc., from ``FLOE_*_JAR``), then
the jar shipped by a pip package / Debian package, then (only when a machine is online
and ``Settings.allow_maven``) Maven coordinates for ``spark.jars.packages``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from floe.runtime.settings import JAR_OVERRIDE_VARS, Settings

ICEBERG_VERSION = "1.10.0"
SCALA = "2.12"
SPARK_MINOR = "3.5"


class JarNotFoundError(RuntimeError):
    """A required jar is missing; the message says how to provide it."""


@dataclass(frozen=True)
class JarSpec:
    name: str
    env_var: str
    maven: str
    candidates: tuple[str, ...] = field(default=())
    hint: str = ""


def _iceberg_candidates() -> tuple[str, ...]:
    spec = importlib.util.find_spec("snowpark_connect_deps_iceberg")
    if spec is None or spec.origin is None:
        return ()
    jars = Path(spec.origin).parent / "jars"
    return tuple(
        str(p) for p in sorted(jars.glob(f"iceberg-spark-runtime-{SPARK_MINOR}_{SCALA}-*.jar"))
    )


JARS: dict[str, JarSpec] = {
    "iceberg": JarSpec(
        name="Iceberg Spark runtime",
        env_var=JAR_OVERRIDE_VARS["iceberg"],
        maven=f"org.apache.iceberg:iceberg-spark-runtime-{SPARK_MINOR}_{SCALA}:{ICEBERG_VERSION}",
        hint="pip install snowpark-connect-deps-iceberg==1.0.2 (make setup does this)",
    ),
    "sqlite": JarSpec(
        name="SQLite JDBC driver",
        env_var=JAR_OVERRIDE_VARS["sqlite"],
        maven="org.xerial:sqlite-jdbc:3.46.1.3",
        candidates=("/usr/share/java/sqlite-jdbc.jar",),
        hint="apt-get install libxerial-sqlite-jdbc-java (make setup does this)",
    ),
    "postgresql": JarSpec(
        name="PostgreSQL JDBC driver",
        env_var=JAR_OVERRIDE_VARS["postgresql"],
        maven="org.postgresql:postgresql:42.7.4",
        candidates=("/usr/share/java/postgresql.jar",),
        hint="apt-get install libpostgresql-jdbc-java (make setup does this)",
    ),
}


@dataclass(frozen=True)
class ResolvedJars:
    paths: tuple[str, ...]
    maven: tuple[str, ...]


def resolve_jars(names: Sequence[str], settings: Settings) -> ResolvedJars:
    """Local jar paths for ``names``, or Maven coordinates when ``settings.allow_maven``."""
    paths: list[str] = []
    maven: list[str] = []
    missing: list[str] = []
    for key in names:
        spec = JARS[key]
        override = settings.jar_override(key)
        if override:
            if not Path(override).is_file():
                raise JarNotFoundError(f"{spec.env_var}={override} is not a file")
            paths.append(override)
            continue
        candidates = _iceberg_candidates() if key == "iceberg" else spec.candidates
        found = next((c for c in candidates if Path(c).is_file()), None)
        if found:
            paths.append(found)
        elif settings.allow_maven:
            maven.append(spec.maven)
        else:
            missing.append(
                f"- {spec.name}: {spec.hint}; or set {spec.env_var}=/path/to.jar; "
                f"or, online, FLOE_ALLOW_MAVEN=1 to resolve {spec.maven}"
            )
    if missing:
        raise JarNotFoundError("floe cannot find these jars:\n" + "\n".join(missing))
    return ResolvedJars(tuple(paths), tuple(maven))


# --------------------------------------------------------------------------- floe's own jar

# floe's JVM decoder (docs/decisions/0058-jvm-decoder-fast-path.md): Java sources in the
# package, compiled at setup (`floe dev build-jvm`, run by `make setup`) against the
# jars pyspark bundles, so it always matches the running Spark and Avro.
JVM_DIR = Path(__file__).resolve().parents[1] / "jvm"
DECODE_JAR = JVM_DIR / "floe-jvm.jar"


def decode_jar() -> str | None:
    """The built decoder jar, or None (the Python decoder then does every line)."""
    return str(DECODE_JAR) if DECODE_JAR.is_file() else None


def build_decode_jar(javac: str = "javac") -> Path:
    """Compile the decoder's sources into :data:`DECODE_JAR` (atomically); its path."""
    import subprocess
    import tempfile
    import zipfile

    import pyspark

    classpath = str(Path(pyspark.__file__).parent / "jars" / "*")
    sources = sorted(str(p) for p in (JVM_DIR / "java").rglob("*.java"))
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            [javac, "-nowarn", "--release", "11", "-d", out, "-cp", classpath, *sources],
            check=True,
        )
        tmp = DECODE_JAR.with_name(f".{DECODE_JAR.name}.tmp")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n\n")
            for cls in sorted(Path(out).rglob("*.class")):
                jar.write(cls, cls.relative_to(out).as_posix())
        tmp.replace(DECODE_JAR)
    return DECODE_JAR


class PerJvm:
    """Answers found over py4j, kept by name for the gateway view that found them: a new
    gateway (another JVM) finds them again. Used where a lookup is a round trip repeated
    for the same answer (floe's classes here, Spark's functions in floe.runtime.session)."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[Any, Any]] = {}

    def get(self, jvm: Any, name: str, find: Callable[[], Any]) -> Any:
        known = self._known.get(name)
        if known is not None and known[0] is jvm:
            return known[1]
        found = find()
        self._known[name] = (jvm, found)
        return found


_CLASSES = PerJvm()


def jvm_class(spark: Any, name: str) -> Any | None:
    """The py4j handle of class ``name`` in ``spark``'s JVM (floe's jar), or None.

    Found once per JVM: each part of the name is a py4j round trip (1 ms for the first,
    which the JVM looks up as a class before a package), and a check run asks for floe's
    classes a dozen times. The driver's classpath is fixed when its JVM starts, so the
    answer, a class or None, holds for that JVM."""
    jvm: Any = spark.sparkContext._jvm
    if jvm is None:
        return None

    def find() -> Any | None:
        target = jvm
        for part in name.split("."):
            target = getattr(target, part)
        return target if type(target).__name__ == "JavaClass" else None  # else a JavaPackage

    return _CLASSES.get(jvm, name, find)


def register_jvm_udf(spark: Any, name: str, udf: Any, return_type: str) -> None:
    """Register a JVM function object of floe's jar (a ``UDF1``) as ``name``, returning
    Spark's ``DataTypes.<return_type>`` (e.g. ``"BooleanType"``, ``"LongType"``)."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # the udf came from a class found through it
    data_type = getattr(jvm.org.apache.spark.sql.types.DataTypes, return_type)
    spark._jsparkSession.udf().register(name, udf, data_type)


CONSTANT_CLASS = "floe.jvm.Constant"
_UTC_ZONES = ("UTC", "Etc/UTC", "GMT", "Z", "+00:00")


def batch_constant(spark: Any, value: int | None) -> Any:
    """``lit(value)`` as a ``bigint`` Column that Spark does not write into generated code.

    A literal ``bigint`` or ``timestamp`` is written into the Java source of the stage
    that evaluates it, and Spark reuses a compiled stage only for identical source: a
    per-batch value (a load sequence, an ingest time) made every batch of a feed compile
    its copy stage again. The value comes from a function object of floe's jar instead
    (``floe.jvm.Constant``), which the generated code references. Without the jar (or
    for NULL) it is the plain literal.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.column import Column, _to_seq

    constant = jvm_class(spark, CONSTANT_CLASS)
    if value is None or constant is None:
        return F.lit(value).cast("bigint")
    udf = constant.udf(str(int(value)))
    return Column(udf.apply(_to_seq(spark.sparkContext, [])))


def batch_timestamp(spark: Any, text: str | None) -> Any:
    """``cast(text as timestamp)`` for a per-batch time (``YYYY-MM-DD HH:MM:SS[.ffffff]``),
    kept out of generated code as :func:`batch_constant` is. The text is read in the
    session's time zone, as the cast reads it; a zone other than UTC keeps the cast."""
    from datetime import UTC, datetime

    from pyspark.sql import functions as F

    if text is None or spark.conf.get("spark.sql.session.timeZone") not in _UTC_ZONES:
        return F.lit(text).cast("timestamp")
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:  # a shape Python does not read: Spark's cast decides
        return F.lit(text).cast("timestamp")
    if moment.tzinfo is None:  # read in the session's zone, UTC here
        moment = moment.replace(tzinfo=UTC)
    micros = (moment - datetime(1970, 1, 1, tzinfo=UTC)) // datetime.resolution
    return F.timestamp_micros(batch_constant(spark, micros))
