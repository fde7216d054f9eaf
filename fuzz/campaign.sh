#!/usr/bin/env bash
# Runs a fuzzing campaign: fuzz/campaign.sh SECONDS [TARGET...] (default: every target, one after
# the other). Needs nightly and cargo-fuzz (cargo install cargo-fuzz). New corpus entries and
# crashes go to $FUZZ_WORK (default /tmp/etscope-fuzz), seeds come from fuzz/corpus/TARGET; each
# target's libFuzzer summary lands in $FUZZ_WORK/TARGET.log. Limits: 2 GB RSS, 10 s per input.
# No sanitizer: etscope has no unsafe code; overflow checks stay on (cargo fuzz builds with
# debug assertions), so arithmetic on sizes from files that wraps is a crash here.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?seconds per target}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(pte run etdump bpte etrecord npy torch_save wire lower)
work=${FUZZ_WORK:-/tmp/etscope-fuzz}
for t in "${targets[@]}"; do
  mkdir -p "$work/$t" "$work/artifacts/$t"
  cargo +nightly fuzz run --fuzz-dir fuzz/harness --sanitizer none "$t" "$work/$t" "fuzz/corpus/$t" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/$t/" > "$work/$t.log" 2>&1 || true
  echo "$t: $(grep -E '^stat::number_of_executed_units' "$work/$t.log" | tail -1) $(ls "$work/artifacts/$t" | wc -l) artifacts"
done
