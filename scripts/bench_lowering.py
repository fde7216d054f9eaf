#!/usr/bin/env python3
"""Lowering speed: etscope against ExecuTorch's own Python flow, same models, same run.

For each reference model (default flow, Cortex-M55) this times
  - ExecuTorch 1.5.1: CortexMPassManager(edge).transform() + to_executorch() + save, on the
    edge program of the model (export, quantization and to_edge are done first, untimed);
  - etscope: `etscope lower <model_int8_cortex_m55_default.etrecord> -o out.pte` as a process
    (reading the ETRecord, all passes, writing the program), best of 5.

    <venv>/bin/python scripts/bench_lowering.py [--reference ../shared/reference] [--etscope target/release/etscope]

<venv>: executorch==1.5.1, torch 2.13, torchao 0.18 (the reference set's tools/requirements-lock.txt).
"""

import argparse
import copy
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")
sys.dont_write_bytecode = True


def channels_last(t):
    import torch

    if isinstance(t, tuple):
        return tuple(channels_last(x) for x in t)
    return t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 else t


def executorch_seconds(MA, name: str, repeats: int) -> float:
    import torch
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.backends.cortex_m.target_config import CortexM, CortexMTargetConfig
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    model, x = MA.make_model(name), MA.make_inputs(name)
    gm = torch.export.export(model, x, strict=True).module(check_guards=False)
    gm = gm.to(memory_format=torch.channels_last)
    gm = torch.export.export(gm, channels_last(x), strict=True).module(check_guards=False)
    prepared = prepare_pt2e(gm, CortexMQuantizer(use_explicit_layout=False))
    prepared(*channels_last(x))
    q = torch.export.export(convert_pt2e(prepared), channels_last(x), strict=True)
    edge = to_edge_transform_and_lower(q, compile_config=cortex_m_edge_compile_config())
    best = float("inf")
    for _ in range(repeats):
        e = copy.deepcopy(edge)
        t0 = time.perf_counter()
        e._edge_programs["forward"] = CortexMPassManager(
            e.exported_program(), target_config=CortexMTargetConfig(cpu=CortexM.M55)
        ).transform()
        et = e.to_executorch(config=ExecutorchBackendConfig(extract_delegate_segments=False))
        with tempfile.TemporaryDirectory() as d:
            et.save(str(Path(d) / "out.pte"))
        best = min(best, time.perf_counter() - t0)
    return best


def etscope_seconds(binary: Path, etrecord: Path, repeats: int) -> float:
    best = float("inf")
    with tempfile.TemporaryDirectory() as d:
        for _ in range(repeats):
            t0 = time.perf_counter()
            subprocess.run(
                [str(binary), "lower", str(etrecord), "-o", str(Path(d) / "out.pte")],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, default=Path("../shared/reference"))
    ap.add_argument("--etscope", type=Path, default=Path("target/release/etscope"))
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, str((args.reference / "tools").resolve()))
    import make_artifacts as MA  # noqa: E402

    print("| model | ExecuTorch passes + to_executorch + save | etscope lower -o (process) | speed-up |")
    print("|---|---:|---:|---:|")
    for name in ["tiny_conv_relu_linear", "ds_cnn_kws", "mobilenet_v1_025_vww"]:
        etr = args.reference / name / "model_int8_cortex_m55_default.etrecord"
        if not etr.exists():
            continue
        et = executorch_seconds(MA, name, args.repeats)
        es = etscope_seconds(args.etscope, etr, args.repeats)
        print(f"| {name} | {et * 1000:.0f} ms | {es * 1000:.0f} ms | {et / es:.0f}× |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
