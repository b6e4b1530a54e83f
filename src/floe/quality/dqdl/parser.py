"""A recursive-descent parser for Glue Data Quality's DQDL, with no JVM.

A ruleset is ``Rules = [ rule, rule, ... ]`` (optionally followed by
``Analyzers = [ ... ]``); ``#`` starts a comment. The grammar parsed here
(docs/quality.md, "DQDL rulesets", has the support matrix):

    ruleset    := section+
    section    := ("Rules" | "Analyzers") "=" "[" [item ("," item)*] "]"
    item       := composite
    composite  := "(" composite ")" (("and" | "or") "(" composite ")")*  | rule
    rule       := RuleType param* [condition] ["with" "threshold" condition]
                  ["where" STRING]
    param      := STRING
    condition  := op value | ["not"] "between" value "and" value
                | ["not"] "in" "[" value ("," value)* "]" | ["not"] "matches" STRING
    op         := "=" | "!=" | ">" | ">=" | "<" | "<="
    value      := term (("+" | "-" | "*" | "/") term)*
    term       := NUMBER [unit] | STRING | NULL | EMPTY | WHITESPACES_ONLY | "now" "(" ")"
                | agg "(" "last" "(" NUMBER ")" ")" | "(" value ")" | "-" term
    unit       := "days" | "hours" | "minutes" | "seconds" (and singulars)
    agg        := "avg" | "min" | "max" | "std"

The parser only builds a tree (:class:`Rule`, :class:`Composite`, :class:`Condition`,
:class:`Value`); :mod:`floe.quality.dqdl.compile` maps it onto floe's analyzers. A rule
type the compiler does not know fails there, naming the rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


class DqdlSyntaxError(ValueError):
    """A DQDL ruleset does not parse; the message gives the line, column and what was expected."""


# ---------------------------------------------------------------------------- tokens

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<number>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)
  | (?P<op>>=|<=|!=|=|>|<|\+|-|\*|/)
  | (?P<punct>[\[\](),{}:])
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class Token:
    kind: str  # string | number | op | punct | word | end
    text: str
    pos: int


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN_RE.match(text, pos)
        if match is None:
            raise DqdlSyntaxError(f"{_where(text, pos)}: unexpected character {text[pos]!r}")
        kind = match.lastgroup or ""
        if kind not in ("ws", "comment"):
            tokens.append(Token(kind, match.group(), pos))
        pos = match.end()
    tokens.append(Token("end", "", len(text)))
    return tokens


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {column}"


def _unquote(token: Token) -> str:
    return re.sub(r"\\(.)", r"\1", token.text[1:-1])


# ---------------------------------------------------------------------------- tree

DURATION_UNITS = {
    "day": 86400.0,
    "days": 86400.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "minute": 60.0,
    "minutes": 60.0,
    "second": 1.0,
    "seconds": 1.0,
}
KEYWORDS = {"NULL": "null", "EMPTY": "empty", "WHITESPACES_ONLY": "whitespaces_only"}
DYNAMIC_AGGREGATES = ("avg", "min", "max", "std")


@dataclass(frozen=True)
class Value:
    """One operand of a condition.

    kind: ``number`` (``number``), ``string`` (``text``), ``duration`` (``number``
    seconds), ``keyword`` (``text``: null | empty | whitespaces_only), ``now``,
    ``dynamic`` (``text`` the aggregate, ``number`` the n of ``last(n)``), or
    ``binary`` (``text`` the operator, ``left`` and ``right``).
    """

    kind: str
    number: float = 0.0
    text: str = ""
    left: Value | None = None
    right: Value | None = None

    def render(self) -> str:
        if self.kind == "number":
            return _num(self.number)
        if self.kind == "string":
            return '"' + self.text.replace('"', '\\"') + '"'
        if self.kind == "duration":
            return f"{_num(self.number / 3600.0)} hours"
        if self.kind == "keyword":
            return self.text.upper()
        if self.kind == "now":
            return "now()"
        if self.kind == "dynamic":
            return f"{self.text}(last({int(self.number)}))"
        assert self.left is not None and self.right is not None
        return f"({self.left.render()} {self.text} {self.right.render()})"

    @property
    def is_dynamic(self) -> bool:
        if self.kind == "dynamic":
            return True
        return self.kind == "binary" and bool(
            (self.left and self.left.is_dynamic) or (self.right and self.right.is_dynamic)
        )

    @property
    def dynamic_window(self) -> int:
        """The largest n of the ``last(n)`` in this value (0 when static)."""
        if self.kind == "dynamic":
            return int(self.number)
        if self.kind == "binary":
            return max(
                self.left.dynamic_window if self.left else 0,
                self.right.dynamic_window if self.right else 0,
            )
        return 0


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(value)


@dataclass(frozen=True)
class Condition:
    """``op`` is one of = != > >= < <= between in matches, ``negated`` for not between /
    not in / not matches; ``values`` the operands (two for between, the list for in)."""

    op: str
    values: tuple[Value, ...]
    negated: bool = False

    def render(self) -> str:
        neg = "not " if self.negated else ""
        if self.op == "between":
            return f"{neg}between {self.values[0].render()} and {self.values[1].render()}"
        if self.op == "in":
            return f"{neg}in [{', '.join(v.render() for v in self.values)}]"
        if self.op == "matches":
            return f"{neg}matches {self.values[0].render()}"
        return f"{self.op} {self.values[0].render()}"

    @property
    def is_dynamic(self) -> bool:
        return any(v.is_dynamic for v in self.values)


@dataclass(frozen=True)
class Rule:
    """One rule: its type, string parameters, optional condition, threshold and where."""

    rule_type: str
    params: tuple[str, ...] = ()
    condition: Condition | None = None
    threshold: Condition | None = None
    where: str | None = None
    text: str = ""


@dataclass(frozen=True)
class Composite:
    """``(a) and (b) ...`` or ``(a) or (b) ...``."""

    op: str  # "and" | "or"
    parts: tuple[Node, ...] = ()
    text: str = ""


Node = Rule | Composite


@dataclass(frozen=True)
class Ruleset:
    rules: tuple[Node, ...] = ()
    analyzers: tuple[Node, ...] = ()
    sections: tuple[str, ...] = field(default=())


# ---------------------------------------------------------------------------- parser


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    # -- helpers
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def advance(self) -> Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def at(self, kind: str, text: str | None = None) -> bool:
        tok = self.tok
        return tok.kind == kind and (text is None or tok.text == text)

    def at_word(self, *words: str) -> bool:
        return self.tok.kind == "word" and self.tok.text.lower() in words

    def expect(self, kind: str, text: str | None = None, what: str | None = None) -> Token:
        if not self.at(kind, text):
            self.fail(what or (repr(text) if text else kind))
        return self.advance()

    def fail(self, expected: str) -> None:
        tok = self.tok
        found = "the end of the ruleset" if tok.kind == "end" else repr(tok.text)
        raise DqdlSyntaxError(f"{_where(self.text, tok.pos)}: expected {expected}, found {found}")

    # -- grammar
    def ruleset(self) -> Ruleset:
        sections: dict[str, tuple[Node, ...]] = {}
        while not self.at("end"):
            name_tok = self.expect("word", what="`Rules = [` or `Analyzers = [`")
            name = name_tok.text
            if name not in ("Rules", "Analyzers"):
                raise DqdlSyntaxError(
                    f"{_where(self.text, name_tok.pos)}: unknown section {name!r} "
                    "(a DQDL document holds `Rules = [...]` and optionally `Analyzers = [...]`)"
                )
            if name in sections:
                raise DqdlSyntaxError(f"{_where(self.text, name_tok.pos)}: {name} given twice")
            self.expect("op", "=")
            self.expect("punct", "[")
            items: list[Node] = []
            if not self.at("punct", "]"):
                items.append(self.composite())
                while self.at("punct", ","):
                    self.advance()
                    if self.at("punct", "]"):  # a trailing comma
                        break
                    items.append(self.composite())
            self.expect("punct", "]", what="`,` or `]`")
            sections[name] = tuple(items)
        if "Rules" not in sections and "Analyzers" not in sections:
            raise DqdlSyntaxError("empty ruleset: write `Rules = [ ... ]`")
        return Ruleset(
            rules=sections.get("Rules", ()),
            analyzers=sections.get("Analyzers", ()),
            sections=tuple(sections),
        )

    def composite(self) -> Node:
        start = self.tok.pos
        if not self.at("punct", "("):
            return self.rule()
        self.advance()
        first = self.composite()
        self.expect("punct", ")")
        if not self.at_word("and", "or"):
            return first  # a parenthesized rule
        op = self.tok.text.lower()
        parts = [first]
        while self.at_word("and", "or"):
            if self.tok.text.lower() != op:
                raise DqdlSyntaxError(
                    f"{_where(self.text, self.tok.pos)}: mixing `and` and `or` at one level; "
                    "parenthesize, e.g. (a) and ((b) or (c))"
                )
            self.advance()
            self.expect("punct", "(", what="`(` (each rule joined by and/or is parenthesized)")
            parts.append(self.composite())
            self.expect("punct", ")")
        end = self.tokens[self.i - 1]
        return Composite(op, tuple(parts), self.text[start : end.pos + len(end.text)].strip())

    def rule(self) -> Rule:
        start = self.tok.pos
        rule_type = self.expect("word", what="a rule type such as RowCount or IsComplete").text
        params: list[str] = []
        while self.at("string"):
            params.append(_unquote(self.advance()))
        if rule_type == "DetectAnomalies" and self.at_word("of"):
            self.advance()
        condition = self.condition() if self._at_condition() else None
        threshold = None
        if self.at_word("with"):
            self.advance()
            word = self.expect("word", what="`threshold`")
            if word.text.lower() != "threshold":
                raise DqdlSyntaxError(
                    f"{_where(self.text, word.pos)}: `with {word.text}` is not supported "
                    "(only `with threshold <condition>`)"
                )
            threshold = self.condition()
        where = None
        if self.at_word("where"):
            self.advance()
            where = _unquote(self.expect("string", what="a quoted SQL predicate after where"))
        if self.at_word("labels"):
            raise DqdlSyntaxError(
                f"{_where(self.text, self.tok.pos)}: rule labels are not supported yet"
            )
        end = self.tokens[self.i - 1]
        text = self.text[start : end.pos + len(end.text)].strip()
        return Rule(rule_type, tuple(params), condition, threshold, where, text)

    def _at_condition(self) -> bool:
        tok = self.tok
        if tok.kind == "op" and tok.text in ("=", "!=", ">", ">=", "<", "<="):
            return True
        return self.at_word("between", "in", "matches", "not")

    def condition(self) -> Condition:
        negated = False
        if self.at_word("not"):
            self.advance()
            negated = True
            if not self.at_word("between", "in", "matches"):
                self.fail("`between`, `in` or `matches` after `not`")
        if self.at_word("between"):
            self.advance()
            low = self.value()
            word = self.expect("word", what="`and`")
            if word.text.lower() != "and":
                raise DqdlSyntaxError(f"{_where(self.text, word.pos)}: expected `and`")
            return Condition("between", (low, self.value()), negated)
        if self.at_word("in"):
            self.advance()
            self.expect("punct", "[")
            values = [self.value()]
            while self.at("punct", ","):
                self.advance()
                values.append(self.value())
            self.expect("punct", "]", what="`,` or `]`")
            return Condition("in", tuple(values), negated)
        if self.at_word("matches"):
            self.advance()
            pattern = self.expect("string", what="a quoted regular expression")
            return Condition("matches", (Value("string", text=_unquote(pattern)),), negated)
        if self.tok.kind == "op" and self.tok.text in ("=", "!=", ">", ">=", "<", "<="):
            op = self.advance().text
            return Condition(op, (self.value(),))
        self.fail("a condition (= != > >= < <= between in matches)")
        raise AssertionError  # unreachable: fail() raises

    def value(self) -> Value:
        left = self.term()
        while self.tok.kind == "op" and self.tok.text in ("+", "-", "*", "/"):
            op = self.advance().text
            left = Value("binary", text=op, left=left, right=self.term())
        return left

    def term(self) -> Value:
        tok = self.tok
        if tok.kind == "op" and tok.text == "-":
            self.advance()
            inner = self.term()
            return Value("binary", text="*", left=Value("number", number=-1.0), right=inner)
        if tok.kind == "number":
            self.advance()
            number = float(tok.text)
            if self.tok.kind == "word" and self.tok.text.lower() in DURATION_UNITS:
                unit = self.advance().text.lower()
                return Value("duration", number=number * DURATION_UNITS[unit])
            return Value("number", number=number)
        if tok.kind == "string":
            self.advance()
            return Value("string", text=_unquote(tok))
        if tok.kind == "punct" and tok.text == "(":
            self.advance()
            inner = self.value()
            self.expect("punct", ")")
            return inner
        if tok.kind == "word":
            if tok.text in KEYWORDS:
                self.advance()
                return Value("keyword", text=KEYWORDS[tok.text])
            name = tok.text.lower()
            if name == "now":
                self.advance()
                self.expect("punct", "(")
                self.expect("punct", ")")
                return Value("now")
            if name in DYNAMIC_AGGREGATES:
                self.advance()
                self.expect("punct", "(")
                last = self.expect("word", what="last(n)")
                if last.text.lower() != "last":
                    raise DqdlSyntaxError(
                        f"{_where(self.text, last.pos)}: expected last(n) inside {name}(...)"
                    )
                self.expect("punct", "(")
                n_tok = self.expect("number", what="the number of past runs")
                n = float(n_tok.text)
                if not n.is_integer() or n < 1:
                    raise DqdlSyntaxError(
                        f"{_where(self.text, n_tok.pos)}: last(n) needs a whole n >= 1"
                    )
                self.expect("punct", ")")
                self.expect("punct", ")")
                return Value("dynamic", number=n, text=name)
            if self.tokens[self.i + 1].kind == "punct" and self.tokens[self.i + 1].text == "(":
                raise DqdlSyntaxError(
                    f"{_where(self.text, tok.pos)}: function {tok.text}(...) is not supported "
                    f"(supported: now(), {', '.join(DYNAMIC_AGGREGATES)}(last(n)))"
                )
        self.fail("a value (number, quoted string, NULL, now(), avg(last(n)), ...)")
        raise AssertionError  # unreachable


def parse_ruleset(text: str) -> Ruleset:
    """The tree of a DQDL document; raises :class:`DqdlSyntaxError` naming line and column."""
    return _Parser(text).ruleset()
