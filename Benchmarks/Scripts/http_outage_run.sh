#!/usr/bin/env bash
# Issue 49's outage run: `http-outage-child` (Tests/HTTPOutageChild), a server's aggregator and
# HTTPTracker in their server configurations, 8 tasks posting with the async `post` into a
# loopback collector that works for BEFORE seconds, stalls for STALL (every request held
# unanswered until the stall ends), answers 503 for UNAVAILABLE, then works again for AFTER;
# then `shutdown(deadline:)` and the count of what the collector kept. Prints a line every 5 s
# (posts and deliveries a second, the tracker's queue, posts that suspended for room, resident
# memory) and exits 1 if an event whose post returned was lost.
#
# Usage: Benchmarks/Scripts/http_outage_run.sh [stall=30] [unavailable=10] [before=10] [after=10]
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build -c release --product http-outage-child >/dev/null
"$(swift build -c release --show-bin-path)/http-outage-child" "$@"
