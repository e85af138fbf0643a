"""XDG base directories (config, data, state), as OpenCode and its plugins use them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

_FALLBACKS = {
    "XDG_CONFIG_HOME": (".config",),
    "XDG_DATA_HOME": (".local", "share"),
    "XDG_STATE_HOME": (".local", "state"),
}


def base_dir(variable: str, env: Mapping[str, str] | None = None) -> Path:
    """$XDG_*_HOME when set to an absolute path (the spec ignores relative ones), else its default under HOME."""
    env = os.environ if env is None else env
    value = env.get(variable, "")
    if value and os.path.isabs(value):
        return Path(value)
    home = env.get("HOME")
    return (Path(home) if home else Path.home()).joinpath(*_FALLBACKS[variable])


PRIVATE_DIR_MODE = 0o700
SHARED_DIR_MODE = 0o755


def make_dirs(path: Path, mode: int) -> None:
    """Create ``path`` and every missing parent with ``mode`` exactly, never wider.

    ``Path.mkdir(parents=True, mode=...)`` gives the parents the default 0o777 minus the umask:
    under umask 000 they would be world-writable. The umask can only narrow ``mode`` here.
    """
    missing: list[Path] = []
    current = Path(path)
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, mode)
        except FileExistsError:
            if not directory.is_dir():
                raise
