"""Where the dcp.jsonc layers live: global, $OPENCODE_CONFIG_DIR, then the project."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dcp_plugin.xdg import base_dir

FILE_NAME = "dcp.jsonc"
LEGACY_FILE_NAME = "dcp.json"


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


def project_file(directory: Path) -> Path:
    """The project's .opencode/dcp.jsonc path."""
    return Path(directory) / ".opencode" / FILE_NAME


def layer_specs(directory: Path, env: Mapping[str, str] | None = None) -> list[LayerSpec]:
    """The layers in order of precedence, lowest first; the same file is never listed twice."""
    env = os.environ if env is None else env
    gdir = global_dir(env)
    specs = [LayerSpec("global", (gdir / FILE_NAME, gdir / LEGACY_FILE_NAME))]
    config_dir = env.get("OPENCODE_CONFIG_DIR", "")
    if config_dir:
        specs.append(LayerSpec("OPENCODE_CONFIG_DIR", (Path(config_dir).expanduser() / FILE_NAME,)))
    specs.append(LayerSpec("project", (project_file(directory),)))
    seen: set[str] = set()
    unique = []
    for spec in specs:
        keys = {os.path.normcase(os.path.abspath(p)) for p in spec.candidates}
        if keys & seen:
            continue
        seen |= keys
        unique.append(spec)
    return unique
