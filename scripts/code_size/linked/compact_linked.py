#!/usr/bin/env python3
"""Compacts per_op.json (made by per_op.sh: real linked bare-metal ExecuTorch images, one per
operator, and one with none) into core/src/part/linked_code.json, the table `etscope fit` sums:

    flash = baseline(ISA) + Σ_op (kernel + registration − registration_shared)
            + each support, runtime, libc and libgcc object once + each family's shared
            registration once + CMSIS-NN (its call closure, cmsis_nn_code.json) + the .pte

Usage: python3 compact_linked.py /tmp/linkimg/per_op.json ../../../core/src/part/linked_code.json
"""
import json
import sys

src, dst = sys.argv[1], sys.argv[2]
d = json.load(open(src))
out = {"method": d["method"], "builds": {}}
for isa, v in d["isa"].items():
    b = v["baseline"]
    ops = {}
    for name, o in v["ops"].items():
        objects = {}
        for group in ("support", "runtime", "libc", "libgcc"):
            for obj, size in o["objects"].get(group, {}).items():
                objects[f"{group}:{obj}"] = size
        ops[name] = {
            "kernel": o["kernel"] + o.get("other", 0) + o.get("string_merge", 0),
            "registration": o["registration"],
            "registration_shared": o.get("registration_shared", 0),
            "objects": objects,
        }
    out["builds"][isa] = {
        # the parts add up to the total: string merging across objects is negative (saved)
        "baseline": {k: b[k] for k in ("total", "runtime", "main", "runner_util", "libc",
                                         "libgcc", "startup", "registration", "padding",
                                         "string_merge")},
        "ops": ops,
        "failed": v.get("failed", {}),
    }
json.dump(out, open(dst, "w"), indent=0, sort_keys=True)
counts = ", ".join(f"{k} {len(v['ops'])} ops" for k, v in out["builds"].items())
print(f"wrote {dst}: {counts}")
