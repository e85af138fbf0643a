"""The provider formats' import path of earlier versions (now ``dcp_plugin.adapters.formats``), kept for hosts' code."""

from dcp_plugin.adapters.formats import FORMATS, Adapter, Kind, MediaRemoved, Pruner, Typed

__all__ = ["FORMATS", "Adapter", "Kind", "MediaRemoved", "Pruner", "Typed"]
