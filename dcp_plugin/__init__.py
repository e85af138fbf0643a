"""dcp_plugin: Dynamic Context Pruning for AI coding agents."""

__version__ = "0.1.0"
