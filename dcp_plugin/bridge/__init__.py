"""The OpenCode bridge's import path of earlier versions (now ``dcp_plugin.adapters.bridge``), kept for what is installed.

A `dcp.js` written by an earlier `dcp opencode install` loads ``bridge/shim/plugin.mjs`` from this
folder and may start ``python -m dcp_plugin.bridge``: both lead to the bridge where it lives now,
so an upgrade does not turn pruning off until the user reinstalls the shim.
"""

from dcp_plugin.adapters.bridge import SHIM_DIR, SHIM_PATH

__all__ = ["SHIM_DIR", "SHIM_PATH"]
