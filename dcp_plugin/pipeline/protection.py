"""Protected file paths (gitignore-style via pathspec) and path extraction from tool inputs."""

from __future__ import annotations

import functools
import os
import posixpath
import re
import sys
import urllib.parse
from collections.abc import Iterable, Sequence

from mypy_extensions import mypyc_attr

from dcp_plugin.config.globs import PatternSet, compile_spec
from dcp_plugin.pipeline.commandpaths import command_paths

# The argument keys that hold a path, at the top level of a tool's input and in each entry of
# an `edits` list; `patchText` holds apply_patch headers. The README lists the same keys.
PATH_KEYS: tuple[str, ...] = ("filePath", "path", "file_path", "filename", "notebook_path", "target_file", "file", "uri", "paths")
EDITS_KEY = "edits"
# A `uri` argument names a local file this way (LSP-style tools); other schemes name no file.
FILE_URI = "file://"
PATCH_KEY = "patchText"
# Where other hosts put a patch in the same grammar: the OpenAI Responses adapter maps Codex's
# freeform apply_patch to `{"input": patch}`, OpenAI Chat tools name it `input` or `patch`. Codex's
# parser trims each line, so a header indented there counts (it can only protect more).
LOOSE_PATCH_KEYS: tuple[str, ...] = ("input", "patch")
# OpenCode's apply_patch parser (packages/opencode/src/patch) splits the patch on "\n" and
# takes a header line that starts with one of these, exactly, then trims what follows the
# colon (JavaScript's String.trim); an empty path makes the line no header. `Move to` counts
# only right after `Update File` there; any line is taken here, which can only protect more.
PATCH_HEADERS: tuple[str, ...] = ("*** Add File:", "*** Delete File:", "*** Update File:", "*** Move to:")
# What JavaScript's trim removes: ECMAScript WhiteSpace and LineTerminator code points.
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
# Longer paths are held protected without running any pattern, which bounds what one match can
# cost: with two `**`, a crafted 4,096-character path took 0.1 s per pattern, 1,024 characters
# 5-14 ms. 1,024 is macOS's PATH_MAX (Linux allows 4,096, but such paths are rare and keeping
# one unpruned is harmless); no file system allows a name over 255.
MAX_PATH_CHARS = 1024
MAX_NAME_CHARS = 255
# Distinct path forms whose verdict is remembered per pattern set, so a pattern runs once per
# path (at most 8 MB of paths, and only with paths of the longest kind).
VERDICT_CACHE_SIZE = 2048
# Windows and macOS file systems ignore case by default; elsewhere case matters.
CASE_INSENSITIVE = sys.platform in ("win32", "cygwin", "darwin")

_SLASHES = re.compile(r"/{2,}")
# Windows' extended-length and device prefixes (`\\?\C:\x`, `\\.\C:\x`, `\\?\UNC\server\share`),
# read with backslashes already turned into slashes: they name the same file as `C:\x`.
_EXTENDED = re.compile(r"^//[?.]/(UNC/)?", re.IGNORECASE)
_DRIVE = re.compile(r"^[A-Za-z]:(?=/|$)")


# Every key a path can be read from: an input with none of them (most commands, searches) names none.
_PATH_BEARING = frozenset((*PATH_KEYS, PATCH_KEY, *LOOSE_PATCH_KEYS, EDITS_KEY))
_PLAIN_PATH_KEYS = frozenset(PATH_KEYS) - {PATCH_KEY, *LOOSE_PATCH_KEYS, EDITS_KEY}  # read as they are, nothing else


def _path_of(key: str, item: str) -> str | None:
    """The path a non-empty string under a path key names: a `file://` URI unquoted; None for another URI under `uri`."""
    if item.startswith(FILE_URI):
        return urllib.parse.unquote(item[len(FILE_URI) :])
    if key == "uri" and "://" in item:
        return None  # an http(s) or other URI names no local file
    return item


def _path_values(tool_input: dict[str, object], keys: Iterable[str] = PATH_KEYS) -> list[str]:
    """The strings under the path keys: a string, or each string of a list (`paths`, a list `filePath`).

    ``keys``: the path keys to read, in :data:`PATH_KEYS` order (those the input holds, when known).
    """
    found: list[str] = []
    for key in keys:
        value = tool_input.get(key)
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, str) and item:
                path = _path_of(key, item)
                if path is not None:
                    found.append(path)
    return found


