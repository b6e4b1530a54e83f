"""A remembered driver command line for a cold Spark start (ADR 0043, docs/dev.md).

PySpark starts its driver with ``$SPARK_HOME/bin/spark-submit``, whose ``spark-class``
first runs a JVM of its own (Spark's launcher, ``org.apache.spark.launcher.Main``) only
to print the driver's command line, then runs that: 0.3 to 0.4 s of a cold command's
critical path, for the same answer every time the arguments and the environment are
the same.

:func:`launch_overlay` launches pyspark's gateway from a directory whose ``bin/spark-submit``
does what Spark's does with one difference: the command the launcher printed is kept in
a file named by a hash of everything the launcher reads (the arguments, the
``SPARK_*``/``JAVA_*``/``HADOOP_*``/``YARN_*`` environment, the ``java`` it finds, the
Spark configuration files) and replayed the next time. Anything unexpected (a cached
file that is not a command, a launcher that fails or prints something else) runs
Spark's own ``spark-submit``; so do arguments that carry a password, secret or token
(never written down) and a ``--properties-file``. The overlay is used only while the
driver is being launched, and only by the prestart of a cold command; the driver gets
the real ``SPARK_HOME``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import threading
from collections.abc import Iterator
from pathlib import Path

_LAUNCH_LOCK = threading.Lock()

# The script: spark-submit's `exec spark-class SparkSubmit "$@"`, with spark-class's
# launcher call remembered. `{spark_home}` and `{commands}` are shell-quoted paths.
SCRIPT = r"""#!/usr/bin/env bash
# Written by floe (floe.runtime.launcher): Spark's bin/spark-submit, remembering the
# driver command line that Spark's launcher prints for the same inputs.
export SPARK_HOME={spark_home}
export PYTHONHASHSEED=0
umask 077  # the arguments may carry the catalog's credentials
real="$SPARK_HOME/bin/spark-submit"
commands={commands}
. "$SPARK_HOME/bin/load-spark-env.sh"
if [ -f "$SPARK_CONF_DIR/spark-env.sh" ] || [ -n "${{SPARK_PREPEND_CLASSES:-}}" ]; then
  exec "$real" "$@"  # a spark-env.sh may compute anything: never remembered
fi
for arg in "$@"; do
  case "${{arg,,}}" in
    *password*|*secret*|*token*|--properties-file*) exec "$real" "$@" ;;  # never kept
  esac
done
last="${{!#}}"
# A command is replayed only if whole: words ended by NUL, the first one runnable, the
# last one the last argument given (a truncated file never passes).
whole() {{
  [ -s "$1" ] && [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\0' ] || return 1
  mapfile -d '' -t cmd < "$1"
  [ "${{#cmd[@]}}" -gt 1 ] && command -v "${{cmd[0]}}" > /dev/null && [ "${{cmd[-1]}}" = "$last" ]
}}
if [ -n "${{JAVA_HOME:-}}" ]; then runner="$JAVA_HOME/bin/java"; else runner="$(command -v java)"; fi
[ -n "$runner" ] || exec "$real" "$@"
key="$( {{
  printf '%s\0' "$@"
  env -0 | grep -zE '^(SPARK|JAVA|HADOOP|YARN|JDK)_' | sort -z
  readlink -f "$runner"; printf '\0'
  cat "$SPARK_CONF_DIR/spark-defaults.conf" "$SPARK_CONF_DIR/java-opts" 2>/dev/null
  ls -1 "$SPARK_HOME/jars" 2>/dev/null
}} | sha256sum | cut -c1-40 )"
cached="$commands/$key"
if whole "$cached"; then
  exec "${{cmd[@]}}"
fi
rm -f "$cached"
mkdir -p "$commands"
tmp="$cached.$$"
if ! "$runner" -Xmx128m ${{SPARK_LAUNCHER_OPTS:-}} -cp "$SPARK_HOME/jars/*" \
    org.apache.spark.launcher.Main org.apache.spark.deploy.SparkSubmit "$@" > "$tmp"; then
  rm -f "$tmp"
  exec "$real" "$@"
fi
# The launcher prints NUL and a newline, then the command's words, each ended by NUL.
if [ "$(head -c 2 "$tmp" | od -An -c | tr -d ' ')" != '\0\n' ]; then
  rm -f "$tmp"
  exec "$real" "$@"
fi
if tail -c +3 "$tmp" > "$tmp.cmd" && whole "$tmp.cmd"; then
  rm -f "$tmp"
  mv -f "$tmp.cmd" "$cached"
  exec "${{cmd[@]}}"
fi
rm -f "$tmp" "$tmp.cmd"
exec "$real" "$@"
"""


def spark_home() -> Path:
    """The SPARK_HOME pyspark would launch from (its own package without one set)."""
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def overlay_home(cache: Path, real_home: Path) -> Path:
    """``cache``'s overlay SPARK_HOME for ``real_home`` (one per Spark install: the
    directory is named by a hash of its path), its script written if missing or
    different (atomically: a racing writer writes the same bytes)."""
    named = hashlib.sha256(str(real_home).encode()).hexdigest()[:16]
    home = cache / "home" / named
    script = home / "bin" / "spark-submit"
    text = SCRIPT.format(
        spark_home=shlex.quote(str(real_home)), commands=shlex.quote(str(cache / "commands"))
    )
    if not script.is_file() or script.read_text() != text:
        script.parent.mkdir(parents=True, exist_ok=True)
        tmp = script.with_name(f".spark-submit.{os.getpid()}.{threading.get_ident()}")
        tmp.write_text(text)
        tmp.chmod(0o755)
        tmp.replace(script)
    return home


@contextlib.contextmanager
def launch_overlay(cache: Path | None) -> Iterator[None]:
    """PySpark's gateway launched from the overlay of ``cache`` inside the body (nothing
    when ``cache`` is None or the overlay cannot be written).

    The process's environment is not touched: pyspark's launcher is told where Spark is
    through the name it looks it up by (``pyspark.java_gateway._find_spark_home``), so no
    other thread or child process sees the overlay.
    """
    from pyspark import java_gateway

    found = getattr(java_gateway, "_find_spark_home", None)
    if cache is None or found is None:
        yield
        return
    with _LAUNCH_LOCK:
        try:
            home = overlay_home(cache, Path(found()))
        except OSError:
            yield
            return
        java_gateway._find_spark_home = lambda: str(home)
        try:
            yield
        finally:
            java_gateway._find_spark_home = found
