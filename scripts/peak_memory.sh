#!/usr/bin/env bash
# Peak resident memory of the window with stress_large open, alone, with its ETDump, and with its
# 60 MB ETRecord (all stages): the real app under Xvfb, measured by /usr/bin/time (max RSS).
# Needs Xvfb, GNU time (apt: time) and ../shared/reference. Usage: scripts/peak_memory.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ref=${ETSCOPE_REFERENCE:-$root/../shared/reference}/stress_large
bin=${ETSCOPE_BIN:-$root/target/release/etscope}
[ -x "$bin" ] || { echo "build etscope first (cargo build --release)"; exit 1; }
mkdir -p "${XDG_RUNTIME_DIR:=/tmp/etscope-xdg}"
export XDG_RUNTIME_DIR
# a settings folder of its own: no panel sizes or recent files from a previous session
XDG_DATA_HOME=$(mktemp -d)
export XDG_DATA_HOME
display=:95
Xvfb $display -screen 0 1600x1000x24 >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null; wait $xvfb 2>/dev/null || true' EXIT
sleep 1
export DISPLAY=$display LIBGL_ALWAYS_SOFTWARE=1
measure() { # label, files...
  local label=$1; shift
  # --timings closes the window once every file is attached and drawn
  /usr/bin/time -o /tmp/etscope-peak.txt -f "%M" timeout 300 "$bin" "$@" --no-siblings \
    --timings >/dev/null 2>&1 || true
  printf '%-40s %6d MB\n' "$label" $(($(tail -1 /tmp/etscope-peak.txt) / 1024))
}
measure "stress_large .pte" "$ref/model_fp32.pte"
measure "+ ETDump" "$ref/model_fp32.pte" "$ref/etdump_profile_1run.etdp"
measure "+ ETDump + 60 MB ETRecord" "$ref/model_fp32.pte" "$ref/etdump_profile_1run.etdp" "$ref/model_fp32.etrecord"
