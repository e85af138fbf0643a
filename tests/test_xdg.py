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
