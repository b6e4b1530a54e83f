"""PII detectors: does a sample of a column's text values look like personal data?

Each detector returns, for a list of values, the share that match. A column looks
like PII when a detector matches at least ``THRESHOLD`` of its non-empty sampled
values (and there are at least ``MIN_VALUES``). Detectors look at values, not at
column names (name hints are :data:`NAME_HINTS`, for the warehouse-free check).

* ``email`` — local@domain.tld;
* ``phone`` — 7 to 15 digits with a ``+`` or separators, not a date;
* ``credit_card`` — 13 to 19 digits (spaces or dashes allowed) passing Luhn;
* ``ip_address`` — an IPv4 or IPv6 address;
* ``date_of_birth`` — dates of past years spread over decades (a column of event or
  load dates clusters in a few years and does not match);
* ``person_name`` — one to three capitalised words, one of them a common given name
  or surname.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
from collections.abc import Callable, Sequence

THRESHOLD = 0.5
MIN_VALUES = 5

_EMAIL = re.compile(r"^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")
_PHONE = re.compile(r"^\+?[0-9(][0-9 ().-]{5,}[0-9]$")
_CARD = re.compile(r"^[0-9][0-9 -]{11,22}[0-9]$")
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%Y%m%d")
_NAME = re.compile(r"^[A-Z][a-z'\u2019-]+( [A-Z][a-z'\u2019-]+){0,2}$")

GIVEN_NAMES = frozenset(
    [
        "aaron",
        "abigail",
        "adam",
        "adrian",
        "ahmed",
        "aisha",
        "alan",
        "albert",
        "alex",
        "alexander",
        "alice",
        "amelia",
        "amir",
        "amy",
        "ana",
        "andrea",
        "andrew",
        "angela",
        "anna",
        "anne",
        "anthony",
        "antonio",
        "arjun",
        "ava",
        "barbara",
        "ben",
        "benjamin",
        "beth",
        "brian",
        "carl",
        "carlos",
        "carmen",
        "caroline",
        "charles",
        "charlie",
        "charlotte",
        "chloe",
        "chris",
        "christian",
        "christina",
        "claire",
        "daniel",
        "dan",
        "david",
        "deborah",
        "diana",
        "diego",
        "dmitri",
        "donald",
        "dorothy",
        "edward",
        "elena",
        "elizabeth",
        "ella",
        "ema",
        "emily",
        "emma",
        "eric",
        "ethan",
        "eva",
        "evelyn",
        "fatima",
        "finn",
        "francesca",
        "frank",
        "gabriel",
        "gary",
        "george",
        "gia",
        "grace",
        "hana",
        "hannah",
        "harry",
        "helen",
        "henry",
        "hiroshi",
        "hugo",
        "ian",
        "ines",
        "isabella",
        "jack",
        "jacob",
        "james",
        "jane",
        "jason",
        "jennifer",
        "jessica",
        "joe",
        "john",
        "jon",
        "jonathan",
        "jose",
        "joseph",
        "joshua",
        "juan",
        "julia",
        "kai",
        "karen",
        "kate",
        "kevin",
        "laura",
        "lea",
        "leo",
        "liam",
        "linda",
        "lisa",
        "lucas",
        "lucy",
        "luis",
        "maria",
        "mark",
        "martin",
        "mary",
        "matthew",
        "mei",
        "mia",
        "michael",
        "michelle",
        "mohammed",
        "nancy",
        "natalie",
        "nathan",
        "nicole",
        "noah",
        "olga",
        "oliver",
        "olivia",
        "omar",
        "oscar",
        "patricia",
        "paul",
        "peter",
        "priya",
        "rachel",
        "rahul",
        "raj",
        "rebecca",
        "richard",
        "robert",
        "rosa",
        "ryan",
        "sam",
        "samuel",
        "sara",
        "sarah",
        "scott",
        "sophia",
        "sophie",
        "stephen",
        "steven",
        "susan",
        "thomas",
        "tom",
        "victoria",
        "william",
        "yuki",
        "zoe",
    ]
)
SURNAMES = frozenset(
    [
        "adams",
        "ali",
        "allen",
        "anderson",
        "baker",
        "brown",
        "campbell",
        "chen",
        "clark",
        "cohen",
        "davis",
        "diaz",
        "evans",
        "garcia",
        "gomez",
        "gonzalez",
        "green",
        "hall",
        "harris",
        "hernandez",
        "hill",
        "jackson",
        "johnson",
        "jones",
        "khan",
        "kim",
        "king",
        "lee",
        "lewis",
        "lopez",
        "martin",
        "martinez",
        "miller",
        "moore",
        "murphy",
        "ng",
        "nguyen",
        "ortiz",
        "patel",
        "perez",
        "quinn",
        "ramirez",
        "robinson",
        "rodriguez",
        "rossi",
        "sanchez",
        "scott",
        "silva",
        "singh",
        "smith",
        "suzuki",
        "tan",
        "taylor",
        "thomas",
        "thompson",
        "ueda",
        "vega",
        "walker",
        "wang",
        "white",
        "williams",
        "wilson",
        "wong",
        "wright",
        "young",
    ]
)

# Column names that suggest personal data (the warehouse-free check): detector -> pattern.
NAME_HINTS: dict[str, re.Pattern[str]] = {
    "email": re.compile(r"e_?mail"),
    "phone": re.compile(r"phone|mobile|msisdn|^tel(ephone)?$"),
    "person_name": re.compile(
        r"(first|last|middle|given|family|full|sur|maiden)_?name|^name$|^surname$"
    ),
    "date_of_birth": re.compile(r"birth|^dob$"),
    "address": re.compile(r"address|street|^zip(code)?$|post_?code"),
    "ip_address": re.compile(r"^ip(_?addr(ess)?)?$|_ip$"),
    "credit_card": re.compile(r"card_?(number|no)|^pan$|iban|ssn|passport|licen[cs]e"),
    # an identifier of a person: erasure needs it tagged as a subject key
    "person_id": re.compile(
        r"^(customer|cust|user|rider|driver|passenger|member|patient|employee|person|client"
        r"|subscriber|guest|student|traveller|traveler|buyer|seller|account_holder|citizen"
        r"|voter|donor|applicant|candidate|contact|player|fan|visitor|shopper|tenant"
        r"|consumer|beneficiary|insured|policyholder)_?(id|no|number|account_no|key|uuid)$"
    ),
}
# Name hints that propose a subject key rather than a pii classification.
SUBJECT_HINTS = ("person_id",)


def _share(values: Sequence[str], test: Callable[[str], bool]) -> float:
    return sum(1 for v in values if test(v)) / len(values) if values else 0.0


def _parse_date(text: str) -> dt.date | None:
    for fmt in _DATE_FORMATS:
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    return None


def is_email(text: str) -> bool:
    return bool(_EMAIL.match(text))


def is_phone(text: str) -> bool:
    if not _PHONE.match(text) or _parse_date(text) is not None:
        return False
    digits = sum(c.isdigit() for c in text)
    return 7 <= digits <= 15 and (text.startswith("+") or any(c in text for c in " ().-"))


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        n = int(char)
        if i % 2 == 1:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def is_credit_card(text: str) -> bool:
    if not _CARD.match(text):
        return False
    digits = text.replace(" ", "").replace("-", "")
    return 13 <= len(digits) <= 19 and luhn_ok(digits)


def is_ip_address(text: str) -> bool:
    if "." not in text and ":" not in text:
        return False
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def is_person_name(text: str) -> bool:
    if not _NAME.match(text):
        return False
    return any(w.lower() in GIVEN_NAMES or w.lower() in SURNAMES for w in text.split())


def date_of_birth_share(values: Sequence[str], today: dt.date | None = None) -> float:
    """Share of values that are past dates, when the dates span decades (births do)."""
    today = today or dt.date.today()
    dates = [d for d in (_parse_date(v) for v in values) if d is not None]
    past = [d for d in dates if d.year >= 1900 and d <= today]
    if len(past) < MIN_VALUES:
        return 0.0
    years = sorted(d.year for d in past)
    spread = years[int(len(years) * 0.9) - 1] - years[int(len(years) * 0.1)]
    median_age = today.year - years[len(years) // 2]
    if spread < 15 or median_age < 10:
        return 0.0
    return len(past) / len(values)


DETECTORS: dict[str, Callable[[Sequence[str]], float]] = {
    "email": lambda values: _share(values, is_email),
    "phone": lambda values: _share(values, is_phone),
    "credit_card": lambda values: _share(values, is_credit_card),
    "ip_address": lambda values: _share(values, is_ip_address),
    "date_of_birth": date_of_birth_share,
    "person_name": lambda values: _share(values, is_person_name),
}


def detect(values: Sequence[str | None]) -> dict[str, float]:
    """detector -> share of the non-empty ``values`` it matches, for detectors at or
    above :data:`THRESHOLD` (empty when there are fewer than :data:`MIN_VALUES`)."""
    texts = [v.strip() for v in values if isinstance(v, str) and v.strip()]
    if len(texts) < MIN_VALUES:
        return {}
    found = {}
    for name, detector in DETECTORS.items():
        share = detector(texts)
        if share >= THRESHOLD:
            found[name] = share
    return found


def name_hints(column: str) -> list[str]:
    """Detectors a column's name suggests (lower-cased, last path part)."""
    leaf = column.lower().split(".")[-1]
    return [name for name, pattern in NAME_HINTS.items() if pattern.search(leaf)]
