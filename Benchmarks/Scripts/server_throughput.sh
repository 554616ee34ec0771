#!/usr/bin/env bash
# Throughput into a real OTLP/HTTP collector (issue 49, point 5). `.ci/run` runs `--short`.
#
# Usage: Scripts/server_throughput.sh [--short] [--seconds N] [--tasks N] [--configurations "server defaults"]
#        [--perf SECONDS] [--encoding json|protobuf] [--requests-in-flight N]
#
# Installs rotel (PyPI `rotel`, a Rust OpenTelemetry collector) into a venv under Benchmarks/.build,
# starts it on loopback as an OTLP/HTTP receiver with the blackhole exporter and its debug log of
# received logs ("Received logs. ... logs=N", one line per request), builds the ServerThroughput
# driver in release, runs it for each configuration, and sums the collector's counts:
#   lost = posted - received by the collector.
# --short: a 3-second run of the server configuration that exits 1 unless 0 are lost and every
#   event carried its own request's user (the driver checks each event the tracker encodes and
#   each record of every request body: --check-bodies), for CI.
# --encoding: the OTLP bodies' encoding for every configuration (by default protobuf for the
#   server configuration, JSON for 3.0.0's defaults). --requests-in-flight: the tracker's
#   maximumRequestsInFlight (by default its configuration's: 2 for the server, 1 for the defaults).
# --perf N: also records `perf record -g` of each configuration for N seconds (from t = 2 s) into
#   .build/server-throughput/perf-<configuration>.data and prints its top symbols (self time).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

seconds=60
tasks=8
configurations="server defaults"
short=0
perf_seconds=0
driver_flags=()
encoding_flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --short) short=1; seconds=3; configurations=server; driver_flags=(--check-bodies); shift ;;
    --seconds) seconds=$2; shift 2 ;;
    --tasks) tasks=$2; shift 2 ;;
    --configurations) configurations=$2; shift 2 ;;
    --perf) perf_seconds=$2; shift 2 ;;
    --encoding) encoding_flags+=(--encoding "$2"); shift 2 ;;
    --requests-in-flight) encoding_flags+=(--requests-in-flight "$2"); shift 2 ;;
    *) echo "Error: unknown option $1" >&2; sed -n 4,5p "$0" >&2; exit 64 ;;
  esac
done

work=.build/server-throughput
mkdir -p "$work"
venv=.build/rotel-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import rotel' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet rotel
fi
# The wheel ships the collector's binary beside its Python module.
rotel=$("$venv/bin/python" -c 'import os, rotel; print(os.path.join(os.path.dirname(rotel.__file__), "rotel-agent"))')
[ -x "$rotel" ] || { echo "Error: no rotel-agent binary in the rotel wheel at $rotel" >&2; exit 1; }

swift build -c release --product ServerThroughput >"$work/build.log" 2>&1 || { tail -40 "$work/build.log"; exit 1; }
driver=$(swift build -c release --show-bin-path)/ServerThroughput

# A free port pair on loopback, so that two runs (or a developer's collector on 4318) do not clash.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
grpc_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

rotel_pid=
stop_rotel() { if [ -n "$rotel_pid" ]; then kill "$rotel_pid" 2>/dev/null || true; wait "$rotel_pid" 2>/dev/null || true; rotel_pid=; fi; }
trap stop_rotel EXIT

status=0
for configuration in $configurations; do
  log="$work/rotel-$configuration.log"
  out="$work/driver-$configuration.txt"
  NO_COLOR=1 "$rotel" start --otlp-http-endpoint "127.0.0.1:$port" --otlp-grpc-endpoint "127.0.0.1:$grpc_port" \
    --exporter blackhole --debug-log logs --debug-log-verbosity basic \
    --pid-file "$work/rotel.pid" --log-file "$work/rotel-agent.log" >"$log" 2>&1 &
  rotel_pid=$!
  for _ in $(seq 50); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break
    sleep 0.1
  done
  echo "== $configuration: $tasks tasks, $seconds s, OTLP/HTTP gzip into rotel $("$rotel" --version | cut -d' ' -f2) on 127.0.0.1:$port"
  perf_pid=
  if [ "$perf_seconds" != 0 ]; then
    (sleep 2; perf record -F 999 -g -o "$work/perf-$configuration.data" \
      -p "$(pgrep -n -f "$driver --configuration $configuration")" -- sleep "$perf_seconds" \
      >"$work/perf-record-$configuration.log" 2>&1) &
    perf_pid=$!
  fi
  "$driver" --configuration "$configuration" --seconds "$seconds" --tasks "$tasks" \
    --endpoint "http://127.0.0.1:$port" --directory "$work/queue-$configuration" ${driver_flags[@]+"${driver_flags[@]}"} \
    ${encoding_flags[@]+"${encoding_flags[@]}"} | tee "$out"
  if [ -n "$perf_pid" ]; then wait "$perf_pid" || true; fi
  sleep 1  # rotel logs a request once its batch (200 ms) is handed on.
  # The collector's CPU (user and system, /proc/<pid>/stat fields 14 and 15, in clock ticks).
  rotel_ticks=$(awk '{print $14 + $15}' "/proc/$rotel_pid/stat" 2>/dev/null || echo 0)
  stop_rotel
  received=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep 'Received logs' | sed -n 's/.* logs=\([0-9]*\).*/\1/p' | awk '{s+=$1} END {print s+0}')
  posted=$(sed -n 's/^posted \([0-9]*\)$/\1/p' "$out")
  echo "collector_received $received"
  awk -v ticks="$rotel_ticks" -v hz="$(getconf CLK_TCK)" -v n="$received" \
    'BEGIN { printf "collector_cpu_microseconds_per_event %.2f\n", (n > 0 ? ticks / hz * 1e6 / n : 0) }'
  echo "lost $((posted - received))"
  if [ "$short" = 1 ] && [ "$posted" != "$received" ]; then
    echo "Error: posted $posted, the collector received $received" >&2
    status=1
  fi
  # Every event checked once (the encoder saw each), none with another request's user, and
  # with --short every record of every body read back with its own user.
  checked=$(sed -n 's/^attribution_checked \([0-9]*\)$/\1/p' "$out")
  wrong=$(sed -n 's/^attribution_misattributed \([0-9]*\)$/\1/p' "$out")
  body_records=$(sed -n 's/^attribution_body_records \([0-9]*\)$/\1/p' "$out")
  body_wrong=$(sed -n 's/^attribution_body_misattributed \([0-9]*\)$/\1/p' "$out")
  echo "attribution: $checked of $posted events checked, $wrong with another request's user; $body_records records read in bodies, $body_wrong wrong"
  if [ "$configuration" = server ] && { [ "$checked" != "$posted" ] || [ "$wrong" != 0 ] || [ "$body_wrong" != 0 ]; }; then
    echo "Error: attribution: $checked of $posted events checked, $wrong and $body_wrong carried another request's user" >&2
    status=1
  fi
  if [ "$short" = 1 ] && [ "$body_records" -lt "$posted" ]; then
    echo "Error: only $body_records of $posted records were read back from the request bodies" >&2
    status=1
  fi
done
for configuration in $configurations; do
  if [ "$perf_seconds" != 0 ] && [ -f "$work/perf-$configuration.data" ]; then
    echo "== perf, $configuration: the top symbols (self time)"
    perf report -i "$work/perf-$configuration.data" --no-children --sort dso,sym --stdio 2>/dev/null | grep -v '^#' \
      | grep '%' | head -60 | swift demangle --simplified || true  # head closes the pipe early
  fi
done
exit $status
