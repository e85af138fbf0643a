"""Protected file paths (gitignore-style via pathspec) and path extraction from tool inputs."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from typing import Any

import pathspec

PATH_KEYS: tuple[str, ...] = ("filePath", "path", "file_path", "filename")
_PATCH_PATH = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)
_SLASHES = re.compile(r"/{2,}")


def extract_paths(tool: str, tool_input: Any) -> tuple[str, ...]:
    """Every file path a tool call names: path arguments, apply_patch headers, multiedit edits."""
    if not isinstance(tool_input, dict):
        return ()
    found: list[str] = [v for k in PATH_KEYS if isinstance(v := tool_input.get(k), str) and v]
    patch = tool_input.get("patchText")
    if isinstance(patch, str):
        for match in _PATCH_PATH.finditer(patch):
            found.append(match.group(1) or match.group(2))
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        for edit in edits:
            if isinstance(edit, dict):
                found.extend(v for k in PATH_KEYS if isinstance(v := edit.get(k), str) and v)
    return tuple(dict.fromkeys(found))


def clean_path(path: str) -> str:
    """A path with `.`, `..` and repeated slashes collapsed, still absolute or relative as given."""
    path = _SLASHES.sub("/", path.replace("\\", "/"))
    return posixpath.normpath(path) if path else path


def absolute_path(path: str, directory: str) -> str:
    """The normalized absolute path, relative paths resolved against the project directory."""
    return clean_path(posixpath.join(directory, path) if not path.startswith("/") else path)


def path_forms(path: str, directory: str, root: str | None = None) -> tuple[str, ...]:
    """The forms a pattern is matched against: as given (normalized) and relative to the project root.

    Relative paths are resolved against ``directory`` (where the host runs); the project
    root (``root``, default ``directory``) is what relative patterns are anchored to.
    """
    given = clean_path(path)
    forms = [given]
    absolute = absolute_path(path, directory)
    root = clean_path(directory if root is None else root)
    if root == "/":
        forms.append(absolute.lstrip("/"))
    elif absolute.startswith(root + "/"):
        forms.append(absolute[len(root) + 1 :])
    return tuple(dict.fromkeys(f for f in forms if f and f != "."))


class PathProtector:
    """Decides whether any path of a call matches the configured protected patterns."""

    def __init__(self, patterns: Iterable[str], directory: str, root: str | None = None) -> None:
        patterns = [p for p in patterns if isinstance(p, str) and p.strip()]
        self.directory = clean_path(directory)
        # Patterns are relative to the project root, which is above `directory` in a sub-directory.
        self.root = clean_path(root) if root is not None else self.directory
        self._spec = pathspec.PathSpec.from_lines("gitignore", patterns) if patterns else None

    def is_protected(self, paths: Iterable[str]) -> bool:
        """True when some form of some path matches a protected pattern."""
        if self._spec is None:
            return False
        spec = self._spec
        return any(spec.match_file(form) for p in paths for form in path_forms(p, self.directory, self.root))
