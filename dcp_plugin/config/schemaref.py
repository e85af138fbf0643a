"""The `$schema` line of dcp.jsonc files: a copy of the schema that survives reinstalls, and dangling references.

A `$schema` pointing into site-packages breaks whenever the package is reinstalled
elsewhere or its virtualenv is rebuilt. Files dcp writes point instead at
`dcp.schema.json` beside the global dcp.jsonc, which the real host refreshes on start
whenever it differs from the installed schema.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from dcp_plugin.config.discovery import SCHEMA_COPY_NAME
from dcp_plugin.config.problems import Problem
from dcp_plugin.config.schema import schema_resource, schema_uri
from dcp_plugin.config.template import write_atomically


def schema_copy(config_dir: Path) -> Path:
    """Where the stable copy of the schema lives in a config directory."""
    return config_dir / SCHEMA_COPY_NAME


def refresh_schema_copy(config_dir: Path) -> Path | None:
    """Make ``config_dir``'s copy equal to the installed schema; its path, or None when it cannot be written."""
    target = schema_copy(config_dir)
    installed: str = schema_resource().read_text(encoding="utf-8")
    try:
        if target.read_text(encoding="utf-8") == installed:
            return target
    except (OSError, UnicodeDecodeError):
        pass
    try:
        write_atomically(target, installed, exclusive=False)
    except OSError:
        return None
    return target


def stable_schema_uri(config_dir: Path) -> str | None:
    """The `$schema` value for a file dcp writes: the refreshed copy, else the installed schema."""
    copy = refresh_schema_copy(config_dir)
    return copy.resolve().as_uri() if copy is not None else schema_uri()


def referenced_path(reference: str, file: Path) -> Path | None:
    """The local file a `$schema` value names (file:// URI, absolute or relative path); None for a web URL."""
    parsed = urlparse(reference)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if parsed.scheme and len(parsed.scheme) > 1:  # http(s) and friends; `C:` is a Windows drive
        return None
    path = Path(reference).expanduser()
    return path if path.is_absolute() else file.parent / path


def dangling_schema(data: dict[str, Any], file: Path, config_dir: Path) -> Problem | None:
    """A warning when the file's `$schema` names a local file that does not exist."""
    reference = data.get("$schema")
    if not isinstance(reference, str) or not reference.strip():
        return None
    target = referenced_path(reference.strip(), file)
    if target is None or os.path.exists(target):
        return None
    copy = schema_copy(config_dir)
    better = copy.resolve().as_uri() if copy.is_file() else schema_uri()
    advice = f'; set it to "{better}"' if better else ""
    return Problem(
        "warning",
        str(file),
        f"`$schema` points at {target}, which does not exist (a reinstall or a removed virtualenv?); "
        f"editors lose completion and checks, the settings still apply{advice}",
        key="$schema",
    )
