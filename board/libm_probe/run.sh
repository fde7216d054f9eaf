#!/usr/bin/env bash
# Builds the libm probe with the board firmware's compiler and flags, runs it on the emulated
# board (QEMU mps3-an547) and leaves libm_probe.bin in OUT_DIR: board/libm_probe/run.sh OUT_DIR
# [SAMPLE]. With SAMPLE, also writes there the first 384 records of each function (the committed
# tests/fixtures/libm/newlib_probe.bin). Needs arm-none-eabi-gcc with newlib
# and qemu-system-arm (and python3 for SAMPLE).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${1:?output directory}" && cd "$1" && pwd)"
sample="${2:+$(cd "$(dirname "$2")" && pwd)/$(basename "$2")}"
arm-none-eabi-gcc -mcpu=cortex-m55+nomve -mthumb -mfloat-abi=hard -O2 -std=c99 \
  -ffreestanding -fno-tree-loop-distribute-patterns -ffp-contract=off -fno-math-errno \
  -Wall -Wextra -Werror -nostartfiles -T "$here/../firmware/link.ld" \
  "$here/../firmware/startup.c" "$here/probe.c" -lm -lc -lgcc -o "$out/libm_probe.elf"
cd "$out"
timeout 600 qemu-system-arm -M mps3-an547 -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native -kernel "$out/libm_probe.elf"
if [ -n "$sample" ]; then
  python3 - "$out/libm_probe.bin" "$sample" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
kept, seen = [], {}
for at in range(0, len(data), 32):
    fn = int.from_bytes(data[at:at + 4], "little")
    seen[fn] = seen.get(fn, 0) + 1
    if seen[fn] <= 384:
        kept.append(data[at:at + 32])
open(sys.argv[2], "wb").write(b"".join(kept))
PY
fi
