"""Maintenance and erasure respect environments' branches (docs/envs.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from floe.dbt_runner import run_dbt

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "env_project"


@pytest.fixture
def built_env(spark, lakehouse, dbt_target_path, monkeypatch):
    """Production build, then environment `dev` rebuilding env_mart+ (factor 2)."""
    from floe.envs import create

    target = dbt_target_path / "envrespect"

    def build(env: str | None, **vars) -> None:
        if env:
            monkeypatch.setenv("FLOE_ENV", env)
        run = run_dbt(["build"], vars=vars, project=FIXTURE, target_path=target, quiet=True)
        monkeypatch.delenv("FLOE_ENV", raising=False)
        assert run.success, run.failures or run.exception

    build(None)
    build(None, env_rows=210)  # a second snapshot on main, for expiry to act on
    create(spark, lakehouse, "dev")
    build("dev", env_factor=2, env_rows=210)
    return target / "manifest.json"


def _sum(spark, table: str, ref: str) -> int:
    return spark.sql(f"select sum(amount) from {table} version as of '{ref}'").first()[0]


def test_maintain_keeps_main_and_the_branch_readable_and_defers_compaction(
    spark, lakehouse, built_env
):
    from datetime import UTC, datetime, timedelta

    from floe.maintenance.core import MaintenancePolicy, maintain_table, remove_orphans_before

    main_sum, branch_sum = (
        _sum(spark, "marts.env_mart", "main"),
        _sum(spark, "marts.env_mart", "env_dev"),
    )
    assert branch_sum == 2 * main_sum
    snapshots = spark.sql("select count(*) from marts.env_mart.snapshots").first()[0]
    policy = MaintenancePolicy(keep_snapshots=1, max_snapshot_age_ms=0, compact_min_files=1)
    report = maintain_table(spark, "marts.env_mart", policy, catalog=lakehouse.catalog_name)
    assert any("compaction deferred: open environment env_dev" in a for a in report.actions)
    assert report.expired_snapshots >= 1
    assert spark.sql("select count(*) from marts.env_mart.snapshots").first()[0] < snapshots
    # The strictest orphan clean (every unreferenced file, however recent; what an
    # erasure runs) keeps every file main and the branch reach.
    remove_orphans_before(
        spark, "marts.env_mart", datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=1)
    )
    # Expiry kept both refs' snapshots, orphan removal every file they reach.
    assert _sum(spark, "marts.env_mart", "main") == main_sum
    assert _sum(spark, "marts.env_mart", "env_dev") == branch_sum
    files = spark.sql("select file_path from marts.env_mart.all_data_files").collect()
    assert all(Path(f[0].removeprefix("file:")).exists() for f in files)

    # pyiceberg reads both refs too (docs/envs.md, "Maintenance, erasure, other readers").
    from floe.runtime import open_catalog

    table = open_catalog(lakehouse).load_table("marts.env_mart")
    for ref, expected in (("main", main_sum), ("env_dev", branch_sum)):
        rows = table.scan(snapshot_id=table.refs()[ref].snapshot_id).to_arrow()
        assert sum(rows.column("amount").to_pylist()) == expected, ref


def test_abandoned_environments_expire_by_policy(spark, lakehouse, built_env):
    from datetime import UTC, datetime, timedelta

    from floe.envs import expire_abandoned, list_envs

    assert expire_abandoned(spark, lakehouse, 14) == []
    later = datetime.now(UTC) + timedelta(days=15)
    assert expire_abandoned(spark, lakehouse, 14, now=later) == ["dev"]
    assert list_envs(lakehouse) == []
    names = {r[0] for r in spark.sql("select name from marts.env_mart.refs").collect()}
    assert names == {"main"}


def test_erasure_with_an_open_environment_reaches_every_branch_and_tag(spark, lakehouse, built_env):
    from floe.privacy.erasure import forget
    from floe.privacy.subject import Subject
    from floe.privacy.tags import load_tags

    spark.sql("alter table marts.env_base create tag audit_2026 retain 30 days")
    subject = "id = 5"
    for table, ref in (("marts.env_mart", "env_dev"), ("marts.env_base", "audit_2026")):
        assert (
            spark.sql(
                f"select count(*) from {table} version as of '{ref}' where {subject}"
            ).first()[0]
            == 1
        )

    tags = load_tags(lakehouse, built_env)
    outcome = forget(spark, lakehouse, tags, Subject.parse("person_id=5"), scan_landing=False)
    assert outcome.status == "complete", outcome

    for table in ("marts.env_base", "marts.env_mart"):
        refs = [r[0] for r in spark.sql(f"select name from {table}.refs").collect()]
        assert "main" in refs
        for ref in refs:
            rows = spark.sql(f"select * from {table} version as of '{ref}'")
            assert rows.where(subject).count() == 0, (table, ref)
            assert rows.count() == 209, (table, ref)
        # No data file reachable from any snapshot still holds the subject.
        paths = [r[0] for r in spark.sql(f"select file_path from {table}.all_data_files").collect()]
        assert paths
        assert spark.read.parquet(*paths).where(subject).count() == 0, table
    assert {r[0] for r in spark.sql("select name from marts.env_base.refs").collect()} >= {
        "audit_2026"
    }


def test_lineage_and_the_docs_site_show_where_the_environment_reads(
    spark, lakehouse, built_env, tmp_path
):
    import json

    from click.testing import CliRunner

    from floe.docsite.site import finish_site
    from floe.envs.placement import placement
    from floe.lineage.cli import lineage

    shown = placement(lakehouse, "dev")
    assert shown.branch == "env_dev"
    assert shown.tables == {
        "marts.env_base": "main",  # same inputs as main: not rebuilt, read from main
        "marts.env_child": "branch",
        "marts.env_mart": "branch",
    }

    target = built_env.parent

    def floe_lineage(*args: str) -> str:
        result = CliRunner().invoke(lineage, [*args, "--target-path", str(target)])
        assert result.exit_code == 0, result.output
        return result.output

    out = floe_lineage("env_child.total_amount", "--env", "dev")
    assert out.splitlines()[0] == (
        "environment dev (branch env_dev): 2 table(s) on the branch "
        "(marts.env_child, marts.env_mart), 1 read from main"
    )
    assert "env_child.total_amount [on env_dev]" in out
    assert "env_mart.amount [on env_dev]" in out
    assert "env_base.id [from main]" in out
    edges = json.loads(floe_lineage("env_mart.amount", "--env", "dev", "--json"))
    assert ("main", "branch") in {(e["from_read"], e["to_read"]) for e in edges}
    assert {e["to_read"] for e in edges if e["to"][0] == "env_mart"} == {"branch"}
    # Main's lineage (no FLOE_ENV) carries no marks, though lineage.json was written
    # for the environment in between.
    floe_lineage("build", "--env", "dev")
    assert "[" not in floe_lineage("env_child.total_amount").splitlines()[0]
    assert "from main" not in floe_lineage("env_child.total_amount")
    unknown = CliRunner().invoke(
        lineage, ["env_child.total_amount", "--env", "nope", "--target-path", str(target)]
    )
    assert unknown.exit_code != 0 and "floe env create nope" in unknown.output

    # The docs site's lineage page, in a real Chromium: the banner and a badge per table.
    (target / "index.html").write_text("<html><body>dbt docs</body></html>")
    finish_site(target, FIXTURE, shown.to_json())
    written = json.loads((target / "lineage.json").read_text())
    assert written["env"]["name"] == "dev"
    assert {n["name"]: n.get("env") for n in written["nodes"]}["env_base"] == "main"
    _browse_env_lineage(target, tmp_path)


def _browse_env_lineage(target: Path, tmp_path: Path) -> None:
    from floe.docsite.site import serve
    from tests.docsite.test_site_browser import CHROMIUM, CHROMIUM_ARGS

    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed: run `make setup`")
    from playwright.sync_api import sync_playwright

    server = serve(target, port=0)
    site = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                str(tmp_path / "chromium-profile"),
                executable_path=str(CHROMIUM),
                args=CHROMIUM_ARGS,
                headless=True,
                viewport={"width": 1400, "height": 800},
            )
            try:
                page = context.new_page()
                page.goto(site + "lineage.html#env_child.total_amount")
                page.wait_for_selector("#edges:not([hidden])", timeout=60_000)
                banner = page.text_content("#env")
                assert "Environment dev (branch env_dev): 2 table(s) on the branch" in banner
                assert "1 read from main" in banner
                badges = page.eval_on_selector_all(
                    ".col",
                    "els => els.map(e => [e.dataset.key, "
                    "(e.querySelector('.where') || {}).textContent])",
                )
                assert ["env_child.total_amount", "env_dev"] in badges
                assert ["env_base.id", "main"] in badges
                page.screenshot(path=str(tmp_path / "env-lineage.png"), full_page=True)
                print(f"screenshot: {tmp_path / 'env-lineage.png'}")
            finally:
                context.close()
    finally:
        server.shutdown()
