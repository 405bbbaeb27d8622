"""What a model call's prompt holds, followed from the search that fills it (`gaps.trace_context`), and model
calls as applications make them: through their own client class, or over plain HTTP.

Both ways each: a prompt filled by a search of fixed `top` is bounded by count (warned as "count only",
never as unbounded, and never as a budget); the same prompt grown over a loop of searches is unbounded;
so is a loop calling a search only through a tools dict the function hands over (and not one handing over a
non-search function); a count the scanner cannot resolve is a gap and `context_budgets` does not pass; a wrapper's callers are
the judged model calls, and a wrapper nobody calls is a gap.
"""

from __future__ import annotations

from pathlib import Path

from ragdiag.codescan import scan_path
from tests.codescan_trees import run_on_code, tree


def budgets(specs, root: Path):
    return run_on_code(specs, "context_budgets", root)


RETRIEVAL = """
    from azure.search.documents import SearchClient

    client = SearchClient("https://x.search.windows.net", "kb", None)


    def find(question: str):
        return list(client.search(search_text=question, top={top}))
    """
ANSWER = """
    from fastapi import FastAPI
    from openai import OpenAI

    from .retrieval import find

    app = FastAPI()
    llm = OpenAI()


    @app.get("/ask")
    def ask(question: str):
        {body}
        return llm.chat.completions.create(model="gpt-4o", messages=[{{"role": "user", "content": prompt}}])
    """


def test_a_prompt_filled_by_a_search_of_fixed_top_is_bounded_by_count_across_files(specs, tmp_path):
    root = tree(tmp_path, {"app/retrieval.py": RETRIEVAL.format(top=5), "app/main.py": ANSWER.format(
        body='hits = find(question)\n        prompt = "\\n".join(h["content"] for h in hits) + question')})
    (call,) = scan_path(root).llm_calls
    assert call.context_from == ("app/retrieval.py:8",) and call.count_bound == 5
    assert not call.context_bounded and "only by the result count" in call.bound_evidence
    f = budgets(specs, root)
    assert f.status == "warn"
    assert "count_only_calls" in {m.id.split(".", 1)[1] for m in f.headline_msgs}
    assert "unbounded_calls" not in {m.id.split(".", 1)[1] for m in f.headline_msgs}
    assert [loc.message_msg.id for loc in f.locations] == ["context_budgets.loc_count_only"]


def test_results_accumulated_over_a_loop_of_searches_are_not_bounded_by_one_count(tmp_path):
    root = tree(tmp_path, {"app/retrieval.py": RETRIEVAL.format(top=5), "app/main.py": ANSWER.format(
        body='docs = []\n        for q in question.split("?"):\n            docs.extend(find(q))\n'
             '        prompt = "\\n".join(d["content"] for d in docs)')})
    (call,) = scan_path(root).llm_calls
    assert call.context_accumulated and call.count_bound is None and not call.context_bounded
    assert "accumulate over a loop" in call.bound_evidence


def test_a_result_count_that_cannot_be_resolved_is_a_gap_and_no_pass(specs, tmp_path):
    root = tree(tmp_path, {"app/retrieval.py": RETRIEVAL.format(top="pick_top(question)"), "app/main.py": ANSWER.format(
        body='hits = find(question)\n        prompt = "\\n".join(h["content"][:1500] for h in hits[:3])')})
    scan = scan_path(root)
    (call,) = scan.llm_calls
    assert call.context_bounded  # a slice at the prompt bounds it whatever the search returns
    root2 = tree(tmp_path / "u", {"app/retrieval.py": RETRIEVAL.format(top="pick_top(question)"),
                                  "app/main.py": ANSWER.format(
        body='hits = find(question)\n        prompt = "\\n".join(h["content"] for h in hits)')})
    scan2 = scan_path(root2)
    (call2,) = scan2.llm_calls
    assert "result count not known" in call2.context_unresolved and not call2.context_bounded
    assert [g.kind for g in scan2.gaps_in(("unresolved_context",))] == ["unresolved_context"]
    assert call2 not in scan2.unbounded_llm_calls()  # neither bounded nor unbounded: not known
    f = budgets(specs, root2)
    assert f.status != "pass" and "pick_top(question)" in f.headline


