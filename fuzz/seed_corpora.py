#!/usr/bin/env python3
"""Fills fuzz/corpus/<target>/ with seeds cut from the real artifacts in tests/fixtures and
assets (run from the repository root: python3 fuzz/seed_corpora.py). The files are committed, so
CI replays them; campaigns grow the corpus from them."""
import pathlib
import struct
import zipfile

root = pathlib.Path(__file__).resolve().parent.parent
fx = root / "tests" / "fixtures"
tiny = fx / "tiny_conv_relu_linear"
out = root / "fuzz" / "corpus"


def put(target, name, data):
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


programs = [
    tiny / "model_fp32.pte",
    tiny / "model_int8_cortex_m55.pte",
    tiny / "model_int8_cortex_m4_default.pte",
    tiny / "model_fp32_xnnpack.pte",
    root / "assets" / "ds_cnn_kws" / "model_int8_cortex_m55.pte",
]
for p in sorted((fx / "ops").glob("*/model.pte"))[::12]:
    programs.append(p)
for p in sorted((fx / "programs").glob("*/*.pte")):
    if p.stat().st_size < 200_000:
        programs.append(p)
for p in programs:
    name = p.parent.name + "__" + p.name
    put("pte", name, p.read_bytes())
    put("run", name, p.read_bytes())

for dump, buf in [
    ("etdump.etdp", "debug_buffer.bin"),
    ("etdump_int8_qdq.etdp", "debug_buffer_int8_qdq.bin"),
    ("etdump_profile_5runs.etdp", None),
    ("etdump_xnnpack.etdp", "debug_buffer_xnnpack.bin"),
]:
    d = (tiny / dump).read_bytes()
    b = (tiny / buf).read_bytes() if buf else b""
    put("etdump", dump, struct.pack("<I", len(d)) + d + b)

for p in sorted(fx.rglob("*.bpte")):
    put("bpte", p.parent.name + "__" + p.name, p.read_bytes())

for p in [tiny / "model_fp32.etrecord", *sorted(fx.glob("etrecord_v*/*.etrecord"))]:
    put("etrecord", p.parent.name + "__" + p.name, p.read_bytes())
    with zipfile.ZipFile(p) as z:
        for info in z.infolist():
            if info.filename.endswith(("state_dict", "constants", "example_inputs")):
                data = z.read(info.filename)
                if data[:2] == b"PK":
                    put("torch_save", p.parent.name + "__" + info.filename.replace("/", "_"), data)

for p in [tiny / "input.npy", root / "assets" / "ds_cnn_kws" / "input.npy"]:
    put("npy", p.parent.name + "__" + p.name, p.read_bytes())
for p in sorted((fx / "ops").glob("*/*.npy"))[::40]:
    put("npy", p.parent.name + "__" + p.name, p.read_bytes())

put("wire", "tiny_m55_3runs.etsw", (fx / "board" / "tiny_m55_3runs.etsw").read_bytes())
