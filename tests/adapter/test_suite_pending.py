"""dbt's adapter suite classes for snapshots, microbatch, seeds and clone, pending.

These materializations are being rebuilt for Iceberg on a branch of their own (dbt
snapshots on MERGE, microbatch by overwrite-by-filter, seeds through one DataFrame
write, `dbt clone` without copying files). Each class is skipped here until that work
merges; un-skip by deleting the PENDING marks.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.dbt_clone.test_dbt_clone import BaseClonePossible
from dbt.tests.adapter.empty.test_empty import BaseTestEmptySeedFlag
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.adapter.simple_seed.test_seed import (
    BaseBasicSeedTests,
    BaseSeedConfigFullRefreshOff,
    BaseSeedCustomSchema,
    BaseSeedParsing,
    BaseSeedSpecificFormats,
    BaseSeedWithEmptyDelimiter,
    BaseSeedWithUniqueDelimiter,
    BaseSeedWithWrongDelimiter,
    BaseSimpleSeedEnabledViaConfig,
    BaseSimpleSeedWithBOM,
    BaseTestEmptySeed,
)
from dbt.tests.adapter.simple_snapshot.test_snapshot import BaseSimpleSnapshot, BaseSnapshotCheck


def pending(area: str) -> pytest.MarkDecorator:
    return pytest.mark.skip(reason=f"pending: floe's {area} on Iceberg, built on another branch")


@pending("dbt snapshots")
class TestSimpleSnapshotFloe(BaseSimpleSnapshot):
    pass


@pending("dbt snapshots")
class TestSnapshotCheckFloe(BaseSnapshotCheck):
    pass


@pending("microbatch strategy")
class TestMicrobatchFloe(BaseMicrobatch):
    pass


class TestClonePossibleFloe(BaseClonePossible):
    pass


@pending("seeds")
class TestBasicSeedTestsFloe(BaseBasicSeedTests):
    pass


@pending("seeds")
class TestSeedConfigFullRefreshOffFloe(BaseSeedConfigFullRefreshOff):
    pass


@pending("seeds")
class TestSeedCustomSchemaFloe(BaseSeedCustomSchema):
    pass


@pending("seeds")
class TestSeedParsingFloe(BaseSeedParsing):
    pass


@pending("seeds")
class TestSeedSpecificFormatsFloe(BaseSeedSpecificFormats):
    pass


@pending("seeds")
class TestSeedWithEmptyDelimiterFloe(BaseSeedWithEmptyDelimiter):
    pass


@pending("seeds")
class TestSeedWithUniqueDelimiterFloe(BaseSeedWithUniqueDelimiter):
    pass


@pending("seeds")
class TestSeedWithWrongDelimiterFloe(BaseSeedWithWrongDelimiter):
    pass


@pending("seeds")
class TestSimpleSeedEnabledViaConfigFloe(BaseSimpleSeedEnabledViaConfig):
    pass


@pending("seeds")
class TestSimpleSeedWithBOMFloe(BaseSimpleSeedWithBOM):
    pass


@pending("seeds")
class TestEmptySeedFloe(BaseTestEmptySeed):
    pass


@pending("seeds")
class TestEmptySeedFlagFloe(BaseTestEmptySeedFlag):
    pass
