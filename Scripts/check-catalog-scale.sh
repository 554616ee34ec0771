#!/usr/bin/env bash
# The catalog scale check: generates a catalog of many events with rules in a temporary client
# package, then builds the module that holds the generated file under a memory limit, so that
# generated code whose compile cost grows faster than the catalog fails loudly.
#
# Usage: Scripts/check-catalog-scale.sh [--events N] [--configuration debug|release]
#            [--memory-limit-gb G] [--timeout SECONDS] [--generator PATH] [--scratch-path DIR]
#
# Defaults: 2,000 events, debug, 2 GB of address space (`ulimit -v`, per process) and 1,200 s for
# the build of the generated module (CPU time is printed too: on a shared machine wall time
# says little). The generator writes a catalog of more than 50 events in parts of 50
# (`events_Scale+1.swift`, …), so each compiler process of a debug build holds a bounded batch
# of files. Measured on a quiet 2-core machine, 2,000 events in 41 files: 2:27 of wall time,
# 262 s of CPU, peak 1,024 MB (the module-interface job, which checks every declaration in one
# process: about 0.46 MB per event; each compile batch stays under 0.9 GB at any size); the
# one-file generator took 374 s of CPU and 3,476 MB, and did not finish 10,000 events in 75
# minutes at 15 GB (now 14 minutes, 4.5 GB). The package's dependencies
# (MeasurementEvents) are built first, without the limit, in --scratch-path (default
# .build/catalog-scale, kept between runs). The last line printed is a summary: events,
# configuration, wall and CPU time, peak resident memory of the largest compiler process.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

events=2000
configuration=debug
limit_gb=2
seconds=1200
generator=""
scratch="$repo/.build/catalog-scale"
while [ $# -gt 0 ]; do
    case "$1" in
    --events) events="$2"; shift 2 ;;
    --configuration) configuration="$2"; shift 2 ;;
    --memory-limit-gb) limit_gb="$2"; shift 2 ;;
    --timeout) seconds="$2"; shift 2 ;;
    --generator) generator="$2"; shift 2 ;;
    --scratch-path) scratch="$2"; shift 2 ;;
    *) echo "check-catalog-scale: unknown option $1" >&2; exit 64 ;;
    esac
done

if [ -z "$generator" ]; then
    swift build --package-path "$repo" --product measurement-events > /dev/null
    generator="$(swift build --package-path "$repo" --show-bin-path)/measurement-events"
fi
# GNU time reports the peak resident memory of the largest process it waited for (the compiler).
if [ ! -x /usr/bin/time ]; then
    echo "check-catalog-scale: /usr/bin/time is missing (Debian: apt-get install time)" >&2
    exit 1
fi

package="$(mktemp -d "${TMPDIR:-/tmp}/catalog-scale.XXXXXX")"
trap 'rm -rf "$package"' EXIT
mkdir -p "$package/Events" "$package/Sources/Scale"
cat > "$package/Package.swift" <<SWIFT
// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "CatalogScale",
    platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v6)],
    dependencies: [.package(name: "MeasurementEvents", path: "$repo")],
    targets: [
        .target(name: "Scale", dependencies: [.product(name: "MeasurementEvents", package: "MeasurementEvents")])
    ],
    swiftLanguageModes: [.v6]
)
SWIFT
python3 "$repo/Scripts/make-scale-catalog.py" Scale "$events" "$package/Events/Scale.json"
"$generator" generate --package-path "$package" > /dev/null
files=$(ls "$package"/Sources/Scale/events_Scale*.swift | wc -l)
lines=$(cat "$package"/Sources/Scale/events_Scale*.swift | wc -l)

# The dependencies first, without the limit: only the generated module is measured.
# Same flags as the measured build, or the measured build would compile them again.
swift build --package-path "$package" --scratch-path "$scratch" -c "$configuration" \
    --target MeasurementEvents -Xswiftc -warnings-as-errors > /dev/null

report="$package/time.txt"
status=0
(
    ulimit -v $((limit_gb * 1024 * 1024))
    exec /usr/bin/time -v -o "$report" timeout "$seconds" \
        swift build --package-path "$package" --scratch-path "$scratch" -c "$configuration" \
        --target Scale -Xswiftc -warnings-as-errors
) > "$package/build.log" 2>&1 || status=$?

wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$report")
peak_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$report")
user=$(sed -n 's/.*User time (seconds): //p' "$report")
system=$(sed -n 's/.*System time (seconds): //p' "$report")
peak_mb=$(( ${peak_kb:-0} / 1024 ))
# Killed by the timeout, the compiler is not waited for: its peak is then not in the figure.
summary="catalog scale: $events events ($lines lines in $files files), $configuration: ${wall:-?} wall, ${user:-?} s user + ${system:-?} s system CPU, peak ${peak_mb} MB (limit ${limit_gb} GB, ${seconds} s)"
if [ "$status" -ne 0 ]; then
    echo "FAILED (exit $status): the generated module did not build within ${limit_gb} GB and ${seconds} s." >&2
    echo "The generated code's compile cost grows faster than the catalog; see the build log:" >&2
    grep -E "error:|Killed|LLVM ERROR" "$package/build.log" | head -20 >&2 || tail -20 "$package/build.log" >&2
    echo "$summary" >&2
    exit 1
fi
echo "$summary"
