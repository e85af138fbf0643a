"""Write dcp.jsonc from the schema: every key's description and default, commented out."""

from __future__ import annotations

import json
import os
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from dcp_plugin.config import schema as schema_mod
from dcp_plugin.xdg import SHARED_DIR_MODE, make_dirs

WIDTH = 92

_GLOBAL_HEADER = """\
dcp.jsonc: settings of dcp_plugin (Dynamic Context Pruning). Every setting is listed below with
its default, commented out, so the defaults of the version you run apply, new ones included.
To change a setting, uncomment its line (and the lines of the sections around it) and edit the
value; comment it out again to get the default back. Files read after this one override it key
by key: $OPENCODE_CONFIG_DIR/dcp.jsonc, then a project's .opencode/dcp.jsonc. Check the file
with `dcp config validate`; `dcp config show` prints what is in force."""

_PROJECT_HEADER = """\
.opencode/dcp.jsonc: dcp_plugin settings for this project only. They override the global
~/.config/opencode/dcp.jsonc key by key. Every key below is commented out, so this file
changes nothing yet: uncomment a key (and the sections around it) to set it.
Check the file with `dcp config validate`."""


def render(schema_uri: str | None, *, project: bool = False) -> str:
    """The file text: every key with its description and its default, commented out, so it sets nothing.

    Only `$schema` is active. A value written here would pin this version's default for good
    (see config/earlier.py for the files earlier versions wrote that way).
    """
    header = _PROJECT_HEADER if project else _GLOBAL_HEADER
    lines = [f"// {line}" if line else "//" for line in header.splitlines()]
    lines.append("{")
    root = schema_mod.schema()
    keys = [k for k in root["properties"] if k != "$schema"]
    if schema_uri:
        lines.append(f'  "$schema": {json.dumps(schema_uri)}' + ("," if keys else ""))
    body = _render_object(root, indent=1)
    lines.extend(body)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _render_object(node: dict[str, Any], indent: int) -> list[str]:
    pad = "  " * indent
    lead = "// "
    keys = [k for k in node["properties"] if k != "$schema"]
    out: list[str] = []
    for index, key in enumerate(keys):
        child = node["properties"][key]
        comma = "," if index < len(keys) - 1 else ""
        if index > 0 or indent == 1:
            out.append("")
        description = child.get("description", "")
        for line in textwrap.wrap(description, WIDTH - len(pad) - 3, break_on_hyphens=False):
            out.append(f"{pad}// {line}")
        if schema_mod.is_object(child):
            out.append(f"{pad}{lead}{json.dumps(key)}: {{")
            out.extend(_render_object(child, indent + 1))
            out.append(f"{pad}{lead}}}{comma}")
        else:
            value = json.dumps(child.get("default"))
            out.append(f"{pad}{lead}{json.dumps(key)}: {value}{comma}")
    return out


def write_atomically(path: Path, text: str, *, exclusive: bool) -> bool:
    """Write `text` to `path` via a temporary file; with `exclusive`, never replace an existing file.

    Returns False when `exclusive` and the file appeared meanwhile (another process won).
    """
    make_dirs(path.parent, SHARED_DIR_MODE)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        if not exclusive:
            os.replace(tmp, path)
            return True
        try:
            os.link(tmp, path)  # atomic and refuses to overwrite, unlike rename
        except FileExistsError:
            return False
        except OSError:
            if path.exists():
                return False
            os.replace(tmp, path)  # file systems without hard links
        return True
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
