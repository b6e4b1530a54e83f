"""A remembered driver command line for a cold Spark start (ADR 0043, docs/dev.md).

PySpark starts its driver with ``$SPARK_HOME/bin/spark-submit``, whose ``spark-class``
first runs a JVM of its own (Spark's launcher, ``org.apache.spark.launcher.Main``) only
to print the driver's command line, then runs that: 0.3 to 0.4 s of a cold command's
critical path, for the same answer every time the arguments and the environment are
the same.

:func:`launch_overlay` points ``SPARK_HOME`` at a directory whose ``bin/spark-submit``
does what Spark's does with one difference: the command the launcher printed is kept in
a file named by a hash of everything the launcher reads (the arguments, the
``SPARK_*``/``JAVA_*``/``HADOOP_*``/``YARN_*`` environment, the ``java`` it finds, the
Spark configuration files) and replayed the next time. Anything unexpected (a cached
file that is not a command, a launcher that fails or prints something else) runs
Spark's own ``spark-submit``. The overlay is used only while the driver is being
launched (``SPARK_HOME`` is restored after), and only by the prestart of a cold command.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import threading
from collections.abc import Iterator
from pathlib import Path

from floe.runtime.settings import environment_variable

_ENV_LOCK = threading.Lock()

# The script: spark-submit's `exec spark-class SparkSubmit "$@"`, with spark-class's
# launcher call remembered. `{spark_home}` and `{commands}` are shell-quoted paths.
SCRIPT = r"""#!/usr/bin/env bash
# Written by floe (floe.runtime.launcher): Spark's bin/spark-submit, remembering the
# driver command line that Spark's launcher prints for the same inputs.
export SPARK_HOME={spark_home}
export PYTHONHASHSEED=0
real="$SPARK_HOME/bin/spark-submit"
commands={commands}
. "$SPARK_HOME/bin/load-spark-env.sh"
if [ -f "$SPARK_CONF_DIR/spark-env.sh" ] || [ -n "${{SPARK_PREPEND_CLASSES:-}}" ]; then
  exec "$real" "$@"  # a spark-env.sh may compute anything: never remembered
fi
if [ -n "${{JAVA_HOME:-}}" ]; then runner="$JAVA_HOME/bin/java"; else runner="$(command -v java)"; fi
[ -n "$runner" ] || exec "$real" "$@"
key="$( {{
  printf '%s\0' "$@"
  env -0 | grep -zE '^(SPARK|JAVA|HADOOP|YARN|JDK)_' | sort -z
  readlink -f "$runner"; printf '\0'
  cat "$SPARK_CONF_DIR/spark-defaults.conf" 2>/dev/null
  ls -1 "$SPARK_HOME/jars" 2>/dev/null
}} | sha256sum | cut -c1-40 )"
cached="$commands/$key"
if [ -s "$cached" ]; then
  mapfile -d '' -t cmd < "$cached"
  if [ "${{#cmd[@]}}" -gt 1 ] && [ -x "${{cmd[0]}}" ]; then
    exec "${{cmd[@]}}"
  fi
fi
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
tail -c +3 "$tmp" > "$tmp.cmd" && rm -f "$tmp"
mapfile -d '' -t cmd < "$tmp.cmd"
if [ "${{#cmd[@]}}" -gt 1 ] && [ -x "${{cmd[0]}}" ]; then
  mv -f "$tmp.cmd" "$cached"
  exec "${{cmd[@]}}"
fi
rm -f "$tmp.cmd"
exec "$real" "$@"
"""


def spark_home() -> Path:
    """The SPARK_HOME pyspark would launch from (its own package without one set)."""
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def overlay_home(cache: Path, real_home: Path) -> Path:
    """``cache``'s overlay SPARK_HOME for ``real_home``, its script written if missing or
    different (atomically: a racing writer writes the same bytes)."""
    home = cache / "home"
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
    """``SPARK_HOME`` on the overlay of ``cache`` while the body launches the driver
    (nothing when ``cache`` is None or the overlay cannot be written)."""
    if cache is None:
        yield
        return
    with _ENV_LOCK:
        try:
            home = overlay_home(cache, spark_home())
        except OSError:
            home = None
        if home is None:
            yield
            return
        with environment_variable("SPARK_HOME", str(home)):
            yield
