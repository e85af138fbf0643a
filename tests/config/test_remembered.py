"""R4: a config file's last good version survives the process: a host started while the file is broken still uses it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin.config import remembered
from tests.config.test_empty_save import HALF_SAVED
from tests.config.test_last_good import BROKEN, SWAPPED
from tests.support.config_host import GOOD, Host, config_path, project, remove, swap, write
from tests.support.paths import ROOT

__all__ = ["project"]  # the fixture



def broken_in_any_way(path: Path, kind: str) -> None:
    """Leave the config file broken the way ``kind`` names (a bad save, a half save, a swap)."""
    if kind in BROKEN:
        write(path, BROKEN[kind])
    elif kind in HALF_SAVED:
        write(path, HALF_SAVED[kind])
    else:
        swap(path, kind)


KINDS = [*BROKEN, *HALF_SAVED, *SWAPPED]


@pytest.mark.parametrize("kind", KINDS)
def test_a_host_started_while_the_file_is_broken_keeps_its_last_good_protections(project: Path, kind: str) -> None:
    write(config_path(project), GOOD)
    assert not Host(project).pruned("secrets/key.pem")  # an earlier process read the good version
    broken_in_any_way(config_path(project), kind)
    restarted = Host(project)
    assert not restarted.pruned("secrets/key.pem") and restarted.pruned("src/a.py")


def test_a_new_process_started_while_the_file_is_broken_keeps_its_last_good_protections(project: Path) -> None:
    write(config_path(project), GOOD)
    assert not Host(project).pruned("secrets/key.pem")
    write(config_path(project), BROKEN["syntax error"])
    script = (
        "import sys; from pathlib import Path; from tests.support.config_host import Host; "
        "host = Host(Path(sys.argv[1])); print(host.pruned('secrets/key.pem'), host.pruned('src/a.py')); "
        "print(*host.notes, sep='\\n')"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, str(project)], capture_output=True, text=True, env=env, timeout=120, check=True)
    verdicts, *notes = done.stdout.splitlines()
    assert verdicts == "False True"
    assert any("syntax error" in n and "last good version stays in force" in n for n in notes)


def test_a_deleted_file_leaves_no_last_good_version_for_the_next_process(project: Path) -> None:
    write(config_path(project), GOOD)
    host = Host(project)
    assert not host.pruned("secrets/key.pem")
    remove(config_path(project))
    assert host.pruned("secrets/key.pem")  # this process saw the deletion
    write(config_path(project), BROKEN["syntax error"])
    assert Host(project).pruned("secrets/key.pem")


def test_the_last_good_version_is_the_newest_valid_one(project: Path) -> None:
    write(config_path(project), GOOD)
    host = Host(project)
    assert not host.pruned("secrets/key.pem")
    write(config_path(project), '{"protectedFilePatterns": ["keys/**"]}')
    assert host.pruned("secrets/key.pem")
    write(config_path(project), BROKEN["syntax error"])
    restarted = Host(project)
    assert restarted.pruned("secrets/key.pem") and not restarted.pruned("keys/a.pem")


@pytest.mark.parametrize(
    "damage", ["{not json", '{"format": 1, "file": "elsewhere", "data": {}}', '{"format": 1, "file": null}', "[]"]
)
def test_a_damaged_or_foreign_record_is_ignored(project: Path, damage: str) -> None:
    write(config_path(project), GOOD)
    Host(project).pruned("a.py")
    record = remembered.Remembered().record_path(config_path(project))
    record.write_text(damage)
    write(config_path(project), BROKEN["syntax error"])
    assert Host(project).pruned("secrets/key.pem")


def test_the_records_are_kept_in_a_private_folder(project: Path) -> None:
    write(config_path(project), GOOD)
    Host(project).pruned("a.py")
    assert remembered.folder().stat().st_mode & 0o077 == 0
    record = remembered.Remembered().record_path(config_path(project))
    assert json.loads(record.read_text())["data"] == {"protectedFilePatterns": ["secrets/**"]}


POOL = ("alpha/**", "beta/**", "gamma/**")
EDITS = st.one_of(
    st.tuples(st.just("valid"), st.sets(st.sampled_from(POOL))),
    st.tuples(st.just("broken"), st.sampled_from(KINDS)),
    st.tuples(st.just("restart"), st.none()),
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(EDITS, min_size=1, max_size=6))
def test_after_any_sequence_of_edits_and_restarts_the_protections_are_those_of_the_last_good_version(
    edits: list[tuple[str, Any]], project: Path
) -> None:
    path = config_path(project)
    remove(path)
    shutil.rmtree(remembered.folder(), ignore_errors=True)  # a deletion no process saw cannot be known
    host = Host(project)
    good: set[str] = set()
    for kind, what in edits:
        if kind == "valid":
            write(path, json.dumps({"protectedFilePatterns": sorted(what)}))
            good = set(what)
        elif kind == "broken":
            broken_in_any_way(path, what)
        else:
            host = Host(project)
        protected = {pattern for pattern in POOL if not host.pruned(pattern.replace("**", "file.txt"))}
        assert protected == good, (kind, what)
