"""Where the dcp.jsonc layers live, found the way OpenCode finds its own config directories.

OpenCode 1.18 resolves a project's worktree as the nearest directory, from the one it was
started in upwards, that holds `.git` (a directory, or a file in linked worktrees and
submodules); outside git the worktree is `/`. Its config directories are the global one,
every `.opencode` directory from the start directory up to the worktree root, `~/.opencode`
and `$OPENCODE_CONFIG_DIR`, and it loads plugins from all of them. dcp reads `dcp.jsonc` from
the same directories, so a project's settings apply wherever in the project OpenCode starts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dcp_plugin.xdg import base_dir

FILE_NAME = "dcp.jsonc"
LEGACY_FILE_NAME = "dcp.json"
CONFIG_DIR_NAME = ".opencode"
FILE_NAMES = (FILE_NAME, LEGACY_FILE_NAME)
SCHEMA_COPY_NAME = "dcp.schema.json"  # beside the global file; see config/schemaref.py
BACKUP_SUFFIX = ".bak"  # an earlier version's global file, kept when it is rewritten; see config/upgrade.py


@dataclass(frozen=True)
class LayerSpec:
    """One config layer: the first existing candidate file is used."""

    label: str
    candidates: tuple[Path, ...]

    @property
    def primary(self) -> Path:
        """The file name to create or to name when none exists."""
        return self.candidates[0]


def global_dir(env: Mapping[str, str] | None = None) -> Path:
    """$XDG_CONFIG_HOME/opencode, or ~/.config/opencode (a relative XDG value is ignored, per the spec)."""
    return base_dir("XDG_CONFIG_HOME", env) / "opencode"


def global_file(env: Mapping[str, str] | None = None) -> Path:
    """The global dcp.jsonc path (created on first run)."""
    return global_dir(env) / FILE_NAME


def home_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """`~/.opencode`, a config directory OpenCode reads in every project."""
    env = os.environ if env is None else env
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / CONFIG_DIR_NAME


def _absolute(directory: str | os.PathLike[str]) -> Path:
    # Not resolve(): OpenCode keeps the path it was started with, symlinks and all.
    return Path(os.path.abspath(directory))


def find_worktree(directory: str | os.PathLike[str]) -> Path | None:
    """The nearest directory from ``directory`` upwards holding `.git`; None outside git."""
    start = _absolute(directory)
    for candidate in (start, *start.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def project_root(directory: str | os.PathLike[str], worktree: str | os.PathLike[str] | None = None) -> Path:
    """The root relative config paths and protected patterns refer to.

    The host's worktree when it names one (OpenCode says `/` outside git, which is no
    project), else the git worktree around ``directory``, else ``directory`` itself.
    """
    if worktree is not None and str(worktree) and _absolute(worktree) != Path("/"):
        return _absolute(worktree)
    return find_worktree(directory) or _absolute(directory)


def searched_dirs(directory: str | os.PathLike[str]) -> list[Path]:
    """The directories whose `.opencode` OpenCode reads: ``directory`` up to the worktree root, nearest first.

    Outside git OpenCode's worktree is `/`, so the walk goes up to the file-system root.
    """
    start = _absolute(directory)
    stop = find_worktree(start)
    dirs = [start]
    for parent in start.parents:
        if stop is not None and dirs[-1] == stop:
            break
        dirs.append(parent)
    return dirs


def project_config_dirs(directory: str | os.PathLike[str]) -> list[Path]:
    """The project's `.opencode` directories, outermost first (so the nearest one wins)."""
    return [d / CONFIG_DIR_NAME for d in reversed(searched_dirs(directory))]


def opencode_config_dirs(directory: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> list[Path]:
    """Every directory OpenCode loads config and plugins from, in OpenCode's own order, each once."""
    env = os.environ if env is None else env
    dirs = [global_dir(env), *[d / CONFIG_DIR_NAME for d in searched_dirs(directory)], home_config_dir(env)]
    config_dir = env.get("OPENCODE_CONFIG_DIR", "")
    if config_dir:
        dirs.append(Path(config_dir).expanduser())
    return _unique(dirs)


def project_file(directory: str | os.PathLike[str]) -> Path:
    """The .opencode/dcp.jsonc at the root of the project around ``directory``."""
    return project_root(directory) / CONFIG_DIR_NAME / FILE_NAME


def _candidates(directory: Path) -> tuple[Path, ...]:
    return tuple(directory / name for name in FILE_NAMES)


def layer_specs(directory: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> list[LayerSpec]:
    """The layers in order of precedence, lowest first; the same file is never listed twice.

    Global, `~/.opencode`, `$OPENCODE_CONFIG_DIR`, then the project's `.opencode`
    directories from the worktree root down to ``directory``: a nearer file overrides
    an outer one, as a project's nearer `opencode.json` does in OpenCode.
    """
    env = os.environ if env is None else env
    specs = [LayerSpec("global", _candidates(global_dir(env))), LayerSpec("home", _candidates(home_config_dir(env)))]
    config_dir = env.get("OPENCODE_CONFIG_DIR", "")
    if config_dir:
        specs.append(LayerSpec("OPENCODE_CONFIG_DIR", _candidates(Path(config_dir).expanduser())))
    specs += [LayerSpec("project", _candidates(d)) for d in project_config_dirs(directory)]
    seen: set[str] = set()
    unique = []
    for spec in specs:
        keys = {_key(p) for p in spec.candidates}
        if keys & seen:
            continue
        seen |= keys
        unique.append(spec)
    return unique


def _key(path: Path) -> str:
    return os.path.normcase(os.path.abspath(path))


def _unique(paths: list[Path]) -> list[Path]:
    seen: set[str] = set()
    out = []
    for path in paths:
        key = _key(path)
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


def file_in_use(spec: LayerSpec) -> Path | None:
    """The candidate a layer reads (the first that exists; an unreadable one counts, so it is reported)."""
    for path in spec.candidates:
        try:
            os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            return path
        return path
    return None


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (a case-insensitive file system, a link); False if either is missing."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
