"""Config files dcp does not read but a user probably meant it to: near-miss names and places."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from dcp_plugin.config.discovery import (
    BACKUP_SUFFIX,
    CONFIG_DIR_NAME,
    FILE_NAME,
    FILE_NAMES,
    LEGACY_FILE_NAME,
    SCHEMA_COPY_NAME,
    layer_specs,
    same_file,
    searched_dirs,
)
from dcp_plugin.config.problems import Problem
from dcp_plugin.xdg import base_dir

# Names that, outside a config directory, look like dcp settings meant for one.
_STRAY_NAMES = frozenset({"dcp.jsonc", "dcp.json", "dcp.json5", ".dcp.jsonc", ".dcp.json"})
# Sub-directories of a config directory where people put config by mistake.
_WRONG_SUBDIRS = ("plugins", "plugin", "config")
_CONFIG_SUFFIXES = (".yaml", ".yml", ".toml", ".bak", ".orig", ".old", ".txt")


def misplaced_files(directory: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> list[Problem]:
    """One warning per file that looks like dcp settings but is not read, for a host started in ``directory``.

    Reads directory listings only (no file contents); a directory that cannot be listed is skipped.
    """
    env = os.environ if env is None else env
    specs = layer_specs(directory, env)
    read = {_key(p) for spec in specs for p in spec.candidates}
    found: dict[str, Problem] = {}

    def add(path: Path, text: str) -> None:
        key = _key(path)
        if key not in read and key not in found:
            found[key] = Problem("warning", str(path), f"not read: {text}")

    for spec in specs:
        config_dir = spec.primary.parent
        if all(_is_file(path) for path in spec.candidates):
            shadowed = spec.candidates[-1]
            found[_key(shadowed)] = Problem("warning", str(shadowed), f"not read: {spec.primary} next to it is read instead")
        # The global file's backup is the plugin's own (config/upgrade.py), not settings put there by mistake.
        own = {path.name + BACKUP_SUFFIX for path in spec.candidates} if spec.label == "global" else set()
        for path, text in _in_config_dir(config_dir):
            if path.name not in own:
                add(path, text)
    for folder in searched_dirs(directory):
        for path, text in _in_project_dir(folder):
            add(path, text)
    xdg = base_dir("XDG_CONFIG_HOME", env)
    target = specs[0].primary
    for path in (xdg / FILE_NAME, xdg / LEGACY_FILE_NAME, xdg / "dcp" / FILE_NAME, xdg / "dcp" / LEGACY_FILE_NAME):
        if _is_file(path):
            add(path, f"global settings belong in {target}; move the file there")
    return list(found.values())


def misplaced_warnings(directory: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> list[str]:
    """The near-miss warnings as the lines a host shows once at start (empty when all is well)."""
    try:
        return [problem.render() for problem in misplaced_files(directory, env)]
    except Exception:  # noqa: BLE001 - a hint must never break the host
        return []


def _in_config_dir(config_dir: Path) -> Iterator[tuple[Path, str]]:
    """Near misses inside one config directory (global, ~/.opencode, $OPENCODE_CONFIG_DIR or a project's)."""
    for name in _entries(config_dir):
        lowered = name.casefold()
        path = config_dir / name
        if name in (*FILE_NAMES, SCHEMA_COPY_NAME) or not lowered.startswith(("dcp", ".dcp")) or not _is_file(path):
            continue
        if lowered in FILE_NAMES:
            if not same_file(path, config_dir / lowered):
                yield path, f"the name must be {lowered}, in lower case"
        elif "json" in lowered or lowered.endswith(_CONFIG_SUFFIXES):
            yield path, f"only {FILE_NAME} (or {LEGACY_FILE_NAME}) is read in {config_dir}"
    for sub in _WRONG_SUBDIRS:
        for name in FILE_NAMES:
            path = config_dir / sub / name
            if _is_file(path):
                yield path, f"settings belong in {config_dir / FILE_NAME}; move the file there"


def _in_project_dir(folder: Path) -> Iterator[tuple[Path, str]]:
    """Near misses in one directory between the start directory and the worktree root."""
    target = folder / CONFIG_DIR_NAME / FILE_NAME
    for name in _entries(folder):
        lowered = name.casefold()
        path = folder / name
        if lowered in _STRAY_NAMES and _is_file(path):
            yield path, f"project settings belong in {target}; move the file there"
        elif lowered == CONFIG_DIR_NAME and name != CONFIG_DIR_NAME and path.is_dir():
            if not same_file(path, folder / CONFIG_DIR_NAME):
                yield path, f"OpenCode and dcp read only a directory named {CONFIG_DIR_NAME}, in lower case"
        elif lowered == "opencode" and path.is_dir():
            for file_name in FILE_NAMES:
                if _is_file(path / file_name):
                    yield path / file_name, f"project settings belong in {target} (note the dot); move the file there"


def _entries(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def _key(path: Path) -> str:
    return os.path.normcase(os.path.abspath(path))
