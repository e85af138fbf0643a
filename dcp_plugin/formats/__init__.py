"""Provider message formats (OpenAI Chat, OpenAI Responses, Anthropic, LangChain) over the one pipeline.

``Pruner`` is what a host uses; ``Kind`` names what every item of context is.
"""

from dcp_plugin.formats.adapter import FORMATS, Adapter
from dcp_plugin.formats.kinds import Kind, Typed
from dcp_plugin.formats.pruner import MediaRemoved, Pruner

__all__ = ["FORMATS", "Adapter", "Kind", "MediaRemoved", "Pruner", "Typed"]
