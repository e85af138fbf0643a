"""The one error every reader of a recorded session raises: what is wrong with the file, and where."""

from __future__ import annotations


class SessionFileError(Exception):
    """A session file that cannot be used, with what is wrong and where."""
