#!/usr/bin/env python3
"""Instruction mix of the loops of a CMSIS-NN kernel as GCC compiles it: the classes the cost
model prices (docs/cost-model.md).

Usage: loop_mix.py OBJ START END   the mix of one loop (hex addresses of its first instruction
                                   and of its backward branch, from `arm-none-eabi-objdump -d OBJ`)
       loop_mix.py OBJ             every loop (a backward branch and its target), innermost first
"""
import re
import subprocess
import sys
from collections import Counter

MULTIPLY = {"smlad", "smladx", "smlabb", "smlatt", "smlabt", "smlatb", "mla", "mul", "muls", "smull", "smlal",
            "smmul", "smmla", "smmulr", "umull", "sdiv", "udiv", "mls", "smulbb", "smultt", "smulbt", "smultb"}
LOOP_END = {"le", "letp", "wls", "wlstp", "dls", "dlstp", "cbz", "cbnz"}


def classify(op):
    if op.startswith("v") and op[1:4] in ("ldr", "str", "ld2", "ld4", "st2", "st4"):
        return "mve_load_store"
    if op.startswith("v"):
        return "mve_op"
    if op.startswith(("ldr", "ldm", "pop")):
        return "load"
    if op.startswith(("str", "stm", "push")):
        return "store"
    if op in MULTIPLY:
        return "multiply"
    if (op.startswith("b") and op not in ("bic", "bics", "bfi", "bfc")) or op in LOOP_END:
        return "branch"
    return "alu"


def disassemble(obj):
    # GNU objdump decodes Helium (MVE) only when told the architecture
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", "-m", "armv8.1-m.main", obj], capture_output=True,
                         text=True, check=True).stdout
    rows = []
    for line in dis.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(?:[0-9a-f]{4}\s?){1,2}\s+(\S+)\s*([^;<]*)", line)
        if m:
            rows.append((int(m.group(1), 16), m.group(2).split(".")[0], m.group(3).strip()))
    return rows


def mix(rows, start, end):
    c = Counter(classify(op) for a, op, _ in rows if start <= a <= end)
    return dict(sorted(c.items())), sum(c.values())


rows = disassemble(sys.argv[1])
if len(sys.argv) == 4:
    m, n = mix(rows, int(sys.argv[2], 16), int(sys.argv[3], 16))
    print(m, "total", n)
else:
    loops = []
    for a, op, args in rows:
        t = re.match(r"^([0-9a-f]+)$", args.split(",")[-1].strip())
        if classify(op) == "branch" and t and int(t.group(1), 16) < a:
            loops.append((int(t.group(1), 16), a))
    for s, e in sorted(loops, key=lambda l: l[1] - l[0]):
        m, n = mix(rows, s, e)
        print(f"{s:#06x}-{e:#06x}", m, "total", n)
