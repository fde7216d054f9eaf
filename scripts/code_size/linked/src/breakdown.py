#!/usr/bin/env python3
"""Flash bytes of a linked image per input (object / archive member), from the GNU ld map.
    breakdown.py image.map image.elf etscope_fit.json > breakdown.json
Flash = every allocated output section stored in FLASH: .isr_vector .text .rodata .ARM.extab
.ARM.exidx .preinit/.init/.fini_array, and .data's load image. Alignment fill inside an output
section is its own 'padding' group."""
import json, re, subprocess, sys
from collections import defaultdict

FLASH_OUT = {".isr_vector", ".text", ".rodata", ".ARM.extab", ".ARM.exidx", ".preinit_array",
             ".init_array", ".fini_array", ".data"}

def group_of(path):
    p = path
    base = p.split("/")[-1]
    if "libexecutorch_core.a" in p: return "runtime"
    if "libextension_runner_util.a" in p: return "runner_util"
    if "libprim_ops_impl.a" in p or base == "reg_prim_ops.o": return "prim_ops"
    if re.search(r"lib(cortex_m_kernels|portable_kernels|quantized_kernels|kernels_util)\.a", p): return "kernels"
    if base.startswith("reg_"): return "registration"
    if "libcmsis-nn.a" in p: return "cmsis_nn"
    if base == "pte.o": return "program"
    if base == "main.o": return "main"
    if base == "startup.o" or re.search(r"crt[^/]*\.o$", base): return "startup"
    if re.search(r"lib(c|c_nano|g|g_nano|m|nosys)\.a", p): return "libc"
    if re.search(r"lib(stdc\+\+|supc\+\+)(_nano)?\.a", p): return "libstdc++"
    if "libgcc.a" in p: return "libgcc"
    if p == "*fill*": return "padding"
    return "other"

def member(path):
    m = re.search(r"([^/]+\.a)\(([^)]+)\)$", path)
    return f"{m.group(1)}({m.group(2)})" if m else path.split("/")[-1]

def parse_map(path):
    lines = open(path).read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("Linker script and memory map"))
    out_sec = None
    entries = []  # (out_sec, in_sec, size, file)
    pending = None
    for l in lines[start + 1:]:
        m = re.match(r"^(\.[^\s]+|/DISCARD/)(\s+0x[0-9a-f]+\s+0x[0-9a-f]+.*)?$", l)
        if m and not l.startswith(" "):
            out_sec = m.group(1); pending = None; continue
        if pending is not None:
            m = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", l)
            if m:
                entries.append((out_sec, pending, int(m.group(2), 16), m.group(3).strip()))
            pending = None; continue
        m = re.match(r"^ \*fill\*\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)", l)
        if m:
            entries.append((out_sec, "*fill*", int(m.group(2), 16), "*fill*")); continue
        m = re.match(r"^ (\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", l)
        if m and not m.group(1).startswith("0x"):
            entries.append((out_sec, m.group(1), int(m.group(3), 16), m.group(4).strip())); continue
        m = re.match(r"^ (\.\S+|COMMON)$", l)
        if m: pending = m.group(1)
    return entries

def main():
    mp, elf, fitp = sys.argv[1:4]
    entries = [e for e in parse_map(mp) if e[0] in FLASH_OUT and e[2] > 0]
    groups, members = defaultdict(int), defaultdict(int)
    for out, ins, size, f in entries:
        g = group_of(f)
        groups[g] += size
        members[(g, member(f))] += size
    flash_map = sum(groups.values())
    merged = {}  # SHF_MERGE string sections: the map lists pre-merge sizes
    for out, ins, size, f in entries:
        if ins.startswith(".rodata.str") or ins.startswith(".rodata.cst"):
            merged[group_of(f)] = merged.get(group_of(f), 0) + size
    berk = subprocess.run(["arm-none-eabi-size", elf], capture_output=True, text=True).stdout.split("\n")[1].split()
    text, data, bss = int(berk[0]), int(berk[1]), int(berk[2])
    fit = json.load(open(fitp))["flash"]
    def cmp(pred, real):
        return {"etscope": pred, "linked": real, "diff_pct": round(100.0 * (pred - real) / real, 1) if real else None}
    counted = groups["runtime"] + groups["kernels"] + groups["cmsis_nn"] + groups["program"]
    res = {
        "size": {"text": text, "data": data, "bss": bss, "flash": text + data},
        "flash_from_map": flash_map,
        "string_merge_saving": flash_map - (text + data),
        "mergeable_string_bytes_per_group_premerge": merged,
        "groups": dict(sorted(groups.items(), key=lambda kv: -kv[1])),
        "members": {f"{g}:{m}": s for (g, m), s in sorted(members.items(), key=lambda kv: (kv[0][0], -kv[1]))},
        "compare": {
            "program": cmp(fit["program"], groups["program"]),
            "runtime": cmp(fit["runtime"], groups["runtime"]),
            "kernels": cmp(fit["kernels"], groups["kernels"]),
            "cmsis_nn": cmp(fit["cmsis_nn"], groups["cmsis_nn"]),
            "etscope_terms_vs_same_groups": cmp(fit["total"], counted),
            "total_vs_image_flash": cmp(fit["total"], text + data),
            "not_counted_by_etscope": {g: groups[g] for g in ("registration", "prim_ops", "main", "runner_util", "startup", "libc", "libstdc++", "libgcc", "padding", "other") if groups.get(g)},
            "note": "groups are pre-merge map sizes; string merging saved flash_from_map - flash bytes overall",
        },
        "etscope_kernel_files": fit.get("kernel_files"), "etscope_kernel_support_files": fit.get("kernel_support_files"),
        "etscope_cmsis_nn_functions": fit.get("cmsis_nn_functions"),
    }
    print(json.dumps(res, indent=1))

main()
