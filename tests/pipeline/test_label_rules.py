"""Labels worked out the quick way (a plain read's label once per file, brackets replaced twice) equal the plain rules."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.pipeline.labels import WIDTH, call_label, key_argument, neutral, plain_label, relative
from dcp_plugin.pipeline.protection import extract_paths
from dcp_plugin.printable import escape_label

_paths = st.sampled_from(["/p/a.py", "/p/sub/b].py", "src/x.py", "/elsewhere/y.py", "", " ", "/p/[dcp: z]\u202e.py"]) | st.text(
    max_size=30
)
_directories = st.sampled_from([None, "", "/p", "/p/", "/elsewhere"])
_values = st.none() | st.integers() | _paths | st.lists(_paths, max_size=2)
_inputs = st.dictionaries(
    st.sampled_from(["filePath", "path", "pattern", "command", "description", "include", "limit", "paths", "url"]),
    _values,
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["read", "edit", "x[y]"]), _paths, _directories)
def test_a_plain_reads_label_equals_the_label_worked_out_from_its_input(tool: str, path: str, directory: str | None) -> None:
    assert call_label(tool, {"filePath": path}, directory) == plain_label(tool, {"filePath": path}, directory, WIDTH)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_neutral_turns_brackets_into_parentheses_as_a_translation_table_does(text: str) -> None:
    assert neutral(text) == escape_label(text.translate(str.maketrans("[]", "()")))


def _key_argument_reference(tool_input: object, directory: str | None) -> str:
    """key_argument as first written: every path made relative, then joined."""
    if not isinstance(tool_input, dict):
        return ""
    paths = [relative(p, directory) for p in extract_paths("", tool_input)]
    pattern = tool_input.get("pattern")
    if isinstance(pattern, str) and pattern.strip():
        return " ".join(pattern.split()) + (f" in {paths[0]}" if paths else "")
    if paths:
        return ", ".join(paths)
    for key in ("command", "query", "url", "description", "name", "prompt"):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return ""


@settings(max_examples=400, deadline=None)
@given(_inputs, _directories)
def test_key_argument_names_a_call_as_joining_every_relative_path_does(tool_input: dict[str, Any], directory: str | None) -> None:
    assert key_argument(tool_input, directory) == _key_argument_reference(tool_input, directory)
