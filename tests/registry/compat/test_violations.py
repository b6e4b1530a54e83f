"""What a rejected version reports."""

from __future__ import annotations

from floe.registry.compat import IncompatibleSchemaError, Violation
from tests.registry.compat.evolution import MISSING


def test_incompatible_error_names_field_and_rule() -> None:
    violation = Violation("customer.email", MISSING, "no default", 2, 1, "backward")
    err = IncompatibleSchemaError("unicorn", [violation])
    assert err.code == "incompatible_schema"
    assert "v2 vs v1 (backward): customer.email: missing_default" in str(err)
