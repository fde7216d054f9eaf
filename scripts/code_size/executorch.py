#!/usr/bin/env python3
"""Flash code size of ExecuTorch's runtime and of each of its kernels, built for Arm Cortex-M
with the GNU Arm toolchain (arm-none-eabi-g++), object file by object file.

    measure.py --et-src DIR --flatbuffers-include DIR --cmsis-nn-include DIR --flatc FLATC \
               --work DIR --out code_sizes.json [--et-commit SHA] [--jobs N]

--et-src               an ExecuTorch source tree (runtime/, kernels/, schema/, backends/cortex_m/)
--flatbuffers-include  the include/ directory of the flatbuffers ExecuTorch pins
                       (third-party/flatbuffers; its version must match --flatc)
--cmsis-nn-include     CMSIS-NN's Include/ directory: headers only, CMSIS-NN is not compiled;
                       the arm_* functions the Cortex-M operators call stay undefined
--flatc                flatc used to make schema/program_generated.h and scalar_type_generated.h
                       with the flags ExecuTorch's schema/CMakeLists.txt uses
--work                 scratch directory (generated headers, objects; objects are reused when
                       their compile command is unchanged)

What is compiled, for each of three CPU builds (all -mthumb -ffunction-sections
-fdata-sections -fno-exceptions -fno-rtti, plus -fno-unwind-tables -DNDEBUG as ExecuTorch's
examples/arm/ethos-u-setup/arm-none-eabi-gcc.cmake adds in a Release build):
  kernels, at -O3 (CMake Release, as backends/arm/scripts/build_executorch.sh builds them):
    kernels/portable/cpu/op_*.cpp, kernels/quantized/cpu/op_*.cpp, backends/cortex_m/ops/op_*.cpp
  kernel support code, at -O3 (out-of-line helpers the kernels call, counted once):
    kernels/portable/cpu/util/*.cpp, kernels/portable/cpu/pattern/*.cpp,
    kernels/quantized/cpu/embeddingxb.cpp
  runtime, at -Oz:
    runtime/executor/*.cpp, runtime/core/*.cpp, runtime/core/exec_aten/util/*.cpp,
    runtime/kernel/*.cpp, runtime/platform/*.cpp and runtime/platform/default/{posix,minimal}.cpp,
    plus the other executorch_core sources (runtime/backend/interface.cpp,
    runtime/core/portable_type/tensor_impl.cpp, schema/extended_header.cpp);
    *_aten.cpp files are ATen-mode only (they need libtorch) and are skipped.

Sizes are read from each relocatable object's section headers: "text" is the sum of the
allocated executable sections (.text*), "rodata", "data" and "bss" likewise. These are object
sizes, not a linked image: see the "caveats" list written into the JSON.
"""
import argparse
import concurrent.futures as cf
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys

