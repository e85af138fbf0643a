"""The debug log: one private line per pruning decision, appended to a file under the state dir."""

from __future__ import annotations

import datetime as dt
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from dcp_plugin.printable import escape
from dcp_plugin.xdg import PRIVATE_DIR_MODE, base_dir, make_dirs

FILE_MODE = 0o600
DIR_MODE = PRIVATE_DIR_MODE


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """$XDG_STATE_HOME/opencode/dcp, or ~/.local/state/opencode/dcp (a relative XDG value is ignored)."""
    return base_dir("XDG_STATE_HOME", env) / "opencode" / "dcp"


def format_line(when: dt.datetime, session_id: str, call_id: str, tool: str, reason: str, detail: str) -> str:
    """Tab-separated fields: ISO time, session, call, tool, reason, detail.

    Ids come from the host's messages: backslashes, tabs, newlines, every other control
    character and lone surrogates are escaped, so a line stays one line of valid UTF-8 and
    `tail -f` cannot be made to emit terminal escape sequences.
    """
    fields = [when.isoformat(timespec="milliseconds"), session_id, call_id, tool, reason, detail]
    return "\t".join(escape(str(f), backslash=True) for f in fields) + "\n"


class DebugLog:
    """Appends decisions to a 0600 file, opened on first use; disables itself on any OSError."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._handle: IO[str] | None = None
        self._disabled = False
        self._lock = threading.Lock()

    @classmethod
    def for_environment(cls, env: Mapping[str, str] | None = None) -> DebugLog:
        """The log at $XDG_STATE_HOME/opencode/dcp/debug.log (nothing is created until a decision is written)."""
        return cls(state_dir(env) / "debug.log")

    @property
    def disabled(self) -> bool:
        """True after a write failed; later decisions are dropped silently."""
        return self._disabled

    def decision(self, session_id: str, call_id: str, tool: str, reason: str, detail: str = "") -> None:
        """Append one line for one decision; never raises."""
        if self._disabled:
            return
        try:
            line = format_line(dt.datetime.now(dt.UTC), session_id, call_id, tool, reason, detail)
            with self._lock:
                handle = self._handle or self._open()
                handle.write(line)
                handle.flush()
        except (OSError, ValueError) as exc:  # ValueError: write to a file closed elsewhere
            self._disable(exc)

    def _open(self) -> IO[str]:
        make_dirs(self.path.parent, DIR_MODE)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            # an existing file keeps its old mode through os.open, so tighten it here
            if os.fstat(fd).st_mode & 0o777 != FILE_MODE:
                os.fchmod(fd, FILE_MODE)
            self._handle = os.fdopen(fd, "a", encoding="utf-8")
        except BaseException:
            os.close(fd)
            raise
        return self._handle

    def _disable(self, exc: BaseException) -> None:
        self._disabled = True
        self.close()
        try:
            print(f"dcp: debug log {self.path} disabled: {exc}", file=sys.stderr)
        except Exception:  # noqa: BLE001 - a closed stderr leaves nowhere to say it
            pass

    def close(self) -> None:
        """Close the file; a later decision reopens it unless the log was disabled."""
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is not None:
            try:
                handle.close()
            except OSError:
                pass
