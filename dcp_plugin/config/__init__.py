"""Configuration: dcp.jsonc layers found, parsed, validated against the schema and typed with pydantic."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dcp_plugin.config.model import HARDCODED_PROTECTED_TOOLS, DcpConfig

__all__ = ["DcpConfig", "HARDCODED_PROTECTED_TOOLS"]


def __getattr__(name: str) -> Any:
    # Lazy: strategy modules import config.section, and config.model imports the strategy registry.
    if name in __all__:
        from dcp_plugin.config import model

        return getattr(model, name)
    raise AttributeError(f"module 'dcp_plugin.config' has no attribute {name!r}")
