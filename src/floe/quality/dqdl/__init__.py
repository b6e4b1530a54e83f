"""DQDL (Glue Data Quality's rule language) parsed and evaluated by floe's one-pass engine.

`parse_ruleset` (parser), rule types mapped onto analyzers (rules), `verify_ruleset`
(verify). docs/quality.md, "DQDL rulesets", has the support matrix.
"""

from floe.quality.dqdl.parser import DqdlSyntaxError, parse_ruleset
from floe.quality.dqdl.rules import SUPPORTED_RULE_TYPES, DqdlUnsupportedError
from floe.quality.dqdl.verify import RulesetResult, compile_ruleset, explain, verify_ruleset

__all__ = [
    "SUPPORTED_RULE_TYPES",
    "DqdlSyntaxError",
    "DqdlUnsupportedError",
    "RulesetResult",
    "compile_ruleset",
    "explain",
    "parse_ruleset",
    "verify_ruleset",
]
