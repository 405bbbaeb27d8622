"""Target kind ``azure``: a live Azure AI Search index, read-only, the key from the environment."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ragdiag.targets.registry import OptionReader

CREDENTIALS = ("api_key", "default")
# How searches are sent: "raw" JSON through the SDK client's pipeline (12.x), the SDK's
# typed models ("sdk"), or "auto": raw where the installed SDK supports it.
TRANSPORTS = ("auto", "raw", "sdk")


class AzureKind:
    name = "azure"
    keys = ("endpoint", "index", "api_key_env", "credential", "api_version", "name", "transport",
            "fields")

    def validate(self, options: OptionReader) -> dict[str, Any]:
        from ragdiag.chunks.fields import read_field_roles

        for secret in ("api_key", "key"):
            if options.has(secret):
                raise options.error("never write a key into the config: name the environment variable "
                                    "that holds it with api_key_env = \"AZURE_SEARCH_API_KEY\"", secret)
        return {
            "endpoint": options.string("endpoint", required=True),
            "index": options.string("index", required=True),
            "api_key_env": options.string("api_key_env", "AZURE_SEARCH_API_KEY"),
            "credential": options.string("credential", "api_key", choices=CREDENTIALS),
            "api_version": options.string("api_version"),
            "name": options.string("name"),
            "transport": options.string("transport", "auto", choices=TRANSPORTS),
            "fields": read_field_roles(options),
        }

    def open(self, options: Mapping[str, Any], config: Any, *, log: Callable[[str], None] | None,
             progress: bool) -> Any:
        from ragdiag.targets.azure import AzureTarget

        return AzureTarget.from_config(config)

    def describe(self, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"endpoint": options.get("endpoint"), "index": options.get("index"),
                "credential": options.get("credential"), "api_key_env": options.get("api_key_env"),
                "transport": options.get("transport")}
