#!/usr/bin/env bash
# Issue 49's fault run, in full: `http-fault-child` (Tests/HTTPFaultChild) tracks events from 8
# threads for SECONDS against a loopback collector failing 30 % of requests, then heals, RUNS
# times; prints each run's line and the crashes (deaths by a signal) and events lost in all.
#
# Usage: Benchmarks/Scripts/http_fault_run.sh [runs=20] [seconds=20] [own|urlsession] [requests-in-flight=1]
# `urlsession` sends through FoundationNetworking's URLSession instead of the package's own
# HTTP/1.1 client, for comparison; requests-in-flight 2 is the server configuration's.
set -uo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-20}
seconds=${2:-20}
transport=${3:-own}
in_flight=${4:-1}
swift build -c release --product http-fault-child >/dev/null || exit 1
child=$(swift build -c release --show-bin-path)/http-fault-child
crashes=0
lost=0
failed=0
for run in $(seq 1 "$runs"); do
    line=$("$child" "$seconds" "$transport" "$in_flight")
    status=$?
    echo "run $run: exit $status: $line"
    if [ "$status" -gt 128 ]; then
        crashes=$((crashes + 1))
    elif [ "$status" -ne 0 ]; then
        failed=$((failed + 1))
    fi
    run_lost=$(sed -n 's/.* lost=\([0-9]*\) .*/\1/p' <<<"$line")
    lost=$((lost + ${run_lost:-0}))
done
echo "$runs runs of $seconds s ($transport): $crashes crashed, $failed lost events or failed, $lost events lost in all"
[ "$crashes" -eq 0 ] && [ "$failed" -eq 0 ]
