#!/usr/bin/env bash
# Create .venv and install ragdiag with every extra and the dev tools, idempotently, at the
# exact versions of constraints.txt (pyproject.toml declares ranges).
# torch==2.13.0 goes in first: that pin is the CPU build this machine kind keeps
# on disk; an unpinned torch (pulled in by sentence-transformers) would be a
# multi-GB CUDA download. constraints.txt pins it too, so nothing replaces it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
stamp=.venv/.ragdiag-installed
want=$(cat pyproject.toml constraints.txt scripts/setup-venv.sh | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -c constraints.txt -e ".[all,dev]"
echo "$want" > "$stamp"
