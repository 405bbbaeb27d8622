"""A local, read-only imitation of Azure AI Search's REST API (see `server`)."""

from ragdiag.targets.emulator.faults import Faults
from ragdiag.targets.emulator.server import IGNORED_BODY_KEYS, Emulator, run_server

__all__ = ["Emulator", "Faults", "IGNORED_BODY_KEYS", "run_server"]
