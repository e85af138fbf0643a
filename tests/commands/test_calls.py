"""Naming a tool call to the user: the tool and its key argument, never its id."""

from __future__ import annotations

import pytest

from dcp_plugin.pipeline.labels import call_label, shorten


@pytest.mark.parametrize(
    ("tool", "tool_input", "label"),
    [
        ("read", {"filePath": "/p/src/a.py", "offset": 10}, "read src/a.py"),
        ("edit", {"filePath": "/elsewhere/x.py", "oldString": "a"}, "edit /elsewhere/x.py"),
        ("bash", {"command": "make test\n  && echo done", "description": "run the tests"}, "bash make test && echo done"),
        ("grep", {"pattern": "TODO", "path": "/p/src"}, "grep TODO in src"),
        ("glob", {"pattern": "**/*.py"}, "glob **/*.py"),
        ("webfetch", {"url": "https://example.com/a"}, "webfetch https://example.com/a"),
        ("task", {"description": "find the bug", "prompt": "long text"}, "task find the bug"),
        ("apply_patch", {"patchText": "*** Update File: /p/a.py\n@@\n"}, "apply_patch a.py"),
        ("todowrite", {"todos": []}, "todowrite"),
        ("mystery", "not a dict", "mystery"),
    ],
)
def test_a_call_is_named_by_its_tool_and_key_argument(tool: str, tool_input: object, label: str) -> None:
    assert call_label(tool, tool_input, "/p") == label


def test_a_long_argument_is_cut_in_the_middle_to_the_width() -> None:
    label = call_label("bash", {"command": "x" * 30 + "MIDDLE" + "y" * 60}, width=40)
    assert label.startswith("bash xxx") and label.endswith("yyy")
    assert len(label) == len("bash ") + 40 and "…" in label


def test_shorten_keeps_short_text_and_joins_lines() -> None:
    assert shorten("a\n b", 10) == "a b"
