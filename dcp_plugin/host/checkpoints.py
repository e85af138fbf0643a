"""Checkpoints of long sessions' pruning state on disk: a restarted host resumes a session without replaying it.

A session seen for the first time replays every request its history implies (seconds at
20,000 messages). A checkpoint is that replay's result, saved next to the statistics database
once a session has read :data:`EVERY_MESSAGES` messages since its last one; the next process
loads it and walks only the messages that came after. It is a cache: a missing, stale or
damaged one only means replaying the history once, exactly as without it.

A checkpoint holds what the session state holds: call ids, tool names, file paths and the
placeholders' short labels, never tool outputs or message text. It is used only by the process
that wrote it or a later one running the same code with the same config, directory, pins and
sweeps (:func:`fingerprint`), and only from a private file the user owns.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import io
import json
import logging
import os
import pickle
import queue
import stat
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from dcp_plugin import compiled
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline.gcpause import gc_paused
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.xdg import PRIVATE_DIR_MODE, make_dirs

log = logging.getLogger("dcp_plugin")

FOLDER = "checkpoints"
SUFFIX = ".ckpt"
_MAGIC = b"dcp-checkpoint 1\n"
# A shorter history replays in well under a second: its checkpoint would cost more disk than it saves time.
EVERY_MESSAGES = 2_000
# Checkpoints kept at most; the least recently written go first (losing one costs one replay).
MAX_FILES = 32
# Fast enough to stay a small share of pickling, and a 20,000-message state shrinks about fivefold.
_ZLIB_LEVEL = 1
_FILE_MODE = 0o600
# The writer waits this long before pickling (which holds the interpreter): the request that
# made the checkpoint due is on its way to the model by then, in any host.
GRACE_SECONDS = 1.0
# A temporary file older than this was left by a process that died while writing it.
_STALE_TEMP_SECONDS = 3600.0

# What a writer job returns: (messages read, the payload) or None when nothing is to be written.
Take = Callable[[], "tuple[str, int, bytes] | None"]


@functools.cache
def code_fingerprint() -> str | None:
    """A digest of the installed package's source, None without sources: a checkpoint is read only by the code that wrote it."""
    root = Path(__file__).resolve().parents[1]  # the dcp_plugin package
    sources = sorted(root.rglob("*.py"))
    if not sources:
        return None  # installed without its sources: nothing tells one version from the next
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{sys.version_info[0]}.{sys.version_info[1]}".encode())
    for path in sources:
        digest.update(path.relative_to(root).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        with contextlib.suppress(OSError):
            digest.update(path.read_bytes())
    return digest.hexdigest()


def fingerprint(
    config: DcpConfig,
    directory: str,
    root: str | None,
    tools_offered: bool,
    pinned: Iterable[str],
    manual: Mapping[str, str],
) -> str:
    """Everything besides the history that decides a session's state: a checkpoint is used only when it matches."""
    inputs = {
        "code": code_fingerprint(),
        # Compiled and plain classes pickle differently: a checkpoint is read by the kind that wrote it.
        "compiled": compiled.IN_USE,
        "config": config.model_dump(mode="json", by_alias=True),
        "directory": directory,
        "root": root,
        "tools": tools_offered,
        "pinned": sorted(pinned),
        "manual": sorted(manual.items()),
    }
    text = json.dumps(inputs, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def state_key(state: SessionState, tools_offered: bool | None = None) -> str:
    """The fingerprint of a live session state (what it was built from)."""
    offered = state.tools_offered if tools_offered is None else tools_offered
    return fingerprint(state.config, state.directory, state.root, offered, state.pinned, state.manual)


def _file_name(session_id: str) -> str:
    # Session ids are the host's: any characters, any length.
    return hashlib.blake2b(session_id.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest() + SUFFIX


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_POSIX = hasattr(os, "getuid")


def _private(info: os.stat_result) -> bool:
    """Whether the opened file is the user's own and nobody else may write it (it is unpickled)."""
    owner_ok = not _POSIX or info.st_uid == os.getuid()
    return owner_ok and stat.S_ISREG(info.st_mode) and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def unsafe_folder(folder: Path) -> str | None:
    """Why checkpoints must not be read from or written to ``folder``, or None when it is private.

    Anyone who may write the folder may swap a file in it (or a symlink to one of theirs) for
    a checkpoint, which is unpickled: the folder must be a real directory (not a symlink) that
    the user owns and that neither the group nor others may write.
    """
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return None  # nothing to read; a writer creates it private
    except OSError as exc:
        return f"it cannot be checked ({exc.strerror or exc})"
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a directory"
    if _POSIX and info.st_uid != os.getuid():
        return "another user owns it"
    if _POSIX and info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"its group or other users may write it (mode {stat.S_IMODE(info.st_mode):o}); run `chmod 700` on it"
    return None


class Checkpoints:
    """The checkpoint folder of one store: loads on a session's first sight, writes from a background thread."""

    def __init__(self, folder: Path | None) -> None:
        self.wanted = folder  # the folder asked for
        # None (no store on disk, or no sources to fingerprint the code by): no checkpoints.
        self.folder = folder if folder is not None and code_fingerprint() is not None else None
        self._jobs: queue.Queue[tuple[str, Take]] = queue.Queue()
        self._waiting: set[str] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def load(self, session_id: str, key: str) -> SessionState | None:
        """The session's checkpointed state when one was written under ``key``; None otherwise. Never raises."""
        if self.folder is None:
            return None
        path = self.folder / _file_name(session_id)
        refused = unsafe_folder(self.folder)
        if refused is not None:
            log.warning("dcp: ignoring the checkpoints in %s: %s", self.folder, refused)
            return None
        try:
            try:
                # never through a symlink, and checked on the descriptor that is read
                fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
            except FileNotFoundError:
                return None
            with os.fdopen(fd, "rb") as handle:
                if not _private(os.fstat(handle.fileno())):
                    log.warning("dcp: ignoring checkpoint %s: another user owns it or may write it", path)
                    return None
                if handle.readline() != _MAGIC:
                    raise ValueError("not a dcp checkpoint")
                header = json.loads(handle.readline())
                if header.get("session") != session_id or header.get("key") != key:
                    return None  # written under other code, config, pins or sweeps: replay instead
                payload = zlib.decompress(handle.read())
            state = _unpickle(payload)
            if not isinstance(state, SessionState) or state.session_id != session_id:
                raise ValueError("the checkpoint holds no state of this session")
            return state
        except Exception as exc:  # noqa: BLE001 - a damaged cache only means one replay
            log.warning("dcp: checkpoint %s unreadable (%s); replaying the session instead", path, exc)
            with contextlib.suppress(OSError):
                path.unlink()
            return None

    def save_later(self, session_id: str, take: Take) -> None:
        """Write the session's checkpoint from the writer thread; ``take`` (run there) returns it."""
        if self.folder is None:
            return
        with self._lock:
            if session_id in self._waiting:
                return  # one write per session at a time: the queued one takes the newest state
            self._waiting.add(session_id)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="dcp-checkpoints", daemon=True)
                self._thread.start()
        self._jobs.put((session_id, take))

    def wait(self) -> None:
        """Block until every queued checkpoint is written (tests, and a CLI about to exit)."""
        self._jobs.join()

    def _work(self) -> None:
        while True:
            session_id, take = self._jobs.get()
            try:
                time.sleep(GRACE_SECONDS)
                with self._lock:
                    self._waiting.discard(session_id)
                taken = take()
                if taken is not None:
                    self._write(session_id, *taken)
            except Exception:  # noqa: BLE001 - the writer thread outlives any one failure
                log.exception("dcp: could not write the checkpoint of session %s", session_id)
            finally:
                self._jobs.task_done()

    def _write(self, session_id: str, key: str, messages: int, payload: bytes) -> None:
        folder = self.folder
        assert folder is not None
        make_dirs(folder, PRIVATE_DIR_MODE)
        refused = unsafe_folder(folder)
        if refused is not None:
            log.warning("dcp: writing no checkpoint into %s: %s", folder, refused)
            return
        header = json.dumps({"session": session_id, "key": key, "messages": messages, "written": time.time()})
        target = folder / _file_name(session_id)
        temp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        with contextlib.suppress(OSError):
            temp.unlink()  # left by a process of the same id that died mid-write
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, _FILE_MODE)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(_MAGIC + header.encode() + b"\n" + zlib.compress(payload, _ZLIB_LEVEL))
            # Another process reading the file sees the old checkpoint or the new one, never half of one.
            os.replace(temp, target)
        finally:
            with contextlib.suppress(OSError):
                temp.unlink()
        self._prune(folder)

    @staticmethod
    def _prune(folder: Path) -> None:
        """Keep the newest MAX_FILES checkpoints; remove temporary files writers left behind."""
        now = time.time()
        kept: list[tuple[float, Path]] = []
        for path in folder.iterdir():
            with contextlib.suppress(OSError):
                written = path.stat().st_mtime
                if path.name.endswith(".tmp") and now - written > _STALE_TEMP_SECONDS:
                    path.unlink()
                elif path.name.endswith(SUFFIX):
                    kept.append((written, path))
        kept.sort(reverse=True)
        for _, path in kept[MAX_FILES:]:
            with contextlib.suppress(OSError):
                path.unlink()


def snapshot_of(state: SessionState) -> bytes:
    """The session state as the bytes a checkpoint holds (the caller holds the session's lock)."""
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
    return buffer.getvalue()


class _Pickler(pickle.Pickler):
    """Pickles a frozen dataclass as a call of its constructor with its fields.

    Unpickling otherwise sets a frozen instance's fields one by one, which a compiled frozen
    dataclass refuses; its constructor builds it the same way in either build.
    """

    def reducer_override(self, obj: object) -> Any:  # NotImplemented, or a reduce tuple
        kind = type(obj)
        try:
            names = _FIELDS[kind]
        except KeyError:
            names = _FIELDS[kind] = _constructor_fields(kind)
        if names is None:
            return NotImplemented
        return kind, tuple(getattr(obj, name) for name in names)


# The answer of _constructor_fields per type (types are few; their instances many).
_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _constructor_fields(kind: type) -> tuple[str, ...] | None:
    """The fields a frozen dataclass's constructor takes in order; None for any other type (pickled as usual)."""
    params = getattr(kind, "__dataclass_params__", None)
    if params is None or not params.frozen:
        return None
    fields = dataclasses.fields(kind)
    if any(not field.init or field.kw_only for field in fields):
        return None
    return tuple(field.name for field in fields)


def _unpickle(payload: bytes) -> object:
    # The collector would walk the hundreds of thousands of objects being built, again and
    # again: loading takes about half as long without it.
    with gc_paused():
        return pickle.loads(payload)  # noqa: S301 - our own private file, fingerprinted (see module docstring)
