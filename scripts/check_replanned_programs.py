#!/usr/bin/env python3
"""ExecuTorch's own runtime on programs etscope re-planned (`etscope plan F.pte --algorithm A -o OUT.pte`).

For each portable program (the wheel's runtime has no `cortex_m` kernels) and each algorithm,
etscope writes the program with its new offsets and arena sizes; ExecuTorch 1.5.1's runtime (the
wheel's pybindings) loads and runs the original and the re-planned program on the same input,
and their outputs must be equal, bit for bit.

    <venv>/bin/python scripts/check_replanned_programs.py [--etscope target/release/etscope]
"""

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import torch
from executorch.runtime import Runtime

try:  # quantized_decomposed kernels for the Q/DQ program
    import executorch.kernels.quantized  # noqa: F401
except ImportError:
    pass

PROGRAMS = [
    ("assets/tiny_conv_relu_linear/model_fp32.pte", "assets/tiny_conv_relu_linear/input.npy"),
    ("assets/ds_cnn_kws/model_fp32.pte", "assets/ds_cnn_kws/input.npy"),
    ("tests/fixtures/tiny_conv_relu_linear/model_int8_qdq_portable.pte", "tests/fixtures/tiny_conv_relu_linear/input.npy"),
    ("tests/fixtures/models/resnet/model_fp32.pte", "tests/fixtures/models/resnet/input.npy"),
    ("tests/fixtures/models/unet/model_fp32.pte", "tests/fixtures/models/unet/input.npy"),
    ("tests/fixtures/models/transformer/model_fp32.pte", "tests/fixtures/models/transformer/input.npy"),
    ("tests/fixtures/models/audio_gru/model_fp32.pte", "tests/fixtures/models/audio_gru/input.npy"),
    ("tests/fixtures/models/inception/model_fp32.pte", "tests/fixtures/models/inception/input.npy"),
    # state carried from call to call: both calls must agree
    ("tests/fixtures/programs/mutable_state/model.pte", "tests/fixtures/programs/mutable_state/input_0.npy"),
    ("tests/fixtures/programs/kv_cache/model.pte", "tests/fixtures/programs/kv_cache/input_0.npy+tests/fixtures/programs/kv_cache/input_1.npy"),
    # where re-planning saves most (409,600 -> 281,600 B); only beside ../shared/reference
    ("../shared/reference/mobilenet_v1_025_vww/model_int8_qdq_portable.pte", "../shared/reference/mobilenet_v1_025_vww/input.npy"),
]


def run(pte: Path, xs: list):
    """Two calls of one loaded method (the second sees any state the first left)."""
    method = Runtime.get().load_program(pte.read_bytes()).load_method("forward")
    first = [o.numpy() for o in method.execute([torch.from_numpy(x) for x in xs])]
    return first + [o.numpy() for o in method.execute([torch.from_numpy(x) for x in xs])]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--etscope", type=Path, default=Path("target/release/etscope"))
    args = ap.parse_args()
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for pte, inp in PROGRAMS:
            if not Path(pte).exists():
                continue
            x = [np.load(p) for p in inp.split("+")]
            want = run(Path(pte), x)
            for algorithm in ["executorch", "best_fit", "in_place", "reorder", "best"]:
                out = Path(d) / f"{Path(pte).stem}_{algorithm}.pte"
                subprocess.run([str(args.etscope), "plan", pte, "--algorithm", algorithm, "-o", str(out)], check=True, stdout=subprocess.DEVNULL)
                declared = json.loads(subprocess.run([str(args.etscope), "memory", str(out), "--json"], check=True, capture_output=True).stdout)
                sizes = [a["size"] for a in declared["arenas"] if a["tensors"]]
                got = run(out, x)
                same = len(got) == len(want) and all(np.array_equal(p, q) for p, q in zip(got, want))
                print(f"{pte} --algorithm {algorithm}: arenas {sizes}, ExecuTorch's runtime ran it, outputs {'equal' if same else 'DIFFER'}")
                bad += not same
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