BUILDS = {
    "cortex-m55": ["-mcpu=cortex-m55", "-mfloat-abi=hard"],
    "cortex-m4": ["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
    "cortex-m0plus": ["-mcpu=cortex-m0plus", "-mfloat-abi=soft"],
}
COMMON = ["-mthumb", "-ffunction-sections", "-fdata-sections", "-fno-exceptions", "-fno-rtti",
          "-fno-unwind-tables", "-std=c++17", "-DNDEBUG", "-Wno-psabi",
          "-Wno-deprecated-declarations"]
# ExecuTorch's CMake definitions for an arm_baremetal Release build: logging on (the preset sets
# EXECUTORCH_ENABLE_LOGGING ON, so ET_LOG_ENABLED keeps its default 1), ET_MIN_LOG_LEVEL=Info,
# program verification off (Release default), the deprecated constant buffer off,
# FLATBUFFERS_MAX_ALIGNMENT=1024 (EXECUTORCH_FLATBUFFERS_MAX_ALIGNMENT's default).
DEFINES = ["-DC10_USING_CUSTOM_GENERATED_MACROS", "-DET_MIN_LOG_LEVEL=Info",
           "-DET_ENABLE_PROGRAM_VERIFICATION=0", "-DET_ENABLE_DEPRECATED_CONSTANT_BUFFER=0",
           "-DFLATBUFFERS_MAX_ALIGNMENT=1024"]
KERNEL_OPT = "-O3"
RUNTIME_OPT = "-Oz"

KERNEL_GROUPS = [  # (key prefix, glob, yaml files naming the operators, default namespace)
    ("portable", "kernels/portable/cpu/op_*.cpp",
     ["kernels/portable/functions.yaml", "kernels/portable/custom_ops.yaml"], "aten"),
    ("quantized", "kernels/quantized/cpu/op_*.cpp", ["kernels/quantized/quantized.yaml"], None),
    ("cortex_m", "backends/cortex_m/ops/op_*.cpp", ["backends/cortex_m/ops/operators.yaml"], None),
]
SUPPORT_GLOBS = ["kernels/portable/cpu/util/*.cpp", "kernels/portable/cpu/pattern/*.cpp",
                 "kernels/quantized/cpu/embeddingxb.cpp"]
RUNTIME_GLOBS = ["runtime/executor/*.cpp", "runtime/core/*.cpp",
                 "runtime/core/exec_aten/util/*.cpp", "runtime/kernel/*.cpp",
                 "runtime/platform/*.cpp", "runtime/backend/interface.cpp",
                 "runtime/core/portable_type/tensor_impl.cpp", "schema/extended_header.cpp"]
PALS = ["runtime/platform/default/posix.cpp", "runtime/platform/default/minimal.cpp"]

SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4
SHT_PROGBITS, SHT_SYMTAB, SHT_NOBITS, SHT_GROUP = 1, 2, 8, 17


def read_elf(path):
    """Section sizes, COMDAT-group membership and symbols of an ELF32 little-endian object."""
    with open(path, "rb") as f:
        b = f.read()
    if b[:4] != b"\x7fELF" or b[4] != 1 or b[5] != 1:
        raise ValueError(f"{path}: not an ELF32 little-endian object")
    e_shoff, = struct.unpack_from("<I", b, 0x20)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", b, 0x2E)
    secs = []
    for i in range(e_shnum):
        secs.append(struct.unpack_from("<10I", b, e_shoff + i * e_shentsize))
    shstr = secs[e_shstrndx]

    def cstr(off):
        return b[off:b.index(b"\0", off)].decode()

    names = [cstr(shstr[4] + s[0]) for s in secs]
    symtab = next((i for i, s in enumerate(secs) if s[1] == SHT_SYMTAB), None)
    syms = []
    if symtab is not None:
        st = secs[symtab]
        strtab = secs[st[6]]
        for off in range(st[4], st[4] + st[5], 16):
            st_name, st_value, st_size, st_info, st_other, st_shndx = \
                struct.unpack_from("<IIIBBH", b, off)
            syms.append((cstr(strtab[4] + st_name) if st_name else "", st_info >> 4,
                         st_info & 0xF, st_shndx))
    group_of = {}
    for i, s in enumerate(secs):
        if s[1] == SHT_GROUP:
            sig = syms[s[7]][0] if s[7] < len(syms) else names[i]
            members = struct.unpack_from(f"<{s[5] // 4}I", b, s[4])[1:]
            for m in members:
                group_of[m] = sig
    sizes = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    text_sections = []  # (name, size, comdat group signature or None)
    for i, s in enumerate(secs):
        sh_type, sh_flags, sh_size = s[1], s[2], s[5]
        if not sh_flags & SHF_ALLOC or sh_size == 0:
            continue
        if sh_flags & SHF_EXECINSTR:
            sizes["text"] += sh_size
            text_sections.append((names[i], sh_size, group_of.get(i)))
        elif sh_type == SHT_NOBITS:
            sizes["bss"] += sh_size
        elif sh_flags & SHF_WRITE:
            sizes["data"] += sh_size
        else:  # .rodata*, and .ARM.exidx/.ARM.extab if any
            sizes["rodata"] += sh_size
    undefined = sorted({n for n, bind, typ, shndx in syms
                        if n and shndx == 0 and bind in (1, 2)})
    defined = sorted({n for n, bind, typ, shndx in syms
                      if n and shndx != 0 and shndx < 0xFF00 and bind in (1, 2)})
    return sizes, text_sections, undefined, defined


def demangle(names, cxxfilt):
    names = sorted(set(names))
    if not names:
        return {}
    out = subprocess.run([cxxfilt], input="\n".join(names) + "\n", capture_output=True,
                         text=True, check=True).stdout.splitlines()
    return dict(zip(names, out))


def first_error(stderr):
    lines = [l for l in stderr.splitlines() if l.strip()]
    for l in lines:
        if re.search(r"\b(fatal )?error\b", l):
            return l.strip()
    return lines[0].strip() if lines else "(no output)"


def compile_one(cxx, cmd_flags, src, obj, timeout):
    """Compiles src to obj unless obj exists from the same command. Returns an error or None."""
    cmd = [cxx] + cmd_flags + ["-c", src, "-o", obj]
    sidecar = obj + ".cmd"
    text = "\0".join(cmd)
    if os.path.exists(obj) and os.path.exists(sidecar) and open(sidecar).read() == text:
        return None
    os.makedirs(os.path.dirname(obj), exist_ok=True)
    for p in (obj, sidecar):
        if os.path.exists(p):
            os.remove(p)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout} s"
    if r.returncode != 0:
        return first_error(r.stderr)
    with open(sidecar, "w") as f:
        f.write(text)
    return None


