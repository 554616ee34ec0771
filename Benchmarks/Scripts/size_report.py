#!/usr/bin/env python3
"""Size of the budget apps: text+data over a hello world's, the largest contributors, the budget.

Usage: size_report.py <release build folder> <budget file> [--startup]

Reads `size` (text and data, Berkeley format) of each app of Benchmarks/SizeBudget, prints each
one's text+data over the hello world's, the ten largest contributors of `one-event` by module
(the module named in each symbol's Swift mangling; `(Swift generics)` are the standard library's
generic code specialised for our types; `(code without a symbol)` is the rest of `.text`) and
by symbol (`nm --size-sort`), and exits 1 when an app passes the budget recorded in the budget
file (lines `<app> <bytes>`).
With --startup, also counts the instructions of each app's whole process, from exec to its first
event accepted (on disk in the HTTP tracker's queue), under callgrind: with an empty queue and
with 1,000 events already queued.
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

APPS = ["one-event", "with-plan", "with-standard-calls", "with-lifecycle", "all-capabilities"]


def text_and_data(path):
    out = subprocess.run(["size", path], check=True, capture_output=True, text=True).stdout.splitlines()
    text, data = out[1].split()[:2]
    return int(text) + int(data)


def module_of(symbol):
    match = re.match(r"^\$s(\d+)([A-Za-z_][A-Za-z0-9_]*)", symbol)
    if match:
        return match.group(2)[: int(match.group(1))]
    if symbol.startswith("$s"):
        return "(Swift generics)"
    return "(C and runtime)"


def contributors(path):
    out = subprocess.run(["nm", "--size-sort", "-S", path], check=True, capture_output=True, text=True).stdout
    symbols = []
    in_text = 0
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            symbols.append((int(parts[1], 16), parts[3]))
            if parts[2] in ("T", "t"):
                in_text += int(parts[1], 16)
    by_module = collections.Counter()
    for size, name in symbols:
        by_module[module_of(name)] += size
    # Code the symbol table does not name (functions of LLVM's private linkage): before each
    # function had a section of its own, most of it was unreachable code kept beside reachable
    # code of the same file (Package.swift, "Dead stripping by function").
    sections = subprocess.run(["size", "-A", path], check=True, capture_output=True, text=True).stdout
    text = next(int(line.split()[1]) for line in sections.splitlines() if line.startswith(".text "))
    by_module["(code without a symbol)"] = max(0, text - in_text)
    return by_module, sorted(symbols, reverse=True)


def demangle(names):
    tool = shutil.which("swift-demangle") or "/opt/swift/usr/bin/swift-demangle"
    try:
        out = subprocess.run([tool, "--simplified", "--compact"], input="\n".join(names), capture_output=True,
                             text=True, check=True).stdout.splitlines()
        return out if len(out) == len(names) else names
    except (OSError, subprocess.CalledProcessError):
        return names


def instructions(command, env):
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + command,
                       check=True, capture_output=True, env=env)
        for line in open(out):
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    raise SystemExit("callgrind wrote no total")


def main():
    build, budget_file = sys.argv[1], sys.argv[2]
    hello = text_and_data(os.path.join(build, "hello"))
    budget = {}
    for line in open(budget_file):
        line = line.split("#")[0].strip()
        if line:
            name, limit = line.split()
            budget[name] = int(limit.replace(",", "").replace("_", ""))
    print(f"{'app':<22}{'text+data over hello world':>28}{'budget':>12}")
    over = []
    for app in APPS:
        size = text_and_data(os.path.join(build, app)) - hello
        limit = budget.get(app)
        print(f"{app:<22}{size:>28,}{(f'{limit:,}' if limit else '-'):>12}")
        if limit is not None and size > limit:
            over.append(f"{app}: {size:,} bytes over hello world, the budget is {limit:,}")

    by_module, symbols = contributors(os.path.join(build, "one-event"))
    print("\none-event, the ten largest contributors by module (bytes of named symbols; unnamed code apart):")
    for module, size in by_module.most_common(10):
        print(f"{size:>10,}  {module}")
    print("\none-event, the ten largest symbols:")
    top = symbols[:10]
    for (size, _), name in zip(top, demangle([name for _, name in top])):
        print(f"{size:>10,}  {name[:150]}")

    if "--startup" in sys.argv:
        print("\ninstructions from exec to the first event accepted (callgrind, whole process), millions:")
        print(f"{'app':<22}{'empty queue':>14}{'1,000 events queued':>22}")
        for name in APPS:
            app = os.path.join(build, name)
            with tempfile.TemporaryDirectory() as queue:
                # The apps keep identity where an app does (the default store), in this folder
                # rather than in the home folder of whoever measures.
                env = dict(os.environ, XDG_STATE_HOME=os.path.join(queue, "state"))
                empty = instructions([app, os.path.join(queue, "empty")], env)
                subprocess.run([app, os.path.join(queue, "full"), "1000"], check=True, capture_output=True, env=env)
                full = instructions([app, os.path.join(queue, "full")], env)
            print(f"{name:<22}{empty / 1e6:>14.2f}{full / 1e6:>22.2f}")

    if over:
        print("\nSize budget exceeded:\n  " + "\n  ".join(over), file=sys.stderr)
        print("Find what grew with the contributors above; raise the budget in "
              f"{budget_file} only with a reason in the commit.", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
