#!/usr/bin/env bash
# Lays out the types Method::load allocates for a target, with that target's compiler, against
# the executorch 1.5.1 wheel's headers: prints them as JSON (probe.cpp's order).
#   scripts/method_allocator/probe.sh VENV (arm|x86_64)
set -euo pipefail
venv=$1; arch=$2
here=$(cd "$(dirname "$0")" && pwd)
site=$(echo "$venv"/lib/python3*/site-packages)
et=$site/executorch
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
flags=(-std=c++17 -O1 -DC10_USING_CUSTOM_GENERATED_MACROS -I "$et/include" -I "$et/include/executorch/runtime/core/portable_type/c10" -I "$site/include" -c "$here/probe.cpp" -o "$tmp/probe.o")
case $arch in
  arm) arm-none-eabi-g++ -mcpu=cortex-m55 -mfloat-abi=hard -mthumb -fno-exceptions -fno-rtti "${flags[@]}"; objcopy=arm-none-eabi-objcopy ;;
  x86_64) g++ "${flags[@]}"; objcopy=objcopy ;;
esac
"$objcopy" -O binary --only-section=.etscope_probe "$tmp/probe.o" "$tmp/probe.bin"
python3 - "$tmp/probe.bin" "$arch" <<'PY'
import json, struct, sys
v = struct.unpack(f"<{len(open(sys.argv[1], 'rb').read()) // 4}I", open(sys.argv[1], "rb").read())
names = ["pointer", "evalue", "tensor_impl", "tensor", "optional_tensor", "boxed_int_list", "boxed_tensor_list",
         "boxed_optional_tensor_list", "bool_list", "double_list", "char_list", "sizes_type", "dim_order_type",
         "strides_type", "int64", "bool", "tensor_meta", "instruction_args", "op_function", "backend_delegate",
         "chain", "platform_memory_allocator"]
out = {n: [v[2 * i], v[2 * i + 1]] for i, n in enumerate(names)}
out["default_alignment"] = v[2 * len(names)]
print(json.dumps({"arch": sys.argv[2], "layout": out}))
PY
