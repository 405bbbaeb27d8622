#!/usr/bin/env bash
# One command: set up .venv (idempotent), build the sample index if missing, audit the
# embedded sample system and write the findings (JSON) and the PDF report to audit-out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-venv.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
out=${RAGDIAG_OUT:-audit-out}
.venv/bin/ragdiag audit --json "$out/findings.json" "$@"
# the report re-runs the audit (answered from the trace cache): its appendix needs the context
.venv/bin/ragdiag report --out "$out"
