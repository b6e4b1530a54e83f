"""Seed-shaped sample records, shared by tests and benchmarks."""

from __future__ import annotations


def unicorn_ride_request(i: int) -> dict:
    """The seed producer's UnicornRideRequest record (001-2), email de-obfuscated."""
    return {
        "request_id": i,
        "pickup_address": "Melbourne, Victoria, Australia",
        "destination_address": "Sydney, NSW, Aus",
        "ride_fare": 1200.50,
        "ride_duration": 120,
        "preferred_unicorn_color": "WHITE",
        "recommended_unicorn": {"unicorn_id": i * 2, "color": "WHITE", "stars_rating": 5},
        "customer": {
            "customer_account_no": 1001,
            "first_name": "Dummy",
            "middle_name": None,
            "last_name": "User",
            "email_addresses": ["demo@example.com"],
            "customer_address": "Flinders Street Station",
            "mode_of_payment": "CARD",
            "customer_rating": 5,
        },
    }
