"""extract_paths reads only the path keys an input holds: the same paths, in the same order, as reading every key."""

from __future__ import annotations

import urllib.parse

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.pipeline.protection import (
    EDITS_KEY,
    FILE_URI,
    LOOSE_PATCH_KEYS,
    PATCH_KEY,
    PATH_KEYS,
    extract_paths,
    patch_paths,
)


def _every_key(tool_input: dict[str, object]) -> list[str]:
    found: list[str] = []
    for key in PATH_KEYS:
        value = tool_input.get(key)
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, str) and item:
                if item.startswith(FILE_URI):
                    item = urllib.parse.unquote(item[len(FILE_URI) :])
                elif key == "uri" and "://" in item:
                    continue
                found.append(item)
    return found


def reference(tool_input: object) -> tuple[str, ...]:
    """Every key read in turn, as extract_paths did before it looked only at the keys present."""
    if not isinstance(tool_input, dict):
        return ()
    found = _every_key(tool_input)
    patch = tool_input.get(PATCH_KEY)
    if isinstance(patch, str):
        found.extend(patch_paths(patch))
    for key in LOOSE_PATCH_KEYS:
        loose = tool_input.get(key)
        if isinstance(loose, str) and "*** " in loose:
            found.extend(patch_paths(loose, trimmed=True))
    edits = tool_input.get(EDITS_KEY)
    if isinstance(edits, list):
        for edit in edits:
            if isinstance(edit, dict):
                found.extend(_every_key(edit))
    return tuple(dict.fromkeys(found))


_paths = st.sampled_from(["a.py", "src/b.py", "a.py", "", "file:///p/c%20d.py", "https://x/y.py", "file://", "*** Add File: e.py"])
_patches = st.lists(
    st.sampled_from(["*** Update File: a.py", "  *** Add File: f.py", "*** Move to: g.py", "*** Delete File:  ", "x", "*** End Patch"]),
    max_size=4,
).map("\n".join)
_values = _paths | _patches | st.lists(_paths, max_size=3) | st.none() | st.integers() | st.just({"filePath": "h.py"})
_keys = st.sampled_from([*PATH_KEYS, PATCH_KEY, *LOOSE_PATCH_KEYS, "command", "offset", "content"])
_inputs = st.dictionaries(_keys, _values, max_size=5)
_with_edits = st.builds(
    lambda base, edits: {**base, EDITS_KEY: edits},
    _inputs,
    st.lists(_inputs | st.integers(), max_size=3) | st.just("edits"),
)


@settings(max_examples=400, deadline=None)
@given(_inputs | _with_edits | st.none() | st.lists(_paths, max_size=2))
def test_the_paths_equal_those_read_from_every_key(tool_input: object) -> None:
    assert extract_paths("tool", tool_input) == reference(tool_input)
