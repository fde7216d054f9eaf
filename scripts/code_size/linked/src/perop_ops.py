#!/usr/bin/env python3
"""Writes perop/ops.txt: '<op> <family> <kernel>' per operator of executorch_code.json,
priority ops (used by the test programs / fixtures / assets) first."""
import json, subprocess, glob
d = json.load(open("/work/main/core/src/part/executorch_code.json"))
ops = d["operators"]
ptes = ["/work/main/tests/fixtures/tiny_conv_relu_linear/model_int8_cortex_m55.pte",
        "/work/main/tests/fixtures/tiny_conv_relu_linear/model_int8_cortex_m4_default.pte",
        "/work/shared/reference/ds_cnn_kws/model_int8_cortex_m55_default.pte",
        "/work/shared/reference/mobilenet_v1_025_vww/model_int8_cortex_m4_default.pte"]
ptes += sorted(glob.glob("/work/main/tests/fixtures/digits/*.pte")) + sorted(glob.glob("/work/main/assets/**/*.pte", recursive=True))
prog_ops = {}
for p in ptes:
    try:
        info = json.loads(subprocess.run(["/tmp/etscope-try", "info", p, "--json"], capture_output=True, text=True).stdout)
        s = []
        for pl in info.get("plans", []):
            for o in pl.get("operators", []):
                if o not in s: s.append(o)
        prog_ops[p] = s
    except Exception as e:
        prog_ops[p] = f"error: {e}"
json.dump(prog_ops, open("perop/program_ops.json", "w"), indent=1)
prio = []
for p, s in prog_ops.items():
    if isinstance(s, list):
        for o in s:
            if o not in prio: prio.append(o)
missing = [o for o in prio if o not in ops]
if missing: print("program ops not in executorch_code.json:", missing)
order = [o for o in prio if o in ops] + [o for o in sorted(ops) if o not in prio]
with open("perop/ops.txt", "w") as f:
    for o in order:
        f.write(f"{o} {ops[o].split('::')[0]} {ops[o]}\n")
print(len(order), "ops;", len([o for o in prio if o in ops]), "priority")
