"""Replays sessions for the HTML report (the replay, the largest pruned outputs, the peers' curves) and writes it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dcp_plugin.cli.html_report import PeerCurve, SessionPage, page_html
from dcp_plugin.cli.terminal import ReplayProgress
from dcp_plugin.commands.dispatch import context_breakdown
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.model.refs import ModelRef, latest_model
from dcp_plugin.replay.engine import plugin_host, replay, with_pricing
from dcp_plugin.replay.file_error import SessionFileError
from dcp_plugin.replay.peer_replay import Session, replay_rule
from dcp_plugin.replay.peer_rules import rule_makers
from dcp_plugin.replay.sessionfile import load_session

Progress = Callable[[int, int], None]


def session_page(
    title: str,
    messages: list[dict[str, Any]],
    directory: str,
    config: DcpConfig | None,
    pricing: str | None,
    progress: Progress | None = None,
    peers: bool = False,
    store: Any = None,
) -> SessionPage:
    """Replay one session for the report: what `dcp replay` measures, plus what the final request hides.

    ``store``: where a live session's sweeps and pins are read from (nothing is written).
    """
    base = config if config is not None else Runtime(directory).config()
    host = plugin_host(directory, with_pricing(base, pricing))
    if store is not None:
        host[1].use_store(store)
    report = replay(messages, directory, progress=progress, host=host, recovery=True)
    breakdown = context_breakdown(host[1], report.session, messages, latest_model(messages) or ModelRef())
    curves = peer_curves(title, messages, directory, report.pricing) if peers else []
    return SessionPage(title, report, breakdown.largest, curves)


def peer_curves(name: str, messages: list[dict[str, Any]], directory: str, pricing: str) -> list[PeerCurve]:
    """Each peer rule on the session, priced like the plugin's replay.

    LangChain's rule runs LangChain's own middleware: without the `langchain` extra installed it
    is left out, the others are drawn.
    """
    session = Session(name, messages, directory)
    found = []
    for make in rule_makers():
        curves: list[list[tuple[int, float]]] = [[]]
        try:
            [outcome] = replay_rule(session, make, [pricing], curves)
        except ModuleNotFoundError as exc:
            if not (exc.name or "").startswith("langchain"):
                raise
            continue
        found.append(PeerCurve(str(outcome.policy), [t for t, _ in curves[0]], [c for _, c in curves[0]]))
    return found


def write_report(path: Path, pages: Sequence[SessionPage]) -> int:
    """Write the page to ``path``; its size in bytes. SessionFileError when it cannot be written."""
    text = page_html(pages)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise SessionFileError(f"{path}: cannot write the report: {exc.strerror or exc}") from None
    return len(text.encode("utf-8"))


def run_html(args: argparse.Namespace, files: Sequence[Path]) -> int:
    """`dcp replay FILE... --html OUT`: replay each session and write the page."""
    from dcp_plugin.cli.session_config import session_config

    if args.html is None:
        print("dcp replay: --peers adds curves to the HTML report: give --html OUT too", file=sys.stderr)
        return 1
    if args.compare is not None or args.by_strategy or args.json:
        print("dcp replay: --html takes neither --compare, --by-strategy nor --json", file=sys.stderr)
        return 1
    if len(files) > 1 and any(str(path) == "-" for path in files):
        print("dcp replay: standard input (`-`) can only be replayed alone", file=sys.stderr)
        return 1
    pages: list[SessionPage] = []
    try:
        for index, path in enumerate(files, 1):
            info, messages = load_session(path)
            if not messages:
                print(f"dcp replay: {path}: the session has no messages, left out", file=sys.stderr)
                continue
            directory = args.directory or info.get("directory") or str(Path.cwd())
            config = session_config(args.config, directory)
            title = str(info.get("title") or ("stdin" if str(path) == "-" else path.name))
            with ReplayProgress(f"replaying {path.name} ({index}/{len(files)})") as progress:
                pages.append(session_page(title, messages, directory, config, args.pricing, progress, args.peers))
        if not pages:
            print("dcp replay: no session with messages: no report written", file=sys.stderr)
            return 1
        size = write_report(args.html, pages)
    except SessionFileError as exc:
        print(f"dcp replay: {exc}", file=sys.stderr)
        return 1
    sessions = f"{len(pages)} sessions" if len(pages) > 1 else "1 session"
    print(f"wrote {args.html} ({sessions}, {size / 1024:,.0f} KB): open it in a browser")
    return 0
