"""The code passes its own lint, strict type check and import layers (configured in pyproject.toml)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # ruff and mypy over the whole tree



def run(*command: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False, env=env)


def test_ruff_finds_nothing() -> None:
    if shutil.which("ruff") is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]' installs it)")
    done = run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_finds_nothing_in_the_package() -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]' installs it)")
    done = run(sys.executable, "-m", "mypy", "dcp_plugin")
    assert done.returncode == 0, done.stdout + done.stderr


def test_imports_point_down_the_layers() -> None:
    if shutil.which("lint-imports") is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]' installs it)")
    # The package checked is this tree's, whatever an installed copy points at.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    done = run("lint-imports", "--no-cache", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