def extract_paths(tool: str, tool_input: object) -> tuple[str, ...]:
    """Every file path a tool call names: path arguments, apply_patch headers, multiedit edits."""
    if not isinstance(tool_input, dict):
        return ()
    # Asked for every finished call of a history (and again for each label): most inputs hold one
    # path key (a read, an edit, a search) or none (a command), told in one pass over their keys.
    key = None
    for name in tool_input:
        if name in _PATH_BEARING:
            if key is not None:
                return _every_path(tool_input)
            key = name
    if key is None:
        return ()
    value = tool_input[key]
    if type(value) is str and key in _PLAIN_PATH_KEYS:
        path = _path_of(key, value) if value else None
        return () if path is None else (path,)
    return _every_path(tool_input)


def _every_path(tool_input: dict[str, object]) -> tuple[str, ...]:
    """:func:`extract_paths` of an input holding a list, a patch, edits or several path keys."""
    # Only the keys the input holds are read, in the order PATH_KEYS gives, so the paths come
    # out as in a full scan.
    bearing = _PATH_BEARING.intersection(tool_input)
    found: list[str] = _path_values(tool_input, [key for key in PATH_KEYS if key in bearing])
    if PATCH_KEY in bearing:
        patch = tool_input[PATCH_KEY]
        if isinstance(patch, str):
            found.extend(patch_paths(patch))
    for key in LOOSE_PATCH_KEYS:
        if key in bearing:
            loose = tool_input[key]
            if isinstance(loose, str) and "*** " in loose:
                found.extend(patch_paths(loose, trimmed=True))
    if EDITS_KEY in bearing:
        edits = tool_input[EDITS_KEY]
        if isinstance(edits, list):
            for edit in edits:
                if isinstance(edit, dict):
                    found.extend(_path_values(edit))
    if len(found) < 2:
        return (found[0],) if found else ()
    return tuple(dict.fromkeys(found))


def patch_paths(patch: str, *, trimmed: bool = False) -> list[str]:
    """The paths of every apply_patch header line, read as OpenCode's parser reads them (``trimmed``: as Codex's)."""
    found = []
    for raw in patch.split("\n"):
        line = raw.lstrip(JS_WHITESPACE) if trimmed else raw
        if not line.startswith("*** "):
            continue
        for header in PATCH_HEADERS:
            if line.startswith(header):
                path = line[len(header) :].strip(JS_WHITESPACE)
                if path:
                    found.append(path)
                break
    return found


# Distinct paths whose normal form is remembered: a session names the same files over and over
# (a cold request reads every call of its history, and labels name them again).
PATH_CACHE_SIZE = 4096


@functools.lru_cache(maxsize=PATH_CACHE_SIZE)
def clean_path(path: str) -> str:
    """A path with `.`, `..` and repeated slashes collapsed, still absolute or relative as given.

    Backslashes become slashes, a drive letter is upper-cased (`c:\\x` -> `C:/x`), and Windows'
    extended-length prefix goes (`\\\\?\\C:\\x` -> `C:/x`).
    """
    path = _SLASHES.sub("/", _EXTENDED.sub(_unextend, path.replace("\\", "/")))
    if _DRIVE.match(path):
        path = path[0].upper() + path[1:]
    return posixpath.normpath(path) if path else path


def _unextend(match: re.Match[str]) -> str:
    return "//" if match.group(1) else ""


def is_absolute(path: str) -> bool:
    """Whether a (cleaned) path is absolute: `/x`, or a Windows drive path `C:/x`."""
    return path.startswith("/") or bool(_DRIVE.match(path))


@functools.lru_cache(maxsize=PATH_CACHE_SIZE)
def absolute_path(path: str, directory: str) -> str:
    """The normalized absolute path, relative paths resolved against the project directory."""
    path = clean_path(path)
    return path if is_absolute(path) else clean_path(posixpath.join(clean_path(directory), path))


# The host's working directory as another process sees it: a tool the host runs starts there, so
# `/proc/self/cwd/x` in a call names `x` in the host's directory.
_CWD_ALIASES = re.compile(r"^/proc/(?:self|thread-self|\d+)/cwd(?=/|$)")