WRAPPER = """
    from openai import AzureOpenAI


    class LLMHelper:
        def __init__(self):
            self.client = AzureOpenAI()

        def get_chat_completion(self, messages: list[dict], **kwargs):
            return self.client.chat.completions.create(model="gpt-4o", messages=messages, **kwargs)
    """


def test_model_calls_through_the_apps_own_client_are_judged_at_their_callers(specs, tmp_path):
    root = tree(tmp_path, {"helpers/llm.py": WRAPPER, "tools/answer.py": """
        from fastapi import FastAPI
        from ..helpers.llm import LLMHelper

        app = FastAPI()


        @app.post("/answer")
        def answer(question: str, sources: list[dict]):
            context = "\\n".join(s["content"] for s in sources)
            return LLMHelper().get_chat_completion([{"role": "user", "content": context + question}])
        """})
    scan = scan_path(root)
    by = {c.file: c for c in scan.llm_calls}
    caller = by["tools/answer.py"]
    assert caller.via.startswith("LLMHelper.get_chat_completion") and caller.kind == "azure_openai_chat"
    assert caller.retrieved_context and not caller.context_bounded
    wrapper = by["helpers/llm.py"]
    assert not wrapper.retrieved_context and "callers' prompts are judged" in wrapper.bound_evidence
    f = budgets(specs, root)
    assert f.status == "warn" and "tools/answer.py" in f.headline


def test_a_model_client_nobody_calls_is_a_gap(specs, tmp_path):
    root = tree(tmp_path, {"helpers/llm.py": WRAPPER})
    scan = scan_path(root)
    (gap,) = scan.gaps
    assert gap.kind == "llm_wrapper" and "messages" in gap.detail
    assert budgets(specs, root).status == "skipped"


def test_a_model_called_over_plain_http_is_an_llm_call(tmp_path):
    scan = scan_path(tree(tmp_path, {"chat.ts": """
        export async function answer(endpoint: string, question: string, hits: { content: string }[]) {
          const context = hits.map((h) => h.content).join("\\n");
          const res = await fetch(`${endpoint}/openai/deployments/gpt/chat/completions?api-version=2024-10-21`, {
            method: "POST", body: JSON.stringify({ messages: [{ role: "user", content: context + question }] }) });
          return res.json();
        }
        """, "ask.py": """
        import requests

        def answer(endpoint, question, chunks):
            context = "\\n".join(chunks[:4])
            return requests.post(f"{endpoint}/v1/chat/completions",
                                 json={"messages": [{"role": "user", "content": context + question}]}).json()
        """}))
    by = {c.file: c for c in scan.llm_calls}
    assert by["chat.ts"].retrieved_context and not by["chat.ts"].context_bounded
    assert by["ask.py"].retrieved_context and by["ask.py"].context_bounded


TS_SEARCH = """\
import { SearchClient } from "@azure/search-documents";

const client = new SearchClient("https://x.search.windows.net", "idx", null as any);

export const findDocs = async (text: string, k: number): Promise<Array<{ content: string }>> => {
  const results = await client.search(text, { top: k });
  const out: Array<{ content: string }> = [];
  for await (const r of results.results) out.push(r.document as any);
  return out;
};
"""


def _ts_chat(call: str) -> str:
    # the documents reach the prompt through `push` in a loop over a helper's output: no assignment to trace
    return f"""\
import OpenAI from "openai";
import {{ findDocs }} from "./search";

export const answer = async (question: string): Promise<any> => {{
  const openai = new OpenAI();
  const found = await findDocs(question, 10);
  const documents: string[] = [];
  for (const d of tidy(found)) documents.push(d.content);
  const context = documents.join("\\n");
  return openai.{call}({{ model: "m", messages: [{{ role: "user", content: context + question }}] }});
}};

const tidy = (xs: Array<{{ content: string }}>) => xs;
"""


def test_a_streamed_ts_completion_fed_by_a_search_it_calls_is_bounded_by_its_count(specs, tmp_path):
    root = tree(tmp_path, {"src/search.ts": TS_SEARCH, "src/chat.ts": _ts_chat("beta.chat.completions.stream")})
    calls = [c for c in scan_path(root).llm_calls if c.file == "src/chat.ts"]
    assert len(calls) == 1 and calls[0].kind == "openai_chat"  # `beta.chat.completions.stream` is a model call
    assert calls[0].context_from == ("src/search.ts:6",) and calls[0].count_bound == 10


