"""Each config file's last good version kept on disk, so a process started while the file is broken still uses it.

A layer's last good version lived only in the process that read it: a new host process (a new
OpenCode, a bridge restarted after a crash) that found the project's dcp.jsonc mid-edit had
none, and the file's protected patterns were gone until the file was fixed. So every version
that could be used is also written here, one small JSON file per config file, named by a
digest of its path, in a private folder under $XDG_STATE_HOME/opencode/dcp/last-good. A file
the user deletes loses its record too (that is an edit, not a break).

A record is only ever a fallback: it is read when the process has no last good version of its
own, is checked again exactly like the file it came from, and a damaged or foreign one is
ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dcp_plugin.config.loader import LayerResult
from dcp_plugin.config.template import write_atomically
from dcp_plugin.config.validate import validate_layer
from dcp_plugin.xdg import PRIVATE_DIR_MODE, base_dir, make_dirs

FOLDER = ("opencode", "dcp", "last-good")
FORMAT = 1
# A record is a config file's valid keys: never more than the file itself (1 MiB).
MAX_RECORD_BYTES = 2 * 1024 * 1024


def folder(env: Mapping[str, str] | None = None) -> Path:
    """Where the records are kept: $XDG_STATE_HOME/opencode/dcp/last-good (or under ~/.local/state)."""
    return base_dir("XDG_STATE_HOME", env).joinpath(*FOLDER)


class Remembered:
    """The on-disk last good versions of the config files of one process's layers. Never raises."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.folder = folder(env)
        self._written: dict[str, str] = {}  # config file -> the record text this process last wrote or read

    def record_path(self, config_file: Path) -> Path:
        """The record of one config file."""
        digest = hashlib.blake2b(str(config_file).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        return self.folder / f"{digest}.json"

    def load(self, config_file: Path) -> LayerResult | None:
        """The remembered last good version of ``config_file``, checked again; None when there is none usable."""
        try:
            with open(self.record_path(config_file), "rb") as handle:
                raw = handle.read(MAX_RECORD_BYTES + 1)
            record = json.loads(raw) if len(raw) <= MAX_RECORD_BYTES else None
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(record, dict) or record.get("format") != FORMAT or record.get("file") != str(config_file):
            return None
        data = record.get("data")
        if not isinstance(data, dict):
            return None
        try:
            checked, _problems = validate_layer(data, str(config_file))
        except Exception:  # noqa: BLE001 - a damaged record is no record
            return None
        self._written[str(config_file)] = raw.decode("utf-8", "replace")
        return LayerResult(config_file, checked, [])

    def save(self, config_file: Path, data: dict[str, Any]) -> None:
        """Remember ``data`` as the last good version of ``config_file`` (written only when it changed)."""
        try:
            text = json.dumps({"format": FORMAT, "file": str(config_file), "data": data}, ensure_ascii=False, sort_keys=True)
            if self._written.get(str(config_file)) == text:
                return
            make_dirs(self.folder, PRIVATE_DIR_MODE)
            write_atomically(self.record_path(config_file), text, exclusive=False)
            self._written[str(config_file)] = text
        except (OSError, ValueError, TypeError, RecursionError):
            return  # a read-only or full disk: the in-memory last good version still holds

    def forget(self, config_file: Path) -> None:
        """The config file was deleted: its record goes too."""
        self._written.pop(str(config_file), None)
        with contextlib.suppress(OSError):
            os.unlink(self.record_path(config_file))
