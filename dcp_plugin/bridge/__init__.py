"""The OpenCode bridge: a stdio JSON-lines server for the Python plugin and the JS shim that talks to it."""

from __future__ import annotations

from pathlib import Path

# The JS side, shipped inside the package so that `pip install` brings it along.
SHIM_PATH = Path(__file__).resolve().parent / "dcp_bridge.mjs"
