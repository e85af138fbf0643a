"""`dcp bridge` (run the server), `dcp opencode install|uninstall` (put the shim into OpenCode) and
`dcp opencode context` (an OpenCode session's /dcp context, read through `opencode export`)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from dcp_plugin.adapters.bridge import install as inst
from dcp_plugin.cli.groups import add_group
from dcp_plugin.cli.replay import PRICING_CHOICES
from dcp_plugin.config.discovery import opencode_config_dirs, project_root, same_file

CHECK_HINT = """\
The first start of OpenCode after this shows a blank screen for 30-60 s: OpenCode installs its
plugin package (@opencode-ai/plugin, from the npm registry) into the config folder before it shows
anything. It does so once per folder; later starts are quick.
Check it works: start OpenCode in {scope} (`opencode`), send a prompt, then type /dcp context.
From a terminal, once a session exists: `dcp opencode context` shows the latest session of the
project you run it in, `dcp opencode context SESSION_ID` any session (`opencode session list`
prints the ids; /dcp context names the current one)."""


def add_parser(subparsers: Any) -> None:
    """Register `bridge` and `opencode` with the `dcp` command."""
    bridge = subparsers.add_parser(
        "bridge",
        help="run the JSON-lines bridge server on stdin/stdout (OpenCode's dcp plugin starts it)",
        description="Serve the OpenCode plugin's requests on stdin/stdout until stdin closes. "
        "Logs go to stderr (DCP_BRIDGE_LOG=INFO for more).",
    )
    bridge.set_defaults(func=_run_bridge)

    actions = add_group(
        subparsers,
        "opencode",
        help="install the dcp plugin into OpenCode, remove it, or show a session's /dcp context",
        description="Install the dcp plugin into OpenCode, remove it, or show an OpenCode session's /dcp context.",
    )
    for name, helptext in (
        (
            "install",
            "write the plugin into .opencode/plugins/ at the root of a project (default: the project around "
            "the current directory) or into the global config",
        ),
        ("uninstall", "remove the plugin file written by `dcp opencode install`"),
    ):
        sub = actions.add_parser(name, help=helptext, description=helptext)
        where = sub.add_mutually_exclusive_group()
        where.add_argument(
            "--project",
            metavar="DIR",
            type=Path,
            help="a directory of the project (default: the current one); the plugin goes to its git root",
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
                help="interpreter the plugin starts the bridge with (default: this one); it must import dcp_plugin",
            )
            sub.add_argument(
                "--force",
                action="store_true",
                help="replace a dcp.js that was not written by us, and install even if the interpreter "
                "cannot import dcp_plugin yet",
            )
            sub.set_defaults(func=_install)
        else:
            sub.set_defaults(func=_uninstall)

    context = actions.add_parser(
        "context",
        help="show an OpenCode session's /dcp context breakdown (default: the latest session of this project)",
        description=(
            "Read an OpenCode session with `opencode export` and show what /dcp context shows for it: what the "
            "context is made of, what pruning saves, and how full the window is. Without SESSION_ID, the most "
            "recently updated session started in the project around the current directory "
            "(`opencode session list` prints the ids)."
        ),
    )
    context.add_argument("session", nargs="?", metavar="SESSION_ID", help="session id, e.g. ses_... (default: the latest)")
    context.add_argument("--json", action="store_true", help="print the breakdown as JSON on stdout")
    context.add_argument(
        "--opencode", metavar="PATH", help="the opencode executable (default: $OPENCODE_BIN, else `opencode` on PATH)"
    )
    context.add_argument("--config", type=Path, metavar="DCP_JSONC", help="use this dcp.jsonc instead of the config files")
    context.set_defaults(func=_context)

    report = actions.add_parser(
        "report",
        help="write the HTML replay report of an OpenCode session (default: the latest session of this project)",
        description=(
            "Read an OpenCode session with `opencode export` (into a file: OpenCode cuts exports written to a "
            "pipe short), replay it through the plugin and write the page `dcp replay --html` writes: tokens and "
            "cost per request with and without the plugin, what each strategy removed, the edit anchors lost."
        ),
    )
    report.add_argument("session", nargs="?", metavar="SESSION_ID", help="session id, e.g. ses_... (default: the latest)")
    report.add_argument(
        "--html", type=Path, metavar="OUT", help="where to write the page (default: dcp-report-SESSION_ID.html here)"
    )
    report.add_argument(
        "--opencode", metavar="PATH", help="the opencode executable (default: $OPENCODE_BIN, else `opencode` on PATH)"
    )
    report.add_argument("--config", type=Path, metavar="DCP_JSONC", help="use this dcp.jsonc instead of the config files")
    report.add_argument("--pricing", choices=PRICING_CHOICES, help="prompt-cache prices to assume (as for `dcp replay`)")
    report.set_defaults(func=_report)


def _run_bridge(args: argparse.Namespace) -> int:
    from dcp_plugin.adapters.bridge.server import main

    return main()


def _target(args: argparse.Namespace) -> Path:
    if args.global_:
        return inst.global_plugins_dir()
    return inst.project_plugins_dir(_project(args))


def _project(args: argparse.Namespace) -> Path:
    given = (args.project or Path.cwd()).expanduser().absolute()
    if not given.exists():
        raise inst.InstallError(f"the project directory {given} does not exist")
    if not given.is_dir():
        raise inst.InstallError(f"{given} is not a directory; --project takes the project's directory")
    # OpenCode loads plugins from every .opencode between where it starts and the git root:
    # the root's is the one found from anywhere in the project.
    return project_root(given)


def _install(args: argparse.Namespace) -> int:
    python = args.python or sys.executable
    if args.python:
        python = str(Path(python).expanduser().absolute()) if os.sep in python else python
    try:
        target = _target(args)
        problem = inst.check_python(python)
        if problem and not args.force:
            raise inst.InstallError(
                f"{problem}. The plugin would start no bridge and prune nothing, so it was not installed. "
                "Pass --python with an interpreter that has dcp_plugin installed (the one of the virtualenv "
                "you installed it into), or --force to install anyway"
            )
        outcome = inst.install(target, python, force=args.force)
    except (inst.InstallError, OSError) as exc:
        print(f"dcp: {exc}", file=sys.stderr)
        return 1
    done = {
        "installed": "Installed the dcp plugin for OpenCode",
        "updated": "Updated the dcp plugin for OpenCode",
        "unchanged": "The dcp plugin for OpenCode is already installed and up to date",
    }[outcome.action]
    print(f"{done}: {outcome.path}")
    print(f"It starts the bridge with: {python} -m dcp_plugin.adapters.bridge")
    print("The plugin registers the /dcp command itself (unless you defined your own).")
    if problem:
        print(f"dcp: warning: {problem}; pruning stays off until it can (installed anyway: --force).", file=sys.stderr)
    _warn_about_other_copies(outcome.path, Path.cwd() if args.global_ else _project(args))
    print(CHECK_HINT.format(scope="any project" if args.global_ else "this project"))
    print("Remove it with: dcp opencode uninstall" + (" --global" if args.global_ else ""))
    return 0


def _warn_about_other_copies(installed: Path, directory: Path) -> None:
    others = [p for p in installed_copies(directory) if not same_file(p, installed)]
    if others:
        listed = ", ".join(str(p) for p in others)
        print(
            f"dcp: warning: OpenCode started in {directory} loads the dcp plugin twice: {installed} and {listed}. "
            "Only one of them prunes; remove the other with `dcp opencode uninstall` "
            "(`--global` for the global one).",
            file=sys.stderr,
        )


def installed_copies(directory: Path) -> list[Path]:
    """Every plugin file of ours that OpenCode started in ``directory`` would load."""
    found = []
    for config_dir in opencode_config_dirs(directory):
        for sub in ("plugin", "plugins"):
            folder = config_dir / sub
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                continue
            found += [folder / n for n in names if n.endswith((".js", ".ts")) and inst.is_ours(folder / n)]
    return found


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
        left = inst.opencode_leftovers(outcome.path.parent)
        if left:
            print(
                f"OpenCode's own files stay in {outcome.path.parent.parent} ({', '.join(left)}): it wrote them "
                "when it installed its plugin package, and it uses them for any plugin."
            )
    return 0


def _context(args: argparse.Namespace) -> int:
    from dcp_plugin.cli.opencode_session import OpencodeError, find_opencode
    from dcp_plugin.cli.recorded import RecordedStore, configured_window, recorded_window
    from dcp_plugin.cli.replay import session_config
    from dcp_plugin.cli.report import context_of_messages, show_breakdown
    from dcp_plugin.model.refs import latest_model
    from dcp_plugin.replay.file_error import SessionFileError
    from dcp_plugin.store import default_path

    here = Path.cwd()
    try:
        binary = find_opencode(args.opencode)
        session_id, info, messages = _session_to_show(binary, args.session, here)
    except OpencodeError as exc:
        print(f"dcp opencode context: {exc}", file=sys.stderr)
        return 1
    directory = str(info.get("directory") or here)
    try:
        config = session_config(args.config, directory)
    except SessionFileError as exc:
        print(f"dcp opencode context: {exc}", file=sys.stderr)
        return 1
    # What the live session saw: the user's sweeps and pins, and the window OpenCode gave the model.
    store = RecordedStore(default_path())
    model = latest_model(messages)
    window = configured_window(Path(directory), model.provider_id if model else None, model.model_id if model else None)
    window = window or recorded_window(store.load_session(session_id))
    try:
        breakdown = context_of_messages(messages, config, directory, store=store, window=window)
    except SessionFileError as exc:
        print(f"dcp opencode context: session {session_id}: {exc}", file=sys.stderr)
        return 1
    title = f"session {session_id}" + (f" ({info['title']})" if isinstance(info.get("title"), str) else "")
    show_breakdown(breakdown, args.json, title)
    return 0


def _report(args: argparse.Namespace) -> int:
    """`dcp opencode report [SESSION_ID]`: the HTML replay report of a real OpenCode session."""
    from dcp_plugin.cli.html_replay import session_page, write_report
    from dcp_plugin.cli.opencode_session import OpencodeError, find_opencode
    from dcp_plugin.cli.recorded import RecordedStore
    from dcp_plugin.cli.replay import session_config
    from dcp_plugin.cli.terminal import ReplayProgress
    from dcp_plugin.replay.file_error import SessionFileError
    from dcp_plugin.store import default_path

    here = Path.cwd()
    try:
        binary = find_opencode(args.opencode)
        session_id, info, messages = _session_to_show(binary, args.session, here)
        directory = str(info.get("directory") or here)
        config = session_config(args.config, directory)
        title = f"session {session_id}" + (f" ({info['title']})" if isinstance(info.get("title"), str) else "")
        out: Path = args.html or Path(f"dcp-report-{session_id}.html")
        # The live session's sweeps and pins count, as in `dcp opencode context` (read, never written).
        with ReplayProgress(f"replaying {session_id}") as progress:
            page = session_page(
                title, messages, directory, config, args.pricing, progress, store=RecordedStore(default_path())
            )
        size = write_report(out, [page])
    except (OpencodeError, SessionFileError) as exc:
        print(f"dcp opencode report: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {out} (session {session_id}, {size / 1024:,.0f} KB): open it in a browser")
    return 0


# Sessions looked at, newest first, for one that made a request: `opencode run --command` leaves
# an empty session behind, newer than the one the user means.
LATEST_TRIES = 3


def _session_to_show(binary: str, given: str | None, here: Path) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    """(id, info, messages) of the session given, else of the newest session of the project with a request."""
    from dcp_plugin.cli.opencode_session import OpencodeError, export_session, project_sessions
    from dcp_plugin.replay.engine import request_points

    if given:
        return (given, *export_session(binary, given, here))
    found = project_sessions(binary, here)
    for summary in found[:LATEST_TRIES]:
        info, messages = export_session(binary, summary.id, here)
        if request_points(messages):
            return summary.id, info, messages
    if found:
        raise OpencodeError(
            f"the newest {len(found[:LATEST_TRIES])} OpenCode sessions of this project made no model request yet; "
            "pass a session id (`opencode session list` shows them)"
        )
    raise OpencodeError("no OpenCode session found")  # project_sessions says so first
