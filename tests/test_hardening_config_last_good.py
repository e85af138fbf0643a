"""N3: a broken or unreadable project dcp.jsonc keeps its last good protections, and says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from config_host import GOOD, Host, config_path, project, remove, swap, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin.config import remembered

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


POOL = ("alpha/**", "beta/**", "gamma/**")
EDITS = st.one_of(
    st.tuples(st.just("valid"), st.sets(st.sampled_from(POOL))),
    st.tuples(st.just("broken"), st.sampled_from(sorted(BROKEN))),
    st.tuples(st.just("swapped"), st.sampled_from(SWAPPED)),
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(EDITS, min_size=1, max_size=6))
def test_after_any_sequence_of_edits_the_protections_are_those_of_the_last_good_version(
    edits: list[tuple[str, Any]], project: Path
) -> None:
    path = config_path(project)
    remove(path)
    shutil.rmtree(remembered.folder(), ignore_errors=True)  # the last example's file, deleted while no host ran
    host = Host(project)
    good: set[str] = set()
    for kind, what in edits:
        if kind == "valid":
            write(path, json.dumps({"protectedFilePatterns": sorted(what)}))
            good = set(what)
        elif kind == "broken":
            write(path, BROKEN[what])
        else:
            swap(path, what)
        protected = {pattern for pattern in POOL if not host.pruned(pattern.replace("**", "file.txt"))}
        assert protected == good, (kind, what)
