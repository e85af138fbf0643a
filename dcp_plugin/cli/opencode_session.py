"""Read OpenCode sessions through the `opencode` binary: the latest one of a project, or one by id."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dcp_plugin.config.discovery import project_root
from dcp_plugin.model.jsontext import NumberTooLong, loads
from dcp_plugin.replay.file_error import SessionFileError
from dcp_plugin.replay.sessionfile import parse_session

# Both commands start the whole OpenCode binary (1-8 s here, more on a busy machine).
TIMEOUT_SECONDS = 120
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class OpencodeError(Exception):
    """OpenCode could not be found or asked; the message says why and what to do instead."""


@dataclass(frozen=True)
class SessionSummary:
    """One line of `opencode session list --format json`."""

    id: str
    title: str
    updated: int
    directory: str


def find_opencode(explicit: str | None = None) -> str:
    """The `opencode` executable: the one given, else $OPENCODE_BIN, else the one on PATH."""
    candidate = explicit or os.environ.get("OPENCODE_BIN") or shutil.which("opencode")
    if not candidate:
        raise OpencodeError(
            "`opencode` is not on PATH; pass --opencode PATH, or export the session yourself "
            "(`opencode export SESSION_ID > session.json`) and run `dcp context session.json`"
        )
    if os.sep in candidate and not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
        raise OpencodeError(f"{candidate} is not an executable file")
    return candidate


def _run(binary: str, args: list[str], cwd: Path) -> str:
    """What ``opencode ARGS --pure`` prints on stdout, read from a file it wrote to."""
    # --pure: no plugins, so reading a session never starts a bridge nor waits for plugin installs.
    command = [binary, *args, "--pure"]
    # OpenCode 1.18 cuts its stdout short when it writes to a pipe (128 or 80 KiB of a 600 KB export);
    # to a regular file it always writes the whole document, so stdout goes to a temporary file.
    with tempfile.TemporaryFile() as out:
        try:
            done = subprocess.run(
                command, cwd=cwd, stdout=out, stderr=subprocess.PIPE, timeout=TIMEOUT_SECONDS, check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise OpencodeError(f"`opencode {' '.join(args)}` did not finish within {TIMEOUT_SECONDS} s") from None
        except OSError as exc:
            raise OpencodeError(f"cannot run {binary}: {exc.strerror or exc}") from None
        out.seek(0)
        stdout = out.read().decode("utf-8", errors="replace")
    stderr = done.stderr.decode("utf-8", errors="replace")
    if done.returncode != 0:
        lines = [line.strip() for line in _ANSI.sub("", stderr + stdout).splitlines() if line.strip()]
        reason = next((line for line in reversed(lines) if line.startswith("Error")), lines[-1] if lines else "no output")
        raise OpencodeError(f"`opencode {' '.join(args)}` failed (exit {done.returncode}): {reason}")
    return stdout


def _json_document(text: str, what: str) -> Any:
    # Some versions print a status line before the JSON document.
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    try:
        return loads(text[min(starts) :])
    except NumberTooLong as exc:
        raise OpencodeError(f"{what} printed a number too long to read ({exc} at line {exc.line})") from None
    except json.JSONDecodeError as exc:
        raise OpencodeError(f"{what} printed something that is not JSON ({exc.msg} at line {exc.lineno})") from None


def list_sessions(binary: str, directory: Path) -> list[SessionSummary]:
    """The top-level sessions `opencode session list` shows when started in ``directory``."""
    data = _json_document(_run(binary, ["session", "list", "--format", "json"], directory), "`opencode session list`")
    if data is None:
        return []  # OpenCode prints nothing at all when there is no session
    if not isinstance(data, list):
        raise OpencodeError("`opencode session list --format json` did not print a list")
    sessions = []
    for item in data:
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            updated = item.get("updated")
            sessions.append(
                SessionSummary(
                    id=item["id"],
                    title=str(item.get("title") or ""),
                    updated=updated if isinstance(updated, int) else 0,
                    directory=str(item.get("directory") or ""),
                )
            )
    return sessions


def project_sessions(binary: str, directory: Path) -> list[SessionSummary]:
    """The sessions started inside the project around ``directory``, most recently updated first."""
    root = project_root(directory)
    # Outside git every directory belongs to OpenCode's one "global" project: keep this project's own.
    mine = [s for s in list_sessions(binary, directory) if _inside(Path(s.directory), root)]
    if not mine:
        raise OpencodeError(
            f"no OpenCode session found for {root}; start one there with `opencode`, or pass a session id "
            "(`opencode session list` shows them)"
        )
    return sorted(mine, key=lambda s: s.updated, reverse=True)



def _inside(path: Path, root: Path) -> bool:
    try:
        return path.is_absolute() and Path(os.path.abspath(path)).is_relative_to(root)
    except ValueError:
        return False


def export_session(binary: str, session_id: str, directory: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(info, messages) of one session, read with `opencode export`."""
    data = _json_document(_run(binary, ["export", session_id], directory), f"`opencode export {session_id}`")
    if data is None:
        raise OpencodeError(f"`opencode export {session_id}` printed no session")
    try:
        return parse_session(data, f"`opencode export {session_id}`")
    except SessionFileError as exc:
        raise OpencodeError(str(exc)) from None
