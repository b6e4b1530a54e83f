"""dbt's basic adapter contract on floe (dbt.tests.adapter.basic)."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import (
    BaseIncremental,
    BaseIncrementalNotSchemaChange,
)
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_singular_tests_ephemeral import BaseSingularTestsEphemeral
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.adapter.basic.test_validate_connection import BaseValidateConnection


class TestSimpleMaterializationsFloe(BaseSimpleMaterializations):
    pass


class TestSingularTestsFloe(BaseSingularTests):
    pass


class TestSingularTestsEphemeralFloe(BaseSingularTestsEphemeral):
    pass


class TestEmptyFloe(BaseEmpty):
    pass


class TestEphemeralFloe(BaseEphemeral):
    pass


class TestIncrementalFloe(BaseIncremental):
    pass


class TestIncrementalNotSchemaChangeFloe(BaseIncrementalNotSchemaChange):
    pass


class TestGenericTestsFloe(BaseGenericTests):
    pass


# dbt-spark's snapshot materialization needs an explicit table format (it defaults to
# parquet and refuses it); floe projects set `+file_format: iceberg`, as dbt-spark's own
# suite sets delta for these classes.
ICEBERG_SNAPSHOTS = {"seeds": {"+file_format": "iceberg"}, "snapshots": {"+file_format": "iceberg"}}


class TestSnapshotCheckColsFloe(BaseSnapshotCheckCols):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "snapshot_strategy_check_cols", **ICEBERG_SNAPSHOTS}


class TestSnapshotTimestampFloe(BaseSnapshotTimestamp):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "snapshot_strategy_timestamp", **ICEBERG_SNAPSHOTS}


class TestAdapterMethodFloe(BaseAdapterMethod):
    pass


class TestValidateConnectionFloe(BaseValidateConnection):
    pass
