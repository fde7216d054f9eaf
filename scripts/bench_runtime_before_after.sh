#!/usr/bin/env bash
# A core benchmark of a base commit and of the working tree, back to back on this machine:
# builds `cargo bench -p etscope-core --bench BENCH` (default `runtime`; `planning` too) at
# BASE (default: the commit before the spine) in a temporary worktree and in this checkout,
# then runs both, alternating for ROUNDS rounds (default 3: this machine's speed drifts over
# minutes, so one side run after the other can measure the drift; compare within a round).
# Needs ../shared/reference.
# Usage: [BENCH=planning] [ROUNDS=N] scripts/bench_runtime_before_after.sh [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-5ba0c55}"
bench="${BENCH:-runtime}"
tmp="$(mktemp -d)"
trap 'git worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add -q "$tmp/base" "$base"
# the base checkout finds the reference artifacts where this one does (../shared beside it)
[ -e ../shared ] && ln -s "$(cd ../shared && pwd)" "$tmp/shared"
# the benchmark itself is this checkout's, so both sides measure the same thing
cp "core/benches/$bench.rs" "$tmp/base/core/benches/$bench.rs"
(cd "$tmp/base" && CARGO_TARGET_DIR="$tmp/target" cargo bench -p etscope-core --bench "$bench" --no-run -q)
cargo bench -p etscope-core --bench "$bench" --no-run -q
for round in $(seq "${ROUNDS:-3}"); do
  echo "== $base (round $round)"
  (cd "$tmp/base" && CARGO_TARGET_DIR="$tmp/target" cargo bench -p etscope-core --bench "$bench" -q 2>/dev/null)
  echo "== working tree (round $round)"
  cargo bench -p etscope-core --bench "$bench" -q 2>/dev/null
done
