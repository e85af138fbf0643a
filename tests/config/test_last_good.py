"""N3: a broken or unreadable project dcp.jsonc keeps its last good protections, and says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.config_host import GOOD, Host, config_path, project, swap, write

__all__ = ["project"]  # the fixture

BROKEN: dict[str, bytes] = {
    "syntax error": b'{"protectedFilePatterns": ["secrets/**"] "cache": {}}',
    "invalid UTF-8": b'{"protectedFilePatterns": ["secrets/**\xff"]}',
    "NUL bytes": '{"protectedFilePatterns": []}'.encode("utf-16-le"),
    "over 1 MiB": b'{"x": "' + b"a" * (1024 * 1024 + 10) + b'"}',
    "a list at the top": b'["secrets/**"]',
    "patterns of the wrong type": b'{"protectedFilePatterns": "secrets/**"}',
    "a bad pattern next to a new one": b'{"protectedFilePatterns": ["keys/**", 7]}',
}
SWAPPED = ["dangling symlink", "directory", "fifo", "symlink loop"]


@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_broken_save_keeps_the_files_protected_patterns(project: Path, kind: str) -> None:
    host = Host(project)
    write(config_path(project), GOOD)
    assert not host.pruned("secrets/key.pem") and host.pruned("src/a.py")
    write(config_path(project), BROKEN[kind])
    assert not host.pruned("secrets/key.pem") and host.pruned("src/a.py")


@pytest.mark.parametrize("kind", SWAPPED)
def test_a_config_file_swapped_for_something_unreadable_keeps_its_protected_patterns(project: Path, kind: str) -> None:
    host = Host(project)
    write(config_path(project), GOOD)
    assert not host.pruned("secrets/key.pem")
    swap(config_path(project), kind)
    assert not host.pruned("secrets/key.pem") and host.pruned("src/a.py")


def test_the_user_is_told_the_last_good_version_stays_in_force(project: Path) -> None:
    host = Host(project)
    write(config_path(project), GOOD)
    host.pruned("a.py")
    write(config_path(project), BROKEN["syntax error"])
    host.pruned("a.py")
    [message] = [n for n in host.notes if "syntax error" in n]
    assert str(config_path(project)) in message and "last good version stays in force" in message


def test_a_fixed_file_applies_its_new_patterns(project: Path) -> None:
    host = Host(project)
    write(config_path(project), GOOD)
    write(config_path(project), BROKEN["syntax error"])
    host.pruned("a.py")
    write(config_path(project), '{"protectedFilePatterns": ["keys/**"]}')
    assert host.pruned("secrets/key.pem") and not host.pruned("keys/a.pem")


def test_a_deleted_file_takes_its_patterns_with_it(project: Path) -> None:
    host = Host(project)
    write(config_path(project), GOOD)
    assert not host.pruned("secrets/key.pem")
    config_path(project).unlink()
    assert host.pruned("secrets/key.pem")


# The property over any sequence of edits, breaks and restarts: test_hardening_config_remembered.
