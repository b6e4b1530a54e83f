"""The DQDL parser and rule mapping without Spark: the reference's syntax, clear errors."""

from __future__ import annotations

import pytest

from floe.quality.analyzers import Completeness, Size, Uniqueness
from floe.quality.dqdl import (
    DqdlSyntaxError,
    DqdlUnsupportedError,
    compile_ruleset,
    parse_ruleset,
)
from floe.quality.dqdl.parser import Composite, Rule
from floe.quality.dqdl.rules import ONE, metric_holds, requirements

# Examples as Glue's DQDL reference writes them (one per form it documents).
REFERENCE_EXAMPLES = [
    'IsComplete "order-id"',
    'IsUnique "order-id"',
    "RowCount between 10 and 100",
    'RowCount between 1 and 50 where "Customer_ID < 10"',
    "RowCount > avg(last(10)) * 0.8",
    'Completeness "First_Name" > 0.95',
    'Completeness "First_Name" > 0.95 where "Customer_ID < 10"',
    'Uniqueness "email" = 1.0',
    'IsPrimaryKey "First_Name" "Last_Name"',
    'ColumnValues "Country" in [ "US", "CA", "UK", NULL, EMPTY, WHITESPACES_ONLY ]',
    'ColumnValues "gender" in ["F", "M"] where "weightinkgs < 10"',
    'ColumnValues "First_Name" matches "[a-zA-Z]*"',
    'ColumnValues "Load_Date" > (now() - 3 days)',
    'ColumnValues "Customer_ID" between 1 and 2000',
    'ColumnValues "Age" not in [21, 22, 23, NULL]',
    'ColumnValues "colA" in ["A", "B"] with threshold > 0.8',
    'ColumnLength "Postal_Code" = 5',
    'ColumnLength "Address" between 3 and 12',
    "ColumnCount = 10",
    'ColumnExists "Zip"',
    'ColumnDataType "colA" = "INTEGER" with threshold > 0.9',
    'DistinctValuesCount "State" > 3',
    'Entropy "Star_Rating" > 1',
    'Mean "Star_Rating" > 3',
    'Sum "transaction_total" > 500000',
    'StandardDeviation "Star_Rating" < 1.5',
    'ColumnCorrelation "height" "weight" > 0.8',
    'DataFreshness "Order_Date" <= 24 hours',
    'DataFreshness "Order_Date" between 2 days and 5 days',
    'CustomSql "select count(*) from primary" between 10 and 20',
    'CustomSql "select Order_Id from primary where Order_Total < 100" with threshold > 0.5',
    'ReferentialIntegrity "State" "reference.State_Abbreviation" = 1.0',
    'ReferentialIntegrity "State,Zip" "reference.{State_Abbreviation,Zip}" >= 0.9',
    'DatasetMatch "reference" "ID" >= 0.9',
    'DatasetMatch "reference" "ID1->ID2" "Cost,Revenue->Income" = 1.0',
    'AggregateMatch "sum(amount)" "sum(reference.amount)" >= 0.9',
    'SchemaMatch "reference" = 1.0',
    'RowCountMatch "reference" >= 0.9',
    'DetectAnomalies "RowCount"',
    'DetectAnomalies "Completeness" "email"',
    '(IsComplete "id") and (IsUnique "id")',
    '(RowCount "id" > 100) or (IsPrimaryKey "id")',
    '(Mean "Star_Rating" > 3) and ((Mean "Order_Total" > 500) or (IsComplete "Order_Id"))',
]


@pytest.mark.parametrize("rule", REFERENCE_EXAMPLES)
def test_every_reference_example_parses_and_maps_onto_analyzers(rule):
    tree = parse_ruleset(f"Rules = [ {rule} ]")
    assert len(tree.rules) == 1
    assert tree.rules[0].text == rule  # the rule text goes to dq.check_results
    rules, _ = compile_ruleset(tree, {"reference": "marts.reference"})
    assert requirements(rules[0])


def test_ruleset_with_comments_trailing_comma_and_analyzers():
    tree = parse_ruleset(
        """
        # orders
        Rules = [
            RowCount > 0,          # at least one
            IsComplete "id",
        ]
        Analyzers = [ Completeness "email" ]
        """
    )
    assert [r.rule_type for r in tree.rules] == ["RowCount", "IsComplete"]
    assert tree.analyzers[0].rule_type == "Completeness"


