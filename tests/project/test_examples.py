"""The runnable examples README names: each runs to its answer against a local fake API, and dcp prunes what it sends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.example_server import FINAL_ANSWER, serving
from tests.support.paths import ROOT

EXAMPLES = ROOT / "examples"
EXAMPLE_FILES = ("openai_chat.py", "anthropic_messages.py", "langchain_agent.py")


def run_example(name: str, project: Path, target: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The example run in a project of its own, with every prune written at once, and no key, HOME or network of the user's."""
    home = project.parent / "home"
    isolated = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "HOME": str(home),
        **{var: str(home / var.lower()) for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")},
        **env,
    }
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), str(target)],
        cwd=project, env=isolated, capture_output=True, text=True, timeout=300, check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)  # the project's root: dcp's config walk stops here
    (root / ".opencode").mkdir()
    # The cache scheduler would rightly keep a placeholder back in a three-request session.
    (root / ".opencode" / "dcp.jsonc").write_text(json.dumps({"cache": {"scheduler": False}}))
    return root


@pytest.fixture
def target(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("".join(f"note {n}: a line long enough that a placeholder is shorter\n" for n in range(60)))
    return path


def tool_texts_openai(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m.get("role") == "tool"]


def tool_texts_anthropic(body: dict[str, Any]) -> list[str]:
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    return [b["content"] if isinstance(b["content"], str) else json.dumps(b["content"]) for b in blocks if b.get("type") == "tool_result"]


@pytest.mark.parametrize(
    ("name", "env_var", "base_suffix", "texts"),
    [
        ("openai_chat.py", "OPENAI_BASE_URL", "/v1", tool_texts_openai),
        ("anthropic_messages.py", "ANTHROPIC_BASE_URL", "", tool_texts_anthropic),
    ],
)
def test_the_example_runs_to_its_answer_and_sends_the_repeated_read_once(
    name: str, env_var: str, base_suffix: str, texts: Any, project: Path, target: Path
) -> None:
    with serving(str(target)) as (base, received):
        done = run_example(name, project, target, **{env_var: base + base_suffix})
    assert done.returncode == 0, done.stderr
    assert FINAL_ANSWER in done.stdout and "DCP context of session" in done.stdout
    assert len(received) == 3
    first, second = texts(received[-1][1])
    assert first.startswith("[dcp:") and second == target.read_text()


def test_the_langchain_example_runs_offline_and_sends_the_repeated_read_once(project: Path, target: Path) -> None:
    pytest.importorskip("langchain.agents", reason="LangChain is not installed: pip install 'dcp-plugin[langchain]'")
    done = run_example("langchain_agent.py", project, target)
    assert done.returncode == 0, done.stderr
    assert f"{target} has 60 lines." in done.stdout
    assert "2 calls, 1 pruned" in done.stdout


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_readme_names_each_example(name: str) -> None:
    assert f"examples/{name}" in (ROOT / "README.md").read_text()
