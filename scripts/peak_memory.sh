#!/usr/bin/env bash
# Peak resident memory of the window with stress_large open, alone, with its ETDump, and with its
# 60 MB ETRecord: the real app under Xvfb until every file is attached and drawn (`--timings`
# closes it then), measured by GNU time (max RSS, MiB), median of RUNS (default 5).
# With ETSCOPE_BEFORE_BIN (an etscope built from an earlier commit), that binary is measured in
# the same run, launch for launch, beside this checkout's.
# Needs Xvfb, GNU time (apt: xvfb time) and ../shared/reference. Usage: scripts/peak_memory.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ref=${ETSCOPE_REFERENCE:-$root/../shared/reference}/stress_large
bin=${ETSCOPE_BIN:-$root/target/release/etscope}
before=${ETSCOPE_BEFORE_BIN:-}
runs=${RUNS:-5}
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
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
peak() { # binary, files... → max RSS in MiB
  local exe=$1; shift
  /usr/bin/time -o /tmp/etscope-peak.txt -f "%M" timeout 300 "$exe" "$@" --no-siblings \
    --timings >/dev/null 2>&1 || true
  echo $(($(tail -1 /tmp/etscope-peak.txt) / 1024))
}
measure() { # label, files...
  local label=$1; shift
  local now=() was=()
  for _ in $(seq "$runs"); do
    [ -n "$before" ] && was+=("$(peak "$before" "$@")")
    now+=("$(peak "$bin" "$@")")
  done
  if [ -n "$before" ]; then
    printf '%-28s before %4s MiB   now %4s MiB\n' "$label" \
      "$(printf '%s\n' "${was[@]}" | median)" "$(printf '%s\n' "${now[@]}" | median)"
  else
    printf '%-28s %4s MiB\n' "$label" "$(printf '%s\n' "${now[@]}" | median)"
  fi
}
measure "stress_large .pte" "$ref/model_fp32.pte"
measure "+ ETDump" "$ref/model_fp32.pte" "$ref/etdump_profile_1run.etdp"
measure "+ ETDump + 60 MB ETRecord" "$ref/model_fp32.pte" "$ref/etdump_profile_1run.etdp" "$ref/model_fp32.etrecord"
