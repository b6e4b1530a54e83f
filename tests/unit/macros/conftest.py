"""Jinja-only tests of the adapter's macros (see jinja_harness)."""

from __future__ import annotations

import pytest

from tests.unit.macros.jinja_harness import Renderer


@pytest.fixture
def render() -> Renderer:
    """All of floe's macros over a fresh fake dbt context."""
    return Renderer()
