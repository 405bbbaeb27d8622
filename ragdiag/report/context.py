"""The report context: what the report notebook holds (findings, specs, policy, names).

`report_context` runs inside the notebook's kernel: it runs the audit the
config names, or loads saved findings; `show` displays a rendered section.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.report.notebook import _split_checks
from ragdiag.report.texts import _check_lang


@dataclass
class ReportContext:
    """Findings plus what the report needs around them; built by `report_context`."""

    result: Any  # AuditResult
    specs: Mapping[str, Any]  # {check_id: CheckSpec}
    lang: str = "en"
    client: str = ""
    system: str = ""
    name: str = ""
    config: Any = None  # AuditConfig | None
    audit: Any = None  # AuditContext | None (None when rendered from saved findings)
    policy: Any = None  # Policy | None
    source: str = ""  # "" = computed in this run, else the findings JSON path


def _default_config() -> Path:
    from ragdiag.sample.system import sample_dir

    return sample_dir() / "audit.toml"


def report_context(config: str | Path | None = "", *, client: str = "", system: str = "",
                   lang: str = "en", checks: str | Sequence[str] | None = "",
                   findings_json: str | Path | None = "", progress: bool = False,
                   log: Callable[[str], None] | None = None) -> ReportContext:
    """Run the audit the config names (empty: the embedded sample's) or load saved findings.

    `client` and `system` override the config's names; `checks` is a comma list of
    check ids (empty: all). With `findings_json` the audit is not re-run: the findings
    come from that `AuditResult` JSON and the config (if given) only supplies names
    and the policy for the appendix.
    """
    from ragdiag.inputs.checklist import load_checklist
    from ragdiag.inputs.config import load_config
    from ragdiag.model.findings import AuditResult

    _check_lang(lang)
    wanted = _split_checks(checks)
    cfg = None
    ctx = None
    policy = None
    source = ""
    if findings_json:
        source = str(findings_json)
        result = AuditResult.from_json(findings_json)
        if config:
            cfg = load_config(config)
        if wanted:
            result = AuditResult(findings=tuple(f for f in result.findings if f.check_id in wanted),
                                 meta=result.meta, loss_funnel=result.loss_funnel, ablation=result.ablation)
        meta_cfg = dict(result.meta.get("config") or {})
        profiles_path = (cfg.profiles if cfg is not None else
                         (Path(meta_cfg["profiles"]) if meta_cfg.get("profiles") else None))
        if profiles_path is not None and Path(profiles_path).is_file():
            from ragdiag.policy import load_policy

            policy = load_policy(profiles_path)
        checklist = cfg.checklist if cfg is not None and cfg.checklist else None
    else:
        from ragdiag.audit import build_context, run_checks

        cfg = load_config(config or _default_config())
        ctx = build_context(cfg, log=log, progress=progress)
        ctx.lang = lang  # checks that word their findings per language follow the report
        result = run_checks(ctx, checks=wanted or None)
        policy = ctx.policy
        checklist = cfg.checklist
    specs = load_checklist(checklist) if checklist else load_checklist()
    # every computed text in the report's language, whatever language the findings were saved in
    from ragdiag.checks.base import localize

    result = localize(result, lang, specs)
    meta_cfg = dict(result.meta.get("config") or {})
    return ReportContext(
        result=result, specs=specs, lang=lang,
        client=client or (cfg.client if cfg is not None else meta_cfg.get("client") or ""),
        system=system or (cfg.system if cfg is not None else meta_cfg.get("system") or ""),
        name=(cfg.name if cfg is not None else meta_cfg.get("name") or ""),
        config=cfg, audit=ctx, policy=policy, source=source)


def show(markup: str) -> None:
    """Display an HTML string in the notebook."""
    from IPython.display import HTML, display

    display(HTML(markup))
