#!/usr/bin/env bash
# Builds the emulated-board firmware: board/build.sh OUT.elf (needs arm-none-eabi-gcc).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/firmware.elf}"
arm-none-eabi-gcc -mcpu=cortex-m55+nomve -mthumb -mfloat-abi=hard -O2 -g -std=c99 \
  -ffreestanding -fno-tree-loop-distribute-patterns -ffp-contract=off -fno-math-errno \
  -Wall -Wextra -Werror -nostartfiles -T "$here/firmware/link.ld" \
  "$here"/firmware/*.c \
  "$here/lib/etscope_trace.c" -lm -lc -lgcc -o "$out"
