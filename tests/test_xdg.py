"""XDG base directories: the variable when absolute, else the default under HOME."""

from __future__ import annotations

from pathlib import Path

import pytest

from dcp_plugin.xdg import base_dir


def test_absolute_variable_is_used():
    assert base_dir("XDG_DATA_HOME", {"XDG_DATA_HOME": "/srv/data", "HOME": "/home/u"}) == Path("/srv/data")


@pytest.mark.parametrize(
    ("variable", "default"),
    [("XDG_CONFIG_HOME", "/home/u/.config"), ("XDG_DATA_HOME", "/home/u/.local/share"), ("XDG_STATE_HOME", "/home/u/.local/state")],
)
def test_relative_or_missing_variable_falls_back_under_home(variable, default):
    assert base_dir(variable, {variable: "relative/dir", "HOME": "/home/u"}) == Path(default)
    assert base_dir(variable, {"HOME": "/home/u"}) == Path(default)


def test_make_dirs_gives_every_created_folder_the_mode_even_under_umask_000(tmp_path: Path) -> None:
    import os
    import stat

    from dcp_plugin.xdg import make_dirs

    old = os.umask(0)
    try:
        make_dirs(tmp_path / "a" / "b" / "c", 0o700)
    finally:
        os.umask(old)
    modes = [stat.S_IMODE((tmp_path / p).stat().st_mode) for p in ("a", "a/b", "a/b/c")]
    assert modes == [0o700, 0o700, 0o700]


def test_make_dirs_leaves_existing_folders_alone_and_refuses_a_file_in_the_way(tmp_path: Path) -> None:
    from dcp_plugin.xdg import make_dirs

    (tmp_path / "file").write_text("x")
    make_dirs(tmp_path, 0o700)
    with pytest.raises(NotADirectoryError):
        make_dirs(tmp_path / "file" / "sub", 0o700)


def test_the_config_folder_created_on_first_run_is_not_world_writable_under_umask_000(tmp_path: Path) -> None:
    import os
    import stat

    from dcp_plugin.config.template import write_atomically

    old = os.umask(0)
    try:
        write_atomically(tmp_path / "xdg" / "opencode" / "dcp.jsonc", "{}", exclusive=True)
    finally:
        os.umask(old)
    assert [stat.S_IMODE((tmp_path / p).stat().st_mode) for p in ("xdg", "xdg/opencode")] == [0o755, 0o755]
