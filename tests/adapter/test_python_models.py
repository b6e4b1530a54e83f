"""dbt Python models on floe: run in this process's SparkSession (floe's `session` method)."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.python_model.test_python_model import (
    BasePythonIncrementalTests,
    BasePythonModelTests,
)


class TestPythonModelFloe(BasePythonModelTests):
    pass


class TestPythonIncrementalModelFloe(BasePythonIncrementalTests):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": "iceberg"}}
