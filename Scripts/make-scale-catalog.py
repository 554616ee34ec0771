#!/usr/bin/env python3
"""Writes a synthetic catalog of N events, for Scripts/check-catalog-scale.sh.

Usage: make-scale-catalog.py MODULE EVENTS OUTPUT.json

Each event has three or four args and the rules a real plan uses: a pattern and maxLength on a
string, a minimum and maximum on an int, allowed values on another string, an optional double,
personal data on one event in ten, an owner and a version on every event, and a deprecated event
with its replacement every fifty. The output depends only on the arguments.
"""
import json
import sys

TYPES = ["activity", "click", "impression", "redirect", "user_action"]


def event(index):
    args = {
        "item_id": {"type": "string", "description": "The item's id.", "pattern": "^[a-z0-9-]+$", "maxLength": 64},
        "position": {"type": "int", "description": "Zero-based position.", "minimum": 0, "maximum": 500},
        "source": {
            "type": "string",
            "description": "Where it happened.",
            "values": ["home", "search", "deep_link", "push"],
        },
    }
    if index % 2 == 0:
        args["price"] = {"type": "double", "description": "The price shown.", "optional": True, "minimum": 0}
    if index % 10 == 0:
        args["email"] = {"type": "string", "description": "The user's address.", "optional": True, "pii": True}
    spec = {
        "name": f"feature{index // 100}/event_{index}",
        "description": f"Synthetic event {index}.",
        "type": TYPES[index % len(TYPES)],
        "category": f"feature{index // 100}",
        "owner": "team-scale",
        "since": "1.0",
        "args": args,
    }
    if index % 50 == 49:
        spec["deprecated"] = {"replacement": f"feature{(index - 1) // 100}/event_{index - 1}"}
    return spec


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: make-scale-catalog.py MODULE EVENTS OUTPUT.json")
    module, count, output = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    catalog = {
        "module": module,
        "description": f"{count} synthetic events, for the catalog scale check.",
        "events": [event(index) for index in range(count)],
    }
    with open(output, "w", encoding="utf-8") as file:
        json.dump(catalog, file, indent=1)
        file.write("\n")


if __name__ == "__main__":
    main()
