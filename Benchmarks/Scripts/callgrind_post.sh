#!/usr/bin/env bash
# Usage: callgrind_post.sh <BusProfile binary> <mode>
# Prints per-op instructions for the posting thread (thread 1) and all threads, n=30000 minus n=10000.
bin=$1; mode=$2
tmp=$(mktemp -d)
for n in 10000 30000; do
  SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=$tmp/cg.$n.%p $bin $mode $n >/dev/null 2>&1
done
python3 - "$tmp" <<'PY'
import sys,glob,re,os
tmp=sys.argv[1]
def totals(n):
    files=sorted(glob.glob(f"{tmp}/cg.{n}.*"))
    per={}
    for f in files:
        m=re.search(r'-(\d+)$',f)
        t=int(m.group(1)) if m else 1
        tot=0
        for line in open(f):
            if line.startswith('summary:') or line.startswith('totals:'):
                tot=int(line.split()[1]); break
        per[t]=tot
    return per
a=totals(10000); b=totals(30000)
main=(b.get(1,0)-a.get(1,0))/20000
allt=(sum(b.values())-sum(a.values()))/20000
print(f"posting thread {main:.0f}  all threads {allt:.0f}")
PY
rm -rf $tmp
