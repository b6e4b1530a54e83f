"""End to end: `floe docs` builds the site, serves it, and a real Chromium uses it.

The site is generated in-process (dbt docs generate on this run's lakehouse, sharing
the session's SparkSession), served on a free loopback port, and driven by Debian's
headless Chromium through Playwright (never `playwright install`: no browser download).
The screenshot lands in the test's tmp_path (printed with -s).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from floe.docsite.site import finish_site, generate, serve

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
# Without these, Chromium phones home on start-up and its network attempts fail here.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def site(spark, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    target = tmp_path_factory.mktemp("docs_target")
    generate(ROOT, target)
    report = finish_site(target, ROOT)
    assert report.raw_models_documented > 0
    server = serve(target, port=0)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture
def browser_page(tmp_path: Path):
    if not CHROMIUM.exists():
        pytest.fail(
            "Debian's chromium is not installed: run `make setup` (apt-get install chromium)"
        )
    from playwright.sync_api import sync_playwright

    profile = tmp_path / "chromium-profile"  # a fresh profile every run
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1900, "height": 900},
        )
        try:
            yield context.new_page()
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


def test_lineage_of_dim_customer_email_back_to_the_landed_feed(site, browser_page, tmp_path):
    page = browser_page
    page.goto(site + "index.html")
    # dbt's own site, with floe's link to the lineage page
    link = page.wait_for_selector("#floe-lineage-link", timeout=60_000)
    page.goto(site + "index.html#!/model/model.floe.dim_customer")
    page.wait_for_function(
        "document.getElementById('floe-lineage-link').getAttribute('href')"
        " === 'lineage.html#model.floe.dim_customer'"
    )
    link.click()
    page.wait_for_url("**/lineage.html#model.floe.dim_customer")
    page.wait_for_selector("#columns li[data-column='email_id']", timeout=30_000)

    # find the model by typing, then pick the column
    page.fill("#search", "dim_cust")
    page.click("#nodes li[data-node='model.floe.dim_customer']")
    page.click("#columns li[data-column='email_id']")
    page.wait_for_selector("#edges:not([hidden])")

    boxes = page.eval_on_selector_all(".col", "els => els.map(e => e.dataset.key)")
    for expected in (
        "dim_customer.email_id",
        "int_customers__state.email_id",
        "stg_customers__address.email_id",
        "raw_customers__address.email_id",
        "customers.customer_address.email_id",  # the feed's declared column
        "landed customers/customer_address/.email_id",  # its landed files
    ):
        assert expected in boxes
    rows = page.eval_on_selector_all(
        "#edges tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    assert [
        "customers.customer_address.email_id",
        "raw_customers__address.email_id",
        "identity",
        "dbt.source()",
    ] in rows
    assert not any(row[2] == "unknown" for row in rows)
    assert page.is_visible(".col.focus")  # the selected column is on screen

    screenshot = tmp_path / "dim_customer.email_id.lineage.png"
    page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.stat().st_size > 10_000
    print(f"screenshot: {screenshot}")


def test_downstream_view_and_catalog_of_the_feed_source(site, browser_page):
    page = browser_page
    page.goto(site + "lineage.html#stg_customers__address.email_id")
    page.wait_for_selector("#edges:not([hidden])", timeout=60_000)
    page.check("input[name=direction][value=down]")
    page.wait_for_function(
        "!document.querySelector(\".col[data-key='raw_customers__address.email_id']\")"
    )
    boxes = page.eval_on_selector_all(".col", "els => els.map(e => e.dataset.key)")
    assert "dim_customer.email_id" in boxes
    # the docs catalog gives the feed source (files, not a table) its declared columns
    catalog = json.loads(page.evaluate("fetch('catalog.json').then(r => r.text())"))
    source = catalog["sources"]["source.floe.customers.customer_address"]
    assert list(source["columns"]) == ["customer_id", "email_id", "city", "country", "row_audit_ts"]
    # raw feed models carry their feed's docs in the manifest the site reads
    manifest = json.loads(page.evaluate("fetch('manifest.json').then(r => r.text())"))
    raw = manifest["nodes"]["model.floe.raw_customers__address"]
    assert "customers.customer_address" in raw["description"]
    assert raw["columns"]["email_id"]["description"] == "E-mail address as landed."
