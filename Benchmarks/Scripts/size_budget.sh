#!/usr/bin/env bash
# The size budget: builds Benchmarks/SizeBudget's apps in release (the toolchain's default dead
# stripping) and prints each one's text+data over a hello world's and the largest contributors;
# fails when an app passes its budget in Benchmarks/SizeBudget/budget.txt.
# Usage: Benchmarks/Scripts/size_budget.sh [--startup]   (--startup: each app's instructions to its first event, callgrind)
# After adding, moving or removing a source file, measure from a clean build
# (rm -rf Benchmarks/SizeBudget/.build): incremental builds here once failed on moved files and
# once missed an added one, reporting the previous figure (CI's fresh clone measured 4 KB more).
set -euo pipefail
cd "$(dirname "$0")/../SizeBudget"
# A failed build must fail here: before, `swift build | grep … && exit 1` let the pipeline's
# status (pipefail) skip the exit, and the figures of the previous build were reported.
if ! log=$(swift build -c release 2>&1); then
    printf '%s\n' "$log" >&2
    echo "error: the size budget's apps did not build (Benchmarks/SizeBudget); nothing measured" >&2
    exit 1
fi
if grep -E "warning:" <<<"$log"; then
    echo "error: the size budget's apps built with warnings" >&2
    exit 1
fi
python3 ../Scripts/size_report.py "$(swift build -c release --show-bin-path)" budget.txt "$@"
