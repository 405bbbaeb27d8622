"""A small audit whose output must not depend on Python's string-hash salt (`tests/test_hash_salt.py`).

``python -m tests.salt_world OUT_DIR [--plant-leak]`` audits the constructed topic world (`tests.worlds`: a
filter that removes relevant documents, a boost that buries them, a key-table reranker) with
every check, the sample's client code scanned as well, and writes ``findings.json`` (the
`AuditResult`) and ``scan.json`` (the code scan). Run under two PYTHONHASHSEED values, the two
outputs must be the same bytes outside the fields the findings schema marks nondeterministic:
a set or a dict built from one that leaked into a ranking, a table or a list would show.
``--plant-leak`` plants one (a finding's recommendations listed in a set's order) to prove it does.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_CLIENT = ROOT / "sample_data" / "client_app"


def main(argv: list[str]) -> int:
    from ragdiag.audit import run_checks
    from ragdiag.codescan import scan_path
    from tests.worlds import context, policy_text, topic_world

    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        target = topic_world(Path(tmp))
        ctx = context(target, policy_text(filter='"zq_tier eq 1"', scoring_profile='"pageboost"', vq_k="5"),
                      budgets={"max_context_tokens": 2000})
        ctx.client_code = SAMPLE_CLIENT
        plant = "--plant-leak" in argv
        # the planted run needs a finding, not the whole checklist: one quick check
        result = run_checks(ctx, checks=["route_counts"] if plant else None, stop_on_signals=False)
        if plant:
            import dataclasses

            words = {f"recommendation {w}" for w in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta")}
            first = dataclasses.replace(result.findings[0], recommendations=tuple(words))  # the salt's order
            result = dataclasses.replace(result, findings=(first, *result.findings[1:]))
        (out / "findings.json").write_text(result.to_json(), encoding="utf-8")
    if plant:
        return 0
    scan = scan_path(SAMPLE_CLIENT)
    (out / "scan.json").write_text(json.dumps(scan.to_dict(), indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