@functools.lru_cache(maxsize=PATH_CACHE_SIZE)
def real_path(path: str) -> str | None:
    """A (cleaned, absolute) path with every symbolic link in it resolved, as far as it exists; None: unknown.

    Remembered like the normal forms: a link made after a path was first seen is not followed
    for it (a new session, or a restart, sees it).
    """
    if not (path.startswith("/") if os.sep == "/" else is_absolute(path)) or too_long(path):
        return None
    try:
        return clean_path(os.path.realpath(path))
    except (OSError, ValueError):  # a NUL, a loop on some systems, an unreadable directory
        return None


def _relative(absolute: str, root: str, ignore_case: bool) -> str | None:
    """``absolute`` relative to ``root`` (both cleaned, ``root`` without a trailing slash), None when outside it."""
    if not root:
        return absolute.lstrip("/")
    inside = absolute.lower().startswith(root.lower() + "/") if ignore_case else absolute.startswith(root + "/")
    return absolute[len(root) + 1 :] if inside else None


def path_forms(
    path: str, directory: str, root: str | None = None, ignore_case: bool = CASE_INSENSITIVE
) -> tuple[str, ...]:
    """The forms a pattern is matched against: as given (normalized), relative to the project root, and real.

    Relative paths are resolved against ``directory`` (where the host runs); the project
    root (``root``, default ``directory``) is what relative patterns are anchored to. Where
    the file (or a directory above it) exists, its real path, with symbolic links resolved,
    is matched too, as is that path relative to the root's real path: a link inside the
    project, a project opened through a link, or ``/proc/self/cwd`` name the protected file.
    """
    given = clean_path(path)
    forms = [given]
    absolute = _CWD_ALIASES.sub(lambda _: clean_path(directory), absolute_path(path, directory))
    root = clean_path(directory if root is None else root).rstrip("/")
    forms.append(_relative(absolute, root, ignore_case) or "")
    real = real_path(absolute) or absolute
    real_root = (real_path(root) or root).rstrip("/") if root else root
    if real != absolute or real_root != root:
        forms += (real, _relative(real, real_root, ignore_case) or "", _relative(real, root, ignore_case) or "")
    return tuple(dict.fromkeys(f for f in forms if f and f != "."))


def too_long(path: str) -> bool:
    """Whether a path is longer than any file system allows (then no pattern is run on it)."""
    return len(path) > MAX_PATH_CHARS or any(len(name) > MAX_NAME_CHARS for name in path.split("/"))


@mypyc_attr(allow_interpreted_subclasses=True)
class _Matcher:
    """The compiled patterns of one config, with a bounded verdict per path form."""

    def __init__(self, spec: PatternSet) -> None:
        self.matches = functools.lru_cache(maxsize=VERDICT_CACHE_SIZE)(self._match)
        self._spec = spec

    def _match(self, form: str) -> bool:
        return self._spec.match_file(form)


@functools.lru_cache(maxsize=8)
def _matcher(patterns: tuple[str, ...], ignore_case: bool) -> _Matcher | None:
    # Sessions of one config share the compiled patterns and the verdicts.
    spec = compile_spec(patterns, ignore_case)
    return _Matcher(spec) if spec is not None else None


@mypyc_attr(allow_interpreted_subclasses=True)
class PathProtector:
    """Decides whether any path of a call matches the configured protected patterns."""

    def __init__(
        self, patterns: Iterable[str], directory: str, root: str | None = None, ignore_case: bool = CASE_INSENSITIVE
    ) -> None:
        usable = tuple(p for p in patterns if isinstance(p, str) and p.strip())
        self.directory = clean_path(directory)
        # Patterns are relative to the project root, which is above `directory` in a sub-directory.
        self.root = clean_path(root) if root is not None else self.directory
        self.ignore_case = ignore_case
        self._matcher = _matcher(usable, ignore_case) if usable else None
        self.guards = self._matcher is not None  # some pattern is set: without one no path is protected

    def protected_path(self, tool: str, tool_input: object, paths: Sequence[str]) -> str | None:
        """The first path of a call that is protected: a path argument, else a file its shell command prints."""
        if self._matcher is None:
            return None
        for path in (*paths, *command_paths(tool_input)):
            if self.is_protected((path,)):
                return path
        return None

    def is_protected(self, paths: Iterable[str]) -> bool:
        """True when some form of some path matches a protected pattern (or is too long to match)."""
        matcher = self._matcher
        if matcher is None:
            return False
        return any(
            too_long(form) or matcher.matches(form)
            for p in paths
            for form in path_forms(p, self.directory, self.root, self.ignore_case)
        )
