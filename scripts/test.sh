#!/usr/bin/env bash
# One command: set up .venv (idempotent) and run the whole test suite, every tier
# (unit, slow, notebook, browser). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-venv.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec .venv/bin/python -m pytest "$@"
