#!/usr/bin/env python3
"""Same-run baselines: ExecuTorch's own portable runtime and its Inspector, timed in this run on
the same files as etscope (release binary), one after the other on one machine.

Bench-only environment (not CI; ~5 GB with PyTorch):
    python3 -m venv .bench-venv && .bench-venv/bin/pip install executorch==1.5.1
    .bench-venv/bin/python scripts/bench_baselines.py          # needs ../shared/reference

Rows:
- host inference, median of one inference in process: ExecuTorch portable (`_load_for_executorch`,
  `forward`) vs etscope's `Runtime::run` (`cargo bench -p etscope-core --bench runtime`, run by
  this script right after);
- ETDump → per-op statistics: the Inspector (construction + `to_dataframe`) vs `etscope profile
  --json` (process start, parse, statistics, JSON).
"""
import os
import pathlib
import statistics
import subprocess
import sys
import time

root = pathlib.Path(__file__).resolve().parent.parent
ref = pathlib.Path(os.environ.get("ETSCOPE_REFERENCE", root.parent / "shared" / "reference"))
etscope = os.environ.get("ETSCOPE_BIN", str(root / "target" / "release" / "etscope"))


def median_time(fn, n, warmup=1):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def run(*args):
    subprocess.run([etscope, *map(str, args)], check=True, stdout=subprocess.DEVNULL)


def ms(s):
    return f"{s * 1e3:9.3f} ms"


def bench_times(text):
    """The runtime bench's table rows `| <model> <variant> | <t> µs|ms | … |` → {model/variant: s}."""
    times = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or len(cells[0].split()) != 2:
            continue
        value = cells[1].split()
        if len(value) != 2 or value[1] not in ("µs", "ms"):
            continue
        try:
            t = float(value[0])
        except ValueError:
            continue
        times["/".join(cells[0].split())] = t / (1e6 if value[1] == "µs" else 1e3)
    return times


def self_check():
    """The parser reads the bench's format (a baseline that cannot be measured is not printed)."""
    sample = "| program | median run |\n|---|---|\n| ds_cnn_kws model_fp32 | 512 µs | 0.10 MB |\n| stress_large model_fp32 | 12.50 ms | 1 MB |"
    got = bench_times(sample)
    assert got == {"ds_cnn_kws/model_fp32": 512e-6, "stress_large/model_fp32": 12.5e-3}, got


def main():
    self_check()
    if "--self-check" in sys.argv:
        print("ok: the bench's rows parse")
        return 0
    import numpy as np
    import torch
    from executorch.devtools import Inspector
    from executorch.extension.pybindings.portable_lib import _load_for_executorch

    bench = subprocess.run(
        ["cargo", "bench", "-q", "-p", "etscope-core", "--bench", "runtime"],
        cwd=root, check=True, capture_output=True, text=True,
    ).stdout
    ours = bench_times(bench)
    print("same run, same machine; medians")
    print(f"{'model':<24} {'work':<34} {'ExecuTorch':>12} {'etscope':>12}")
    for model in ["tiny_conv_relu_linear", "ds_cnn_kws", "mobilenet_v1_025_vww"]:
        d = ref / model
        pte, x = d / "model_fp32.pte", d / "input.npy"
        m = _load_for_executorch(str(pte))
        inp = torch.from_numpy(np.load(x))
        et = median_time(lambda: m.forward((inp,)), 50)
        es = ours.get(f"{model}/model_fp32")
        if es is None:
            # never a silent nan: the bench's output changed, or it skipped the model
            sys.exit(f"the runtime bench printed no row for {model}/model_fp32:\n{bench}")
        print(f"{model:<24} {'fp32 inference, in process':<34} {ms(et):>12} {ms(es):>12}")
    for model in ["ds_cnn_kws", "stress_medium"]:
        d = ref / model
        etdp = d / "etdump_profile_5runs.etdp"
        if not etdp.exists():
            continue
        pte = d / "model_fp32.pte"
        et = median_time(lambda: Inspector(etdump_path=str(etdp)).to_dataframe(), 3)
        es = median_time(lambda: run("profile", "--pte", pte, "--etdump", etdp, "--json"), 5)
        print(f"{model:<24} {'ETDump -> per-op statistics':<34} {ms(et):>12} {ms(es):>12}")


if __name__ == "__main__":
    sys.exit(main())
