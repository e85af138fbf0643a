"""Fixtures for the end-to-end tests that drive the real OpenCode binary against a fake provider."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.fake_provider import FakeProvider, Step, standard_script
from tests.e2e.opencode_harness import OpencodeProject, OpencodeUnavailable, find_opencode


@pytest.fixture(scope="session")
def opencode_bin() -> Path:
    """The pinned OpenCode binary; skips the test (with the reason) when it cannot be installed."""
    try:
        return find_opencode()
    except OpencodeUnavailable as exc:
        pytest.skip(str(exc))


@dataclass
class Scenario:
    """A fake provider serving a script and an isolated OpenCode project pointed at it."""

    provider: FakeProvider
    opencode: OpencodeProject


def start_scenario(binary: Path, root: Path, script: list[Step] | None = None) -> Scenario:
    """Starts the provider and creates the project; the caller stops the provider."""
    project_dir = root / "project"
    provider = FakeProvider(script if script is not None else standard_script(project_dir), log_path=root / "requests.jsonl")
    provider.start()
    opencode = OpencodeProject(binary=binary, root=root, provider_url=provider.base_url).create()
    return Scenario(provider=provider, opencode=opencode)


@pytest.fixture
def scenario(opencode_bin: Path, tmp_path: Path) -> Iterator[Scenario]:
    """A fresh provider + project per test, running the standard script."""
    sc = start_scenario(opencode_bin, tmp_path)
    try:
        yield sc
    finally:
        sc.provider.stop()


@pytest.fixture(scope="module")
def module_scenario_factory(opencode_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """Builds scenarios shared by a module's tests (one OpenCode run, many assertions)."""
    started: list[Scenario] = []

    def make(name: str, script: list[Step] | None = None) -> Scenario:
        sc = start_scenario(opencode_bin, tmp_path_factory.mktemp(name), script)
        started.append(sc)
        return sc

    try:
        yield make
    finally:
        for sc in started:
            sc.provider.stop()
