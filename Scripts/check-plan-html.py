#!/usr/bin/env python3
"""Drives `measurement-events plan --format html --coverage <file>` in a real headless Chromium.

Loads the page from disk (file://, no server), types in the search box, toggles filters, and
asserts which event rows are visible and the destinations a routed event shows; saves a
screenshot to .build/plan-html.png.

Run from the repository root after `swift build`: python3 Scripts/check-plan-html.py
Installs Debian's chromium and chromium-driver (apt-get) and PyPI's selenium if missing.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import headless_chromium  # installs Chromium, its driver and Selenium when missing
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

GOLDEN = "Tests/MeasurementEventsGeneratorGolden"
work = tempfile.mkdtemp()
coverage = os.path.join(work, "coverage.txt")
with open(coverage, "w") as file:
    file.write("shop/opened\nshop/product_viewed\nurl/opened\n")
page = os.path.join(work, "plan.html")
with open(page, "w") as file:
    subprocess.check_call(
        ["swift", "run", "--skip-build", "measurement-events", "plan", "--format", "html",
         "--coverage", coverage, "--package-path", GOLDEN], stdout=file)

driver = headless_chromium.start(1400, 1000)
failures = []


def visible():
    return [row.find_element(By.CSS_SELECTOR, "td code").text
            for row in driver.find_elements(By.CSS_SELECTOR, "tr.event") if row.is_displayed()]


def expect(description, names):
    shown = visible()
    ok = shown == names
    print(("ok   " if ok else "FAIL ") + description + ": " + ", ".join(shown))
    if not ok:
        failures.append("%s: expected %s" % (description, names))


try:
    driver.get("file://" + page)
    everything = visible()
    expect("every event at first", everything)
    if len(everything) != 9:
        failures.append("expected 9 events, found %d" % len(everything))
    search = driver.find_element(By.ID, "search")
    search.send_keys("shop")
    expect("search 'shop'", [name for name in everything if name.startswith("shop/")])
    driver.find_element(By.ID, "filter-pii").click()
    expect("search 'shop' + personal data only", ["shop/checkout/completed", "shop/legacy_banner_shown"])
    driver.find_element(By.ID, "filter-deprecated").click()
    expect("+ hide deprecated", ["shop/checkout/completed"])
    driver.find_element(By.ID, "filter-pii").click()
    driver.find_element(By.ID, "filter-deprecated").click()
    search.clear()
    search.send_keys("sku")
    expect("search an arg's description ('sku')", ["shop/product_viewed", "shop/cart/item_added"])
    search.clear()
    search.send_keys("debug")
    expect("search a destination ('debug')", ["shop/product_viewed", "shop/opened"])
    search.clear()
    for name, expected in [("shop/product_viewed", ["amplitude", "ga4", "debug"]),
                           ("shop/tab_opened", ["segment_eu", "otlp-collector"]),
                           ("shop/checkout/completed", [])]:
        row = next(row for row in driver.find_elements(By.CSS_SELECTOR, "tr.event")
                   if row.find_element(By.CSS_SELECTOR, "td code").text == name)
        shown = [code.text for code in row.find_elements(By.CSS_SELECTOR, "code.destination")]
        line = [note.text for note in row.find_elements(By.CSS_SELECTOR, ".note") if "only to:" in note.text]
        ok = shown == expected and (line == [] if not expected else len(line) == 1)
        print(("ok   " if ok else "FAIL ") + "destinations of " + name + ": " + (", ".join(shown) or "none"))
        if not ok:
            failures.append("destinations of %s: expected %s, found %s (%s)" % (name, expected, shown, line))
    Select(driver.find_element(By.ID, "filter-type")).select_by_visible_text("impression")
    expect("type impression", ["shop/product_viewed", "shop/legacy_banner_shown"])
    Select(driver.find_element(By.ID, "filter-type")).select_by_visible_text("All")
    Select(driver.find_element(By.ID, "filter-module")).select_by_visible_text("Minimal")
    expect("module Minimal", ["url/opened", "app/ui/json_ids_loaded"])
    driver.find_element(By.ID, "filter-uncovered").click()
    expect("module Minimal + never posted", ["app/ui/json_ids_loaded"])
    count = driver.find_element(By.ID, "count").text
    if count != "1 of 9 events shown":
        failures.append("count reads %r" % count)
    # The screenshot: every filter off, "product" in the search box.
    driver.find_element(By.ID, "filter-uncovered").click()
    Select(driver.find_element(By.ID, "filter-module")).select_by_visible_text("All")
    search.send_keys("product")
    os.makedirs(".build", exist_ok=True)
    driver.save_screenshot(".build/plan-html.png")
    print("screenshot: .build/plan-html.png")
finally:
    driver.quit()
    shutil.rmtree(work, ignore_errors=True)

if failures:
    sys.exit("%d check(s) failed: %s" % (len(failures), "; ".join(failures)))
print("the HTML plan filters as expected in headless Chromium")
