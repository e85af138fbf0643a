"""Configuration: find, parse, layer, validate and type dcp.jsonc."""

from dcp_plugin.config.model import HARDCODED_PROTECTED_TOOLS, DcpConfig

__all__ = ["DcpConfig", "HARDCODED_PROTECTED_TOOLS"]
