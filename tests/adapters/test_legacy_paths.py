"""The import paths of earlier versions lead to the adapters: installed shims and hosts' imports keep working."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dcp_plugin
from dcp_plugin.adapters import formats
from dcp_plugin.adapters.bridge import SHIM_DIR, server
from dcp_plugin.adapters.formats import langchain_middleware

LEGACY_SHIM = Path(dcp_plugin.__file__).resolve().parent / "bridge" / "shim" / "plugin.mjs"


def test_the_old_formats_path_gives_the_same_pruner() -> None:
    from dcp_plugin.formats import Kind, Pruner

    assert Pruner is formats.Pruner and Kind is formats.Kind


def test_the_old_langchain_middleware_path_gives_the_same_class() -> None:
    from dcp_plugin.formats.langchain_middleware import DcpMiddleware

    assert DcpMiddleware is langchain_middleware.DcpMiddleware


def test_the_old_bridge_module_runs_the_bridge_server() -> None:
    import dcp_plugin.bridge
    import dcp_plugin.bridge.__main__ as old_main

    assert old_main.main is server.main
    assert dcp_plugin.bridge.SHIM_DIR == SHIM_DIR


def test_python_dash_m_on_the_old_bridge_path_starts_a_bridge_that_answers() -> None:
    line = json.dumps({"id": 1, "op": "ping"}) + "\n"
    done = subprocess.run(
        [sys.executable, "-m", "dcp_plugin.bridge"], input=line, capture_output=True, text=True, timeout=60, check=False
    )
    first = json.loads(done.stdout.splitlines()[0])
    assert first.get("id") == 1 and "error" not in first, done.stdout + done.stderr


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: cannot load the shim's modules")
def test_a_shim_installed_by_an_earlier_version_loads_the_moved_modules() -> None:
    # An earlier `dcp opencode install` wrote the URL of dcp_plugin/bridge/shim/ into dcp.js.
    script = "import(process.argv[1]).then(m => console.log(typeof m.startPlugin))"
    done = subprocess.run(
        ["node", "-e", script, LEGACY_SHIM.as_uri()], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.strip() == "function", done.stderr
