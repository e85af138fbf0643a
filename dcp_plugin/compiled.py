"""The compiled core: which modules a build compiles, and whether this process runs them compiled.

A build compiles the hot path (the pipeline, the model, the budget, the cost rules) with mypyc
where it can; the same modules stay importable as plain Python. A compiled module is used only
when the sources it was built from are the sources on disk: after an edit (an editable install)
every module of the group is loaded from its ``.py`` again, since compiled modules call each
other directly and a mix of old and new code would be neither. ``DCP_PURE_PYTHON=1`` forces plain
Python, at build time (nothing compiled) and at run time (nothing compiled loaded).

Each class of the group carries ``@mypyc_attr(allow_interpreted_subclasses=True)``. Compiled
without it, a class runs its ``__init__`` inside ``__new__``, and unpickling a checkpoint, which
makes the instance first and fills it after, fails. (``serializable=True``, the documented switch,
leaves ``__init__`` unrun when Python code makes an instance, in mypyc 2.4.)

Imported first by the package, before any module of the group: it imports nothing of the project.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

PURE_ENV = "DCP_PURE_PYTHON"
# The folders whose modules are compiled, relative to the package.
FOLDERS = ("model", "budget", "cost", "pipeline", "pipeline/strategies")
# Left in Python: a ClassVar in a dataclass (continuity), a field with init=False (calibration),
# and a class the store subclasses (totals), which mypyc does not compile or does not allow.
LEFT_OUT = frozenset({"model/continuity.py", "budget/calibration.py", "cost/totals.py"})
# Written in C, built with the group and used only with it: module name, and its source relative to the package.
NATIVE = {"dcp_plugin.pipeline._rowwalk": "pipeline/rowwalk.c"}
# Written by the build next to the compiled modules: the digest of the sources they came from.
STAMP = "_compiled.json"
# How a build's stamp begins the reason when the compiler failed (tests/project/test_compiled.py reads it).
COMPILE_FAILED = "compiling failed"
ROOT = Path(__file__).resolve().parent


def sources(root: Path = ROOT) -> list[Path]:
    """The source files a build compiles, in a fixed order."""
    found = [path for folder in FOLDERS for path in sorted((root / folder).glob("*.py"))]
    return [path for path in found if path.relative_to(root).as_posix() not in LEFT_OUT]


def native_sources(root: Path = ROOT) -> list[Path]:
    """The C sources a build compiles beside the group (:data:`NATIVE`)."""
    return [root / source for source in NATIVE.values()]


def module_name(path: Path, root: Path = ROOT) -> str:
    """The import name of one of :func:`sources`."""
    parts = (root.name, *path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def digest(paths: Sequence[Path], root: Path = ROOT) -> str:
    """The digest of ``paths``' names and contents, and of the Python version they are built for."""
    hasher = hashlib.blake2b(digest_size=16)
    hasher.update(f"{sys.version_info[0]}.{sys.version_info[1]}".encode())
    for path in paths:
        hasher.update(path.relative_to(root).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        hasher.update(path.read_bytes())
    return hasher.hexdigest()


def write_stamp(target: Path, root: Path = ROOT, plain: str | None = None) -> None:
    """Record, in the package folder ``target``, which sources the compiled modules came from.

    ``plain``: why the build compiled nothing (:func:`describe` tells the user).
    """
    paths = sources(root)
    stamp: dict[str, object] = {
        "digest": digest([*paths, *native_sources(root)], root),
        "modules": [module_name(p, root) for p in paths] + list(NATIVE),
    }
    if plain is not None:
        # No digest: compiled modules an earlier build left beside the sources are not used.
        stamp = {"modules": [], "plain": plain}
    (target / STAMP).write_text(json.dumps(stamp, indent=1) + "\n", encoding="utf-8")


def _read_stamp(root: Path) -> dict[str, object]:
    """The stamp the build wrote, or an empty one (a source tree never built, a damaged file)."""
    try:
        stamp = json.loads((root / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stamp if isinstance(stamp, dict) else {}


def built_plain(root: Path = ROOT) -> str | None:
    """Why the installed build compiled nothing, as it recorded; None when it compiled or left no record."""
    why = _read_stamp(root).get("plain")
    return why if isinstance(why, str) else None


def _has_extension(path: Path) -> bool:
    return any(path.with_suffix(suffix).exists() for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def _reason_for_python(root: Path, paths: Sequence[Path] | None = None) -> str | None:
    """Why the group must load as plain Python (None: the compiled modules are current, or there are none).

    ``paths``: the group's :func:`sources` under ``root`` when the caller has listed them.
    """
    paths = sources(root) if paths is None else paths
    if not any(_has_extension(path) for path in paths):
        return None
    if os.environ.get(PURE_ENV, "").strip() not in ("", "0"):
        return f"{PURE_ENV} is set"
    built_from = _read_stamp(root).get("digest")
    try:
        current = digest([*paths, *native_sources(root)], root)
    except OSError:
        return "a source file could not be read"
    if built_from != current:
        return "the sources changed since the build (reinstall to compile them again)"
    return None


class _PlainPython:
    """Finds the group's modules as their ``.py`` files, ahead of the compiled ones beside them."""

    def __init__(self, paths: dict[str, Path]) -> None:
        self.paths = paths

    def find_spec(self, fullname: str, path: object = None, target: ModuleType | None = None) -> ModuleSpec | None:
        source = self.paths.get(fullname)
        if source is None:
            return None
        locations = [str(source.parent)] if source.name == "__init__.py" else None
        return importlib.util.spec_from_file_location(fullname, source, submodule_search_locations=locations)


def _choose() -> tuple[bool, str | None]:
    """Whether the compiled modules run, and why not when they are there but stay unused."""
    paths = sources(ROOT)
    try:
        reason = _reason_for_python(ROOT, paths)
    except OSError as exc:  # an unreadable package folder: plain Python, which reads the same files
        reason = f"the package could not be read ({exc})"
    if reason is not None:
        sys.meta_path.insert(0, _PlainPython({module_name(p): p for p in paths}))
        return False, reason
    return any(_has_extension(p) for p in paths), None


IN_USE, WHY_NOT = _choose()


def describe() -> str:
    """One line for a version string or a benchmark's header: compiled or plain Python, and why."""
    if IN_USE:
        return "compiled core (mypyc)"
    if WHY_NOT:
        return f"plain Python ({WHY_NOT})"
    why = built_plain()
    return f"plain Python (the build compiled nothing: {why})" if why else "plain Python (no compiled build)"
