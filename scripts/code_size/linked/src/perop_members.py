#!/usr/bin/env python3
"""perop_members.py image.map image.elf -> JSON {size, groups, members, sections} (pre-merge map
sizes per object/archive member, grouped as breakdown.py groups them; 'sections' lists every flash
input section as [member, section, size, is_comdat] so shared (COMDAT) code can be counted once)."""
import json, os, re, subprocess, sys, fcntl
from collections import defaultdict
src = open("/tmp/linkimg/src/breakdown.py").read().rsplit("\nmain()", 1)[0]
ns = {"__name__": "bd"}; exec(src, ns)
mp, elf = sys.argv[1:3]
CACHE = "/tmp/linkimg/perop/comdat_cache"

def comdat_sections(path):
    """{member_or_file: set(section names in COMDAT groups)} via readelf -g (cached for archives)."""
    cf = None
    if path.endswith(".a"):
        os.makedirs(CACHE, exist_ok=True)
        cf = f"{CACHE}/{path.strip('/').replace('/', '_')}.json"
        if os.path.exists(cf):
            return {k: set(v) for k, v in json.load(open(cf)).items()}
    out = subprocess.run(["arm-none-eabi-readelf", "-g", "-W", path], capture_output=True, text=True).stdout
    res, cur = defaultdict(set), os.path.basename(path)
    for l in out.splitlines():
        m = re.match(r"^File: .*\(([^)]+)\)$", l)
        if m: cur = m.group(1); continue
        m = re.match(r"^\s+\[\s*\d+\]\s+(\S+)$", l)
        if m and not m.group(1).startswith(".rel"): res[cur].add(m.group(1))
    if cf:
        tmp = cf + f".{os.getpid()}"
        json.dump({k: sorted(v) for k, v in res.items()}, open(tmp, "w")); os.replace(tmp, cf)
    return res

entries = [e for e in ns["parse_map"](mp) if e[0] in ns["FLASH_OUT"] and e[2] > 0]
groups, members = defaultdict(int), defaultdict(int)
cd_cache, sections = {}, []
for out, ins, size, f in entries:
    g = ns["group_of"](f); mem = ns["member"](f)
    groups[g] += size; members[f"{g}:{mem}"] += size
    is_cd = False
    if f != "*fill*" and (f.endswith(".o") or f.endswith(".o)")) and g not in ("libc", "libgcc", "startup"):
        path = f.split("(")[0]
        if path not in cd_cache: cd_cache[path] = comdat_sections(path)
        key = mem.split("(")[1][:-1] if "(" in mem else os.path.basename(path)
        is_cd = ins in cd_cache[path].get(key, ())
    sections.append([f"{g}:{mem}", ins, size, int(is_cd)])
b = subprocess.run(["arm-none-eabi-size", elf], capture_output=True, text=True).stdout.split("\n")[1].split()
print(json.dumps({"size": {"text": int(b[0]), "data": int(b[1]), "bss": int(b[2]), "flash": int(b[0]) + int(b[1])},
                  "groups": dict(groups), "members": dict(members), "sections": sections}, indent=0))
