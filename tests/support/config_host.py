"""A host reading a project's real config files through pluggy, and the ways a dcp.jsonc gets broken."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pluggy
import pytest

import dcp_plugin
import dcp_plugin.host.hostspec
from dcp_plugin.host.runtime import Runtime
from tests.support.helpers import call, user

BIG = "secret material line that is long enough to be worth pruning\n" * 30
GOOD = '{"protectedFilePatterns": ["secrets/**"]}\n'
_bump = [1_000_000_000_000]


class Host:
    """A host whose runtime reads the project's config files, with the dcp plugin registered through pluggy."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.notes: list[str] = []
        self.pm = pluggy.PluginManager(dcp_plugin.PROJECT_NAME)
        self.pm.add_hookspecs(dcp_plugin.host.hostspec)
        self.pm.register(dcp_plugin.DcpPlugin(Runtime(str(project))), name="dcp")
        self.pm.hook.host_startup(context={"directory": str(project), "notify": lambda sid, text: self.notes.append(text)})
        self.session = 0

    def pruned(self, relative: str) -> bool:
        """Whether the older of two identical reads of ``relative`` is pruned in a new session."""
        self.session += 1
        sid = f"ses_{self.session}"
        messages = [user(session=sid)] + [call("read", {"filePath": str(self.project / relative)}, output=BIG) for _ in range(2)]
        for message in messages:
            message["info"]["sessionID"] = sid
        sent = copy.deepcopy(messages)
        self.pm.hook.chat_messages_transform(input={"sessionID": sid}, output={"messages": sent})
        return bool(sent[1]["parts"][0]["state"]["output"] != BIG)


@pytest.fixture
def project(tmp_path: Path, isolated_home: Path) -> Path:
    # The user's own config writes prunes at once, so a read that is not pruned is a protected one.
    (isolated_home / ".config" / "opencode").mkdir(parents=True)
    (isolated_home / ".config" / "opencode" / "dcp.jsonc").write_text('{"cache": {"scheduler": false}}')
    (tmp_path / "proj" / ".opencode").mkdir(parents=True)
    return tmp_path / "proj"


def config_path(project: Path) -> Path:
    return project / ".opencode" / "dcp.jsonc"


def remove(path: Path) -> None:
    """Whatever is at ``path`` (a file, a FIFO, a symlink, an empty directory) is gone."""
    if path.is_dir() and not path.is_symlink():
        path.rmdir()
    elif os.path.lexists(path):
        path.unlink()


def write(path: Path, data: str | bytes) -> None:
    """Replace the file's content; its modification time moves on, as after a save."""
    remove(path)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    _bump[0] += 1_000_000_000
    os.utime(path, ns=(_bump[0], _bump[0]))


def swap(path: Path, kind: str) -> None:
    """Make the config file something that cannot be read as a config."""
    remove(path)
    if kind == "dangling symlink":
        path.symlink_to(path.parent / "missing.jsonc")
    elif kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink loop":
        path.symlink_to(path)


