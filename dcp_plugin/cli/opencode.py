"""`dcp bridge` (run the server) and `dcp opencode install|uninstall` (put the shim into OpenCode)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from dcp_plugin.bridge import install as inst


def add_parser(subparsers: Any) -> None:
    """Register `bridge` and `opencode` with the `dcp` command."""
    bridge = subparsers.add_parser(
        "bridge",
        help="run the JSON-lines bridge server on stdin/stdout (OpenCode's dcp plugin starts it)",
        description="Serve the OpenCode plugin's requests on stdin/stdout until stdin closes. "
        "Logs go to stderr (DCP_BRIDGE_LOG=INFO for more).",
    )
    bridge.set_defaults(func=_run_bridge)

    opencode = subparsers.add_parser("opencode", help="install the dcp plugin into OpenCode, or remove it")
    actions = opencode.add_subparsers(dest="opencode_command", metavar="ACTION")
    opencode.set_defaults(func=lambda args: (opencode.print_help(), 2)[1])

    for name, helptext in (
        ("install", "write the plugin into .opencode/plugins/ of a project (default: here) or the global config"),
        ("uninstall", "remove the plugin file written by `dcp opencode install`"),
    ):
        sub = actions.add_parser(name, help=helptext, description=helptext)
        where = sub.add_mutually_exclusive_group()
        where.add_argument(
            "--project",
            metavar="DIR",
            type=Path,
            help="project directory (default: the current directory)",
        )
        where.add_argument(
            "--global",
            dest="global_",
            action="store_true",
            help="OpenCode's global plugins dir ($XDG_CONFIG_HOME/opencode/plugins/)",
        )
        if name == "install":
            sub.add_argument(
                "--python",
                metavar="PATH",
                help="interpreter the plugin starts the bridge with (default: this one)",
            )
            sub.add_argument("--force", action="store_true", help="replace a dcp.js that was not written by us")
            sub.set_defaults(func=_install)
        else:
            sub.set_defaults(func=_uninstall)


def _run_bridge(args: argparse.Namespace) -> int:
    from dcp_plugin.bridge.server import main

    return main()


def _target(args: argparse.Namespace) -> Path:
    if args.global_:
        return inst.global_plugins_dir()
    project = (args.project or Path.cwd()).expanduser().resolve()
    if not project.is_dir():
        raise inst.InstallError(f"the project directory {project} does not exist")
    return inst.project_plugins_dir(project)


def _install(args: argparse.Namespace) -> int:
    python = args.python or sys.executable
    if args.python:
        python = str(Path(python).expanduser().absolute()) if os.sep in python else python
    try:
        outcome = inst.install(_target(args), python, force=args.force)
    except (inst.InstallError, OSError) as exc:
        print(f"dcp: {exc}", file=sys.stderr)
        return 1
    done = {
        "installed": "Installed the dcp plugin for OpenCode",
        "updated": "Updated the dcp plugin for OpenCode",
        "unchanged": "The dcp plugin for OpenCode is already installed and up to date",
    }[outcome.action]
    print(f"{done}: {outcome.path}")
    print(f"It starts the bridge with: {python} -m dcp_plugin.bridge")
    print("The plugin registers the /dcp command itself (unless you defined your own).")
    problem = inst.check_python(python)
    if problem:
        print(f"dcp: warning: {problem}; pruning stays off until it can (use --python PATH).", file=sys.stderr)
    scope = "any project" if args.global_ else "this project"
    print(f"Check: start OpenCode in {scope} and type `/dcp context`, or run `opencode run --command dcp context`.")
    print("Remove it with: dcp opencode uninstall" + (" --global" if args.global_ else ""))
    return 0


def _uninstall(args: argparse.Namespace) -> int:
    try:
        outcome = inst.uninstall(_target(args))
    except (inst.InstallError, OSError) as exc:
        print(f"dcp: {exc}", file=sys.stderr)
        return 1
    if outcome.action == "absent":
        print(f"Nothing to remove: {outcome.path} does not exist.")
    else:
        print(f"Removed the dcp plugin: {outcome.path}")
    return 0
