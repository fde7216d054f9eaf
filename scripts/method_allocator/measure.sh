#!/usr/bin/env bash
# Builds measure.cpp against the executorch 1.5.1 wheel (headers + libexecutorch.so) and runs it
# on each program given: writes <program>.method_allocator.txt beside the committed figures.
#   scripts/method_allocator/measure.sh VENV OUTDIR PROGRAM.pte...
set -euo pipefail
venv=$1; out=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
site=$(echo "$venv"/lib/python3*/site-packages)
et=$site/executorch
mkdir -p "$out"
bin=$out/measure
g++ -std=c++17 -O1 -DC10_USING_CUSTOM_GENERATED_MACROS -I "$et/include" -I "$et/include/executorch/runtime/core/portable_type/c10" -I "$site/include" "$here/measure.cpp" \
  -L "$et/lib" -lexecutorch -Wl,-rpath,"$et/lib" -o "$bin"
root=$(cd "$here/../.." && pwd)
for pte in "$@"; do
  ops=$("$root/target/release/etscope" info --json "$pte" | python3 -c 'import json,sys; print(",".join(sorted({o for o in json.load(sys.stdin)["plans"][0]["operators"] if not o.startswith("executorch_prim::")})))')
  stem=$(echo "$pte" | sed 's|.*/reference/||; s|.*/fixtures/||; s|/|__|g; s|\.pte$||')
  # a delegate whose backend the wheel's runtime lacks cannot load: said, and skipped
  if ETSCOPE_OPERATORS=$ops "$bin" "$pte" > "$out/$stem.txt" 2> "$out/$stem.err" &&
     ETSCOPE_OPERATORS=$ops "$bin" "$pte" --no-temp > "$out/$stem.no_temp.txt" 2>> "$out/$stem.err"; then
    echo "$stem: $(tail -2 "$out/$stem.txt" | tr '\n' ' ')"
  else
    echo "$stem: not loadable: $(tail -1 "$out/$stem.err")"
  fi
done
