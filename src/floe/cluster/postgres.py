"""The loopback cluster's PostgreSQL: the Iceberg catalog database (``docs/cluster.md``).

Debian's ``postgresql`` server binaries (``initdb``, ``pg_ctl``; ``make setup`` installs
the package), a data directory of its own under ``$FLOE_HOME/cluster/postgres``,
TCP on 127.0.0.1 only (no Unix socket), password authentication (scram-sha-256) for
the superuser ``floe``, whose generated password is kept in
``$FLOE_HOME/cluster/postgres.password`` (mode 0600), and a database ``floe``.

PostgreSQL refuses to run as root. When floe runs as root, every server command runs
as an unprivileged OS user instead — ``postgres`` (created by the Debian package),
or ``FLOE_CLUSTER_RUN_AS`` — through ``runuser``; the data directory and its log file
are handed to that user, which must be able to enter every directory above them.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from floe.cluster.processes import ClusterError, ProcessRef, log_tail, wait_until

DATABASE = "floe"
SUPERUSER = "floe"


def find_bin_dir(override: Path | None) -> Path:
    """The directory holding ``initdb`` and ``pg_ctl``."""
    if override is not None:
        if not (override / "pg_ctl").is_file():
            raise ClusterError(f"FLOE_CLUSTER_PG_BIN={override} holds no pg_ctl")
        return override
    debian = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if debian:
        return debian[-1].parent
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    raise ClusterError(
        "PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install postgresql "
        "(make setup does this), or set FLOE_CLUSTER_PG_BIN to the folder holding them"
    )


@dataclass(frozen=True)
class Postgres:
    """One PostgreSQL instance in ``root`` (``$FLOE_HOME/cluster``)."""

    root: Path
    bin_dir: Path
    run_as: str | None  # OS user for server commands; None: this process's user

    @classmethod
    def for_cluster(cls, root: Path, bin_override: Path | None, run_as: str) -> Postgres:
        if os.geteuid() != 0:
            return cls(root, find_bin_dir(bin_override), None)
        try:
            pwd.getpwnam(run_as)
        except KeyError:
            raise ClusterError(
                f"PostgreSQL refuses to run as root and there is no OS user {run_as!r} to run "
                "it as: install postgresql (its package creates 'postgres'), create an "
                "unprivileged user, or set FLOE_CLUSTER_RUN_AS"
            ) from None
        return cls(root, find_bin_dir(bin_override), run_as)

    @property
    def data_dir(self) -> Path:
        return self.root / "postgres"

    @property
    def log(self) -> Path:
        return self.root / "logs" / "postgres.log"

    @property
    def password_file(self) -> Path:
        return self.root / "postgres.password"

    @property
    def initialized(self) -> bool:
        return (self.data_dir / "PG_VERSION").is_file()

    def password(self) -> str:
        try:
            return self.password_file.read_text().strip()
        except OSError as exc:
            raise ClusterError(
                f"cannot read the catalog password at {self.password_file}: {exc}"
            ) from exc

    def uri(self, port: int) -> str:
        return f"jdbc:postgresql://127.0.0.1:{port}/{DATABASE}"

    # -- commands

    def _run(self, argv: Sequence[str], what: str, timeout: float = 120.0) -> str:
        command = [str(self.bin_dir / argv[0]), *argv[1:]]
        if self.run_as is not None:
            command = ["runuser", "-u", self.run_as, "--", *command]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise ClusterError(f"PostgreSQL {what} took longer than {timeout:.0f}s") from exc
        if done.returncode != 0:
            raise ClusterError(
                f"PostgreSQL {what} failed ({' '.join(command)}):\n"
                f"{done.stdout}{done.stderr}\n{log_tail(self.log)}"
            )
        return done.stdout

    def _hand_over(self, path: Path) -> None:
        if self.run_as is not None:
            entry = pwd.getpwnam(self.run_as)
            os.chown(path, entry.pw_uid, entry.pw_gid)

    def _check_reachable(self) -> None:
        """As root: the server's user must be able to enter every folder above its data."""
        if self.run_as is None:
            return
        for folder in reversed([self.data_dir.parent, *self.data_dir.parent.parents]):
            done = subprocess.run(
                ["runuser", "-u", self.run_as, "--", "test", "-x", str(folder)],
                capture_output=True,
                check=False,
            )
            if done.returncode != 0:
                raise ClusterError(
                    f"PostgreSQL runs as {self.run_as!r} (it refuses root) and cannot enter "
                    f"{folder} (mode {folder.stat().st_mode & 0o777:o}): put FLOE_HOME under a "
                    f"folder it can reach, or allow it with 'chmod o+x {folder}'"
                )

    def init(self) -> None:
        """initdb with a generated password; idempotent (an initialized directory is kept)."""
        if self.initialized:
            return
        self._check_reachable()
        self.root.mkdir(parents=True, exist_ok=True)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        if self.data_dir.exists() and any(self.data_dir.iterdir()):
            raise ClusterError(
                f"{self.data_dir} is not empty but holds no PostgreSQL cluster: remove it"
            )
        self.data_dir.mkdir(mode=0o700, exist_ok=True)
        self._hand_over(self.data_dir)
        password = secrets.token_urlsafe(24)
        fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(password + "\n")
        # initdb reads the password from a file its (possibly unprivileged) user can read.
        pwfile = self.root / ".initdb-password"
        fd = os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(password + "\n")
        self._hand_over(pwfile)
        try:
            self._run(
                [
                    "initdb",
                    "-D",
                    str(self.data_dir),
                    "-U",
                    SUPERUSER,
                    f"--pwfile={pwfile}",
                    "--auth-host=scram-sha-256",
                    "--auth-local=scram-sha-256",
                    "-E",
                    "UTF8",
                    "--locale=C",
                    "--no-instructions",
                ],
                "initdb",
            )
        finally:
            pwfile.unlink(missing_ok=True)

    def start(self, port: int, timeout: float) -> ProcessRef:
        """pg_ctl start on 127.0.0.1:``port``; returns the postmaster once it accepts logins."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.log.touch()
        self._hand_over(self.log)
        options = (
            f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' "
            "-c max_connections=50 -c shared_buffers=32MB"
        )
        self._run(
            [
                "pg_ctl",
                "start",
                "-w",
                "-t",
                str(int(timeout)),
                "-D",
                str(self.data_dir),
                "-l",
                str(self.log),
                "-o",
                options,
            ],
            "start",
            timeout=timeout + 10,
        )
        ref = self.postmaster()
        if ref is None:
            raise ClusterError(
                f"PostgreSQL started but wrote no postmaster.pid\n{log_tail(self.log)}"
            )
        if not wait_until(lambda: self.accepts_logins(port), timeout):
            raise ClusterError(
                f"PostgreSQL on port {port} does not accept logins\n{log_tail(self.log)}"
            )
        self.ensure_database(port)
        return ref

    def postmaster(self) -> ProcessRef | None:
        """The running postmaster of this data directory, from its ``postmaster.pid``."""
        try:
            first = (self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0]
        except OSError:
            return None
        return ProcessRef.of(int(first)) if first.strip().isdigit() else None

    def _connect(self, port: int, database: str) -> Any:
        import psycopg2

        return psycopg2.connect(
            host="127.0.0.1",
            port=port,
            user=SUPERUSER,
            password=self.password(),
            dbname=database,
            connect_timeout=5,
        )

    def accepts_logins(self, port: int) -> bool:
        import psycopg2

        try:
            conn = self._connect(port, "postgres")
        except psycopg2.OperationalError:
            return False
        conn.close()
        return True

    def ensure_database(self, port: int) -> None:
        """Create the catalog database ``floe`` if it does not exist."""
        conn = self._connect(port, "postgres")
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute("select 1 from pg_database where datname = %s", (DATABASE,))
                if cur.fetchone() is None:
                    cur.execute(f"create database {DATABASE}")
        finally:
            conn.close()

    def stop(self, timeout: float = 60.0) -> bool:
        """pg_ctl stop (fast): only this data directory's server. True if one was running."""
        ref = self.postmaster()
        if ref is None or not ref.alive():
            return False
        self._run(
            [
                "pg_ctl",
                "stop",
                "-w",
                "-m",
                "fast",
                "-t",
                str(int(timeout)),
                "-D",
                str(self.data_dir),
            ],
            "stop",
            timeout=timeout + 10,
        )
        return True
