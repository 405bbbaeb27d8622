"""The optimizer's result and its two files: `DIR/profiles.toml` (the proposed policy, in the policy
file format, commented with what changed and why) and `DIR/optimize.json`.

optimize.json: ``{"baseline": {"train": {...}, "test": {...}}, "proposed": {"train": ..., "test": ...},
"compare": {...} | null, "changes": [...], "p_value": ..., "requests": ...,
"decision": {"outcome": "proposed" | "existing_profile" | "keep", "profile": ..., "message": ...,
"validation": {...}, "test": {...}}, "alternatives": {"tuned_hybrid": {...}}}``; metric keys as in
the goldset finding (``ndcg@10``, ``recall@10``, ``recall@50``, ``mrr``) plus ``n`` questions.
profiles.toml is written only when the decision is "proposed" (never a policy worse than what
is there).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.errors import InputDataError
from ragdiag.policy import Policy, dump_policy

PROFILES_FILE = "profiles.toml"
RESULT_FILE = "optimize.json"
KEYS = ("baseline", "proposed", "compare", "changes", "p_value", "requests")
#: added by the never-propose-worse decision; files written before it lack them
OPTIONAL_KEYS = ("decision", "alternatives")


def _fmt(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


@dataclass
class OptimizeResult:
    """The current policy, the proposed one and the evidence (`data`, the optimize.json content)."""

    baseline: Policy
    proposed: Policy
    data: dict[str, Any]

    @property
    def changes(self) -> list[dict[str, Any]]:
        return list(self.data["changes"])

    @property
    def outcome(self) -> str:
        """proposed, existing_profile or keep (a result without a decision: proposed)."""
        return str((self.data.get("decision") or {}).get("outcome", "proposed"))

    @property
    def message(self) -> str:
        return str((self.data.get("decision") or {}).get("message", ""))

    def _repr_html_(self) -> str:
        """In a notebook: the report's section (held-out figures and the path of changes)."""
        from ragdiag.report.optimization import render_optimization

        return render_optimization(self.data)

    def to_json(self) -> str:
        return json.dumps(self.data, indent=2, ensure_ascii=False, allow_nan=False)

    def profiles_toml(self) -> str:
        """The proposed policy as a policy file, each changed profile commented with its steps."""
        d = self.data
        bt, pt = d["baseline"]["test"], d["proposed"]["test"]
        head = [f"# Proposed by `ragdiag optimize` from policy '{self.baseline.name}'.",
                f"# {d['proposed']['method']}.",
                f"# Held-out nDCG@10 ({bt['n']} test questions, {d['proposed']['split']['test_is']}): "
                f"{_fmt(bt['ndcg@10'])} -> {_fmt(pt['ndcg@10'])} (Holm-adjusted p = {'-' if d['p_value'] is None else format(d['p_value'], '.2g')}).",
                "# The security clause (security_field, security_trimming, filter overrides) is unchanged.",
                f"# Decision: {self.message}" if self.message else "#",
                ""]
        by_profile: dict[str, list[dict[str, Any]]] = {}
        for c in d["changes"]:
            by_profile.setdefault(c["profile"], []).append(c)
        out = []
        for line in dump_policy(self.proposed).splitlines():
            m = re.match(r"^\[profiles\.(\"?)([^\]\"]+)\1\]$", line)
            if m:
                steps = by_profile.get(m.group(2), [])
                if steps:
                    out.append("")
                    out.append(f"# changed by the optimizer ({len(steps)} step(s), each raised train nDCG@10):")
                    for c in steps:
                        before, after = c["train_ndcg@10"]
                        what = (f" (the route now searches as the existing profile '{c['to']}' does)"
                                if c["knob"] == "profile" else "")
                        out.append(f"#   {c['knob']}: {c['from']} -> {c['to']}{what} "
                                   f"(train nDCG@10 {_fmt(before)} -> {_fmt(after)})")
                else:
                    out.append("")
                    out.append("# unchanged")
            out.append(line)
        return "\n".join(head + out) + "\n"

    def write(self, out_dir: str | Path) -> tuple[Path | None, Path]:
        """Write optimize.json into `out_dir` (created) and, when the decision is to propose,
        profiles.toml (else none: a stale one from an earlier run is removed, so no file in the
        folder proposes what this run rejected). Returns (profiles.toml or None, optimize.json)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        prof, res = out / PROFILES_FILE, out / RESULT_FILE
        res.write_text(self.to_json() + "\n", encoding="utf-8")
        if self.outcome != "proposed":
            prof.unlink(missing_ok=True)
            return None, res
        prof.write_text(self.profiles_toml(), encoding="utf-8")
        return prof, res


def load_result(path: str | Path) -> dict[str, Any]:
    """Read an optimize.json (a file, or the folder holding it) and check its top-level keys."""
    p = Path(path)
    if p.is_dir():
        p = p / RESULT_FILE
    from ragdiag.inputs.limits import load_json

    data = load_json(p, what="optimizer result (the optimize.json `ragdiag optimize CONFIG --out DIR` writes)")
    if not isinstance(data, dict) or not set(KEYS) <= set(data) <= set(KEYS) | set(OPTIONAL_KEYS):
        found = ", ".join(sorted(data)) if isinstance(data, dict) else type(data).__name__
        raise InputDataError(f"{p} is not an optimizer result: expected the keys {', '.join(KEYS)}, "
                             f"found {found}", path=str(p))
    return data


__all__ = ["KEYS", "OPTIONAL_KEYS", "PROFILES_FILE", "RESULT_FILE", "OptimizeResult", "load_result"]