def test_a_ts_model_call_in_a_function_that_searches_nothing_is_not_tied_to_a_search(tmp_path):
    chat = _ts_chat("chat.completions.create").replace("await findDocs(question, 10)", "[{ content: question }]")
    root = tree(tmp_path, {"src/search.ts": TS_SEARCH, "src/chat.ts": chat})
    calls = [c for c in scan_path(root).llm_calls if c.file == "src/chat.ts"]
    assert len(calls) == 1 and calls[0].context_from == () and calls[0].count_bound is None


def test_a_count_that_a_run_time_expression_replaces_is_no_fixed_bound(tmp_path):
    search = TS_SEARCH.replace("{ top: k }", "{ top: ctx?.top ? Number(ctx?.top) : 3 }").replace(
        "(text: string, k: number)", "(text: string, ctx: any)")
    root = tree(tmp_path, {"src/search.ts": search,
                           "src/chat.ts": _ts_chat("chat.completions.create").replace("findDocs(question, 10)",
                                                                                      "findDocs(question, opts)")})
    call = next(c for c in scan_path(root).llm_calls if c.file == "src/chat.ts")
    assert call.context_from == ("src/search.ts:6",) and call.count_bound is None
    assert "run-time expression sets the result count" in call.bound_evidence


APP_CLIENT = {
    "src/llm.ts": """
        import { ChatOpenAI } from "@langchain/openai";
        import { HumanMessage, SystemMessage } from "@langchain/core/messages";

        export async function callChatModel(systemPrompt: string, userPrompt: string): Promise<string> {
          const model = new ChatOpenAI({ model: "gpt-4o-mini" });
          const response = await model.invoke([new SystemMessage(systemPrompt), new HumanMessage(userPrompt)]);
          return String(response.content);
        }
        """,
    "src/rag.ts": """
        import { FaissStore } from "@langchain/community/vectorstores/faiss";
        import { OpenAIEmbeddings } from "@langchain/openai";
        import { callChatModel } from "./llm.js";

        export async function answer(question: string) {
          const store = await FaissStore.load("idx", new OpenAIEmbeddings());
          const docs = await store.similaritySearch(question, 4);
          const snippets = docs.map((d: any) => d.pageContent).join("\\n\\n");
          return callChatModel("Answer from the snippets.", `Question: ${question}\\nSnippets:\\n${snippets}`);
        }
        """,
}


def test_a_model_call_through_the_apps_own_client_of_any_verb_model_name_is_judged_at_its_caller(tmp_path):
    scan = scan_path(tree(tmp_path, APP_CLIENT))
    (call,) = [c for c in scan.llm_calls if c.file == "src/rag.ts"]
    assert call.retrieved_context and call.context_from == ("src/rag.ts:8",) and "callChatModel" in call.via
    # sound variant: a function of that name that calls no model is no client: its caller is no model call
    plain = dict(APP_CLIENT, **{"src/llm.ts": "export async function callChatModel(a: string, b: string) {\n"
                                              "  return `${a} ${b}`;\n}\n"})
    scan = scan_path(tree(tmp_path / "plain", plain))
    assert not [c for c in scan.llm_calls if c.file == "src/rag.ts"]


AGENT = """
    from azure.search.documents import SearchClient
    from openai import OpenAI

    client = SearchClient("https://x.search.windows.net", "kb", None)
    llm = OpenAI()


    def find(question: str):
        return list(client.search(search_text=question, top=5))


    def clock(question: str):
        return "12:00"


    def ask(question: str):
        tools = {{"lookup": {tool}}}
        notes = []
        for step in range(4):
            notes.append(str(tools["lookup"](question)))
        prompt = "\\n".join(notes)
        return llm.chat.completions.create(model="gpt-4o", messages=[{{"role": "user", "content": prompt}}])
    """


def test_a_prompt_grown_over_a_loop_calling_a_handed_over_search_accumulates(tmp_path):
    # the loop calls the search only through a tools dict: no call names it, the handing-over does
    root = tree(tmp_path, {"app/agent.py": AGENT.format(tool="find")})
    (call,) = scan_path(root).llm_calls
    assert call.context_accumulated and call.count_bound is None and not call.context_bounded


def test_the_same_loop_over_a_handed_over_non_search_function_does_not_accumulate(tmp_path):
    root = tree(tmp_path, {"app/agent.py": AGENT.format(tool="clock")})
    (call,) = scan_path(root).llm_calls
    assert not call.context_accumulated