def test_rules_map_to_floe_analyzers():
    rules, _ = compile_ruleset(
        'Rules = [ RowCount > 0, IsComplete "a", IsPrimaryKey "a" "b" where "x > 1" ]'
    )
    assert requirements(rules[0])[0].analyzer == Size()
    assert requirements(rules[1])[0].analyzer == Completeness(("a",))
    pk = [r.analyzer for r in requirements(rules[2])]
    assert pk == [
        Completeness(("a",), "x > 1"),
        Completeness(("b",), "x > 1"),
        Uniqueness(("a", "b"), "x > 1"),
    ]


def test_composites_nest():
    tree = parse_ruleset('Rules = [ (RowCount > 0) or ((IsComplete "a") and (IsUnique "a")) ]')
    node = tree.rules[0]
    assert isinstance(node, Composite) and node.op == "or"
    assert isinstance(node.parts[0], Rule) and isinstance(node.parts[1], Composite)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Rules = [ IsComplete ", "line 1, column 22: expected"),
        ('Rules = [ IsComplete "a" ', "expected `,` or `]`"),
        ("Rules = [ RowCount >> 1 ]", "expected a value"),
        (
            "Rules = [ (RowCount > 1) and (RowCount < 9) or (RowCount = 3) ]",
            "mixing `and` and `or`",
        ),
        ("Rulez = [ RowCount > 1 ]", "unknown section 'Rulez'"),
        ("Rules = [ RowCount > avg(first(3)) ]", "expected last(n)"),
        ('Rules = [ RowCount > 1 labels = ["a"] ]', "labels are not supported yet"),
        ("Rules = [ RowCount > 1 @ ]", "unexpected character '@'"),
    ],
)
def test_syntax_errors_say_where_and_what(text, message):
    with pytest.raises(DqdlSyntaxError, match=None) as info:
        parse_ruleset(text)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ('FileFreshness "s3://bucket/" > 1', "rule type 'FileFreshness' is not supported"),
        ('iscomplete "a"', "case-sensitive"),
        ('IsComplete "a" "b"', "IsComplete takes one column name, got 2"),
        ('Completeness "a"', "needs a condition"),
        ('ReferentialIntegrity "a" "elsewhere.b" = 1.0', "alias 'elsewhere' is not declared"),
        ('ColumnDataType "a" = "BLOB"', "unknown type"),
        ('DetectAnomalies "FileSize"', "DetectAnomalies of 'FileSize' is not supported"),
        ('ColumnValues "a" > avg(last(3))', "no last(n)"),
    ],
)
def test_unsupported_rules_fail_naming_the_rule(rule, message):
    with pytest.raises(DqdlUnsupportedError) as info:
        compile_ruleset(f"Rules = [ {rule} ]", {"reference": "marts.r"})
    assert f"rule `{rule}`" in str(info.value)
    assert message in str(info.value)


def test_metric_conditions_between_is_exclusive_and_dynamic_needs_history():
    (between,) = parse_ruleset("Rules = [ RowCount between 10 and 100 ]").rules
    assert isinstance(between, Rule) and between.condition is not None
    assert metric_holds(between.condition, 50.0, []) == "pass"
    assert metric_holds(between.condition, 10.0, []) == "fail"
    assert metric_holds(ONE, None, []) == "fail"  # undefined metric
    (dynamic,) = parse_ruleset("Rules = [ RowCount > avg(last(2)) * 0.8 ]").rules
    assert isinstance(dynamic, Rule) and dynamic.condition is not None
    assert metric_holds(dynamic.condition, 10.0, []) == "skip"
    # avg of the last two (10, 20) = 15, * 0.8 = 12
    assert metric_holds(dynamic.condition, 12.5, [1000.0, 10.0, 20.0]) == "pass"
    assert metric_holds(dynamic.condition, 11.0, [1000.0, 10.0, 20.0]) == "fail"
    (spread,) = parse_ruleset('Rules = [ Mean "x" <= max(last(3)) + std(last(3)) ]').rules
    assert isinstance(spread, Rule) and spread.condition is not None
    assert metric_holds(spread.condition, 4.0, [2.0, 4.0]) == "pass"  # 4 + 1
    assert metric_holds(spread.condition, 5.5, [2.0, 4.0]) == "fail"
