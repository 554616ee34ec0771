#!/usr/bin/env python3
"""Prints one closing line for a `swift test` log: "Tests: N passed, F failed, S skipped".

XCTest's last "Executed … tests" line (the all-tests suite) and Swift Testing's "Test run with …
tests" line are added up. Usage: python3 Scripts/test-summary.py .build/swift-test.log
"""
import re
import sys

if len(sys.argv) != 2:
    sys.exit("usage: python3 Scripts/test-summary.py <swift test log>")
path = sys.argv[1]
try:
    text = open(path, encoding="utf-8", errors="replace").read()
except OSError as error:
    sys.exit(f"error: {path}: {error.strerror}; run `swift test 2>&1 | tee {path}` first")

executed = re.findall(
    r"Executed (\d+) tests?, with (?:(\d+) tests? skipped and )?(\d+) failures?", text)
if not executed:
    sys.exit(f"error: {path}: no XCTest 'Executed N tests' line; did swift test run?")
total, skipped, failed = executed[-1]
total, skipped, failed = int(total), int(skipped or 0), int(failed)
swift_testing = re.findall(r"Test run with (\d+) tests?(?: in \d+ suites?)? (passed|failed)", text)
swift_testing_total = int(swift_testing[-1][0]) if swift_testing else 0
failed_st = 1 if swift_testing and swift_testing[-1][1] == "failed" else 0
passed = total - skipped - failed + swift_testing_total - failed_st
print(f"Tests: {passed} passed, {failed + failed_st} failed, {skipped} skipped")
