"""Where floe keeps its state, resolved once from the environment.

Every path is absolute so Spark, pyiceberg and dbt agree whatever their cwd.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

# WAL + busy timeout: a CTAS followed by CACHE TABLE and a MERGE in one session
# hit SQLITE_BUSY without them (STACK-NOTES.md).
SQLITE_URI_PARAMS = "journal_mode=WAL&busy_timeout=30000"


@dataclass(frozen=True)
class Settings:
    """Locations and knobs of one floe environment (one lakehouse)."""

    home: Path
    landing: Path
    warehouse: str
    catalog_uri: str
    catalog_name: str = "lake"
    catalog_user: str | None = None
    catalog_password: str | None = None

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if env is None else env)
        home = Path(env.get("FLOE_HOME", ".floe")).expanduser().resolve()
        landing = Path(env.get("FLOE_LANDING", home / "landing")).expanduser().resolve()
        warehouse = env.get("FLOE_WAREHOUSE") or (home / "warehouse").as_uri()
        if "://" not in warehouse and not warehouse.startswith("file:"):
            warehouse = Path(warehouse).expanduser().resolve().as_uri()
        catalog_uri = env.get("FLOE_CATALOG_URI") or (
            f"jdbc:sqlite:{home / 'catalog.db'}?{SQLITE_URI_PARAMS}"
        )
        return cls(
            home=home,
            landing=landing,
            warehouse=warehouse,
            catalog_uri=catalog_uri,
            catalog_user=env.get("FLOE_CATALOG_USER"),
            catalog_password=env.get("FLOE_CATALOG_PASSWORD"),
        )

    @property
    def is_sqlite(self) -> bool:
        return self.catalog_uri.startswith("jdbc:sqlite:")

    @property
    def sqlite_path(self) -> Path | None:
        if not self.is_sqlite:
            return None
        return Path(self.catalog_uri.removeprefix("jdbc:sqlite:").split("?", 1)[0])

    @property
    def warehouse_path(self) -> Path | None:
        """The warehouse as a local directory, when it is one."""
        parsed = urlparse(self.warehouse)
        return Path(parsed.path) if parsed.scheme == "file" else None

    @property
    def state_dir(self) -> Path:
        """Checkpoints, ledgers and other engine state that is not a table."""
        return self.home / "state"

    def ensure_dirs(self) -> None:
        for path in (self.home, self.landing, self.state_dir):
            path.mkdir(parents=True, exist_ok=True)
        if self.warehouse_path is not None:
            self.warehouse_path.mkdir(parents=True, exist_ok=True)
        if self.sqlite_path is not None:
            self.sqlite_path.parent.mkdir(parents=True, exist_ok=True)
