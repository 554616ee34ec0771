#!/usr/bin/env python3
"""Turns one benchmark run, exported as JMH JSON, into the per-operation table and the
issue's target ratios.

    swift package --disable-sandbox benchmark --no-progress --format jmh --path /tmp/run
    python3 Scripts/ratios.py /tmp/run/Current_run.jmh.json

Every benchmark does 1,000 operations per iteration; numbers are p50 per operation.
"""
import json
import sys

OPERATIONS_PER_ITERATION = 1000


def load(path, target="BusBenchmarks"):
    results = {}
    for element in json.load(open(path)):
        *_, element_target, name = element["benchmark"].split(".")
        if element_target != target:
            continue
        metrics = element["secondaryMetrics"]
        wall_us = metrics["Time (wall clock)"]["scorePercentiles"]["50.0"]
        mallocs = metrics["Malloc (total)"]["scorePercentiles"]["50.0"]
        results[name] = {
            "ns": wall_us * 1000 / OPERATIONS_PER_ITERATION,
            "per_second": OPERATIONS_PER_ITERATION / (wall_us / 1e6),
            "mallocs": mallocs / OPERATIONS_PER_ITERATION,
        }
    return results


def main(path):
    r = load(path)
    print("| Benchmark | ns/op (p50) | ops/s | mallocs/op |")
    print("|---|---:|---:|---:|")
    for name in sorted(r):
        v = r[name]
        print(f"| {name} | {v['ns']:.0f} | {v['per_second']:,.0f} | {v['mallocs']:.2f} |")

    raw = r["Reference_raw_NotificationCenter_post"]
    allowed = r["Post_allowed_until_post_returns"]
    filtered = r["Post_filtered_out"]
    end_to_end = r["Post_allowed_end_to_end"]
    filter10 = r["Filter_10_names_and_100_wildcards"]
    filter100k = r["Filter_100000_names_and_100_wildcards"]
    objc = r["Reference_ObjC-style_aggregator_post"]
    objc_kept = r.get("Reference_ObjC-style_aggregator_post_kept_list")
    direct = r["Reference_direct_tracker_call"]

    def line(label, value, target, met):
        print(f"| {label} | {value} | {target} | {'met' if met else 'MISSED'} |")

    print()
    print("| Target | Measured | Goal | |")
    print("|---|---|---|---|")
    ratio = allowed["ns"] / raw["ns"]
    line("Allowed post until return / raw post", f"{ratio:.2f}× ({allowed['ns']:.0f} / {raw['ns']:.0f} ns)", "≤ 1.4×", ratio <= 1.4)
    ratio = filtered["ns"] / raw["ns"]
    line("Filtered-out post / raw post", f"{ratio:.2f}× ({filtered['ns']:.0f} / {raw['ns']:.0f} ns)", "≤ 1.15×", ratio <= 1.15)
    ratio = end_to_end["per_second"] / raw["per_second"]
    line("End-to-end rate / raw post rate", f"{ratio:.2f}× ({end_to_end['per_second']:,.0f} / {raw['per_second']:,.0f} per s)", "≥ 0.8×", ratio >= 0.8)
    ratio = filter100k["ns"] / filter10["ns"]
    line("Filter at 100,000 names / at 10", f"{ratio:.2f}× ({filter100k['ns']:.1f} / {filter10['ns']:.1f} ns)", "≤ 1.2×", ratio <= 1.2)
    extra = allowed["mallocs"] - raw["mallocs"]
    line("Mallocs per allowed post − raw", f"+{extra:.2f} ({allowed['mallocs']:.2f} − {raw['mallocs']:.2f})", "≤ +4", extra <= 4)
    print()
    print(f"For scale: direct tracker call {direct['ns']:.0f} ns; Objective-C-style aggregator "
          f"{objc['ns']:.0f} ns ({objc['ns'] / raw['ns']:.2f}× raw post, "
          f"{objc['ns'] / allowed['ns']:.2f}× the bus's allowed post).")
    if objc_kept:
        print(f"Objective-C-style aggregator keeping its allow-list: {objc_kept['ns']:.0f} ns "
              f"({objc_kept['ns'] / raw['ns']:.2f}× raw post, {objc_kept['ns'] / allowed['ns']:.2f}× the bus's allowed post).")
    for threads in (1, 2, 4):
        bus = r.get(f"Threads_{threads}_post_allowed_end_to_end")
        ref = r.get(f"Threads_{threads}_reference_raw_post")
        if bus and ref:
            print(f"{threads} posting thread(s): bus end to end {bus['per_second']:,.0f}/s, "
                  f"raw posts {ref['per_second']:,.0f}/s ({bus['per_second'] / ref['per_second']:.2f}×).")


def delivery(path):
    """DeliveryBenchmarks: encoders do one 100-event batch per iteration, the enqueue
    benchmark 1,000 events, the peak-memory one 200,000."""
    rows = {}
    for element in json.load(open(path)):
        *_, target, name = element["benchmark"].split(".")
        if target == "DeliveryBenchmarks":
            rows[name] = {k: v["scorePercentiles"]["50.0"] for k, v in element["secondaryMetrics"].items()}
    if not rows:
        return
    print()
    print("| Delivery benchmark | p50 | mallocs | |")
    print("|---|---:|---:|---|")
    for name in sorted(rows):
        row = rows[name]
        wall_us = row["Time (wall clock)"]
        if name.startswith("Encode"):
            print(f"| {name} | {wall_us:.0f} µs per 100 events | {row['Malloc (total)']:.0f} | |")
        elif name == "DiskQueue_enqueue":
            rate = 1000 / (wall_us / 1e6)
            print(f"| {name} | {wall_us:.0f} ns/event, {rate:,.0f} events/s | {row['Malloc (total)'] / 1000:.2f}/event "
                  f"| goal ≥ 100,000/s: {'met' if rate >= 100_000 else 'MISSED'} |")
        else:
            rate = 200_000 / (wall_us / 1e6)
            delta_mb = row.get("Memory Δ (resident peak)", 0) / 1e6
            peak_mb = row.get("Memory (resident peak)", 0) / 1e6
            print(f"| {name} | {wall_us / 1e6:.2f} s, {rate:,.0f} events/s; resident peak {peak_mb:.0f} MB, "
                  f"growth {delta_mb:.1f} MB | {row['Malloc (total)']:,.0f} "
                  f"| goal ≤ 20 MB growth: {'met' if delta_mb <= 20 else 'MISSED'} |")


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else "Current_run.jmh.json"
    main(path)
    delivery(path)
