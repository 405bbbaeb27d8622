#!/usr/bin/env bash
# One command: set up .venv (idempotent) and run ragdiag on the embedded sample system.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-venv.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec .venv/bin/ragdiag sample ask "$@"
