"""Which tool calls show a file's contents (what an edit later copies its replaced text from), across hosts.

A read tool (OpenCode's and Claude Code's `read`, Gemini CLI's `read_file`, SWE-agent's `open`),
an editor tool's `view` command (Anthropic's text editor, OpenHands), or a shell command that
prints a file (`cat`, `head`, `tail`, `sed -n`, `nl`: how Codex reads). Command output, searches
and listings are not: on 19 recorded sessions, of the 684 edit anchors found in tool outputs,
637 were in read outputs and 18 in command output and searches.
"""

from __future__ import annotations

import functools
import re

from dcp_plugin.model.messages import is_mapping

FILE_VIEW_TOOLS = frozenset({"read", "read_file", "open", "view"})
# Tools that change a file the call names (an editor tool's every command but `view` does too).
FILE_EDIT_TOOLS = frozenset({"edit", "write", "multiedit", "apply_patch", "patch", "write_file", "replace", "str_replace"})
EDITOR_TOOLS = frozenset({"str_replace_editor", "str_replace_based_edit_tool", "text_editor"})
SHELL_TOOLS = frozenset({"bash", "shell", "exec_command", "local_shell", "run_shell_command", "execute_bash"})
FILE_PRINTERS = frozenset({"cat", "head", "tail", "sed", "nl", "bat", "less", "more"})
SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
# Where one command of a shell script ends and the next begins. A pipeline counts by its first
# command: `cat a.py | head` prints a file, `npm test | tail -20` prints a command's output.
_COMMANDS = re.compile(r"&&|\|\||[;\n]")


def _script(command: object) -> str:
    """A shell call's script: the text, or the `-c` argument of an argv that runs a shell, or the argv joined."""
    if isinstance(command, str):
        return command
    if not isinstance(command, list) or not all(isinstance(word, str) for word in command):
        return ""
    if len(command) >= 3 and command[0].rsplit("/", 1)[-1] in SHELLS and command[-2].startswith("-"):
        return str(command[-1])
    return " ".join(command)


def _program(command: str) -> str:
    words = command.split("|", 1)[0].split()
    return words[0].rsplit("/", 1)[-1] if words else ""


# Commands that close a cycle of work: a test run, a build or type check, a commit, a script run
# (how SWE-agent-style agents check a fix: `python reproduce.py`). On 19 recorded
# sessions a read made before the newest of these (or before the newest user message) was the
# source of far fewer later edits than one made since. Matched where a command starts, after
# variable assignments and the wrappers that run a tool (`CI=1 npx jest`, `uv run pytest`).
_CHECK = re.compile(
    r"(?:pytest|py\.test|tox|nox|jest|vitest|mocha|phpunit|rspec|ctest|tsc"
    r"|(?:npm|yarn|pnpm|bun)\s+(?:run\s+)?(?:test|build|lint|typecheck|check)"
    r"|(?:go|cargo|dotnet|make|mix|swift|deno)\s+(?:test|build|check|vet)"
    r"|\S*mvnw?\b.*\b(?:test|verify|package|compile|install)"
    r"|\S*gradlew?\b.*\b(?:test|build|check)"
    r"|python3?\s+-m\s+(?:pytest|unittest)"
    r"|(?:python3?|node|ruby|php|bash|sh)\s+\S+\.(?:py|js|mjs|ts|rb|php|sh)(?=\s|$)|\./\S+\.sh(?=\s|$)"
    r"|git\s+commit)\b"
)
_WRAPPERS = re.compile(r"^(?:\w+=\S*\s+|(?:npx|bunx|time|sudo|(?:uv|poetry|pipenv|pdm|hatch)\s+run|timeout\s+\S+)\s+)*")


# What a call is to the rules above, as flags (:func:`traits`).
SHOWS_FILE = 1
EDITS_FILE = 2
RUNS_CHECK = 4
# What a tool's name says when its input decides the rest: an editor tool, a shell.
_EDITOR = 8
_SHELL = 16
# Scripts whose answers are remembered: a session runs the same commands again and again (its
# tests, `git status`). A longer script (a heredoc writing a file) is read each time.
SCRIPT_CACHE_SIZE = 1024
CACHED_SCRIPT_CHARS = 1000


@functools.lru_cache(maxsize=512)
def _tool_kind(tool: str) -> int:
    """What a tool's name says of its calls: SHOWS_FILE, EDITS_FILE, _EDITOR, _SHELL, or 0 (the name sets are disjoint)."""
    name = tool.lower()
    if name in FILE_VIEW_TOOLS:
        return SHOWS_FILE
    if name in FILE_EDIT_TOOLS:
        return EDITS_FILE
    if name in EDITOR_TOOLS:
        return _EDITOR
    return _SHELL if name in SHELL_TOOLS else 0


def _script_traits(script: str) -> int:
    """SHOWS_FILE when a command of the script prints a file, RUNS_CHECK when one runs a check."""
    commands = _COMMANDS.split(script)
    found = SHOWS_FILE if any(_program(command) in FILE_PRINTERS for command in commands) else 0
    for command in commands:
        command = command.split("|", 1)[0].strip()
        wrapped = _WRAPPERS.match(command)
        if _CHECK.match(command, wrapped.end() if wrapped else 0) is not None:
            return found | RUNS_CHECK
    return found


_remembered_script_traits = functools.lru_cache(maxsize=SCRIPT_CACHE_SIZE)(_script_traits)


def traits(tool: str, tool_input: object) -> int:
    """What a call is, as flags: it shows a file's contents, it changes a file it names, it runs a check.

    Asked for every completed call of a history: what one tool name says, and what one shell
    script does, are worked out once.
    """
    kind = _tool_kind(tool)
    if kind < _EDITOR:
        return kind  # a view, an edit, or neither, whatever the input
    if not is_mapping(tool_input):
        return 0
    if kind == _EDITOR:
        command = tool_input.get("command")
        return SHOWS_FILE if command == "view" else 0 if command is None else EDITS_FILE
    script = _script(tool_input.get("command", tool_input.get("cmd")))
    return _remembered_script_traits(script) if len(script) <= CACHED_SCRIPT_CHARS else _script_traits(script)


def shows_file(tool: str, tool_input: object) -> bool:
    """Whether the call's output is a file's contents: a read, an editor's view, a shell command printing a file."""
    return bool(traits(tool, tool_input) & SHOWS_FILE)


def edits_file(tool: str, tool_input: object = None) -> bool:
    """Whether the call changes a file it names: an edit or write tool, an editor tool's command other than `view`."""
    return bool(traits(tool, tool_input) & EDITS_FILE)


def runs_check(tool: str, tool_input: object) -> bool:
    """Whether a shell call runs tests, a build or type check, or a commit: the end of a cycle of work."""
    return bool(traits(tool, tool_input) & RUNS_CHECK)
