#!/usr/bin/env python3
"""ExecuTorch's own runtime on programs etscope wrote (`etscope lower ETRECORD -o OUT.pte`).

For each (ETRecord, program ExecuTorch made from it) pair: etscope lowers the ETRecord and
writes a program; ExecuTorch 1.5.1's runtime (the wheel's pybindings) loads and runs both on the
same input. An fp32 ETRecord (nothing to lower) gives a portable program that must run with
outputs equal to ExecuTorch's; a Cortex-M one must fail as ExecuTorch's own `.pte` fails there
(the wheel has no `cortex_m` kernels).

    <venv>/bin/python scripts/check_written_programs.py [--etscope target/release/etscope]
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from executorch.runtime import Runtime

PAIRS = [
    ("assets/tiny_conv_relu_linear/model_fp32.etrecord", "assets/tiny_conv_relu_linear/model_fp32.pte", "assets/tiny_conv_relu_linear/input.npy"),
    ("assets/ds_cnn_kws/model_fp32.etrecord", "assets/ds_cnn_kws/model_fp32.pte", "assets/ds_cnn_kws/input.npy"),
    ("assets/ds_cnn_kws/model_int8_cortex_m55_default.etrecord", "assets/ds_cnn_kws/model_int8_cortex_m55_default.pte", "assets/ds_cnn_kws/input.npy"),
]


def run(pte: Path, x: np.ndarray):
    try:
        method = Runtime.get().load_program(pte.read_bytes()).load_method("forward")
        return ("ran", [o.numpy() for o in method.execute([torch.from_numpy(x)])])
    except Exception as e:  # noqa: BLE001
        return ("failed", f"{type(e).__name__}: {e}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--etscope", type=Path, default=Path("target/release/etscope"))
    args = ap.parse_args()
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for etr, theirs, inp in PAIRS:
            ours = Path(d) / (Path(etr).stem + ".pte")
            subprocess.run([str(args.etscope), "lower", etr, "-o", str(ours)], check=True, stdout=subprocess.DEVNULL)
            x = np.load(inp)
            a, b = run(ours, x), run(Path(theirs), x)
            if a[0] == "ran" and b[0] == "ran":
                same = all(np.array_equal(p, q) for p, q in zip(a[1], b[1]))
                print(f"{etr}: both ran, outputs {'equal' if same else 'DIFFER'}")
                bad += not same
            else:
                same = a[0] == b[0] and a[1] == b[1]
                print(f"{etr}: etscope's {a[0]} ({a[1] if a[0] == 'failed' else ''}), ExecuTorch's {b[0]} ({b[1] if b[0] == 'failed' else ''}) -> {'same' if same else 'DIFFERENT'}")
                bad += not same
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
