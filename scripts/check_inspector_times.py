#!/usr/bin/env python3
"""A capture saved by etscope opens in ExecuTorch's own Inspector with correct times.

Records N inferences of a Cortex-M program on the emulated board (`etscope board run`), reads the
saved ETDump with `executorch.devtools.Inspector(etdump_path=...)` and its default time scales
(source ns, target ms), and checks every operator's mean time against `etscope profile --json`
(µs of the target's declared clock): they must agree to 1e-6 relative.

Needs the `executorch` wheel (with PyTorch), QEMU and the Arm toolchain, and a release build:
    python3 -m venv /tmp/etvenv && /tmp/etvenv/bin/pip install executorch==1.5.1
    /tmp/etvenv/bin/python scripts/check_inspector_times.py [PROGRAM.pte] [RUNS]
"""
import json
import os
import subprocess
import sys
import tempfile

from executorch.devtools import Inspector

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
etscope = os.path.join(root, "target", "release", "etscope")
pte = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "assets/ds_cnn_kws/model_int8_cortex_m55.pte")
runs = sys.argv[2] if len(sys.argv) > 2 else "5"

with tempfile.TemporaryDirectory() as tmp:
    cap = os.path.join(tmp, "capture.etdp")
    subprocess.run([etscope, "board", "run", pte, "--runs", runs, "-o", cap], check=True,
                   stdout=subprocess.DEVNULL)
    prof = json.loads(subprocess.run([etscope, "profile", "--pte", pte, "--etdump", cap, "--json"],
                                     check=True, capture_output=True, text=True).stdout)
    ours = {r["instruction_id"]: r["avg_us"] for r in prof["rows"]}
    inspector = Inspector(etdump_path=cap)  # default time scales: ns in the file, ms shown
    checked = 0
    for block in inspector.event_blocks:
        for event in block.events:
            iid = event._instruction_id
            if iid is None or iid not in ours or event.perf_data is None:
                continue
            theirs_ms = sum(event.perf_data.raw) / len(event.perf_data.raw)
            mine_ms = ours[iid] / 1000.0
            if abs(theirs_ms - mine_ms) > 1e-6 * max(abs(mine_ms), 1e-9):
                sys.exit(f"instruction {iid} {event.name}: Inspector {theirs_ms} ms, etscope {mine_ms} ms")
            checked += 1
    if checked == 0:
        sys.exit("the Inspector listed no operator of the capture")
    print(f"ok: {checked} operators, the Inspector's default milliseconds equal etscope's microseconds / 1000")
