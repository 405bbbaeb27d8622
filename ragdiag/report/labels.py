"""Display names of metrics in every report language (the report-side label table).

A finding's metric keys are identifiers (``median_top1[definition]``, ``ndcg@10``); the report
shows them by name: ``metric_label("median_top1[definition]", "de")`` is "Median
Top-1-Score (definition)". A key ``base[arg]`` uses the label of ``base`` with the argument in
brackets; ``compare_<m>_delta`` and ``<m>_<run>`` are composed from the metric's label. Keys
with no label are shown as they are (a plugin's metrics).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: metric key -> (English, German)
METRIC_LABELS: dict[str, tuple[str, str]] = {
    # retrieval metrics
    "ndcg@10": ("nDCG@10", "nDCG@10"),
    "recall@10": ("recall@10", "Recall@10"),
    "recall@50": ("recall@50", "Recall@50"),
    "hit_rate@10": ("hit rate@10", "Trefferquote@10"),
    "mrr": ("MRR", "MRR"),
    "judged@10": ("judged share of the top 10", "beurteilter Anteil der Top 10"),
    # reranker_scores
    "queries": ("questions measured", "gemessene Fragen"),
    "semantic_profiles_scored": ("semantic profiles scored", "bewertete semantische Profile"),
    "median_top1": ("median top-1 reranker score", "Median des Top-1-Reranker-Scores"),
    "share_top1_below_somewhat_relevant": ("share of top-1 scores below 'somewhat relevant'",
                                           "Anteil Top-1-Scores unter «etwas relevant»"),
    "share_top1_below": ("share of top-1 scores below {x}", "Anteil Top-1-Scores unter {x}"),
    "somewhat_relevant": ("'somewhat relevant' score", "Score «etwas relevant»"),
    "partial_responses": ("responses without reranker scores", "Antworten ohne Reranker-Scores"),
    "reranker": ("reranker", "Reranker"),
    "roc_auc_relevant_vs_other": ("ROC AUC, relevant against other hits", "ROC AUC, relevante gegen übrige Treffer"),
    "suggested_min_score": ("suggested minimum score", "vorgeschlagener Mindest-Score"),
    "ndcg@10_reranked": ("nDCG@10 reranked", "nDCG@10 mit Reranking"),
    "ndcg@10_fused_order": ("nDCG@10 in fused order", "nDCG@10 in fusionierter Reihenfolge"),
    # pool_size
    "profiles": ("profiles", "Profile"),
    "semantic_profiles": ("semantic profiles", "semantische Profile"),
    "index_documents": ("documents in the index", "Dokumente im Index"),
    "configured_fail_profiles": ("profiles with a configured pool below the window",
                                 "Profile mit konfiguriertem Pool unter dem Fenster"),
    "measured_pool_p5": ("measured pool, 5th percentile", "gemessener Pool, 5. Perzentil"),
    "measured_pool_median": ("measured pool, median", "gemessener Pool, Median"),
    "share_below": ("share of questions with a pool below the window", "Anteil Fragen mit Pool unter dem Fenster"),
    # prerank_filters
    "profile_clauses": ("clauses in profile filters", "Klauseln in Profilfiltern"),
    "override_clauses": ("clauses in filter overrides", "Klauseln in Filter-Overrides"),
    "suspicious_profile_clauses": ("non-relevance clauses in profiles", "Nicht-Relevanz-Klauseln in Profilen"),
    "code_clauses": ("clauses in the client code", "Klauseln im Client-Code"),
    "removed_relevant_share": ("share of reachable relevant documents removed", "Anteil entfernter erreichbarer relevanter Dokumente"),
    "relevant_unreachable": ("relevant documents out of reach", "unerreichbare relevante Dokumente"),
    "fallback_cascades": ("fallback cascades in the query log", "Fallback-Kaskaden im Query-Log"),
    # shared_query_text
    "identical_share_profiles": ("requests with one text for all channels", "Anfragen mit einem Text für alle Kanäle"),
    "identical_share_query_log": ("logged requests with one text for all channels",
                                  "protokollierte Anfragen mit einem Text für alle Kanäle"),
    "identical_share_profile_modes": ("profiles with one text mode for all channels",
                                      "Profile mit einem Textmodus für alle Kanäle"),
    "recall@10_gain": ("recall@10 gain of split channels", "Recall@10-Gewinn getrennter Kanäle"),
    # chunk_boundaries
    "primary_level": ("level judged", "beurteilte Ebene"),
    "levels_analysed": ("levels analysed", "analysierte Ebenen"),
    "records_analysed": ("records analysed", "analysierte Datensätze"),
    "min_tokens": ("minimum tokens", "Mindest-Tokens"),
    "max_tokens": ("maximum tokens", "Höchst-Tokens"),
    "chunks": ("chunks", "Chunks"),
    "documents": ("documents", "Dokumente"),
    "sampled": ("sampled", "Stichprobe"),
    "tokens_p5": ("tokens, 5th percentile", "Tokens, 5. Perzentil"),
    "tokens_p50": ("tokens, median", "Tokens, Median"),
    "tokens_p95": ("tokens, 95th percentile", "Tokens, 95. Perzentil"),
    "overlap_words_median": ("overlap words, median", "überlappende Wörter, Median"),
    "mid_sentence_end_share": ("share ending mid-sentence", "Anteil mit Ende mitten im Satz"),
    "split_table_share": ("share splitting a table", "Anteil mit zerteilter Tabelle"),
    "missing_citation_share": ("share lacking citation metadata", "Anteil ohne Zitier-Metadaten"),
    "mid_sentence_start_share": ("share starting mid-sentence", "Anteil mit Beginn mitten im Satz"),
    "heading_separated_share": ("share with the heading separated", "Anteil mit abgetrennter Überschrift"),
    "list_cut_share": ("share cutting a list", "Anteil mit zerschnittener Liste"),
    "overlap_share": ("share overlapping the previous chunk", "Anteil mit Überlappung zum vorigen Chunk"),
    "tiny_share": ("share of tiny chunks", "Anteil winziger Chunks"),
    "oversized_share": ("share of oversized chunks", "Anteil übergrosser Chunks"),
    "exact_duplicate_share": ("share of exact duplicates", "Anteil exakter Duplikate"),
    "near_duplicate_share": ("share of near duplicates", "Anteil naher Duplikate"),
    "document_id_present_share": ("share with a document id", "Anteil mit Dokument-ID"),
    "page_present_share": ("share with a page", "Anteil mit Seite"),
    "position_present_share": ("share with a position", "Anteil mit Position"),
    "parent_id_present_share": ("share with a parent id", "Anteil mit Eltern-ID"),
    "section_title_present_share": ("share with a section title", "Anteil mit Abschnittstitel"),
    "chunk_records": ("chunk records", "Chunk-Datensätze"),
    "answers_checked": ("expected answers checked", "geprüfte erwartete Antworten"),
    "answers_straddling": ("answers split over two chunks", "auf zwei Chunks verteilte Antworten"),
    "answers_not_found": ("answers not found", "nicht gefundene Antworten"),
    # route_counts
    "routes": ("routes", "Routen"),
    "min_traffic_share": ("minimum traffic share", "Mindestanteil am Verkehr"),
    "routes_below_traffic_floor": ("routes below the traffic floor", "Routen unter der Verkehrsschwelle"),
    "best_single_profile": ("best single profile", "bestes Einzelprofil"),
    "ndcg@10_routed": ("nDCG@10 routed", "nDCG@10 geroutet"),
    "ndcg@10_best_single": ("nDCG@10 of the best single profile", "nDCG@10 des besten Einzelprofils"),
    "routes_without_gain": ("routes without a measurable gain", "Routen ohne messbaren Gewinn"),
    # call_sites
    "files_scanned": ("files scanned", "durchsuchte Dateien"),
    "files_skipped": ("files skipped", "übersprungene Dateien"),
    "search_call_sites": ("search call sites", "Suchaufrufstellen"),
    "vector_query_sites": ("vector query sites", "Vektor-Anfragestellen"),
    "builder_modules": ("modules building requests", "Module, die Anfragen bauen"),
    "builder_functions": ("functions building requests", "Funktionen, die Anfragen bauen"),
    "drifting_parameters": ("parameters that differ between sites", "zwischen Stellen abweichende Parameter"),
    "filter_drift": ("filter clauses that differ", "abweichende Filterklauseln"),
    "security_clause_drift": ("security clause differences", "Abweichungen der Sicherheitsklausel"),
    "sites": ("call sites", "Aufrufstellen"),
    # context_budgets
    "model_window_tokens": ("model window (tokens)", "Modellfenster (Tokens)"),
    "answer_reserve_tokens": ("answer reserve (tokens)", "Antwortreserve (Tokens)"),
    "budget_tokens": ("context budget (tokens)", "Kontextbudget (Tokens)"),
    "budget_declared": ("budget declared", "Budget deklariert"),
    "llm_calls": ("LLM calls", "LLM-Aufrufe"),
    "unbounded_llm_calls": ("LLM calls without a bound", "LLM-Aufrufe ohne Grenze"),
    "budget_constants": ("budget constants in the code", "Budget-Konstanten im Code"),
    "citations_validated": ("citations validated in code", "im Code geprüfte Zitate"),
    "schema_citable_field": ("citable field in the schema", "zitierbares Feld im Schema"),
    "questions": ("questions", "Fragen"),
    "context_tokens_p50": ("context tokens, median", "Kontext-Tokens, Median"),
    "context_tokens_p95": ("context tokens, 95th percentile", "Kontext-Tokens, 95. Perzentil"),
    "context_tokens_max": ("context tokens, maximum", "Kontext-Tokens, Maximum"),
    "chunk_tokens_p50": ("chunk tokens, median", "Chunk-Tokens, Median"),
    "profiles_over_budget": ("profiles over budget", "Profile über Budget"),
    "tokenizer": ("tokenizer", "Tokenizer"),
    "profiles_top_outliers": ("profiles with an outlying top", "Profile mit auffälligem top"),
    # acl_trimming
    "security_fields": ("security fields", "Sicherheitsfelder"),
    "retrievable_security_fields": ("retrievable security fields", "abrufbare Sicherheitsfelder"),
    "override_drops": ("overrides dropping the identity clause", "Overrides ohne Identitätsklausel"),
    "permission_header_sites": ("permission header sites", "Stellen mit Berechtigungs-Header"),
    "escaped_code_filters": ("escaped security filters in the code", "escapte Sicherheitsfilter im Code"),
    "code_injection_risks": ("injection risks in the code", "Injection-Risiken im Code"),
    "security_values_read_via": ("security values read via", "Sicherheitswerte gelesen über"),
    "leaked_results": ("leaked results", "geleakte Ergebnisse"),
    "leaked_documents": ("leaked documents", "geleakte Dokumente"),
    "leak_probe_requests": ("leak probe requests", "Leck-Proben-Anfragen"),
    "identities_probed": ("identities probed", "geprüfte Identitäten"),
    "injection_probes": ("injection probes", "Injection-Proben"),
    "injection_failures": ("injection probes that widened the filter", "Injection-Proben, die den Filter erweiterten"),
    "queries_without_identity": ("queries without an identity", "Anfragen ohne Identität"),
    # goldset
    "cases": ("cases", "Fälle"),
    "answerable": ("answerable cases", "beantwortbare Fälle"),
    "refusal_cases": ("refusal cases", "Verweigerungsfälle"),
    "restricted_identity_cases": ("cases of a restricted identity", "Fälle einer eingeschränkten Identität"),
    "expected_sources_missing": ("expected sources missing from the index", "im Index fehlende erwartete Quellen"),
    "goldset_files_in_code": ("goldset files in the code", "Goldset-Dateien im Code"),
    "refusal_gate": ("refusal gate (minimum reranker score)", "Verweigerungsschwelle (Mindest-Reranker-Score)"),
    "should_refuse_refused": ("refusal cases refused", "verweigerte Verweigerungsfälle"),
    "answerable_wrongly_refused": ("answerable cases wrongly refused", "fälschlich verweigerte beantwortbare Fälle"),
}
_RUNS: dict[str, tuple[str, str]] = {
    "as_configured": ("as configured", "wie konfiguriert"),
    "split_channels": ("split channels", "getrennte Kanäle"),
}
_BRACKET = re.compile(r"^(?P<base>[^\[]+)\[(?P<arg>.*)\]$")


def _lang_index(lang: str) -> int:
    return 1 if lang == "de" else 0


def metric_label(name: str, lang: str = "en", labels: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """The display name of metric `name` in `lang` (the key itself when it has none).

    A key this table does not name is looked up in `labels`, the check's own (its spec's
    ``[labels]``), so a plugin's metric prints by the name its spec gives it, not as a raw key.
    """
    found = _table_label(name, lang)
    if found is not None:
        return found
    own = (labels or {}).get(name) or {}
    return own.get(lang) or own.get("en") or name


def _table_label(name: str, lang: str) -> str | None:
    i = _lang_index(lang)
    if name in METRIC_LABELS:
        return METRIC_LABELS[name][i]
    m = _BRACKET.match(name)
    if m and m.group("base") in METRIC_LABELS:
        return f"{METRIC_LABELS[m.group('base')][i]} ({m.group('arg')})"
    m = re.match(r"^compare_(?P<m>.+)_delta$", name)
    if m and m.group("m") in METRIC_LABELS:
        return f"Δ {METRIC_LABELS[m.group('m')][i]} " + ("(compared policy)" if i == 0 else "(Vergleichs-Policy)")
    m = re.match(r"^share_top1_below_(?P<x>[0-9.]+)$", name)
    if m:
        return METRIC_LABELS["share_top1_below"][i].format(x=m.group("x"))
    for run, texts in _RUNS.items():
        if name.endswith("_" + run) and name[:-len(run) - 1] in METRIC_LABELS:
            return f"{METRIC_LABELS[name[:-len(run) - 1]][i]}, {texts[i]}"
    return None
