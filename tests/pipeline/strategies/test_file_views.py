"""Which tool calls show a file's contents, on every host's tool names."""

from __future__ import annotations

from typing import Any

import pytest

from dcp_plugin.pipeline.strategies.file_views import runs_check, shows_file


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("read", {"filePath": "/p/a.py"}),
        ("Read", {"file_path": "/p/a.py"}),
        ("read_file", {"path": "a.py"}),
        ("str_replace_editor", {"command": "view", "path": "/p/a.py"}),
        ("bash", {"command": "cat src/a.py"}),
        ("bash", {"command": "cd src && sed -n '10,40p' a.py"}),
        ("bash", {"command": "cat a.py | grep -n def"}),
        ("shell", {"command": ["bash", "-lc", "nl -ba src/a.py"]}),
        ("shell", {"command": ["head", "-50", "a.py"]}),
    ],
)
def test_a_read_an_editor_view_or_a_command_printing_a_file_shows_a_file(tool: str, tool_input: Any) -> None:
    assert shows_file(tool, tool_input)


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("bash", {"command": "npm test 2>&1 | tail -20"}),
        ("bash", {"command": "ls -la src"}),
        ("grep", {"pattern": "TODO"}),
        ("glob", {"pattern": "**/*.py"}),
        ("webfetch", {"url": "https://example.com"}),
        ("str_replace_editor", {"command": "create", "path": "a.py", "file_text": "x"}),
        ("shell", {"command": ["bash", "-lc", "pytest -q"]}),
        ("bash", {"command": None}),
        ("bash", "cat a.py"),
    ],
)
def test_command_output_searches_listings_and_fetches_do_not(tool: str, tool_input: Any) -> None:
    assert not shows_file(tool, tool_input)


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("bash", {"command": "npm test"}),
        ("bash", {"command": "cd web && npm run build 2>&1 | tail -20"}),
        ("bash", {"command": "python -m pytest -q tests/test_a.py"}),
        ("bash", {"command": "pytest -x"}),
        ("bash", {"command": "go test ./..."}),
        ("bash", {"command": "cargo build --release"}),
        ("bash", {"command": "./mvnw -q -DskipITs verify"}),
        ("bash", {"command": "npx tsc --noEmit"}),
        ("bash", {"command": "git add -A && git commit -m 'fix'"}),
        ("shell", {"command": ["bash", "-lc", "go test ./pkg/..."]}),
    ],
)
def test_a_test_run_a_build_or_a_commit_is_a_check(tool: str, tool_input: Any) -> None:
    assert runs_check(tool, tool_input)


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("bash", {"command": "ls src"}),
        ("bash", {"command": "cat tests/test_a.py"}),
        ("bash", {"command": "git status"}),
        ("bash", {"command": "grep -rn pytest ."}),
        ("read", {"filePath": "/p/package.json"}),
        ("bash", "npm test"),
    ],
)
def test_listings_reads_searches_and_malformed_inputs_are_not_checks(tool: str, tool_input: Any) -> None:
    assert not runs_check(tool, tool_input)
