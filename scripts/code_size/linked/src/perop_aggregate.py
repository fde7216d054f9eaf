#!/usr/bin/env python3
"""Aggregates perop/link/<cpu>/<op>/members.json into per_op.json and per_op.md."""
import json, os, glob, subprocess
from collections import defaultdict
R = "/tmp/linkimg"; P = f"{R}/perop"
ISA = {"m55": "cortex-m55", "m4": "cortex-m4", "m0p": "cortex-m0plus"}
code = json.load(open("/work/main/core/src/part/executorch_code.json"))
KARCH = ("libcortex_m_kernels.a", "libportable_kernels.a", "libquantized_kernels.a")

def cat(member_key):
    g, m = member_key.split(":", 1)
    if g == "kernels":
        return "support" if m.startswith("libkernels_util.a") else "kernel"
    if g in ("registration", "prim_ops"): return "registration"
    if g in ("libc", "libstdc++"): return "libc"
    if g in ("libgcc", "cmsis_nn", "runtime"): return g
    return "other"   # main, runner_util, startup, padding, program

def skey(op, sec):
    member, name, size, cd = sec
    if cd: return "comdat:" + name                      # inline/template code: linker keeps one copy
    if member.startswith("registration:reg_") and not member.endswith("_empty.o") and \
            ("kernels_to_register" in name or name.startswith(".rodata.str")):
        return f"{op}|{member}|{name}"   # the op's own unboxing wrapper, kernel table entry, op-name strings
    # everything else in a family's registration object (EValue accessor error paths toTensor/toInt/...
    # .part.0 with their log strings, static-init function, .init_array) is emitted once per family TU
    # (archive members and COMDAT sections: once per image)
    return f"{member}|{name}"

def sec_delta(op, base, img):
    b = defaultdict(int); m = defaultdict(int)
    for sec in base["sections"]: b[skey("", sec)] += sec[2]
    for sec in img["sections"]: m[skey(op, sec)] += sec[2]
    d = {k: m.get(k, 0) - b.get(k, 0) for k in set(b) | set(m) if m.get(k, 0) != b.get(k, 0)}
    return {(f"{op}|{k}" if k.startswith("padding:") else k): v for k, v in d.items()}   # fill: per op

def delta(base, img):
    d = {}
    for k in set(base["members"]) | set(img["members"]):
        x = img["members"].get(k, 0) - base["members"].get(k, 0)
        if x: d[k] = x
    return d

out = {"isa": {}}
for cpu, isa in ISA.items():
    base = json.load(open(f"{P}/link/{cpu}/_baseline/members.json"))
    g = base["groups"]
    bl = {"total": base["size"]["flash"], "text": base["size"]["text"], "data": base["size"]["data"],
          "runtime": g.get("runtime", 0), "main": g.get("main", 0), "runner_util": g.get("runner_util", 0),
          "libc": g.get("libc", 0) + g.get("libstdc++", 0), "libgcc": g.get("libgcc", 0),
          "startup": g.get("startup", 0), "registration": g.get("registration", 0) + g.get("prim_ops", 0),
          "padding": g.get("padding", 0),
          "string_merge": base["size"]["flash"] - sum(g.values())}
    ops, failed, members_delta, secs = {}, {}, {}, {}
    for d in sorted(glob.glob(f"{P}/link/{cpu}/*/op.txt")):
        dd = os.path.dirname(d); op = open(d).read().strip()
        if os.path.exists(f"{dd}/FAILED"):
            why = open(f"{dd}/FAILED").read().strip()
            for lg in ("link.log", "compile.log", "fail.log"):
                if os.path.exists(f"{dd}/{lg}") and os.path.getsize(f"{dd}/{lg}"):
                    lines = [l for l in open(f"{dd}/{lg}").read().splitlines() if "rror" in l or "undefined" in l]
                    why += ": " + " | ".join(lines[:4])[:600]; break
            failed[op] = why; continue
        if not os.path.exists(f"{dd}/members.json"): continue   # in progress
        img = json.load(open(f"{dd}/members.json"))
        md = delta(base, img); members_delta[op] = md
        rec = {}
        if "sections" in img and "sections" in base:
            sd = sec_delta(op, base, img)
            rec["registration_shared_sections"] = {k.split("|", 1)[1]: v for k, v in sd.items()
                if k.startswith("registration:reg_") and "_empty.o" not in k}
            rec["registration_shared"] = sum(v for v in rec["registration_shared_sections"].values() if v > 0)
            secs[op] = {"sections": sd, "merge": (img["size"]["flash"] - base["size"]["flash"]) - sum(sd.values())}
        total = img["size"]["flash"] - base["size"]["flash"]
        c = defaultdict(int); objs = defaultdict(dict)
        for k, v in md.items():
            c[cat(k)] += v; objs[cat(k)][k.split(":", 1)[1]] = v
        rec0 = rec; rec = {"total_without_cmsis_nn": total - c["cmsis_nn"], "total": total,
               "kernel": c["kernel"], "support": c["support"], "registration": c["registration"],
               "libc": c["libc"], "libgcc": c["libgcc"], "runtime": c["runtime"], "cmsis_nn": c["cmsis_nn"],
               "other": c["other"], "string_merge": total - sum(c.values()),
               "objects": {k: dict(sorted(v.items(), key=lambda kv: -kv[1])) for k, v in objs.items()}}
        rec.update(rec0); ops[op] = rec
    missing = [o for o in code["operators"] if o not in ops and o not in failed]
    out["isa"][isa] = {"baseline": bl, "ops": dict(sorted(ops.items())), "failed": failed,
                       "not_measured": missing}
    json.dump(members_delta, open(f"{P}/members_delta_{cpu}.json", "w"), indent=0)
    json.dump(secs, open(f"{P}/sections_delta_{cpu}.json", "w"), indent=0)
