"""Runs the JS shim's own tests (node's test runner) as part of the suite."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

JS_TESTS = Path(__file__).parent / "js"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the JS shim cannot be tested here")
def test_js_shim_suite_passes():
    files = sorted(str(p) for p in JS_TESTS.glob("*.test.mjs"))
    assert files, "no JS test files found"
    # real_bridge.test.mjs runs `python -m dcp_plugin.bridge` with this interpreter (this checkout's code).
    env = {**os.environ, "DCP_TEST_PYTHON": sys.executable}
    done = subprocess.run(["node", "--test", *files], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout
    assert "# skipped 0" in done.stdout, "a node test skipped: " + done.stdout[-4000:]
