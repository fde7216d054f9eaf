#!/usr/bin/env bash
# Fetches the runtime headers of the executorch 1.5.1 wheel (downloaded from PyPI without
# dependencies, no PyTorch) into the cache the board tests read: $ETSCOPE_CACHE_DIR (default
# ~/.cache/etscope)/executorch-1.5.1-headers/executorch/include. The adapter test
# (app/tests/board/) compiles board/executorch against them; it never downloads anything
# itself. .ci/run calls this before the test command; a second call with the cache in place does
# nothing.
set -euo pipefail
cache="${ETSCOPE_CACHE_DIR:-$HOME/.cache/etscope}/executorch-1.5.1-headers"
if [ -f "$cache/executorch/include/executorch/runtime/core/event_tracer.h" ]; then
  echo "executorch headers: $cache (cached)"
  exit 0
fi
mkdir -p "$cache/wheel"
python3 -m pip download --quiet --no-deps executorch==1.5.1 -d "$cache/wheel"
wheel=$(ls "$cache"/wheel/executorch-1.5.1-*.whl | head -1)
python3 - "$wheel" "$cache" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("executorch/include/")])
PY
rm -rf "$cache/wheel"
echo "executorch headers: $cache"
