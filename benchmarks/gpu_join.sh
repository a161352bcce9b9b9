#!/usr/bin/env bash
# Join the pieces benchmarks/gpu_train_everyday.py wrote (NAME.tar.0, NAME.tar.1, ...) back into checkpoint
# folders: benchmarks/gpu_join.sh FOLDER_WITH_PIECES DEST  ->  DEST/everyday-en-fr/, DEST/everyday-de-en/, ...
# Then, here: python -m model eval --model DEST/everyday-en-fr --split test --json
set -euo pipefail
src=${1:?usage: gpu_join.sh FOLDER_WITH_PIECES DEST}
dest=${2:?usage: gpu_join.sh FOLDER_WITH_PIECES DEST}
mkdir -p "$dest"
shopt -s nullglob
found=0
for first in "$src"/*.tar.0; do
  name=${first%.0}
  # the pieces in numeric order (.0 .1 ... .10), concatenated into the tar they were cut from
  pieces=$(ls "$name".* | awk -F. '{print $NF, $0}' | sort -n | cut -d' ' -f2-)
  # shellcheck disable=SC2086
  cat $pieces | tar -C "$dest" -xf -
  echo "joined $(basename "$name") from $(echo $pieces | wc -w) piece(s) into $dest" >&2
  found=1
done
[ "$found" = 1 ] || { echo "error: no NAME.tar.0 piece in $src" >&2; exit 1; }
