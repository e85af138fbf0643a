"""R15: checkpoints are unpickled only from a private folder the user owns, never through a symlink."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from dcp_plugin.host import checkpoints as checkpoints_mod
from tests.host.test_checkpoints import (
    _small_interval,
    checkpoint_files,
    points,
    runtime,
    send,
    session,
    stopped_after,
    walked,
)

__all__ = ["_small_interval", "session"]  # the fixtures

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="file modes and ownership are POSIX notions")


def replayed(tmp_path: Path, session: list[dict[str, Any]]) -> bool:
    """Whether a new host replays the whole session (reads every message) instead of loading its checkpoint."""
    restarted = runtime(tmp_path)
    send(restarted, session, len(session))
    return walked(restarted) == len(session)


def test_a_checkpoint_in_the_private_folder_is_loaded(tmp_path: Path, session: list[dict[str, Any]]) -> None:
    stopped_after(tmp_path, session, points(session))
    assert not replayed(tmp_path, session)


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777, 0o1777])
def test_a_checkpoint_in_a_folder_others_may_write_is_not_loaded(
    tmp_path: Path, session: list[dict[str, Any]], mode: int, caplog: pytest.LogCaptureFixture
) -> None:
    stopped_after(tmp_path, session, points(session))
    (tmp_path / checkpoints_mod.FOLDER).chmod(mode)
    with caplog.at_level(logging.WARNING, logger="dcp_plugin"):
        assert replayed(tmp_path, session)
    assert "group or other users may write it" in caplog.text and "chmod 700" in caplog.text


def test_a_checkpoint_folder_that_is_a_symlink_is_not_loaded(
    tmp_path: Path, session: list[dict[str, Any]]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    stopped_after(elsewhere, session, points(session))
    store = tmp_path / "store"
    store.mkdir()
    (store / checkpoints_mod.FOLDER).symlink_to(elsewhere / checkpoints_mod.FOLDER)
    assert replayed(store, session)


def test_a_checkpoint_file_that_is_a_symlink_is_not_followed(
    tmp_path: Path, session: list[dict[str, Any]]
) -> None:
    stopped_after(tmp_path, session, points(session))
    [path] = checkpoint_files(tmp_path)
    moved = tmp_path / "moved.ckpt"
    shutil.move(path, moved)
    path.symlink_to(moved)
    assert replayed(tmp_path, session)
    assert moved.is_file()  # the link's target is left alone


def test_no_checkpoint_is_written_into_a_folder_others_may_write(tmp_path: Path, session: list[dict[str, Any]]) -> None:
    folder = tmp_path / checkpoints_mod.FOLDER
    folder.mkdir()
    folder.chmod(0o777)
    stopped_after(tmp_path, session, points(session))
    assert checkpoint_files(tmp_path) == []
