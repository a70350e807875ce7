#!/usr/bin/env bash
# The time from an empty crate to a first passing loom check of a small primitive, following
# parkcheck's README as a newcomer would: `cargo new`, setup (a) and the complete example
# (`examples/event-a`, with the path to this checkout), the dependency optimisation in the
# crate's own Cargo.toml, then `cargo test --features loom`. Everything is built from
# scratch in a temporary directory (crates already downloaded are not downloaded again).
#
#   parkcheck/examples/newcomer.sh            # with the dependency optimisation
#   parkcheck/examples/newcomer.sh --no-opt   # without it
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
parkcheck_dir=$(dirname "$here")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$SECONDS
cd "$work"
cargo new -q --lib newcomer
cd newcomer
sed -e "s#path = \"../..\"#path = \"$parkcheck_dir\"#" -e 's/^name = "event-a"/name = "newcomer"/' \
  "$here/event-a/Cargo.toml" >Cargo.toml
if [ "${1:-}" != "--no-opt" ]; then
  printf '\n[profile.dev.package."*"]\nopt-level = 3\n' >>Cargo.toml
fi
cp "$here/event-a/src/lib.rs" src/lib.rs
mkdir -p tests
sed 's/event_a::/newcomer::/' "$here/event-a/tests/event.rs" >tests/event.rs
built=$SECONDS
CARGO_TARGET_DIR="$work/target" cargo test -q --features loom --test event
echo "newcomer ($([ "${1:-}" = "--no-opt" ] && echo "no dependency optimisation" || echo "dependencies optimized")): a passing loom check $((SECONDS - start)) s after \`cargo new\` (setup $((built - start)) s)"
