#!/usr/bin/env bash
# The size budget: builds Benchmarks/SizeBudget's apps in release (the toolchain's default dead
# stripping) and prints each one's text+data over a hello world's and the largest contributors;
# fails when an app passes its budget in Benchmarks/SizeBudget/budget.txt.
# Usage: Benchmarks/Scripts/size_budget.sh [--startup]   (--startup: instructions to the first event, callgrind)
set -euo pipefail
cd "$(dirname "$0")/../SizeBudget"
swift build -c release 2>&1 | grep -E "error|warning:" && exit 1
python3 ../Scripts/size_report.py "$(swift build -c release --show-bin-path)" budget.txt "$@"
