"""A per-call azure-core policy that merges preview-only keys into the typed path's search body.

The GA SDKs have no keyword arguments for `hybridSearch.maxTextRecallSize`,
`vectorQueries[].filterOverride`, `queryRewrites` or `queryLanguage`. With a preview API
version the typed path (`typed.py`) passes them as the call option `PATCH_OPTION`
(`{"body": {...}, "vector_queries": {index: {...}}}`); this policy pops it and rewrites
the serialised JSON body. The raw-JSON path builds its body itself and never sets it.
"""

from __future__ import annotations

import json
from typing import Any

PATCH_OPTION = "ragdiag_body_patch"


def body_patch_policy() -> Any:
    """A per-call azure-core policy that merges preview-only keys into the search body."""
    from azure.core.pipeline.policies import SansIOHTTPPolicy

    class _BodyPatchPolicy(SansIOHTTPPolicy):
        def on_request(self, request: Any) -> None:
            patch = request.context.options.pop(PATCH_OPTION, None)
            if not patch:
                return
            hr = request.http_request
            content = hr.content if hasattr(hr, "content") else hr.body
            if isinstance(content, bytes | bytearray):
                content = content.decode("utf-8")
            body = json.loads(content)
            body.update(patch.get("body", {}))
            for i, extra in patch.get("vector_queries", {}).items():
                body["vectorQueries"][int(i)].update(extra)
            data = json.dumps(body).encode("utf-8")
            if hasattr(hr, "set_bytes_body"):  # legacy transport HttpRequest (11.x)
                hr.set_bytes_body(data)
            else:  # azure.core.rest.HttpRequest (12.x)
                headers = hr._set_body(content=data)  # noqa: SLF001 - no public setter
                if "Content-Length" in headers:
                    hr.headers["Content-Length"] = headers["Content-Length"]

    return _BodyPatchPolicy()
