"""Rewrite an unmodified dcp.jsonc of an earlier version as the current template, the old file kept beside it.

The loader already ignores the defaults such a file holds (config/earlier.py); the rewrite
makes the file say so, list the current settings, and stay plain to edit: an edit to the old
file would have been read against the old template. Only a file equal to what an earlier
version wrote is rewritten (an edited one is the user's, and stays as it is), never through
a symlink (the file is then the user's own, say in a dotfiles repository), and never when the
backup name holds something else or the file changed while this ran.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from dcp_plugin.config.discovery import BACKUP_SUFFIX
from dcp_plugin.config.earlier import carries_marker, sort_values
from dcp_plugin.config.parse import parse_text, read_text
from dcp_plugin.config.template import render, write_atomically


def backup_of(path: Path) -> Path:
    """Where the rewrite keeps the old file: `dcp.jsonc.bak` beside it."""
    return path.with_name(path.name + BACKUP_SUFFIX)


def upgrade_earlier_template(path: Path, schema_uri: str | None) -> Path | None:
    """Rewrite ``path`` when it is an earlier version's unmodified template; the backup's path, or None."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
    except OSError:
        return None
    text, _ = read_text(path)
    if text is None or not carries_marker(text):
        return None
    parsed = parse_text(text, str(path))
    if parsed.data is None or not sort_values(text, parsed.data).unmodified:
        return None
    backup = backup_of(path)
    if not write_atomically(backup, text, exclusive=True) and _text(backup) != text:
        return None  # another file by that name: keep it, and leave this one too (its defaults are ignored anyway)
    if _text(path) != text:
        return None  # edited meanwhile: the edit is the user's
    write_atomically(path, render(schema_uri), exclusive=False)
    return backup


def _text(path: Path) -> str | None:
    text, _ = read_text(path)
    return text
