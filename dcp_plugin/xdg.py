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
