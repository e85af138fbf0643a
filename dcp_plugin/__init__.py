"""dcp_plugin: Dynamic Context Pruning for AI coding agents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# First: it decides whether the compiled modules or their sources are imported (see its docstring).
from dcp_plugin import compiled as _compiled  # noqa: F401
from dcp_plugin.host.hostspec import PROJECT_NAME, hookimpl, hookspec

if TYPE_CHECKING:
    from dcp_plugin.adapters.pluggy_host import DcpPlugin
    from dcp_plugin.host.results import Outgoing
    from dcp_plugin.host.runtime import Runtime

__version__ = "0.1.0"

__all__ = ["PROJECT_NAME", "DcpPlugin", "Outgoing", "Runtime", "__version__", "hookimpl", "hookspec"]

_LAZY = {
    "DcpPlugin": "dcp_plugin.adapters.pluggy_host",
    "Runtime": "dcp_plugin.host.runtime",
    "Outgoing": "dcp_plugin.host.results",
}


def __getattr__(name: str) -> Any:
    # The runtime pulls in pydantic and the config machinery: only when asked for.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dcp_plugin' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
