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


@pytest.mark.integration
def test_the_catalog_listing_without_spark_is_what_spark_shows(lakehouse, spark):
    from floe.runtime.catalog import list_namespace, list_namespaces

    spark.sql("create namespace if not exists listing_ns")
    spark.sql("create table listing_ns.t1 (x int) using iceberg")
    spark.sql("create table listing_ns.t2 (x int) using iceberg")
    spark.sql("create view listing_ns.v1 as select x from listing_ns.t1")
    spark.sql("create temporary view listing_tmp as select 1 as x")  # not in the catalog

    shown_tables = {r.tableName for r in spark.sql("show tables in listing_ns").collect()}
    shown_views = {
        r.viewName for r in spark.sql("show views in listing_ns").collect() if not r.isTemporary
    }
    listing = list_namespace(lakehouse, "listing_ns")
    assert listing is not None
    assert set(listing.views) == shown_views == {"v1"}
    assert set(listing.tables) == shown_tables - {"listing_tmp"} == {"t1", "t2"}
    assert list_namespace(lakehouse, "no_such_ns") == type(listing)([], [])
    namespaces = {r[0] for r in spark.sql("show namespaces").collect()}
    assert set(list_namespaces(lakehouse) or []) == namespaces


def test_no_sqlite_catalog_to_read_means_ask_spark(tmp_path):
    from floe.runtime.catalog import list_namespace, list_namespaces

    missing = Settings.from_env({"FLOE_HOME": str(tmp_path)})
    assert list_namespace(missing, "raw") is None and list_namespaces(missing) is None
    postgres = Settings.from_env({"FLOE_CATALOG_URI": "jdbc:postgresql://db/floe"})
    assert list_namespace(postgres, "raw") is None
