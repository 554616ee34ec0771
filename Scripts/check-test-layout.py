#!/usr/bin/env python3
"""Checks that every test target mirrors the folders of the module it tests (issue 31, point 5).

Run from anywhere: `python3 Scripts/check-test-layout.py`. Standard library only.

The targets and their folders come from the manifest, as SwiftPM reads it
(`swift package dump-package`, which builds nothing). For each test target, the module it tests is
the target named like it without `Tests` (`MeasurementEventsHTTPTests` tests `MeasurementEventsHTTP`).
Two rules:

1. every folder under the test target, at any depth, is a folder of the module's sources (same
   relative path), or `Support/` (shared helpers) or a fixture folder, with everything under them;
2. every folder of the module's sources that holds Swift code has a test folder of the same path.

A test file goes in the folder of the source it tests; a test of a top-level source stays at the
top. Exceptions are listed below, each with its reason. Exit status 1 lists every problem: the
file or folder, what was expected and how to fix it.
"""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Folders of a test target that mirror no source folder, by name: what they hold.
HELPER_FOLDERS = {
    "Support": "shared test helpers (fixtures, recording trackers, sample data)",
    "Fixtures": "fixture files the tests read",
}

# Source folders that need no test folder: (module, folder) → why.
UNTESTED_SOURCE_FOLDERS = {
    # None today. Add an entry with its reason, for example:
    # ("MeasurementEvents", "Platform/Darwin"): "compiled on Apple platforms only; nothing here runs it",
}

# Test targets that mirror no module, by name → why.
UNMIRRORED_TEST_TARGETS = {}


def manifest():
    """The package as SwiftPM reads Package.swift (its own scratch folder: `.build` may be busy)."""
    with tempfile.TemporaryDirectory() as scratch:
        result = subprocess.run(
            ["swift", "package", "--package-path", ROOT, "--scratch-path", scratch, "dump-package"],
            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("check-test-layout: `swift package dump-package` failed (status %d): %s"
                 % (result.returncode, result.stderr.strip()))
    return json.loads(result.stdout)


def target_folder(target):
    if target.get("path"):
        return target["path"].strip("/")
    return ("Tests/" if target["type"] == "test" else "Sources/") + target["name"]


def folders(root):
    """Every folder under root, relative, with whether it holds Swift files directly."""
    found = {}
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith(".") and not d.endswith(".docc"))
        relative = os.path.relpath(directory, root)
        if relative != ".":
            found[relative.replace(os.sep, "/")] = any(name.endswith(".swift") for name in files)
    return found


def has_swift_below(all_folders, folder):
    return any(has_code and (path == folder or path.startswith(folder + "/")) for path, has_code in all_folders.items())


def main():
    package = manifest()
    targets = {target["name"]: target for target in package["targets"]}
    problems = []
    checked = 0
    for name, target in sorted(targets.items()):
        if target["type"] != "test":
            continue
        if name in UNMIRRORED_TEST_TARGETS:
            continue
        module = targets.get(name[: -len("Tests")]) if name.endswith("Tests") else None
        tests_folder = target_folder(target)
        if module is None:
            problems.append("%s/: test target %s names no module (expected a target %s, or an entry in "
                            "UNMIRRORED_TEST_TARGETS of Scripts/check-test-layout.py with its reason)"
                            % (tests_folder, name, name[: -len("Tests")] if name.endswith("Tests") else name + " without Tests"))
            continue
        checked += 1
        sources_folder = target_folder(module)
        source_folders = folders(os.path.join(ROOT, sources_folder))
        test_folders = folders(os.path.join(ROOT, tests_folder))
        # Rule 1: each test folder mirrors a source folder (or is a helper folder).
        for folder in sorted(test_folders):
            top = folder.split("/")[0]
            if top in HELPER_FOLDERS:
                continue
            if folder not in source_folders:
                files = sorted(f for f in os.listdir(os.path.join(ROOT, tests_folder, folder)) if f.endswith(".swift"))
                problems.append(
                    "%s/%s/: no folder %s/%s/ in the sources of %s; expected each test folder to mirror a source "
                    "folder (or Support/ for shared helpers). Move %s into the folder of the source each one tests."
                    % (tests_folder, folder, sources_folder, folder, module["name"],
                       ", ".join(files) if files else "its contents"))
        # Rule 2: each source folder with code has a test folder.
        for folder in sorted(source_folders):
            if not has_swift_below(source_folders, folder) or (module["name"], folder) in UNTESTED_SOURCE_FOLDERS:
                continue
            if not has_swift_below(test_folders, folder):
                problems.append(
                    "%s/%s/: missing or without tests; %s/%s/ holds code, so its tests go in %s/%s/ (or list the folder in "
                    "UNTESTED_SOURCE_FOLDERS of Scripts/check-test-layout.py with the reason it has no tests)"
                    % (tests_folder, folder, sources_folder, folder, tests_folder, folder))
    if problems:
        print("check-test-layout: %d problem%s; tests mirror the sources (CONTRIBUTING.md, \"Where tests go\"):"
              % (len(problems), "" if len(problems) == 1 else "s"))
        for problem in problems:
            print("  " + problem)
        return 1
    print("check-test-layout: %d test targets mirror the folders of their modules" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
