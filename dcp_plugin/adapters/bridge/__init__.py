"""The OpenCode bridge: a stdio JSON-lines server for the Python plugin and the JS shim that talks to it."""

from __future__ import annotations

from pathlib import Path

# The JS side, shipped inside the package so that `pip install` brings it along: the entry module
# OpenCode loads, and the folder of ES modules it imports.
SHIM_PATH = Path(__file__).resolve().parent / "dcp_bridge.mjs"
SHIM_DIR = SHIM_PATH.parent / "shim"
