"""Configuration: dcp.jsonc layers found, parsed, validated against the schema and typed with pydantic."""

from __future__ import annotations

from dcp_plugin.config.model import HARDCODED_PROTECTED_TOOLS, DcpConfig

__all__ = ["DcpConfig", "HARDCODED_PROTECTED_TOOLS"]
