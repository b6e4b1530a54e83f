"""Spark's JDBC catalog URI as the SQLAlchemy URL pyiceberg opens (SQLite or PostgreSQL)."""

from __future__ import annotations

import pytest

from floe.runtime import Settings
from floe.runtime.catalog import CatalogDatabase, CatalogUriError, sqlalchemy_uri


def _url(uri, user=None, password=None):
    return CatalogDatabase(uri, user, password).url().render_as_string(hide_password=False)


def test_sqlite_keeps_the_file_and_waits_on_locks(tmp_path):
    s = Settings.from_env({"FLOE_HOME": str(tmp_path)})
    assert sqlalchemy_uri(s) == f"sqlite:///{tmp_path}/catalog.db?timeout=30"


def test_postgresql_credentials_from_settings_or_the_uri():
    assert (
        _url("jdbc:postgresql://db.example:5433/floe", "floe", "p@ss:w/rd")
        == "postgresql+psycopg2://floe:p%40ss%3Aw%2Frd@db.example:5433/floe"
    )
    # The JDBC driver's own URI parameters; other parameters are passed on to libpq.
    assert (
        _url("jdbc:postgresql://db/floe?user=u&password=p&sslmode=require")
        == "postgresql+psycopg2://u:p@db/floe?sslmode=require"
    )
    assert (
        _url("jdbc:postgresql://db/floe?user=u", "explicit")
        == "postgresql+psycopg2://explicit@db/floe"
    )


def test_the_password_never_shows():
    db = CatalogDatabase("jdbc:postgresql://db/floe", "floe", "secret")
    assert "secret" not in db.display and "secret" not in repr(db)


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("jdbc:mysql://db/floe", "use jdbc:sqlite"),
        ("jdbc:postgresql://a:5432,b:5432/floe", "several hosts"),
        ("jdbc:postgresql://db/", "needs a host and a database"),
    ],
)
def test_unsupported_uris_are_refused_saying_what_works(uri, message):
    with pytest.raises(CatalogUriError, match=message):
        CatalogDatabase(uri).url()
