"""The node tests' collector (tests/js/conftest.py): one pytest item per node test, each with its own outcome."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import TESTS

CONFTEST = TESTS / "js" / "conftest.py"
SAMPLE = """import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
test("passes (with parens) and a # sign", () => {});
test('a \\'quoted\\' name', () => {});
test("fails", () => { fs.writeFileSync("fails-ran", ""); assert.equal(1, 2); });
test("skips", { skip: "not here" }, () => {});
"""

NO_PLUGINS = ["-pno:cacheprovider", "--disable-plugin-autoload"]

pytestmark = [
    pytest.mark.slow,  # each test runs pytest and node
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
]


def run_pytest(folder: Path, *args: str) -> str:
    shutil.copy(CONFTEST, folder / "conftest.py")
    (folder / "sample.test.mjs").write_text(SAMPLE)
    done = subprocess.run(
        # Without the installed plugins this sample does not need: they are most of a pytest start.
        [sys.executable, "-m", "pytest", *NO_PLUGINS, "-q", "-rA", *args],
        cwd=folder, capture_output=True, text=True, timeout=300, check=False,
    )
    return done.stdout


def test_each_node_test_is_an_item_with_its_own_outcome_and_a_skip_fails(tmp_path: Path):
    out = run_pytest(tmp_path)
    assert "PASSED sample.test.mjs::passes (with parens) and a # sign" in out
    assert "PASSED sample.test.mjs::a 'quoted' name" in out
    assert "FAILED sample.test.mjs::fails" in out and "1 !== 2" in out
    assert "FAILED sample.test.mjs::skips" in out and "the node test skipped: not here" in out


def test_a_selected_node_test_runs_alone(tmp_path: Path):
    out = run_pytest(tmp_path, "-k", "quoted")
    assert "1 passed, 3 deselected" in out
    assert not (tmp_path / "fails-ran").exists()
