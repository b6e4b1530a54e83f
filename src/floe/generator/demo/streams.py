"""Demo content of the seed's six streams: one record maker per stream.

Each attribute is a :class:`~floe.generator.synth.StreamDemo` named from a stream feed's
YAML (``demo: streams.ventilator``). The layout — hour folders, envelopes, framing,
compression, deliberately broken records — is the stream kind's
(floe.feeds.kinds.stream). ``weather`` switches from v1 to v2 and ``movies_cdc`` from
v1 to v2 (adds ``COUNTRY``) half-way through the days, because their registry schemas
have two versions.
"""

from __future__ import annotations

import bisect
import random
import uuid
from datetime import datetime

from floe.generator.synth import StreamDemo

DISHES = ("pizza", "burger", "salad", "donut", "ice-cream")


def _ventilator(rng: random.Random, i: int, ts: datetime, version: int) -> dict:
    return {
        "ventilatorid": rng.randint(0, 100),
        "eventtime": ts.strftime("%Y-%m-%d %H:%M:%S"),
        "serialnumber": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "pressurecontrol": rng.randint(5, 30),
        "o2stats": rng.randint(92, 98),
        "minutevolume": rng.randint(5, 8),
        "manufacturer": rng.choice(["3M", "GE", "Vyaire", "Getinge"]),
    }


def _unicorn(rng: random.Random, i: int, ts: datetime, version: int) -> dict:
    return {
        "request_id": i,
        "pickup_address": rng.choice(["Melbourne, Victoria, Australia", "Geelong, VIC"]),
        "destination_address": rng.choice(["Sydney, NSW, Aus", "Canberra, ACT"]),
        "ride_fare": round(rng.uniform(10, 1500), 2),
        "ride_duration": rng.randint(5, 240),
        "preferred_unicorn_color": rng.choice(["WHITE", "BLACK", "RED", "BLUE", "GREY"]),
        "recommended_unicorn": {
            "unicorn_id": i * 2,
            "color": rng.choice(["WHITE", "RED", "BLUE"]),
            "stars_rating": rng.choice([None, 3, 4, 5]),
        },
        "customer": {
            "customer_account_no": 1000 + rng.randint(0, 500),
            "first_name": rng.choice(["Dummy", "Ava", "Ben"]),
            "middle_name": rng.choice([None, "J"]),
            "last_name": rng.choice(["User", "Ng", "Tan"]),
            "email_addresses": rng.choice([None, [f"user{i}@example.com"]]),
            "customer_address": "Flinders Street Station",
            "mode_of_payment": rng.choice(["CARD", "CASH"]),
            "customer_rating": rng.choice([None, 4, 5]),
        },
    }


CITIES = (
    ("Phoenix", "Arizona", "USA"),
    ("Orlando", "Florida", "USA"),
    ("Toronto", "Ontario", "Canada"),
    ("Perth", "Western Australia", "Australia"),
)


def _weather(rng: random.Random, i: int, ts: datetime, version: int) -> dict:
    city, state, country = rng.choice(CITIES)
    location = {"city": city, "state": state}
    if version >= 2:
        location["country"] = country
    record = {
        "temperature": rng.randint(-10, 115),
        "location": location,
        "timestamp": int(ts.timestamp()),
    }
    if rng.random() < 0.2:
        record["windSpeed"] = rng.randint(0, 60)  # open root content model (seed sample)
    return record


class _Movies:
    """Debezium-flattened change events over a small movie table: c, then u / d."""

    TITLES = ("Dune", "Heat", "Up", "Alien", "Big", "Jaws", "Rocky", "Tron", "Coco", "Ran")

    def __init__(self) -> None:
        self.live: dict[int, dict] = {}
        # The live ids in ascending order, kept in step with ``live`` (ids only grow), so a
        # pick costs a bisect, not a sort of the whole table per record.
        self.ids: list[int] = []
        self.next_id = 1

    def __call__(self, rng: random.Random, i: int, ts: datetime, version: int) -> dict:
        source_ts = int(ts.timestamp() * 1000)
        roll = rng.random()
        if not self.live or roll < 0.4:
            movie_id, self.next_id = self.next_id, self.next_id + 1
            row = {
                "movie_id": movie_id,
                "title": f"{rng.choice(self.TITLES)} {movie_id}",
                "release_year": rng.randint(1970, 2022),
            }
            op = "c"
        elif roll < 0.9:
            movie_id = rng.choice(self.ids)
            row = dict(self.live[movie_id], release_year=rng.randint(1970, 2022))
            op = "u"
        else:
            movie_id = rng.choice(self.ids)
            row = dict(self.live[movie_id])
            op = "d"
        if version >= 2:
            row["COUNTRY"] = rng.choice(["US", "FR", "JP", "IN"])
        else:
            row.pop("COUNTRY", None)
        if op == "d":
            del self.live[movie_id]
            del self.ids[bisect.bisect_left(self.ids, movie_id)]
        else:
            if op == "c":
                self.ids.append(movie_id)
            self.live[movie_id] = row
        return {
            **row,
            "__op": op,
            "__source_ts_ms": source_ts,
            "__deleted": "true" if op == "d" else "false",
        }


FIRST = ("Ava", "Ben", "Chloe", "Dan", "Ema", "Finn")
LAST = ("Ng", "Ortiz", "Patel", "Quinn", "Rossi")


def _customer_event(rng: random.Random, i: int, ts: datetime, version: int) -> dict:
    return {
        "year": str(ts.year),
        "month": str(ts.month),
        "day": str(ts.day),
        "hour": str(ts.hour),
        "minute": str(ts.minute),
        "customerid": rng.randint(5023, 5023 + 200),
        "firstname": rng.choice(FIRST),
        "lastname": rng.choice(LAST),
        "dateofbirth": f"{rng.randint(1950, 2004)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
        "city": rng.choice(["Seattle", "Austin", "Lyon"]),
        "buildingnumber": rng.randint(63, 947),
        "streetaddress": f"{rng.randint(1, 99)} Main St",
        "state": rng.choice(["WA", "TX", "ARA"]),
        "zipcode": f"{rng.randint(10000, 99999)}",
        "country": rng.choice(["USA", "France"]),
        "countrycode": rng.choice(["US", "FR"]),
        "phonenumber": f"+1-555-{rng.randint(1000, 9999)}",
        "productname": rng.choice(["Chair", "Lamp", "Desk"]),
        "transactionamount": rng.randint(10, 150),
    }


def _order(rng: random.Random, i: int, ts: datetime, version: int) -> dict:
    return {
        "dish": rng.choice(DISHES),
        "cost": rng.randint(10, 150),
        "customer_id": rng.randint(1, 500),
    }


# --------------------------------------------------------------------------- bad records


ventilator = StreamDemo(
    lambda: _ventilator,
    violation_field="ventilatorid",
    # Valid under the JSON Schema, but no timestamp: the raw table types eventtime.
    cast_failure=("eventtime", "2022-13-45 99:00:00"),
)
unicorn_rides = StreamDemo(lambda: _unicorn)
weather = StreamDemo(
    lambda: _weather, violation_field="temperature", cast_failure=("timestamp", 2**70)
)
movies = StreamDemo(_Movies)
customer_events = StreamDemo(
    lambda: _customer_event, violation_field="customerid", cast_failure=("customerid", 2**70)
)
orders = StreamDemo(lambda: _order, violation_field="cost", cast_failure=("cost", 2**70))
