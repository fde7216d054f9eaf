#!/usr/bin/env python3
"""Instruction mix of one loop of a CMSIS-NN kernel as GCC compiles it: the classes the cost
model prices (docs/cost-model.md). Usage: loop_mix.py OBJ START END (hex addresses of the loop's
first instruction and of its backward branch, from `arm-none-eabi-objdump -d OBJ`)."""
import re
import subprocess
import sys
from collections import Counter

obj, start, end = sys.argv[1], int(sys.argv[2], 16), int(sys.argv[3], 16)
dis = subprocess.run(["arm-none-eabi-objdump", "-d", obj], capture_output=True, text=True, check=True).stdout
mix = Counter()
for line in dis.splitlines():
    m = re.match(r"\s*([0-9a-f]+):\s+(?:[0-9a-f]{4}\s?){1,2}\s+(\S+)", line)
    if not m or not start <= int(m.group(1), 16) <= end:
        continue
    op = m.group(2).split(".")[0]
    if op.startswith("v") and op[1:4] in ("ldr", "str"):
        mix["mve_load_store"] += 1
    elif op.startswith("v"):
        mix["mve_op"] += 1
    elif op.startswith(("ldr", "ldm", "pop")):
        mix["load"] += 1
    elif op.startswith(("str", "stm", "push")):
        mix["store"] += 1
    elif op in ("smlad", "smladx", "smlabb", "smlatt", "smlabt", "smlatb", "mla", "mul", "muls", "smull", "smlal", "smmul", "smmla", "umull", "sdiv", "udiv", "mls"):
        mix["multiply"] += 1
    elif op.startswith("b") and op not in ("bic", "bics", "bfi", "bfc") or op in ("cbz", "cbnz", "le", "letp", "wls", "wlstp", "dls", "dlstp"):
        mix["branch"] += 1
    else:
        mix["alu"] += 1
print(dict(sorted(mix.items())), "total", sum(mix.values()))
