"""A call's traits, worked out once per tool name and per shell script, equal the rules read from the call each time."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.model.messages import is_mapping
from dcp_plugin.pipeline.strategies.file_views import (
    _CHECK,
    _COMMANDS,
    _WRAPPERS,
    CACHED_SCRIPT_CHARS,
    EDITOR_TOOLS,
    FILE_EDIT_TOOLS,
    FILE_PRINTERS,
    FILE_VIEW_TOOLS,
    SHELL_TOOLS,
    _program,
    _script,
    edits_file,
    runs_check,
    shows_file,
)


def plain_shows_file(tool: str, tool_input: object) -> bool:
    """The rule as it reads the call: a view tool, an editor's `view`, a shell command printing a file."""
    name = tool.lower()
    if name in FILE_VIEW_TOOLS:
        return True
    if not is_mapping(tool_input):
        return False
    if name in EDITOR_TOOLS:
        return tool_input.get("command") == "view"
    if name in SHELL_TOOLS:
        script = _script(tool_input.get("command", tool_input.get("cmd")))
        return any(_program(command) in FILE_PRINTERS for command in _COMMANDS.split(script))
    return False


def plain_edits_file(tool: str, tool_input: object) -> bool:
    """The rule as it reads the call: an edit tool, an editor's command other than `view`."""
    name = tool.lower()
    if name in FILE_EDIT_TOOLS:
        return True
    return name in EDITOR_TOOLS and is_mapping(tool_input) and tool_input.get("command") not in (None, "view")


def plain_runs_check(tool: str, tool_input: object) -> bool:
    """The rule as it reads the call: a shell command that runs tests, a build, a commit."""
    if tool.lower() not in SHELL_TOOLS or not is_mapping(tool_input):
        return False
    script = _script(tool_input.get("command", tool_input.get("cmd")))
    for command in _COMMANDS.split(script):
        command = command.split("|", 1)[0].strip()
        wrapped = _WRAPPERS.match(command)
        if _CHECK.match(command, wrapped.end() if wrapped else 0) is not None:
            return True
    return False


_tools = st.sampled_from(
    ["read", "Read", "READ_FILE", "edit", "Write", "str_replace_editor", "bash", "Shell", "exec_command", "grep", "task", ""]
)
_commands = st.lists(
    st.sampled_from(["cat a.py", "sed -n '1,9p' a.py", "pytest -q", "CI=1 npx jest", "git commit -m x", "ls", "npm test | tail", "echo hi"]),
    max_size=3,
).flatmap(lambda parts: st.sampled_from([" && ", "; ", "\n", " | ", " || "]).map(lambda glue: glue.join(parts)))
# A script past the remembered length is read each time: the same answers either way.
_long = _commands.map(lambda script: script + " " * CACHED_SCRIPT_CHARS)
_argv = st.lists(st.sampled_from(["bash", "-lc", "cat a.py", "head", "a.py", "/bin/sh", "-c", "pytest"]), max_size=4)
_values = st.one_of(st.none(), _commands, _long, _argv, st.sampled_from(["view", "create", "str_replace"]), st.integers())
_inputs = st.one_of(st.dictionaries(st.sampled_from(["command", "cmd", "path"]), _values, max_size=3), st.none(), _commands)


@settings(max_examples=500, deadline=None)
@given(_tools, _inputs)
def test_traits_equal_the_rules_read_from_the_call_each_time(tool: str, tool_input: Any) -> None:
    for _ in range(2):  # asked again, the remembered answers
        assert shows_file(tool, tool_input) == plain_shows_file(tool, tool_input)
        assert edits_file(tool, tool_input) == plain_edits_file(tool, tool_input)
        assert runs_check(tool, tool_input) == plain_runs_check(tool, tool_input)