out["not_in_executorch_code_json"] = {"aten::linear.out": "used by digits *_explicit_float_fc.pte; no kernel in portable functions.yaml (codegen emits none) — see failed"}
out["method"] = open(f"{R}/src/perop_method.txt").read().strip() if os.path.exists(f"{R}/src/perop_method.txt") else ""
json.dump(out, open(f"{R}/per_op.json", "w"), indent=1)

# ---- check against the four linked programs ----
PROGS = [("tiny_m4", "m4"), ("tiny_m55", "m55"), ("ds_cnn_m55", "m55"), ("mbnet_m4", "m4")]
rows = []; detail = []
for name, cpu in PROGS:
    isa = ISA[cpu]; O = out["isa"][isa]
    sel = json.load(open(f"{R}/build/{name}/breakdown.json"))
    import yaml
    progops = sorted(yaml.safe_load(open(f"{R}/build/{name}/gen/selected_operators.yaml"))["operators"])
    pte = sel["groups"].get("program", 0)
    cm = sel["groups"].get("cmsis_nn", 0)
    linked = sel["size"]["flash"]
    s_ops = sum(O["ops"][o]["total_without_cmsis_nn"] for o in progops)
    pred = O["baseline"]["total"] + s_ops + cm + pte
    # section-level union: every flash input section counted once (COMDAT sections by name, archive
    # members' sections by member+name, each op's own registration object per op)
    sd = json.load(open(f"{P}/sections_delta_{cpu}.json"))
    un = {}; summ = defaultdict(int); merge = 0
    for o in progops:
        for k, v in sd[o]["sections"].items():
            if k.startswith("cmsis_nn:"): continue
            summ[k] += v
            un[k] = v if k not in un else (max(un[k], v) if v > 0 else min(un[k], v))
        merge += sd[o]["merge"]
    dup = {k: summ[k] - un[k] for k in summ if summ[k] != un[k]}
    pred_union = pred - sum(dup.values())
    dcat = defaultdict(int)
    for k, v in dup.items():
        dcat["comdat (registration/kernels inline code)" if k.startswith("comdat:") else cat(k.split("|")[-2])] += v
    dcat["string merging residual summed over ops"] = merge
    rows.append((name, isa, len(progops), linked, O["baseline"]["total"], s_ops, cm, pte, pred,
                 100.0 * (pred - linked) / linked, pred_union, 100.0 * (pred_union - linked) / linked, dict(dcat),
                 sorted(dup.items(), key=lambda kv: -kv[1])[:6], progops))
L = ["| program | ISA | ops | linked text+data | baseline | Σ delta(op) w/o CMSIS-NN | CMSIS-NN (linked) | .pte | predicted | error | predicted, objects counted once | error |",
     "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for r in rows:
    L.append(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} | {r[6]} | {r[7]} | {r[8]} | {r[9]:+.2f}% | {r[10]} | {r[11]:+.2f}% |")
L.append("")
for r in rows:
    L.append(f"- **{r[0]}** ({', '.join(r[14])}): counted more than once by the additive sum: {sum(v for k, v in r[12].items() if not k.startswith('string'))} B "
             f"({', '.join(f'{k} {v}' for k, v in r[12].items())}); largest: "
             + ", ".join(f"{k} {v}" for k, v in r[13]))
open(f"{P}/check_table.md", "w").write("\n".join(L) + "\n")
print("\n".join(L))
