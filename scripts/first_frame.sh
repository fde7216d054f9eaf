#!/usr/bin/env bash
# Time from launch to the first drawn graph, and peak resident memory, of the real window under
# Xvfb (release build) on stress_large: the program alone, and with its 60 MB ETRecord and its
# ETDump; each with the program drawn first (now) and with nothing drawn until every file is
# attached (before; `--no-preview`), in the same run. Median of RUNS (default 5).
# Needs Xvfb, GNU time (apt: xvfb time) and ../shared/reference. Usage: scripts/first_frame.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ref=${ETSCOPE_REFERENCE:-$root/../shared/reference}/stress_large
bin=${ETSCOPE_BIN:-$root/target/release/etscope}
runs=${RUNS:-5}
[ -x "$bin" ] || { echo "build etscope first (cargo build --release)"; exit 1; }
mkdir -p "${XDG_RUNTIME_DIR:=/tmp/etscope-xdg}"
export XDG_RUNTIME_DIR
# a settings folder of its own: no panel sizes or recent files from a previous session
XDG_DATA_HOME=$(mktemp -d)
export XDG_DATA_HOME
display=:94
Xvfb $display -screen 0 1600x1000x24 >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null; wait $xvfb 2>/dev/null || true' EXIT
sleep 1
export DISPLAY=$display LIBGL_ALWAYS_SOFTWARE=1
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() { # label, flags, files...
  local label=$1 flags=$2; shift 2
  local first=() all=() rss=()
  for _ in $(seq "$runs"); do
    # shellcheck disable=SC2086
    /usr/bin/time -o /tmp/etscope-ff-rss.txt -f "%M" timeout 120 "$bin" "$@" --no-siblings --timings $flags \
      2>/tmp/etscope-ff.txt >/dev/null || true
    first+=("$(grep -o 'first graph drawn after [0-9]*' /tmp/etscope-ff.txt | grep -o '[0-9]*$')")
    all+=("$(grep -o 'attached and drawn after [0-9]*' /tmp/etscope-ff.txt | grep -o '[0-9]*$')")
    rss+=("$(($(tail -1 /tmp/etscope-ff-rss.txt) / 1024))")
  done
  printf '%-34s %-8s first graph %5s ms   all attached %5s ms   peak %4s MiB\n' "$label" \
    "${flags:-now}" "$(printf '%s\n' "${first[@]}" | median)" \
    "$(printf '%s\n' "${all[@]}" | median)" "$(printf '%s\n' "${rss[@]}" | median)"
}
for flags in --no-preview ""; do
  measure "stress_large .pte" "$flags" "$ref/model_fp32.pte"
  measure "+ 60 MB ETRecord + ETDump" "$flags" "$ref/model_fp32.pte" "$ref/model_fp32.etrecord" \
    "$ref/etdump_profile_1run.etdp"
done
