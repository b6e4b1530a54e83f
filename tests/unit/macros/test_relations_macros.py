"""Relations: Iceberg table properties from model options, drops, sort order."""

from __future__ import annotations

import pytest

from tests.unit.macros.jinja_harness import CompilerError, Relation, assert_parses

DEFAULTS = {
    "format-version": "2",
    "write.merge.mode": "copy-on-write",
    "write.update.mode": "copy-on-write",
    "write.delete.mode": "copy-on-write",
    "write.wap.enabled": "true",
}


def test_defaults_are_format_2_and_copy_on_write(render):
    assert render.call("floe_table_properties") == DEFAULTS


def test_write_mode_from_meta_or_config(render):
    render.configure(write_mode="merge-on-read")
    props = render.call("floe_table_properties")
    assert {props[k] for k in DEFAULTS if k.endswith(".mode")} == {"merge-on-read"}
    render.configure(meta={"write_mode": "copy-on-write"})  # meta wins over config
    assert render.call("floe_table_properties")["write.merge.mode"] == "copy-on-write"


def test_bad_write_mode_fails(render):
    render.configure(meta={"write_mode": "merge-on-write"})
    with pytest.raises(CompilerError, match="write_mode 'merge-on-write' is not copy-on-write"):
        render.call("floe_table_properties")


def test_maintenance_policy_is_stored_on_the_table(render):
    render.configure(
        meta={
            "maintenance": {
                "keep_snapshots": 5,
                "max_snapshot_age_days": 7,
                "compact_min_files": 3,
                "orphan_age_days": 2,
            }
        },
        target_file_size_bytes=134217728,
    )
    props = render.call("floe_table_properties")
    assert props["history.expire.min-snapshots-to-keep"] == "5"
    assert props["history.expire.max-snapshot-age-ms"] == str(7 * 86_400_000)
    assert props["floe.maintain.compact-min-files"] == "3"
    assert props["floe.maintain.orphan-age-days"] == "2"
    assert props["write.target-file-size-bytes"] == "134217728"


def test_unknown_maintenance_option_fails_listing_the_known_ones(render):
    render.configure(meta={"maintenance": {"keep_snapshot": 5}})
    with pytest.raises(
        CompilerError,
        match="unknown maintenance option 'keep_snapshot'; known: keep_snapshots, "
        "max_snapshot_age_days, compact_min_files, orphan_age_days",
    ):
        render.call("floe_table_properties")


def test_tblproperties_win_and_are_escaped(render):
    render.configure(
        file_format="iceberg",
        tblproperties={"write.merge.mode": "merge-on-read", "comment": "it's"},
    )
    clause = render.sql("floe__tblproperties_clause")
    assert "'write.merge.mode' = 'merge-on-read'" in clause
    assert r"'comment' = 'it\'s'" in clause
    assert_parses(f"create table t (id int) using iceberg {clause}")


def test_tables_are_created_ready_for_environments(render):
    # A table made with write.wap.enabled needs no property commit at `floe env create`
    # (docs/envs.md): its environment writes go to the branch from the first build.
    render.configure(file_format="iceberg")
    assert "'write.wap.enabled' = 'true'" in render.sql("floe__tblproperties_clause")
    render.answer("show tblproperties marts.t", [("format-version", "2")])
    render.call("floe_sync_table_properties", Relation("marts", "t"))
    assert "'write.wap.enabled' = 'true'" in render.statement("sync_table_properties")


def test_tblproperties_of_non_iceberg_formats_stay_dbt_sparks(render):
    render.configure(file_format="delta")
    render.call("floe__tblproperties_clause")
    assert "spark__tblproperties_clause" in render.stubs
    render.configure(file_format=None)  # floe's catalog makes Iceberg tables anyway
    assert "'format-version' = '2'" in render.sql("floe__tblproperties_clause")


def test_properties_sync_sets_only_what_changed(render):
    render.configure(meta={"write_mode": "merge-on-read"})
    render.answer(
        "show tblproperties marts.t",
        [
            ("format-version", "1"),
            ("write.merge.mode", "copy-on-write"),
            ("write.update.mode", "merge-on-read"),
            ("write.delete.mode", "merge-on-read"),
            ("write.wap.enabled", "true"),
        ],
    )
    render.call("floe_sync_table_properties", Relation("marts", "t"))
    # format-version is never rewritten; the unchanged modes are not set again
    assert render.statement("sync_table_properties") == (
        "alter table marts.t set tblproperties ('write.merge.mode' = 'merge-on-read')"
    )


def test_sort_order_is_set_once(render):
    render.configure(meta={"sort_by": ["season", "team"]})
    render.call("floe_apply_sort_order", Relation("marts", "t"))
    assert (
        render.statement("write_ordered_by") == "alter table marts.t write ordered by season, team"
    )
    assert "'floe.sort-by' = 'season,team'" in render.statement("remember_sort_order")
    render.statements.clear()
    render.call("floe_apply_sort_order", Relation("marts", "t"), {"floe.sort-by": "season,team"})
    assert render.statements == []


def _purging(render) -> list[str]:
    purged: list[str] = []
    render.adapter.floe_drop_table = lambda relation: purged.append(str(relation)) or ""
    return purged


def test_iceberg_tables_are_purged_views_dropped(render):
    purged = _purging(render)
    render.call("floe__drop_relation", Relation("marts", "t"))
    assert purged == ["marts.t"]  # the table and its files (floe_drop_table)
    render.call("floe__drop_relation", Relation("marts", "v", "view"))
    assert render.statement("drop_relation") == "drop view if exists marts.v"


def test_drop_schema_drops_its_relations_first(render):
    purged = _purging(render)
    render.relations = [Relation("s1", "a"), Relation("s1", "v", "view"), Relation("s2", "b")]
    render.call("floe__drop_schema", Relation("s1", ""))
    assert purged == ["s1.a"]
    assert [sql for name, sql in render.statements] == [
        "drop view if exists s1.v",
        "drop schema if exists s1 cascade",
    ]
