#!/usr/bin/env bash
# Checks that Linux can make for Apple-platform rules nothing here compiles (iOS 13, macOS 10.15,
# tvOS 13, watchOS 6). Run from anywhere: `bash .ci/check-portability.sh`.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0

# 1. Int is 32 bits on Apple Watch: every Int(...), Int32(...), UInt32(...) or numericCast in
#    Sources/ (and in the fixture modules the tests and the demo compile, Tests/Fixtures/LoopbackCollector
#    and Tests/Fixtures/Demo) is exact by construction (exactly:, truncatingIfNeeded:, clamping:, bitPattern:,
#    ascii:), goes through checkedInt, or says on its line why it fits ("// fits: ...") or how
#    it is checked ("// checked: ...").
unchecked=$(grep -rnE '\b(Int|Int32|UInt32)\(|numericCast' Sources Tests/Fixtures/LoopbackCollector Tests/Fixtures/Demo \
    --include='*.swift' \
    | grep -vE '(exactly|truncatingIfNeeded|clamping|bitPattern|ascii):|checkedInt|// (fits|checked):')
if [ -n "$unchecked" ]; then
    echo "Int conversions without a range check (Int is 32 bits on Apple Watch):"
    echo "$unchecked"
    status=1
fi

# 2. Test targets compile for iOS, tvOS and watchOS: child processes only under the macOS/Linux guard.
for file in $(grep -rlE '\bProcess\(\)|\bkill\(|\bfork\(|posix_spawn' Tests --include='*.swift' | grep -v '^Tests/Fixtures/ConsumerApp/'); do
    case "$file" in Tests/HTTPCrashChild/* | Tests/HTTPFaultChild/* | Tests/LockedLaunchChild/*) continue ;; esac  # executables, never built for iOS
    if ! grep -qE '^[[:space:]]*#if os\(macOS\) \|\| os\(Linux\)' "$file"; then
        echo "$file: Process/kill/fork outside '#if os(macOS) || os(Linux)' (does not compile for iOS)"
        status=1
    fi
done

[ "$status" -eq 0 ] && echo "portability checks passed"
exit "$status"