def parse_ops_yaml(path, default_ns):
    """[(operator name, kernel_name)] from an ExecuTorch functions/custom-ops yaml."""
    out, op = [], None
    for line in open(path):
        m = re.match(r"^- (op|func):\s*([^\s(]+)", line)
        if m:
            op = m.group(2)
            if "::" not in op:
                op = f"{default_ns or 'aten'}::{op}"
            continue
        m = re.match(r"^\s+kernel_name:\s*(\S+)", line)
        if m and op:
            out.append((op, m.group(1)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--et-src", required=True)
    ap.add_argument("--flatbuffers-include", required=True)
    ap.add_argument("--cmsis-nn-include", required=True)
    ap.add_argument("--flatc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--et-commit", default="unknown",
                    help="recorded as executorch_commit (the tree itself is not a git checkout)")
    ap.add_argument("--source-note", default=None,
                    help="free text recorded as executorch_source (where the tree came from)")
    ap.add_argument("--cross-prefix", default="arm-none-eabi-")
    ap.add_argument("--builds", default=",".join(BUILDS), help="comma-separated subset")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per file")
    ap.add_argument("--only", default=None,
                    help="regex: compile only source paths matching it (for a quick check)")
    a = ap.parse_args()

    src = os.path.abspath(a.et_src)
    work = os.path.abspath(a.work)
    cxx = a.cross_prefix + "g++"
    cxxfilt = a.cross_prefix + "c++filt"
    toolchain = subprocess.run([cxx, "--version"], capture_output=True,
                               text=True).stdout.splitlines()[0]

    # Include layout: <executorch/...> resolves to the source tree, the generated schema
    # headers live under <executorch/schema/...> in a second root.
    inc = os.path.join(work, "inc")
    gen = os.path.join(work, "gen")
    os.makedirs(inc, exist_ok=True)
    link = os.path.join(inc, "executorch")
    if os.path.islink(link) and os.readlink(link) != src:
        os.remove(link)
    if not os.path.islink(link):
        os.symlink(src, link)
    schema_out = os.path.join(gen, "executorch", "schema")
    os.makedirs(schema_out, exist_ok=True)
    subprocess.run([a.flatc, "--cpp", "--cpp-std", "c++11", "--gen-mutable", "--scoped-enums",
                    "-o", schema_out, os.path.join(src, "schema/program.fbs"),
                    os.path.join(src, "schema/scalar_type.fbs")], check=True)
    flatc_version = subprocess.run([a.flatc, "--version"], capture_output=True,
                                   text=True).stdout.strip()
    includes = ["-I" + inc, "-I" + gen,
                "-I" + os.path.join(src, "runtime/core/portable_type/c10"),
                "-I" + os.path.abspath(a.flatbuffers_include)]
    cmsis_inc = ["-I" + os.path.abspath(a.cmsis_nn_include)]

    def rel_glob(pattern):
        return sorted(os.path.relpath(p, src) for p in glob.glob(os.path.join(src, pattern)))

    kernel_files = []  # (key, group, relpath)
    for group, pattern, _, _ in KERNEL_GROUPS:
        for rel in rel_glob(pattern):
            kernel_files.append((f"{group}::{os.path.basename(rel)[:-4]}", group, rel))
    support_files = [r for g in SUPPORT_GLOBS for r in rel_glob(g)]
    runtime_files, skipped = [], []
    for g in RUNTIME_GLOBS:
        for r in rel_glob(g):
            if r.endswith("_aten.cpp") and not r.endswith("_exec_aten.cpp"):
                skipped.append({"file": r, "reason": "ATen mode only (needs libtorch headers)"})
            elif r not in runtime_files:
                runtime_files.append(r)
    pal_files = [p for p in PALS if os.path.exists(os.path.join(src, p))]

    if a.only:
        keep = re.compile(a.only).search
        kernel_files = [k for k in kernel_files if keep(k[2])]
        support_files = [r for r in support_files if keep(r)]
        runtime_files = [r for r in runtime_files if keep(r)]
        pal_files = [r for r in pal_files if keep(r)]
    builds = [b for b in a.builds.split(",") if b]
    jobs = []  # (build, kind, key, relpath, flags)
    for b in builds:
        base = BUILDS[b] + COMMON + DEFINES + includes
        for key, group, rel in kernel_files:
            extra = cmsis_inc if group == "cortex_m" else []
            jobs.append((b, "kernel", key, rel, [KERNEL_OPT] + base + extra))
        for rel in support_files:
            jobs.append((b, "support", rel, rel, [KERNEL_OPT] + base))
        for rel in runtime_files + pal_files:
            jobs.append((b, "runtime", rel, rel, [RUNTIME_OPT] + base))

    def run(job):
        b, kind, key, rel, flags = job
        obj = os.path.join(work, "obj", b, rel[:-4] + ".o")
        err = compile_one(cxx, flags, os.path.join(src, rel), obj, a.timeout)
        return job, obj, err

    results = {}
    failures = []
    done = 0
    with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for job, obj, err in ex.map(run, jobs):
            done += 1
            b, kind, key, rel, _ = job
            if err:
                failures.append({"build": b, "file": rel, "kind": kind, "error": err})
                print(f"[{done}/{len(jobs)}] FAIL {b} {rel}: {err}", file=sys.stderr)
            else:
                results[(b, kind, key)] = (rel, read_elf(obj))
                if done % 50 == 0:
                    print(f"[{done}/{len(jobs)}] {b} {rel}", file=sys.stderr)

    # Names for symbols, and which object defines what.
    all_names = set()
    for rel, (_, _, und, dfn) in results.values():
        all_names.update(und)
        all_names.update(dfn)
    dem = demangle(all_names, cxxfilt)

    # operator name -> kernel file key, from the yaml files, via the defining object.
    op_entries = []
    for group, _, yamls, ns in KERNEL_GROUPS:
        for y in yamls:
            p = os.path.join(src, y)
            if os.path.exists(p):
                op_entries += [(group, op, kn) for op, kn in parse_ops_yaml(p, ns)]

    def plain(sym):
        return re.sub(r"::native::", "::", dem.get(sym, sym).split("(")[0])

    operators = {}
    unmapped_ops = []
    defined_by = {}  # (group, plain kernel name) -> key
    for (b, kind, key), (rel, (_, _, _, dfn)) in results.items():
        if kind == "kernel":
            group = key.split("::")[0]
            for s in dfn:
                defined_by.setdefault((group, plain(s)), key)
    for group, op, kn in op_entries:
        key = defined_by.get((group, kn))
        if key:
            operators[op] = key
        else:
            unmapped_ops.append({"operator": op, "kernel_name": kn})

    out_builds = {}
    for b in builds:
        flags = BUILDS[b] + COMMON + DEFINES
        runtime_defs = {}  # mangled symbol -> runtime file
        support_defs = {}
        rt_files, rt_detail = {}, {}
        for rel in runtime_files + pal_files:
            r = results.get((b, "runtime", rel))
            if not r:
                continue
            sizes, _, und, dfn = r[1]
            rt_files[rel] = sizes["text"]
            rt_detail[rel] = sizes
            for s in dfn:
                runtime_defs.setdefault(s, rel)
        core = [r for r in runtime_files if r in rt_files]
        total = sum(rt_files[r] for r in core)
        pal_text = {p: rt_files.get(p) for p in pal_files}
        runtime = {
            "opt": RUNTIME_OPT,
            "files": rt_files,
            "total": total + (pal_text.get(PALS[0]) or 0),
            "total_note": "sum of text over every file except runtime/platform/default/"
                          "minimal.cpp (the posix PAL is the one the arm_baremetal CMake "
                          "preset compiles; the Arm runner then overrides its weak et_pal_* "
                          "functions)",
            "total_with_minimal_pal": total + (pal_text.get(PALS[1]) or 0),
            "rodata_total": sum(rt_detail[r]["rodata"] for r in core)
            + rt_detail.get(PALS[0], {}).get("rodata", 0),
            "data_bss_total": sum(rt_detail[r]["data"] + rt_detail[r]["bss"] for r in core),
            "sections": rt_detail,
        }
        support = {}
        for rel in support_files:
            r = results.get((b, "support", rel))
            if not r:
                continue
            sizes, _, und, dfn = r[1]
            support[rel] = {"text": sizes["text"], "rodata": sizes["rodata"]}
            for s in dfn:
                support_defs.setdefault(s, rel)

        kernels = {}
        comdat = {}  # group signature -> max text bytes (inline/template code shared by objects)
        plain_text = {}
        for key, group, rel in kernel_files:
            r = results.get((b, "kernel", key))
            if not r:
                continue
            sizes, tsecs, und, dfn = r[1]
            calls_support, calls_runtime, cmsis, other = {}, set(), [], []
            for s in und:
                if s in support_defs:
                    calls_support.setdefault(support_defs[s], []).append(dem.get(s, s))
                elif s in runtime_defs:
                    calls_runtime.add(runtime_defs[s])
                elif s.startswith("arm_"):
                    cmsis.append(s)
                else:
                    other.append(dem.get(s, s))
            weak = {}
            for name, size, sig in tsecs:
                if sig:
                    weak[sig] = weak.get(sig, 0) + size
            for sig, size in weak.items():
                comdat[sig] = max(comdat.get(sig, 0), size)
            plain_text[key] = sizes["text"] - sum(weak.values())
            kernels[key] = {
                "text": sizes["text"],
                "rodata": sizes["rodata"],
                "object": rel,
                "ops": sorted(op for op, k in operators.items() if k == key),
                "text_in_comdat_groups": sum(weak.values()),
                "undefined": [dem.get(s, s) for s in und],
                "calls_kernel_support": {k: sorted(v) for k, v in sorted(calls_support.items())},
                "calls_runtime_files": sorted(calls_runtime),
                "calls_cmsis_nn": cmsis,
            }
        group_tot = {}
        for key, k in kernels.items():
            g = key.split("::")[0]
            group_tot[g] = group_tot.get(g, 0) + k["text"]
        out_builds[b] = {
            "flags": flags,
            "runtime": runtime,
            "kernels": kernels,
            "kernel_support": {"opt": KERNEL_OPT, "files": support,
                               "total": sum(v["text"] for v in support.values())},
            "kernel_totals": {
                "opt": KERNEL_OPT,
                "sum_of_objects_text_by_group": group_tot,
                "sum_of_objects_text": sum(group_tot.values()),
                "all_kernels_comdat_deduplicated_text":
                    sum(plain_text.values()) + sum(comdat.values()),
                "note": "sum_of_objects_text counts inline/template code each object emits "
                        "(COMDAT groups) once per object; the deduplicated figure counts each "
                        "COMDAT group once (largest copy), as a linker would keep one copy; "
                        "kernel_support is not included in either.",
            },
        }

    doc = {
        "executorch_commit": a.et_commit,
        "executorch_source": a.source_note,
        "toolchain": toolchain,
        "flatc": flatc_version,
        "defines": DEFINES,
        "kernel_opt": KERNEL_OPT,
        "runtime_opt": RUNTIME_OPT,
        "builds": out_builds,
        "operators": dict(sorted(operators.items())),
        "operators_without_kernel_file": unmapped_ops,
        "skipped": skipped,
        "failures": failures,
        "caveats": [
            "Object sizes, not a linked image: no --gc-sections, so every function an object "
            "defines is counted, used or not (a linked firmware keeps only what is reachable).",
            "Inline and template code from headers is emitted into every object that uses it "
            "(COMDAT groups) and so counted once per object; see text_in_comdat_groups and "
            "kernel_totals.all_kernels_comdat_deduplicated_text.",
            "Out-of-line helpers (kernels/portable/cpu/util, pattern) are in kernel_support, "
            "counted once; a kernel's calls into them are listed in calls_kernel_support.",
            "libc, libm, libstdc++, libgcc (soft-float, 64-bit division) and CMSIS-NN code the "
            "objects call is not counted; it is listed among 'undefined'.",
            "'text' is executable sections only; rodata (tables, strings, log messages) is also "
            "flash and is reported separately.",
            "Operator registration code (the codegen'd RegisterCodegenUnboxedKernels*.cpp) is "
            "not measured.",
        ],
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    for b, d in out_builds.items():
        print(f"{b}: runtime {d['runtime']['total']} B text "
              f"(with minimal PAL {d['runtime']['total_with_minimal_pal']}); kernels "
              f"{d['kernel_totals']['sum_of_objects_text']} B summed, "
              f"{d['kernel_totals']['all_kernels_comdat_deduplicated_text']} B deduplicated; "
              f"kernel support {d['kernel_support']['total']} B")
    print(f"{len(failures)} failures; wrote {a.out}")


if __name__ == "__main__":
    main()
