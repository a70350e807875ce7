#!/usr/bin/env bash
# Instructions per uncontended operation, counted by valgrind's callgrind (the same count on
# a busy machine as on an idle one): for each operation, I(2N) - I(N) over N, so start-up and
# exit cancel out. Usage: benches/instructions.sh [OPS...] (default: every operation the
# `instructions` binary knows), or benches/instructions.sh --check, which counts every
# operation of benches/instructions.budget and fails if one costs more than its budget.
# Needs valgrind. PARKSEMA_BENCH_FEATURES (e.g. `profile`) builds the binary with those
# features of the benchmark crate.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind not found: apt-get install valgrind" >&2; exit 1; }
cargo build -q --release -p parksema-bench --bin instructions --features "${PARKSEMA_BENCH_FEATURES:-}"
bin=target/release/instructions
n=100000
budget=benches/instructions.budget
check=false
if [ "${1:-}" = --check ]; then
  check=true
  shift
fi
ops=("$@")
if [ ${#ops[@]} -eq 0 ]; then
  mapfile -t ops < <(awk '!/^#/ && NF { print $1 }' "$budget")
fi
count() {
  local out
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" "$1" "$2" >/dev/null 2>&1
  awk '/^summary:/ {print $2}' "$out"
  rm -f "$out"
}
if $check; then
  echo "$(rustc --version), $(uname -m); budgets from $budget"
  printf '| operation | instructions per operation | budget |\n|---|---:|---:|\n'
else
  printf '| operation | instructions per operation |\n|---|---:|\n'
fi
over=0
for op in "${ops[@]}"; do
  a=$(count "$op" "$n")
  b=$(count "$op" $((2 * n)))
  per=$(awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.2f", (b - a) / n }')
  if ! $check; then
    printf '| %s | %s |\n' "$op" "$per"
    continue
  fi
  max=$(awk -v op="$op" '!/^#/ && $1 == op { print $2 }' "$budget")
  [ -n "$max" ] || { echo "$op has no budget in $budget" >&2; exit 2; }
  verdict=$(awk -v per="$per" -v max="$max" 'BEGIN { print (per > max) ? "OVER" : (per < max) ? "under: lower the budget" : "" }')
  printf '| %s | %s | %s %s |\n' "$op" "$per" "$max" "$verdict"
  [ "${verdict}" != OVER ] || over=1
done
if [ "$over" -ne 0 ]; then
  echo "an uncontended path costs more instructions than its budget ($budget)" >&2
  exit 1
fi
