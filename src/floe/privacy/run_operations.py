"""The bridge from dbt to the erasure engine: what ``adapter.floe_privacy(...)`` runs.

dbt's Jinja cannot import Python, so the ``privacy_forget`` / ``privacy_rectify``
run-operations (src/dbt/include/floe/macros/privacy/) call an ``@available`` method
of the floe adapter, which delegates here with the invocation's graph: the tags come
from it (no second ``dbt parse``), and the work runs in dbt's own SparkSession.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dbt_common.exceptions import DbtRuntimeError

if TYPE_CHECKING:
    from floe.runtime import Settings


def _plain(value: Any) -> Any:
    """dbt's graph holds its own mapping types: plain dicts for floe.privacy.tags."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def run_operation(
    operation: str, args: Mapping[str, Any], graph: Mapping[str, Any], settings: Settings
) -> str:
    """Run ``forget`` or ``rectify`` with ``args`` (the macro's) on the lakehouse of
    ``settings`` (the adapter's connection settings); the outcome as text."""
    from floe.privacy.erasure import ErasureError, forget, parse_sets, rectify
    from floe.privacy.masking import MaskingError
    from floe.privacy.secrets import PrivacyConfigError
    from floe.privacy.subject import Subject, SubjectError
    from floe.privacy.tags import PrivacyTagError, PrivacyTags
    from floe.runtime import get_spark

    if operation not in ("forget", "rectify"):
        raise DbtRuntimeError(f"floe_privacy: unknown operation {operation!r}")
    try:
        tags = PrivacyTags.from_graph(
            _plain(graph.get("nodes", {})), _plain(graph.get("sources", {}))
        )
        subject = Subject.parse(str(args.get("subject") or ""))
        spark = get_spark(settings)
        if operation == "forget":
            outcome = forget(
                spark,
                settings,
                tags,
                subject,
                dry_run=bool(args.get("dry_run")),
                include_landing=bool(args.get("include_landing")),
                include_untagged=bool(args.get("include_untagged")),
            )
        else:
            sets = args.get("set") or {}
            changes = parse_sets([f"{k}={v}" for k, v in dict(sets).items()])
            outcome = rectify(
                spark,
                settings,
                tags,
                subject,
                changes,
                dry_run=bool(args.get("dry_run")),
                include_untagged=bool(args.get("include_untagged")),
            )
    except (SubjectError, PrivacyTagError, PrivacyConfigError, MaskingError, ErasureError) as exc:
        raise DbtRuntimeError(f"privacy_{operation}: {exc}") from exc
    return outcome.render()
