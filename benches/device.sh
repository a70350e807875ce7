#!/usr/bin/env bash
# The benchmarks on a many-core machine, from release binaries built here and carried over
# (the machine needs no Rust toolchain):
#
#   benches/device.sh build              # here: builds target/device/{parksema-bench,fairness}
#   benches/device.sh run OUT [THREADS]  # there: the contention matrix up to THREADS (default
#                                        # 64) and the fairness experiment, written to OUT
#
# Sizes, chosen to finish within 8 minutes on 16 cores: the matrix (17 thread/permit shapes
# up to T = 64, x 3 hold times x 2 gaps; 14 peers at one permit and 7 elsewhere: 1 008
# peer-cells) at 100 ms a cell and 3 runs each is about 300 s of measuring; the wake latency
# and the large request behind small ones about 25 s; the fairness experiment (11 peers x 3
# hold times x 5 runs) at 500 ms a run 83 s: about 410 s in all, plus starting the threads.
# Halving the cells (200 ms in `cargo xtask bench`) is what buys the time: it costs
# precision, not cells.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/device
case "${1:-}" in
  build)
    cargo build --release -p parksema-bench --features profile --bin parksema-bench --bin fairness
    mkdir -p "$dir"
    cp target/release/parksema-bench target/release/fairness "$dir/"
    ls -l "$dir"
    ;;
  run)
    out=${2:?usage: benches/device.sh run OUT [THREADS]}
    threads=${3:-64}
    mkdir -p "$out"
    start=$SECONDS
    {
      echo "# The benchmarks on $(nproc) hardware threads"
      echo
      echo "Command: \`benches/device.sh run OUT $threads\`, binaries built by \`benches/device.sh build\` (\`--features profile\`)."
      echo
      echo '```'
      lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA node\(s\))' || true
      uname -r
      echo '```'
    } > "$out/device.md"
    "$dir/parksema-bench" --max-threads "$threads" --cell-ms 100 --reps 3 --out "$out" > "$out/stdout.md"
    matrix=$((SECONDS - start))
    "$dir/fairness" --out "$out" --window-ms 500 --runs 5 > /dev/null
    {
      echo
      echo "Contention report and wake latency: ${matrix} s; fairness experiment: $((SECONDS - start - matrix)) s; in all $((SECONDS - start)) s."
    } >> "$out/device.md"
    cat "$out/device.md"
    ;;
  *)
    echo "usage: benches/device.sh build | run OUT [THREADS]" >&2
    exit 2
    ;;
esac
