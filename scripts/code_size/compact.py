#!/usr/bin/env python3
"""Compacts `executorch.py`'s measurement (code_sizes.json, about 1 MB with every symbol) into
core/src/part/executorch_code.json, what `etscope fit` reads: per CPU build, ExecuTorch's
runtime (text and read-only data of its core files, the minimal platform layer the Arm runner
uses, and the kernel registry's static table, which is RAM), each kernel file's text + rodata
with the support files it calls and the CMSIS-NN functions it calls, each support file's size,
and which kernel file implements each operator.

    python3 scripts/code_size/compact.py /tmp/codesize/code_sizes.json core/src/part/executorch_code.json
"""
import json
import sys


def main(src, dest):
    d = json.load(open(src))
    out = {"executorch_commit": d["executorch_commit"], "toolchain": d["toolchain"], "source_note": d.get("executorch_source", ""), "operators": d["operators"], "builds": {}}
    for cpu, b in d["builds"].items():
        sections = b["runtime"]["sections"]
        files = [f for f in sections if f != "runtime/platform/default/posix.cpp"]
        out["builds"][cpu] = {
            "runtime_text": sum(sections[f]["text"] for f in files),
            "runtime_rodata": sum(sections[f]["rodata"] for f in files),
            "kernel_registry_bss": sections["runtime/kernel/operator_registry.cpp"]["bss"],
            "kernels": {
                k: {
                    "size": v["text"] + v["rodata"],
                    "support": sorted(v.get("calls_kernel_support", {})),
                    "cmsis_nn": v.get("calls_cmsis_nn", []),
                }
                for k, v in b["kernels"].items()
            },
            "support": {f: s["text"] + s["rodata"] for f, s in b["kernel_support"]["files"].items()},
        }
    json.dump(out, open(dest, "w"), indent=0, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
