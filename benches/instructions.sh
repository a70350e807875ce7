#!/usr/bin/env bash
# Instructions per uncontended operation, counted by valgrind's callgrind (the same count on
# a busy machine as on an idle one): for each operation, I(2N) - I(N) over N, so start-up and
# exit cancel out. Usage: benches/instructions.sh [OPS...] (default: every operation the
# `instructions` binary knows). Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind not found: apt-get install valgrind" >&2; exit 1; }
cargo build -q --release -p parksema-bench --bin instructions
bin=target/release/instructions
n=100000
ops=("$@")
[ ${#ops[@]} -gt 0 ] || ops=(pair try_fail many4 timed fifo_pair fifo_try_fail barging_pair floor_pair floor_checked)
count() {
  local out
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" "$1" "$2" >/dev/null 2>&1
  awk '/^summary:/ {print $2}' "$out"
  rm -f "$out"
}
printf '| operation | instructions per operation |\n|---|---:|\n'
for op in "${ops[@]}"; do
  a=$(count "$op" "$n")
  b=$(count "$op" $((2 * n)))
  awk -v a="$a" -v b="$b" -v n="$n" -v op="$op" 'BEGIN { printf "| %s | %.2f |\n", op, (b - a) / n }'
done
