#!/usr/bin/env bash
# Host-inference benchmark of a base commit and of the working tree, back to back on this
# machine: builds `cargo bench -p etscope-core --bench runtime` at BASE (default: the commit
# before the spine) in a temporary worktree and in this checkout, then runs both.
# Needs ../shared/reference. Usage: scripts/bench_runtime_before_after.sh [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-5ba0c55}"
tmp="$(mktemp -d)"
trap 'git worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add -q "$tmp/base" "$base"
# the benchmark itself is this checkout's, so both sides measure the same thing
cp core/benches/runtime.rs "$tmp/base/core/benches/runtime.rs"
(cd "$tmp/base" && CARGO_TARGET_DIR="$tmp/target" cargo bench -p etscope-core --bench runtime --no-run -q)
cargo bench -p etscope-core --bench runtime --no-run -q
echo "== $base"
(cd "$tmp/base" && CARGO_TARGET_DIR="$tmp/target" cargo bench -p etscope-core --bench runtime -q 2>/dev/null)
echo "== working tree"
cargo bench -p etscope-core --bench runtime -q 2>/dev/null
