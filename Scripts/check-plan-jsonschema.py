#!/usr/bin/env python3
"""Validates sample events against `measurement-events plan --format jsonschema`.

The golden catalogs (Tests/MeasurementEventsGeneratorGolden/Events) use every rule a catalog can
state. Every schema must be a valid draft 2020-12 schema; a valid event of each kind must pass;
one event per kind of violation must fail, for the reason expected. An unplanned event has no
schema, and a deprecated one passes validation but carries the standard `deprecated`
annotation: both are checked as a tracking-plan tool would. An event whose catalog names its
destinations carries them in the `x-destinations` annotation (and validates as any other); an
event without them has none.

Run from the repository root after `swift build`: python3 Scripts/check-plan-jsonschema.py
Installs the `jsonschema` package if it is missing.
"""
import json
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "jsonschema"])
    import jsonschema

GOLDEN = "Tests/MeasurementEventsGeneratorGolden"

plan = json.loads(subprocess.check_output(
    ["swift", "run", "--skip-build", "measurement-events", "plan", "--format", "jsonschema",
     "--package-path", GOLDEN]))
schemas = {event["name"]: event["rules"] for event in plan["events"]}
for name, schema in schemas.items():
    jsonschema.Draft202012Validator.check_schema(schema)

failures = []


def check(description, event, properties, expect):
    """`expect`: None when the event must conform, else the name of the keyword that must fail."""
    payload = {"event": event, "properties": properties}
    schema = schemas.get(event)
    if schema is None:
        problems = ["unplanned"]
    else:
        validator = jsonschema.Draft202012Validator(schema)
        problems = sorted({error.validator for error in validator.iter_errors(payload)})
        if schema.get("deprecated") is True:
            problems.append("deprecated")
    ok = problems == [] if expect is None else problems == [expect]
    print(("ok   " if ok else "FAIL ") + description + ": " + (", ".join(problems) or "conforms"))
    if not ok:
        failures.append(description)


viewed = {"product_id": "SKU-1", "price": 9.5, "position": 3, "list": "home-feed"}
check("valid event with every rule", "shop/product_viewed", viewed, None)
check("valid event, optional args left out", "shop/product_viewed", {"product_id": "SKU-1", "price": 0}, None)
check("valid event with int values", "shop/cart/item_added", {"product_id": "A", "quantity": -1, "gift": True}, None)
check("unplanned event", "shop/teleported", {}, "unplanned")
check("missing required arg", "shop/product_viewed", {"price": 1.0}, "required")
check("unplanned arg", "shop/product_viewed", dict(viewed, coupon="X"), "additionalProperties")
check("wrong type (string for an int)", "shop/product_viewed", dict(viewed, position="3"), "type")
check("wrong type (double for an int)", "shop/product_viewed", dict(viewed, position=3.5), "type")
check("value outside values (string)", "shop/product_viewed", dict(viewed, list="sidebar"), "enum")
check("value outside values (int)", "shop/cart/item_added", {"product_id": "A", "quantity": 3, "gift": True}, "enum")
check("below the minimum", "shop/product_viewed", dict(viewed, position=-1), "minimum")
check("above the maximum", "shop/product_viewed", dict(viewed, position=501), "maximum")
check("pattern not matched", "shop/product_viewed", dict(viewed, product_id="sku-1"), "pattern")
check("longer than maxLength", "shop/product_viewed", dict(viewed, product_id="A" * 33), "maxLength")
check("deprecated event", "shop/tab_opened", {"source": "tab_bar"}, "deprecated")
check("valid event with destinations", "shop/opened", {}, None)


def check_destinations(event, expected):
    """`expected`: the names in the schema's `x-destinations`, or None when it must have none."""
    found = schemas[event].get("x-destinations")
    ok = found == expected
    print(("ok   " if ok else "FAIL ") + "destinations of " + event + ": " + (", ".join(found or []) or "none"))
    if not ok:
        failures.append("destinations of %s: expected %s, found %s" % (event, expected, found))


check_destinations("shop/product_viewed", ["amplitude", "ga4", "debug"])
check_destinations("shop/opened", ["debug"])
check_destinations("shop/tab_opened", ["segment_eu", "otlp-collector"])
for name in schemas:
    if name not in ("shop/product_viewed", "shop/opened", "shop/tab_opened"):
        check_destinations(name, None)

if failures:
    sys.exit("%d check(s) failed: %s" % (len(failures), "; ".join(failures)))
print("%d schemas valid (draft 2020-12); every sample behaved as expected" % len(schemas))
