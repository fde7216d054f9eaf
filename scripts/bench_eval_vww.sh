#!/usr/bin/env bash
# The dataset-evaluation speed of README's "Numerics over a dataset": the reference
# MobileNetV1-0.25 VWW fp32 program against its Cortex-M int8 programs over N samples (default
# 1,000; standard-normal images from a fixed seed: a speed benchmark, not an accuracy one), then
# the float-one sensitivity sweep on the default-flow program (its ETRecord beside it), each
# under /usr/bin/time (wall seconds, peak resident KB). Needs ../shared/reference and numpy.
# Usage: scripts/bench_eval_vww.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-1000}"
ref=../shared/reference/mobilenet_v1_025_vww
data="$(mktemp -d)/vww_$n.npy"
trap 'rm -rf "$(dirname "$data")"' EXIT
python3 -c "
import numpy as np, sys
n = int(sys.argv[1])
np.save(sys.argv[2], np.random.default_rng(0).standard_normal((n, 1, 3, 96, 96), dtype=np.float32))
" "$n" "$data"
cargo build --release -q -p etscope
bin=target/release/etscope
for b in model_int8_cortex_m55 model_int8_cortex_m55_default; do
  echo "== eval fp32 vs $b, $n samples"
  /usr/bin/time -f "%e s, %M KB peak" "$bin" eval "$ref/model_fp32.pte" "$ref/$b.pte" --data "$data" >/dev/null
done
echo "== eval --sensitivity --float-only, fp32 vs model_int8_cortex_m55_default, $n samples"
/usr/bin/time -f "%e s, %M KB peak" "$bin" eval "$ref/model_fp32.pte" "$ref/model_int8_cortex_m55_default.pte" \
  --data "$data" --sensitivity --float-only >/dev/null
