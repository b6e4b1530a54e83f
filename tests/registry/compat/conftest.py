"""Assertion rewriting for the shared compatibility test harness."""

import pytest

pytest.register_assert_rewrite("tests.registry.compat.evolution")
