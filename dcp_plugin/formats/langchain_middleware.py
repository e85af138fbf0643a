"""The LangChain middleware's import path of earlier versions (now ``dcp_plugin.adapters.formats.langchain_middleware``)."""

from dcp_plugin.adapters.formats.langchain_middleware import DcpMiddleware

__all__ = ["DcpMiddleware"]
