"""The debug log: where it lives, its mode, one line per decision, never raising."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from dcp_plugin.host.debuglog import DebugLog, state_dir


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


def test_log_lives_under_xdg_state_home(state: Path) -> None:
    assert DebugLog.for_environment().path == state / "opencode" / "dcp" / "debug.log"


def test_log_defaults_to_home_local_state() -> None:
    assert state_dir({"HOME": "/home/u"}) == Path("/home/u/.local/state/opencode/dcp")


def test_nothing_is_created_until_a_decision_is_logged(state: Path) -> None:
    log = DebugLog.for_environment()
    log.close()
    assert not state.exists()


def test_one_tab_separated_line_per_decision(state: Path) -> None:
    log = DebugLog.for_environment()
    log.decision("ses_1", "call_1", "read", "deduplication", "newer identical read: call_9")
    log.decision("ses_1", "call_2", "bash", "purge-errors")
    log.close()
    lines = log.path.read_text().splitlines()
    assert [line.split("\t")[1:] for line in lines] == [
        ["ses_1", "call_1", "read", "deduplication", "newer identical read: call_9"],
        ["ses_1", "call_2", "bash", "purge-errors", ""],
    ]
    assert lines[0].split("\t")[0].endswith("+00:00") and "T" in lines[0]


def test_newlines_and_tabs_in_fields_stay_on_one_line(state: Path) -> None:
    log = DebugLog.for_environment()
    log.decision("s", "c", "t", "r", "a\tb\nc")
    log.close()
    assert log.path.read_text().splitlines()[0].split("\t")[-1] == "a\\tb\\nc"


def test_file_is_private(state: Path) -> None:
    log = DebugLog.for_environment()
    log.decision("s", "c", "t", "r")
    log.close()
    assert stat.S_IMODE(log.path.stat().st_mode) == 0o600


def test_existing_file_is_made_private_and_appended_to(state: Path) -> None:
    path = state / "opencode" / "dcp" / "debug.log"
    path.parent.mkdir(parents=True)
    path.write_text("old\n")
    path.chmod(0o644)
    log = DebugLog.for_environment()
    log.decision("s", "c", "t", "r")
    log.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().splitlines()[0] == "old" and len(path.read_text().splitlines()) == 2


def test_log_reopens_after_close(state: Path) -> None:
    log = DebugLog.for_environment()
    log.decision("s", "c1", "t", "r")
    log.close()
    log.decision("s", "c2", "t", "r")
    log.close()
    assert len(log.path.read_text().splitlines()) == 2


def test_failure_disables_the_log_with_one_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    log = DebugLog(blocker / "sub" / "debug.log")
    log.decision("s", "c", "t", "r")
    log.decision("s", "c", "t", "r")
    assert log.disabled
    assert capsys.readouterr().err.count("debug log") == 1


def test_control_characters_from_session_ids_are_escaped(state: Path) -> None:
    log = DebugLog.for_environment()
    log.decision("ses\x1b]0;owned\x07\x1b[2J", "call\u2028x", "read", "r", "back\\slash")
    log.close()
    raw = log.path.read_bytes()
    assert not any(byte < 0x20 and byte not in (0x09, 0x0A) for byte in raw) and "\u2028" not in raw.decode()
    fields = raw.decode().splitlines()[0].split("\t")
    assert fields[1:3] == ["ses\\x1b]0;owned\\x07\\x1b[2J", "call\\u2028x"] and fields[-1] == "back\\\\slash"


def test_a_lone_surrogate_in_an_id_does_not_disable_the_log(state: Path) -> None:
    log = DebugLog.for_environment()
    log.decision("ses_\ud800", "c", "t", "r")
    log.decision("ses_2", "c", "t", "r")
    log.close()
    assert not log.disabled
    assert [line.split("\t")[1] for line in log.path.read_text().splitlines()] == ["ses_\\ud800", "ses_2"]


def test_folders_created_for_the_log_are_private_under_umask_000(state: Path) -> None:
    old = os.umask(0)
    try:
        log = DebugLog.for_environment()
        log.decision("s", "c", "t", "r")
        log.close()
    finally:
        os.umask(old)
    for directory in (state, state / "opencode", state / "opencode" / "dcp"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
