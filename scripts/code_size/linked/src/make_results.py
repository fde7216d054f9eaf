#!/usr/bin/env python3
"""Writes results.md from build/*/breakdown.json (run run_all.sh first)."""
import json
PROGS = [("tiny_m4", "tiny_conv_relu_linear/model_int8_cortex_m4_default.pte", "cortex-m4 (nucleo-l4r5zi)"),
         ("tiny_m55", "tiny_conv_relu_linear/model_int8_cortex_m55.pte", "cortex-m55 (corstone-300)"),
         ("ds_cnn_m55", "ds_cnn_kws/model_int8_cortex_m55_default.pte", "cortex-m55 (corstone-300)"),
         ("mbnet_m4", "mobilenet_v1_025_vww/model_int8_cortex_m4_default.pte", "cortex-m4 (nucleo-l4r5zi)")]
def pct(p, r): return f"{100.0*(p-r)/r:+.1f}%" if r else "n/a"
L = []
for name, pte, cpu in PROGS:
    R = json.load(open(f"build/{name}/breakdown.json")); M = json.load(open(f"build/{name}_min/breakdown.json"))
    fit = json.load(open(f"build/{name}/etscope_fit.json"))["flash"]
    g, gm = R["groups"], M["groups"]
    L.append(f"## {name}: {pte}, {cpu}\n")
    L.append(f"arm-none-eabi-size (runner-like main): text {R['size']['text']}, data {R['size']['data']}, bss {R['size']['bss']} → flash (text+data) **{R['size']['flash']}**; minimal main: text {M['size']['text']}, data {M['size']['data']}, flash **{M['size']['flash']}**.\n")
    L.append("| term | etscope | linked (runner-like) | etscope vs linked | linked (minimal main) | etscope vs linked |")
    L.append("|---|---:|---:|---:|---:|---:|")
    for t, k in [("program (.pte)", "program"), ("runtime", "runtime"), ("kernels", "kernels"), ("cmsis_nn", "cmsis_nn")]:
        L.append(f"| {t} | {fit[k]} | {g.get(k,0)} | {pct(fit[k], g.get(k,0))} | {gm.get(k,0)} | {pct(fit[k], gm.get(k,0))} |")
    s4, s4m = sum(g.get(k, 0) for k in ("program","runtime","kernels","cmsis_nn")), sum(gm.get(k, 0) for k in ("program","runtime","kernels","cmsis_nn"))
    L.append(f"| sum of the 4 terms | {fit['total']} | {s4} | {pct(fit['total'], s4)} | {s4m} | {pct(fit['total'], s4m)} |")
    nc = ["registration", "prim_ops", "main", "runner_util", "startup", "libc", "libstdc++", "libgcc", "padding"]
    for k in nc:
        if g.get(k) or gm.get(k):
            L.append(f"| not counted: {k} | – | {g.get(k,0)} | | {gm.get(k,0)} | |")
    L.append(f"| string merging (map lists pre-merge sizes) | – | −{R['string_merge_saving']} | | −{M['string_merge_saving']} | |")
    L.append(f"| **whole flash** (text+data) | **{fit['total']}** | **{R['size']['flash']}** | **{pct(fit['total'], R['size']['flash'])}** | **{M['size']['flash']}** | **{pct(fit['total'], M['size']['flash'])}** |")
    # per kernel file
    km = {k.split(":",1)[1]: v for k, v in R["members"].items() if k.startswith("kernels:")}
    rows = []
    for kf, v in fit["kernel_files"].items():
        fam, f = kf.split("::"); a = {"cortex_m": "libcortex_m_kernels.a", "portable": "libportable_kernels.a", "quantized": "libquantized_kernels.a"}[fam]
        lk = km.get(f"{a}({f}.o)", 0); rows.append(f"{f} {v}/{lk} ({pct(v, lk)})")
    for sf, v in (fit.get("kernel_support_files") or {}).items():
        f = sf.split("/")[-1][:-4]; lk = km.get(f"libkernels_util.a({f}.o)", 0); rows.append(f"support {f} {v}/{lk} ({pct(v, lk)})")
    L.append("\nPer kernel file, etscope/linked: " + "; ".join(rows) + ".\n")
    rt = {k.split("(")[1][:-3]: v for k, v in R["members"].items() if k.startswith("runtime:")}
    L.append("Runtime objects linked (runner-like): " + ", ".join(f"{k} {v}" for k, v in sorted(rt.items(), key=lambda kv: -kv[1]) if v >= 150) + ".\n")
    cm = {k.split("(")[1][:-3]: v for k, v in R["members"].items() if k.startswith("cmsis_nn:")}
    ef = set(fit["cmsis_nn_functions"]); lf = set(cm)
    L.append(f"CMSIS-NN: {len(lf)} objects linked; etscope functions not linked as objects of that name: {sorted(ef-lf) or 'none'}; linked objects not in etscope's list: {sorted(lf-ef) or 'none'}.\n")
open("results_tables.md", "w").write("\n".join(L) + "\n")
