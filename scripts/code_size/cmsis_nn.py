#!/usr/bin/env python3
"""The flash code size of every CMSIS-NN function, per CMSIS-NN path, at the commit ExecuTorch
1.5.1 pins (dbf45dbf): each source compiled as ExecuTorch's Arm bare-metal build compiles its
kernels (-O3, -ffunction-sections), with the Arm GNU toolchain, for a core of each path:
Helium (cortex-m55), DSP (cortex-m4 with its FPU), plain C (cortex-m0plus). Each function's
size is its own section's (`arm-none-eabi-nm -S`), and the functions it calls are read from its
relocations, so that a program's CMSIS-NN code is the closure of the functions its kernels call,
each counted once (what a link with --gc-sections keeps). Writes
core/src/part/cmsis_nn_code.json, which `etscope fit` reads.

    git -C CMSIS-NN archive dbf45dbf Include Source | tar -x -C SRC
    python3 scripts/code_size/cmsis_nn.py SRC core/src/part/cmsis_nn_code.json

Needs arm-none-eabi-gcc, -nm and -readelf (Debian's gcc-arm-none-eabi). Not run in CI.
"""
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

BUILDS = {
    "mve": ["-mcpu=cortex-m55", "-mfloat-abi=hard"],
    "dsp": ["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
    "plain": ["-mcpu=cortex-m0plus", "-mfloat-abi=soft"],
}
FLAGS = ["-O3", "-mthumb", "-ffunction-sections", "-fdata-sections", "-std=c99", "-c"]


def functions(obj):
    """{name: size} of the object's defined functions."""
    out = subprocess.run(["arm-none-eabi-nm", "-S", "--defined-only", str(obj)], capture_output=True, text=True, check=True).stdout
    sizes = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in ("T", "t"):
            sizes[parts[3]] = sizes.get(parts[3], 0) + int(parts[1], 16)
    return sizes


def calls(obj):
    """{function: [called symbols]} from the relocations of each .text.<function> section."""
    out = subprocess.run(["arm-none-eabi-readelf", "-rW", str(obj)], capture_output=True, text=True, check=True).stdout
    result, section = {}, None
    for line in out.splitlines():
        m = re.match(r"Relocation section '\.rel\.text\.(\S+)'", line)
        if m:
            section = m.group(1)
            result.setdefault(section, set())
            continue
        if line.startswith("Relocation section"):
            section = None
            continue
        if section and ("R_ARM_THM_CALL" in line or "R_ARM_THM_JUMP24" in line):
            sym = line.split()[-1]
            result[section].add(sym)
    return {k: sorted(v) for k, v in result.items()}


def main(src, dest):
    src = Path(src)
    sources = sorted((src / "Source").rglob("*.c"))
    table = {"cmsis_nn_commit": "dbf45dbf", "toolchain": subprocess.run(["arm-none-eabi-gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0], "flags": FLAGS, "paths": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for path, cpu in BUILDS.items():
            funcs, failures = {}, []
            for c in sources:
                obj = Path(tmp) / f"{path}_{c.stem}.o"
                r = subprocess.run(["arm-none-eabi-gcc", *cpu, *FLAGS, "-I", str(src / "Include"), str(c), "-o", str(obj)], capture_output=True, text=True)
                if r.returncode != 0:
                    failures.append(f"{c.relative_to(src)}: {r.stderr.splitlines()[0] if r.stderr else 'failed'}")
                    continue
                edges = calls(obj)
                for name, size in functions(obj).items():
                    funcs[name] = {"size": size, "calls": edges.get(name, [])}
            table["paths"][path] = {"cpu": cpu, "functions": funcs, "failures": failures}
            print(f"{path}: {len(funcs)} functions, {sum(f['size'] for f in funcs.values())} B, {len(failures)} failures")
    Path(dest).write_text(json.dumps(table, indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
