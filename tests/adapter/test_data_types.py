"""dbt's data type macros (dbt.tests.adapter.utils.data_types) on floe, as dbt-spark runs them."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.utils.data_types.test_type_bigint import BaseTypeBigInt
from dbt.tests.adapter.utils.data_types.test_type_boolean import BaseTypeBoolean
from dbt.tests.adapter.utils.data_types.test_type_float import BaseTypeFloat
from dbt.tests.adapter.utils.data_types.test_type_float import (
    seeds__expected_csv as seeds__float_expected_csv,
)
from dbt.tests.adapter.utils.data_types.test_type_int import BaseTypeInt
from dbt.tests.adapter.utils.data_types.test_type_int import (
    seeds__expected_csv as seeds__int_expected_csv,
)
from dbt.tests.adapter.utils.data_types.test_type_numeric import BaseTypeNumeric
from dbt.tests.adapter.utils.data_types.test_type_string import BaseTypeString
from dbt.tests.adapter.utils.data_types.test_type_timestamp import BaseTypeTimestamp

# A seed column of whole numbers loads as bigint and one of decimals as double: the
# expected seeds name the type under test, as dbt-spark's suite does.
FLOAT_EXPECTED_YML = """
version: 2
seeds:
  - name: expected
    config:
      column_types:
        float_col: float
"""
INT_EXPECTED_YML = """
version: 2
seeds:
  - name: expected
    config:
      column_types:
        int_col: int
"""


class TestTypeBigIntFloe(BaseTypeBigInt):
    pass


class TestTypeFloatFloe(BaseTypeFloat):
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"expected.csv": seeds__float_expected_csv, "expected.yml": FLOAT_EXPECTED_YML}


class TestTypeIntFloe(BaseTypeInt):
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"expected.csv": seeds__int_expected_csv, "expected.yml": INT_EXPECTED_YML}


class TestTypeNumericFloe(BaseTypeNumeric):
    def numeric_fixture_type(self):
        return "decimal(28,6)"


class TestTypeStringFloe(BaseTypeString):
    pass


class TestTypeTimestampFloe(BaseTypeTimestamp):
    pass


class TestTypeBooleanFloe(BaseTypeBoolean):
    pass
