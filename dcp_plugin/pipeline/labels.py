"""How a tool call is named to the user: the tool and its key argument, never the call id they never see."""

from __future__ import annotations

import functools

from dcp_plugin.pipeline.protection import clean_path, extract_paths
from dcp_plugin.printable import escape_label

WIDTH = 60
# Without a path or a pattern, the argument that says what the call did, in order of preference.
_KEY_ARGUMENTS = ("command", "query", "url", "description", "name", "prompt")


def neutral(text: str) -> str:
    """Text from a tool call made safe inside a placeholder: no brackets, no control, bidi or invisible characters."""
    # Square brackets become parentheses in a label: a label sits inside a placeholder `[dcp: ...]`,
    # and a `]` in a path or a command would end it there and let the rest (`[dcp: instructions ...`)
    # stand alone, looking like the plugin's own text, which the system prompt tells the model to trust.
    # Two replaces, not str.translate: a translation table is read per character in Python's
    # slow path, ten times the cost for every label of a first sight.
    return escape_label(text.replace("[", "(").replace("]", ")"))


def call_label(tool: str, tool_input: object, directory: str | None = None, width: int = WIDTH) -> str:
    """`read src/a.py`, `bash make test`, `grep TODO in src`: the tool and what it worked on, on one line (:func:`neutral`)."""
    if width == WIDTH and type(tool_input) is dict and len(tool_input) == 1:
        # A plain read, the most common call by far: its label is its file's, worked out once per file.
        path = tool_input.get("filePath")
        if type(path) is str:
            return path_label(tool, path, directory)
    return plain_label(tool, tool_input, directory, width)


def plain_label(tool: str, tool_input: object, directory: str | None = None, width: int = WIDTH) -> str:
    """:func:`call_label` worked out from the input each time."""
    argument = key_argument(tool_input, directory)
    return neutral(f"{tool} {shorten(argument, width)}" if argument else tool)


@functools.lru_cache(maxsize=4096)
def path_label(tool: str, path: str, directory: str | None = None) -> str:
    """The label of a call whose only argument is ``path`` (a file read again): one per file, not per call."""
    return plain_label(tool, {"filePath": path}, directory)


def key_argument(tool_input: object, directory: str | None = None) -> str:
    """The argument that identifies a call: its file path (relative to ``directory``), command, pattern, url..."""
    if not isinstance(tool_input, dict):
        return ""
    paths = extract_paths("", tool_input)
    pattern = tool_input.get("pattern")
    if isinstance(pattern, str) and pattern.strip():
        # grep and glob: `path` is where they searched, the pattern is what.
        return " ".join(pattern.split()) + (f" in {relative(paths[0], directory)}" if paths else "")
    if paths:
        if len(paths) == 1:  # most calls name one file: no list to join
            return relative(paths[0], directory)
        return ", ".join([relative(p, directory) for p in paths])
    for key in _KEY_ARGUMENTS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return ""


# A session names the same files over and over (every masked read's label, every outdated
# diagnostics block); the answer depends on the two strings alone.
@functools.lru_cache(maxsize=4096)
def relative(path: str, directory: str | None) -> str:
    """``path`` relative to ``directory`` when inside it, else as given (normalized)."""
    cleaned = clean_path(path)
    if directory:
        root = clean_path(directory).rstrip("/")
        if cleaned.startswith(root + "/"):
            return cleaned[len(root) + 1 :]
    return cleaned


def shorten(text: str, width: int) -> str:
    """One line of at most ``width`` characters, cut in the middle so both ends stay readable."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    keep = width - 1
    return text[: keep - keep // 3] + "…" + text[len(text) - keep // 3 :]
