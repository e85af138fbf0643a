"""Shared fixtures: isolated user directories and a runtime with a given config."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dcp_plugin import compiled
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.runtime import Runtime, StaticConfig
from tests.support.helpers import PROJECT, hook_transform, make_config


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """With the compiled core in use, the tests that need plain Python are skipped here.

    They replace a module's function, which compiled code calls directly and so never sees, or
    count Python calls, which compiled code does not make; tests/project/test_compiled.py runs
    them again in a process that loads plain Python.
    """
    if not compiled.IN_USE:
        return
    skip = pytest.mark.skip(reason="needs plain Python (run in a plain Python process by tests/project/test_compiled.py)")
    for item in items:
        if item.get_closest_marker("plain_python") is not None:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own HOME and XDG directories: nothing touches the real ones."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"), ("XDG_STATE_HOME", ".local/state"), ("XDG_CACHE_HOME", ".cache")):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.delenv("OPENCODE_CONFIG_DIR", raising=False)
    return home


@pytest.fixture
def git_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git worktree root, made the current directory: config and project walks stop there."""
    path = tmp_path / "proj"
    (path / ".git").mkdir(parents=True)
    monkeypatch.chdir(path)
    return path


@pytest.fixture
def prune() -> Callable[..., list[dict[str, Any]]]:
    """Run one transform on a copy of ``messages`` with a config built from keyword overrides."""

    def run(messages: list[dict[str, Any]], config: DcpConfig | None = None, directory: str = PROJECT) -> list[dict[str, Any]]:
        runtime = Runtime(directory, StaticConfig(config or make_config()))
        out = copy.deepcopy(messages)
        hook_transform(runtime, {}, {"messages": out})
        return out

    return run
