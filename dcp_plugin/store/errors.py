"""What an SQLite failure means: a corrupt file, a file locked by another process, or the machine."""

from __future__ import annotations

import sqlite3

# Error names (Python >= 3.11 exposes them) and message fragments meaning the file's content is
# not a database: only then is it moved aside. Everything else is the machine, not the file (out
# of descriptors, permissions, a read-only mount, "unable to open database file", disk full,
# locked): the data is kept and opening is retried later.
_CORRUPT_NAMES = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})
_CORRUPT_WORDS = ("malformed", "not a database", "file is encrypted")


class StoreUnavailable(Exception):
    """The store cannot be used right now (reason in the message)."""


class NotAStore(Exception):
    """A file given to read statistics from is missing or is not a dcp state database."""


def is_corruption(exc: BaseException) -> bool:
    """Whether an sqlite3 error is about the file's content (corrupt, not a database).

    Not "unable to open database file" (SQLITE_CANTOPEN): that is what SQLite says when it is
    out of file descriptors, on a read-only mount or without permission, with a healthy file.
    """
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    if getattr(exc, "sqlite_errorname", None) in _CORRUPT_NAMES:
        return True
    text = str(exc).lower()
    return any(word in text for word in _CORRUPT_WORDS)


def is_busy(exc: BaseException) -> bool:
    """Whether an sqlite3 error only means another connection holds the lock right now."""
    if getattr(exc, "sqlite_errorname", None) in ("SQLITE_BUSY", "SQLITE_LOCKED"):
        return True
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def reason(exc: BaseException) -> str:
    """The words of an error, without its number when the system gives them."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)
