"""R14: a truncate-then-write save (empty, white space, comments only) never unprotects; `//` ends at CR, U+2028, U+2029."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.config_host import GOOD, Host, config_path, project, write

__all__ = ["project"]  # the fixture

HALF_SAVED = {
    "empty": "",
    "white space only": " \n\t\r\n",
    "comments only": "// dcp settings\n/* protections follow */\n",
}


@pytest.mark.parametrize("kind", list(HALF_SAVED))
def test_a_half_saved_file_keeps_its_protected_patterns_for_the_next_request(project: Path, kind: str) -> None:
    host = Host(project)
    write(config_path(project), GOOD)
    assert not host.pruned("secrets/key.pem")
    write(config_path(project), HALF_SAVED[kind])
    assert not host.pruned("secrets/key.pem") and host.pruned("src/a.py")


def test_the_user_is_told_a_half_saved_file_keeps_its_last_good_version(project: Path) -> None:
    host = Host(project)
    write(config_path(project), GOOD)
    host.pruned("a.py")
    write(config_path(project), "")
    host.pruned("a.py")
    [message] = [n for n in host.notes if "is empty" in n]
    assert "last good version stays in force" in message and "write `{}` in it to set nothing on purpose" in message


def test_an_empty_object_sets_nothing_on_purpose(project: Path) -> None:
    host = Host(project)
    write(config_path(project), GOOD)
    assert not host.pruned("secrets/key.pem")
    write(config_path(project), "{}")
    assert host.pruned("secrets/key.pem")


@pytest.mark.parametrize("newline", ["\r", "\u2028", "\u2029"])
def test_a_file_whose_line_comments_end_with_any_json5_line_terminator_protects(project: Path, newline: str) -> None:
    write(config_path(project), f"// my protections{newline}{GOOD}")
    assert not Host(project).pruned("secrets/key.pem")
