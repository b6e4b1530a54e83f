"""Slim CI as dbt users run it, on floe (docs/lineage.md, .github/workflows/slim-ci.yml).

"Production" builds the DMS mlb_data chain into a fresh lakehouse and keeps its
artifacts; a copy of the project then changes one staging model, and
``dbt build --select state:modified+ --defer --state <prod artifacts>`` with
``schema_prefix: ci_`` builds that model and its descendants only, into ``ci_*``
schemas, reading the unselected raw table from production. ``floe lineage diff`` of
production's manifest and the change's (compiled without the prefix) names the
affected mart columns.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from floe.lineage.diff import diff_manifests, render
from tests.helpers import ROOT
from tests.helpers import copy_project as copy_project_parts

pytestmark = pytest.mark.integration


def copy_project(to: Path) -> Path:
    copy_project_parts(to)
    (to / "tests" / "data").mkdir(parents=True)
    return to


def slim_ci_build(project: Path, ci_args: list[str]):  # type: ignore[no-untyped-def]
    """The workflow's build: the change and its descendants into ci_* schemas, deferring
    everything else to the production state."""
    from floe.dbt_runner import run_dbt

    return run_dbt(
        ["build", "-s", "state:modified+", "--defer", *ci_args],
        vars={"schema_prefix": "ci_"},
        project=project,
        profiles_dir=project / "profiles",
        quiet=True,
    )


def executed(target: Path) -> dict[str, str]:
    results = json.loads((target / "run_results.json").read_text())["results"]
    return {r["unique_id"]: r["status"] for r in results}


def test_state_modified_plus_with_defer_builds_only_the_change_and_its_descendants(
    lakehouse, tmp_path
):
    from floe.dbt_runner import run_dbt
    from floe.generator import GenerateOptions, generate
    from floe.runtime import Settings, get_spark

    generate(GenerateOptions(landing=lakehouse.landing, days=2, scale=50), ["mlb_data"])
    prod_target = tmp_path / "prod-artifacts"
    prod = run_dbt(["build", "-s", "+mlb_data"], project=ROOT, target_path=prod_target, quiet=True)
    assert prod.success, prod.failures or prod.exception

    project = copy_project(tmp_path / "pr")
    staging = project / "models/staging/dms/stg_dms__mlb_data.sql"
    staging.write_text(
        staging.read_text().replace(
            "select * from source",
            "select *, upper(mlb_team) as mlb_team_code from source",
        )
    )
    ci_target = tmp_path / "ci-target"
    ci_args = ["--state", str(prod_target), "--target-path", str(ci_target)]
    selected = run_dbt(
        ["ls", "-s", "state:modified+", "--resource-type", "model", *ci_args],
        project=project,
        profiles_dir=project / "profiles",
        quiet=True,
    )
    assert selected.success, selected.exception
    assert sorted(selected.result) == [
        "floe.marts.dms.mlb_data",
        "floe.staging.dms.stg_dms__mlb_data",
    ]

    ci = slim_ci_build(project, ci_args)
    assert ci.success, ci.failures or ci.exception
    ran = executed(ci_target)
    models = {uid for uid in ran if uid.startswith("model.")}
    assert models == {"model.floe.stg_dms__mlb_data", "model.floe.mlb_data"}
    assert set(ran.values()) <= {"success", "pass"}
    tests = {uid for uid in ran if uid.startswith("test.")}
    assert tests and all(("mlb_data" in uid) for uid in tests)

    spark = get_spark(Settings.from_env())
    # the changed view reads production's raw table (deferred), not a CI copy of it
    compiled = (ci_target / "compiled/floe/models/staging/dms/stg_dms__mlb_data.sql").read_text()
    assert "raw.mlb_data" in compiled and "ci_raw" not in compiled
    assert not spark.sql("show tables in raw").filter("tableName = 'ci_mlb_data'").count()
    prod_rows = spark.table("marts.mlb_data").count()
    assert spark.table("ci_marts.mlb_data").count() == prod_rows > 0
    assert "mlb_team_code" in spark.table("ci_marts.mlb_data").columns
    assert "mlb_team_code" not in spark.table("marts.mlb_data").columns  # production untouched

    # what the workflow posts on the pull request: the PR compiled as production names it
    lineage_target = tmp_path / "pr-compiled"
    compiled_run = run_dbt(
        ["compile", "-s", "+mlb_data"],
        project=project,
        profiles_dir=project / "profiles",
        target_path=lineage_target,
        quiet=True,
    )
    assert compiled_run.success, compiled_run.exception
    report = diff_manifests(
        json.loads((prod_target / "manifest.json").read_text()),
        json.loads((lineage_target / "manifest.json").read_text()),
        project,
    )
    assert [(c.name, c.columns) for c in report.changes] == [
        ("stg_dms__mlb_data", {"mlb_team_code": "added"})
    ]
    assert report.affected == {"mlb_data": ["mlb_team_code"]}
    assert "`mlb_data` (marts): `mlb_team_code`" in render(report, "markdown")


def test_defer_builds_a_changed_table_mart_reading_production_upstreams(lakehouse, tmp_path):
    """A changed ``table`` mart alone: its unchanged staging view and raw table are not
    in ``ci_*``, and its unchanged-input fingerprint reads them where ``ref()`` does,
    at production's relations (before, it looked for ``ci_raw.weather`` and failed)."""
    from floe.dbt_runner import run_dbt
    from floe.generator import GenerateOptions, generate
    from floe.runtime import Settings, get_spark

    generate(GenerateOptions(landing=lakehouse.landing, days=1, scale=20), ["weather"])
    prod_target = tmp_path / "prod-artifacts"
    prod = run_dbt(
        ["build", "-s", "+weather_reports"], project=ROOT, target_path=prod_target, quiet=True
    )
    assert prod.success, prod.failures or prod.exception

    project = copy_project(tmp_path / "pr")
    mart = project / "models/marts/streams/weather_reports.sql"
    mart.write_text(
        mart.read_text().replace("select * from reports", "select *, 1 as pr_flag from reports")
    )
    ci_target = tmp_path / "ci-target"
    ci_args = ["--state", str(prod_target), "--target-path", str(ci_target)]
    for attempt in (1, 2):  # the second run has the same inputs: the fingerprint skip
        ci = slim_ci_build(project, ci_args)
        assert ci.success, (attempt, ci.failures or ci.exception)
        assert {uid for uid in executed(ci_target) if uid.startswith("model.")} == {
            "model.floe.weather_reports"
        }

    spark = get_spark(Settings.from_env())
    assert not spark.sql("show namespaces like 'ci_raw'").count()
    assert (
        spark.table("ci_marts.weather_reports").count()
        == spark.table("marts.weather_reports").count()
        > 0
    )
    assert "pr_flag" in spark.table("ci_marts.weather_reports").columns
    assert "pr_flag" not in spark.table("marts.weather_reports").columns
