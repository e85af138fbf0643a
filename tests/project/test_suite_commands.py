"""The test commands README gives: CI runs the full one verbatim, the inner loop's marker is registered."""

from __future__ import annotations

import re
import tomllib

from tests.support.paths import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def quick_start() -> str:
    start = README.index("## Quick start")
    return README[start : README.index("\n## ", start + 1)]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    [command] = [line for line in quick_start().splitlines() if line.endswith("python -m pytest")]
    steps = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    assert steps[-1] == command


def test_the_inner_loop_deselects_a_registered_marker() -> None:
    [expression] = re.findall(r"python -m pytest -m \"([^\"]+)\"", quick_start())
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]["markers"]
    registered = {line.split(":")[0] for line in markers}
    assert expression == "not slow" and "slow" in registered


def test_the_suite_runs_a_whole_file_per_worker_on_every_core() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    options = " ".join(project["tool"]["pytest"]["ini_options"]["addopts"])
    assert "-n auto" in options and "--dist loadfile" in options
    assert any(need.startswith("pytest-xdist") for need in project["project"]["optional-dependencies"]["test"])
