#!/usr/bin/env bash
# Runs the real app under Xvfb on reference artifacts and writes one PNG per view to
# docs/screenshots/ (or $1) at 1600x1000, and the same views at 1280x800 to its 1280x800/
# folder (SIZES="1600x1000" for one size). Needs: Xvfb (apt: xvfb), a build of etscope.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/docs/screenshots}
ref=${ETSCOPE_REFERENCE:-$root/../shared/reference}
bin=${ETSCOPE_BIN:-$root/target/release/etscope}
[ -x "$bin" ] || bin=$root/target/debug/etscope
[ -x "$bin" ] || { echo "build etscope first (cargo build --release)"; exit 1; }
mkdir -p "$out" "${XDG_RUNTIME_DIR:=/tmp/etscope-xdg}"
export XDG_RUNTIME_DIR
# a settings folder of its own: no panel sizes or recent files from a previous session
XDG_DATA_HOME=$(mktemp -d)
export XDG_DATA_HOME
display=:93
Xvfb $display -screen 0 1920x1200x24 >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null; wait $xvfb 2>/dev/null || true' EXIT
sleep 1
export DISPLAY=$display LIBGL_ALWAYS_SOFTWARE=1
sizes=${SIZES:-1600x1000 1280x800}
shot() { # name, args...
  local name=$1; shift
  for size in $sizes; do
    local dir=$out
    [ "$size" = 1600x1000 ] || dir=$out/$size
    mkdir -p "$dir"
    # each shot starts from no saved state (window and panel sizes, recent files)
    XDG_DATA_HOME=$(mktemp -d) timeout 120 "$bin" "$@" --size "$size" --screenshot "$dir/$name.png"
    echo "wrote $dir/$name.png"
  done
}
tiny=$ref/tiny_conv_relu_linear
ds=$ref/ds_cnn_kws
mb=$ref/mobilenet_v1_025_vww
shot graph      "$mb/model_int8_cortex_m55.pte" "$mb/model_int8_cortex_m55.etrecord" --view graph
shot inspector  "$ds/model_fp32.pte" "$ds/model_fp32.etrecord" "$ds/etdump.etdp" "$ds/debug_buffer.bin" --view graph --select "#0"
shot stages     "$ds/model_int8_cortex_m55.pte" "$ds/model_int8_cortex_m55.etrecord" --view graph --stage edge_after_transform --select "#3"
shot profile    "$ds/model_fp32.pte" "$ds/etdump_profile_5runs.etdp" --view profile
shot heat       "$ds/model_fp32.pte" "$ds/etdump_profile_5runs.etdp" --view graph
shot timeline   "$ds/model_fp32.pte" "$ds/etdump_profile_5runs.etdp" --view timeline
shot memory     "$ds/model_int8_cortex_m55.pte" --view memory --select "#3"
shot memory_plans "$root/tests/fixtures/models/resnet/model_int8_cortex_m55_default.pte" --view memory
shot memory_part "$mb/model_int8_cortex_m55.pte" --view memory --part alif-e8-hp
shot memory_placed "$mb/model_int8_cortex_m55.pte" --view memory --part ek-ra8d1 --place auto
shot diff_broken "$root/assets/ds_cnn_kws/model_fp32.pte" "$root/assets/ds_cnn_kws/model_fp32.etrecord" "$root/assets/ds_cnn_kws/model_int8_cortex_m55_broken.pte" "$root/assets/ds_cnn_kws/model_int8_cortex_m55_broken.etrecord" "$root/assets/ds_cnn_kws/input.npy" --view diff
shot diff       "$ds/model_fp32.pte" "$ds/model_fp32.etrecord" "$ds/model_int8_cortex_m55.pte" "$ds/model_int8_cortex_m55.etrecord" "$ds/input.npy" --view diff
shot modules    "$ref/stress_medium/model_fp32.pte" "$ref/stress_medium/model_fp32.etrecord" --view graph --stage edge
shot xnnpack    "$tiny/model_fp32_xnnpack.pte" "$tiny/etdump_xnnpack.etdp" --view graph --select "#0"
fx=$root/tests/fixtures
shot side_by_side "$root/assets/ds_cnn_kws/model_int8_cortex_m55.pte" "$root/assets/ds_cnn_kws/model_int8_cortex_m55.etrecord" --view graph --stage edge --side-by-side pte --select conv
shot pass_stage "$tiny/model_int8_qdq_portable.pte" "$tiny/model_int8_qdq_portable.etrecord" "$tiny/input.npy" --view graph --stage fold_activation --side-by-side pte --select "#6"
shot ethos_u    "$fx/programs/ethos_u55/model.pte" --view graph --select "#1"
shot device_note "$fx/ops/softmax__dim_last_4d_1x2x3x8__default__m55/model.pte" --view graph --select "#1"
shot default_flow "$ds/model_int8_cortex_m55_default.pte" "$ds/model_int8_cortex_m55_default.etrecord" --view graph --select "#1"
# the host against a capture of ExecuTorch's own runtime on an emulated Cortex-M55, rebuilt from
# its recorded RTT stream
cap=${TMPDIR:-/tmp}/etscope-shot-capture.etdp
"$bin" record --pte "$fx/tiny_conv_relu_linear/model_int8_cortex_m55.pte" \
  --replay "$fx/executorch_runtime/m55_qemu_streams/tiny_conv_relu_linear__model_int8_cortex_m55.etsw" --out "$cap" >/dev/null
shot diff_executorch_runtime "$fx/tiny_conv_relu_linear/model_int8_cortex_m55.pte" "$cap" "${cap%.etdp}.bin" "$fx/tiny_conv_relu_linear/input.npy" --view diff
# the estimate without a board (Profile tab, heat overlay), a capture beside it, two captures
shot profile_estimate "$mb/model_int8_cortex_m4_default.pte" --no-siblings --estimate m4@120 --view profile
shot heat_estimate "$mb/model_int8_cortex_m4_default.pte" --no-siblings --estimate m4@120 --view graph
shot profile_vs_estimate "$root/assets/ds_cnn_kws/model_int8_cortex_m55.pte" "$fx/captures/ds_cnn_m55_explicit_board.etdp" --no-siblings --estimate m55@32 --view profile
shot profile_compare "$root/assets/ds_cnn_kws/model_fp32.pte" "$root/assets/ds_cnn_kws/etdump_profile_5runs.etdp" --no-siblings --compare-capture "$fx/captures/ds_cnn_fp32_host_debug.etdp" --view profile
if [ -f "$ref/stress_large/model_fp32.pte" ]; then
  shot stress_large "$ref/stress_large/model_fp32.pte" --view graph
fi
# the Live tab streaming 20 inferences from the emulated board (needs qemu-system-arm and
# arm-none-eabi-gcc); the capture lands in the current directory
if command -v qemu-system-arm >/dev/null && command -v arm-none-eabi-gcc >/dev/null; then
  (cd "${TMPDIR:-/tmp}" && shot live "$root/assets/ds_cnn_kws/model_int8_cortex_m55.pte" "$root/assets/ds_cnn_kws/model_int8_cortex_m55.etrecord" "$root/assets/ds_cnn_kws/input.npy" --live-board 20)
fi
