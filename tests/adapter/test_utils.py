"""dbt's cross-database macros (dbt.tests.adapter.utils) on floe."""

from __future__ import annotations

from dbt.tests.adapter.utils.test_any_value import BaseAnyValue
from dbt.tests.adapter.utils.test_bool_or import BaseBoolOr
from dbt.tests.adapter.utils.test_cast_bool_to_text import BaseCastBoolToText
from dbt.tests.adapter.utils.test_concat import BaseConcat
from dbt.tests.adapter.utils.test_current_timestamp import BaseCurrentTimestampNaive
from dbt.tests.adapter.utils.test_date_trunc import BaseDateTrunc
from dbt.tests.adapter.utils.test_dateadd import BaseDateAdd
from dbt.tests.adapter.utils.test_escape_single_quotes import BaseEscapeSingleQuotesBackslash
from dbt.tests.adapter.utils.test_hash import BaseHash
from dbt.tests.adapter.utils.test_length import BaseLength
from dbt.tests.adapter.utils.test_replace import BaseReplace
from dbt.tests.adapter.utils.test_right import BaseRight
from dbt.tests.adapter.utils.test_safe_cast import BaseSafeCast
from dbt.tests.adapter.utils.test_string_literal import BaseStringLiteral


class TestAnyValueFloe(BaseAnyValue):
    pass


class TestBoolOrFloe(BaseBoolOr):
    pass


class TestCastBoolToTextFloe(BaseCastBoolToText):
    pass


class TestConcatFloe(BaseConcat):
    pass


# Spark timestamps carry no zone (the session runs in UTC): the naive variant, as dbt-spark.
class TestCurrentTimestampFloe(BaseCurrentTimestampNaive):
    pass


class TestDateAddFloe(BaseDateAdd):
    pass


class TestDateTruncFloe(BaseDateTrunc):
    pass


class TestEscapeSingleQuotesFloe(BaseEscapeSingleQuotesBackslash):
    pass


class TestHashFloe(BaseHash):
    pass


class TestLengthFloe(BaseLength):
    pass


class TestReplaceFloe(BaseReplace):
    pass


class TestRightFloe(BaseRight):
    pass


class TestSafeCastFloe(BaseSafeCast):
    pass


class TestStringLiteralFloe(BaseStringLiteral):
    pass
