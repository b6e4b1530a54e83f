"""Demo content of the product priority reference feed (ProductPriority; docs/feeds.md).

One full extract per day on which priorities changed; on day 2 the burger goes from
medium to high, as in the seed's update-item example.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import TYPE_CHECKING

from floe.generator.demo.streams import DISHES

if TYPE_CHECKING:
    from floe.feeds.declarations import Feed
    from floe.generator.base import GenerateOptions

PRICES = {"pizza": 120, "burger": 100, "salad": 60, "donut": 20, "ice-cream": 40}
PRIORITIES = ("low", "medium", "high")


def priority_history(opts: GenerateOptions) -> list[tuple[date, dict[str, str]]]:
    """(load date, item -> priority) for every day on which the reference changed."""
    rng = opts.rng("reference/product_priority")
    current = {item: rng.choice(PRIORITIES[:2]) for item in DISHES}
    history = [(opts.start, dict(current))]
    for day in opts.load_dates()[1:]:
        item = rng.choice(DISHES)
        # burger goes medium -> high on day 2, as in the seed's update-item example
        if day == opts.start + timedelta(days=1):
            item, new = "burger", "high" if current["burger"] != "high" else "medium"
        else:
            new = rng.choice([p for p in PRIORITIES if p != current[item]])
        current[item] = new
        history.append((day, dict(current)))
    return history


def product_priority(feed: Feed, opts: GenerateOptions) -> list[tuple[date, list[list[str]]]]:
    """(load date, CSV rows item, price, priority, updated_at) per change day."""
    return [
        (
            day,
            [
                [item, str(PRICES[item]), priorities[item], f"{day.isoformat()} 00:00:00"]
                for item in DISHES
            ],
        )
        for day, priorities in priority_history(opts)
    ]
