"""Provider message formats (OpenAI Chat, OpenAI Responses, Anthropic, LangChain) over the one pipeline.

``Pruner`` is what a host uses; ``Kind`` names what every item of context is.
"""

from dcp_plugin.adapters.formats.adapter import FORMATS, Adapter
from dcp_plugin.adapters.formats.kinds import Kind, Typed
from dcp_plugin.adapters.formats.pruner import MediaRemoved, Pruner

__all__ = ["FORMATS", "Adapter", "Kind", "MediaRemoved", "Pruner", "Typed"]
