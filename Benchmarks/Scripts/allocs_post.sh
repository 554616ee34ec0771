#!/usr/bin/env bash
# Usage: allocs_post.sh <BusProfile binary> <mode>
# Prints heap allocations per post (all threads), n=30000 minus n=10000, counted by valgrind's
# memcheck ("total heap usage"), so the process's fixed allocations cancel out.
bin=$1; mode=$2
count() {
  SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=memcheck --leak-check=no "$bin" "$mode" "$1" 2>&1 >/dev/null |
    sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' | tr -d ,
}
a=$(count 10000); b=$(count 30000)
python3 -c "print(f'allocations per post {($b - $a) / 20000:.3f}')"
