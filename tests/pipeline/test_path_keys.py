"""R11: every key a host names a file by is read, and a file printed through the shell is protected like a read of it."""

from __future__ import annotations

from typing import Any

import pytest

from dcp_plugin.host.runtime import Runtime
from dcp_plugin.pipeline.commandpaths import command_paths
from dcp_plugin.pipeline.protection import PathProtector, extract_paths
from tests.support.helpers import PROJECT, call, hook_transform, make_config, user

BIG = "TOKEN=secret value that is long enough to be worth pruning\n" * 30


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        ({"notebook_path": "nb/a.ipynb"}, ["nb/a.ipynb"]),
        ({"target_file": "src/a.py"}, ["src/a.py"]),
        ({"file": "src/a.py"}, ["src/a.py"]),
        ({"uri": "file:///home/u/p/src/a%20b.py"}, ["/home/u/p/src/a b.py"]),
        ({"uri": "https://example.com/a.py"}, []),
        ({"paths": ["a.py", "b/.env"]}, ["a.py", "b/.env"]),
        ({"filePath": ["a.py", ".env"]}, ["a.py", ".env"]),
        ({"edits": [{"file": "x.py"}, {"paths": ["y.py"]}]}, ["x.py", "y.py"]),
    ],
)
def test_every_path_key_is_read(tool_input: dict[str, Any], expected: list[str]) -> None:
    assert list(extract_paths("tool", tool_input)) == expected


@pytest.mark.parametrize(
    "command",
    [
        "cat .env",
        "head -n 5 .env",
        "head -20 .env",
        "tail -f .env",
        "tail -n +3 .env",
        "sed -n '1,5p' .env",
        "less .env",
        "more .env",
        "grep TOKEN .env",
        "cd sub && cat .env | grep TOKEN",
        "cat < .env",
        f"sudo cat {PROJECT}/.env",
        "FOO=1 nl .env",
        "bash -c 'cat .env'",
        "cat a.py .env 2>/dev/null",
    ],
)
def test_a_command_that_prints_a_protected_file_is_protected(command: str) -> None:
    protector = PathProtector([".env"], PROJECT)
    assert protector.protected_path("bash", {"command": command}, []) is not None


def test_a_command_list_running_a_shell_is_read_inside() -> None:
    assert command_paths({"command": ["bash", "-lc", "cat .env"]}) == [".env"]


@pytest.mark.parametrize("command", ["echo .env", "ls -la", "cat a.py > .env", "rm -f .env.bak", "grep .env a.py"])
def test_a_command_that_does_not_print_the_protected_file_is_not_protected(command: str) -> None:
    assert PathProtector([".env"], PROJECT).protected_path("bash", {"command": command}, []) is None


def test_a_repeated_cat_of_a_protected_file_is_not_pruned_as_a_duplicate() -> None:
    runtime = Runtime(PROJECT, make_config(protectedFilePatterns=[".env"]))
    cat = {"command": "cat .env", "description": "show"}
    messages = [user(), call("bash", cat, output=BIG), call("bash", cat, output=BIG), user()]
    hook_transform(runtime, {}, {"messages": messages})
    assert messages[1]["parts"][0]["state"]["output"] == BIG


def test_a_repeated_read_of_a_notebook_path_that_is_protected_is_not_pruned() -> None:
    runtime = Runtime(PROJECT, make_config(protectedFilePatterns=["*.ipynb"]))
    read = {"notebook_path": "nb/a.ipynb"}
    messages = [user(), call("notebook_read", read, output=BIG), call("notebook_read", read, output=BIG), user()]
    hook_transform(runtime, {}, {"messages": messages})
    assert messages[1]["parts"][0]["state"]["output"] == BIG
