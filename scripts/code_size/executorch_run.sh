#!/bin/sh
# How code_sizes.json was made (inputs: ExecuTorch 455652a2 via git archive, flatbuffers
# 595bf000 include/, CMSIS-NN dbf45dbf Include/, flatc 24.3.25 from the executorch 1.5.1 wheel).
# The sources were laid out with (E, F, C: bare git mirrors of pytorch/executorch,
# google/flatbuffers, ARM-software/CMSIS-NN):
#   git -C $E archive 455652a2 runtime kernels schema backends/cortex_m extension configurations | tar -x -C src/executorch
#   git -C $F archive 595bf0007ab1929570c7671f091313c8fc20644e include | tar -x -C src/flatbuffers   # ET's third-party/flatbuffers pin (24.3.25)
#   git -C $C archive dbf45dbfcc515421dd6099037d3e2637b90748c8 Include | tar -x -C src/cmsis-nn      # backends/cortex_m CMSIS_NN_VERSION
cd "${WORK:-/tmp/codesize}" && exec python3 "$(dirname "$0")/executorch.py" --et-src src/executorch \
  --flatbuffers-include src/flatbuffers/include --cmsis-nn-include src/cmsis-nn/Include \
  --flatc /tmp/etvenv/lib/python3.11/site-packages/executorch/data/bin/flatc \
  --work /tmp/codesize/work --out /tmp/codesize/code_sizes.json \
  --et-commit 455652a2bc00c5bbd2ce825a7b16287c18dc96a2 --jobs 2 \
  --source-note "pytorch/executorch main at 455652a2 (2026-08-21, version.txt 1.5.0): the mirror has no v1.5.1 tag or release/1.5 branch, and the 1.5.1 wheel's git_version (3b606839) is not in it; 455652a2 is the commit this project already treats as closest to 1.5.1 (scripts/method_allocator). 15 of the 120 headers the 1.5.1 wheel ships differ from 455652a2 (e.g. Program::kMaxSupportedSchemaVersion, get_thread_count)" "$@"
