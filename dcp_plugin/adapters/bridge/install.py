"""Writes the JS shim's entry into an OpenCode plugins directory (and removes it), pinned to an interpreter.

The installed ``dcp.js`` is the entry module ``dcp_bridge.mjs`` with two lines rewritten: the
interpreter, and the absolute URL of the package's ``shim/`` modules it imports. The modules stay
in the package, so the JS side is always the version of the Python side it was installed from,
and uninstalling removes the one file install wrote.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dcp_plugin.adapters.bridge import SHIM_DIR, SHIM_PATH
from dcp_plugin.config.discovery import global_dir
from dcp_plugin.xdg import SHARED_DIR_MODE, make_dirs

PLUGIN_FILENAME = "dcp.js"  # OpenCode loads only *.js / *.ts from a plugins directory
MARKER = "// Installed by `dcp opencode install` (dcp-plugin)."
_PYTHON_LINE = re.compile(r'^const INSTALLED_PYTHON = ".*";$', re.MULTILINE)
_SHIM_URL_LINE = re.compile(r"^const SHIM_URL = .*;$", re.MULTILINE)


class InstallError(Exception):
    """The install or uninstall cannot go ahead; the message says why and what to do."""


@dataclass(frozen=True)
class Outcome:
    """What an install or uninstall did, for the CLI to print."""

    path: Path
    action: str  # "installed" | "updated" | "unchanged" | "removed" | "absent"


def project_plugins_dir(project: Path) -> Path:
    return project / ".opencode" / "plugins"


def global_plugins_dir(env: dict[str, str] | None = None) -> Path:
    """OpenCode's global plugins dir: $XDG_CONFIG_HOME/opencode/plugins, else ~/.config/opencode/plugins."""
    return global_dir(env) / "plugins"


def render_shim(python: str, source: str | None = None, shim_dir: Path = SHIM_DIR) -> str:
    """The entry's source with our marker on top, the interpreter set to ``python`` and the modules at ``shim_dir``."""
    text = SHIM_PATH.read_text(encoding="utf-8") if source is None else source
    for line, name in ((_PYTHON_LINE, "INSTALLED_PYTHON"), (_SHIM_URL_LINE, "SHIM_URL")):
        if not line.search(text):
            raise InstallError(f"{SHIM_PATH} has no `const {name} = ...;` line to rewrite (damaged package?)")
    # json.dumps makes a valid JS string literal of any path (quotes, backslashes, non-ASCII).
    text = _PYTHON_LINE.sub(lambda _: f"const INSTALLED_PYTHON = {json.dumps(python)};", text, count=1)
    url = shim_dir.resolve().as_uri() + "/"
    text = _SHIM_URL_LINE.sub(lambda _: f"const SHIM_URL = {json.dumps(url)};", text, count=1)
    return f"{MARKER}\n{text}"


def is_ours(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return fh.readline().rstrip("\n") == MARKER
    except OSError:
        return False


def install(directory: Path, python: str, force: bool = False) -> Outcome:
    """Write the shim as ``directory/dcp.js``; refuses to replace a file we did not write unless ``force``."""
    path = directory / PLUGIN_FILENAME
    text = render_shim(python)
    action = "installed"
    if path.exists() or path.is_symlink():
        if not path.is_file():
            raise InstallError(f"{path} exists and is not a regular file; remove it first")
        if not is_ours(path) and not force:
            raise InstallError(
                f"{path} exists and was not written by `dcp opencode install`; "
                "move it away or pass --force to replace it"
            )
        if path.read_text(encoding="utf-8", errors="replace") == text:
            return Outcome(path, "unchanged")
        action = "updated"
    make_dirs(directory, SHARED_DIR_MODE)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return Outcome(path, action)


def uninstall(directory: Path) -> Outcome:
    """Remove ``directory/dcp.js`` if we wrote it; a file of someone else's is left alone."""
    path = directory / PLUGIN_FILENAME
    if not path.exists():
        return Outcome(path, "absent")
    if not is_ours(path):
        raise InstallError(f"{path} was not written by `dcp opencode install`; it was left in place")
    path.unlink()
    try:
        directory.rmdir()  # the plugins folder, when dcp.js was all it held
    except OSError:
        pass  # other plugins (or anything else) live there: it stays
    return Outcome(path, "removed")


# What OpenCode writes into a config folder when it installs its plugin package there.
OPENCODE_OWN_FILES = ("package.json", "package-lock.json", "bun.lock", "node_modules", ".gitignore")


def opencode_leftovers(plugins_dir: Path) -> list[str]:
    """OpenCode's own files in the config folder around ``plugins_dir`` (they are not the plugin's to remove)."""
    return [name for name in OPENCODE_OWN_FILES if (plugins_dir.parent / name).exists()]


def check_python(python: str) -> str | None:
    """None if ``python`` can run the bridge, else why not (the install still goes ahead)."""
    try:
        done = subprocess.run(
            [python, "-c", "import dcp_plugin.adapters.bridge.server"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not run {python}: {exc}"
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no error output"]
        return f"{python} cannot import dcp_plugin ({tail[0]})"
    return None
