"""`dcp context FILE` and `dcp stats`: the /dcp breakdowns in the terminal (rich) or as JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from rich.table import Table

from dcp_plugin.budget.render import ladder_lines
from dcp_plugin.cli.replay import load_config_option
from dcp_plugin.cli.terminal import console
from dcp_plugin.commands.context import (
    ContextBreakdown,
    amount,
    largest_line,
    savings_line,
    source_note,
    total_line,
)
from dcp_plugin.commands.stats import STRATEGIES, net_line
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.prune_notice import plural
from dcp_plugin.model.messages import session_id_of
from dcp_plugin.model.refs import ModelRef, latest_model
from dcp_plugin.replay.file_error import SessionFileError
from dcp_plugin.replay.sessionfile import load_session
from dcp_plugin.store import NotAStore, Stats, Store, default_path, read_stats

BAR_WIDTH = 16


def add_parser(subparsers: Any) -> None:
    """Register `context` and `stats`."""
    p = subparsers.add_parser(
        "context",
        help="what a recorded session's context is made of after pruning",
        description=(
            "Replay a recorded session (an `opencode export` JSON or a bare messages array) through the "
            "plugin, then show the same breakdown as /dcp context for its final request."
        ),
    )
    p.add_argument("file", type=Path, help="session file, `-` for standard input")
    p.add_argument("--json", action="store_true", help="print the breakdown as JSON on stdout")
    p.add_argument("--config", type=Path, metavar="DCP_JSONC", help="use this dcp.jsonc instead of the config files")
    p.add_argument("--directory", help="project directory for relative paths (default: the session's own)")
    p.set_defaults(func=run_context)

    s = subparsers.add_parser(
        "stats",
        help="calls pruned and tokens saved across every session seen",
        description=(
            "All-time pruning statistics from the plugin's state database, read without changing it. "
            "--reset starts them over from zero (it asks first; --yes skips the question): request and "
            "token counts are zeroed and calls pruned so far stop counting, while /dcp sweep decisions "
            "and what pruning needs to keep placeholders stable are kept."
        ),
    )
    s.add_argument("--json", action="store_true", help="print the statistics as JSON on stdout")
    s.add_argument("--db", type=Path, help="state database to read (default: the user's); never modified unless --reset")
    s.add_argument("--reset", action="store_true", help="start the statistics over from zero")
    s.add_argument("--yes", action="store_true", help="with --reset: do not ask for confirmation")
    s.set_defaults(func=run_stats)


# -- dcp context FILE ------------------------------------------------------------------------
def context_of_messages(
    messages: list[dict[str, Any]],
    config: DcpConfig | None,
    directory: str,
    *,
    store: Any = None,
    window: int | None = None,
) -> ContextBreakdown:
    """Replay a session and build the /dcp context breakdown of it as it stands; SessionFileError when it has no request.

    The same breakdown `/dcp context` shows at the end of the session. ``config`` None means the
    dcp.jsonc files of ``directory``, read only (the global file is never created). ``store``:
    where the live session's sweeps, pins and snapshot are read from (nothing is written);
    ``window``: the host's context window for the session's model.
    """
    from dcp_plugin.commands.dispatch import context_breakdown
    from dcp_plugin.replay.engine import plugin_host, replay, request_points

    if not request_points(messages):
        raise SessionFileError("the session has no model request (no assistant message after the first)")
    host = plugin_host(directory, config)
    runtime = host[1]
    if store is not None:
        runtime.use_store(store)
    replay(messages, directory, config, host=host)
    session_id = session_id_of(None, messages)
    model = latest_model(messages) or ModelRef()
    model = ModelRef(model.provider_id, model.model_id, window) if window else model
    return context_breakdown(runtime, session_id, messages, model)


def context_of_file(path: Path, config: DcpConfig | None, directory: str | None) -> ContextBreakdown:
    """Replay a session file and build the breakdown of its final request; SessionFileError on bad input."""
    info, messages = load_session(path)
    if not messages:
        raise SessionFileError(f"{path}: the session has no messages")
    try:
        return context_of_messages(messages, config, directory or info.get("directory") or str(Path.cwd()))
    except SessionFileError as exc:
        raise SessionFileError(f"{path}: {exc}") from None


def _bar(fraction: float) -> str:
    filled = max(0, min(BAR_WIDTH, round(fraction * BAR_WIDTH)))
    return f"[cyan]{'█' * filled}[/cyan][dim]{'░' * (BAR_WIDTH - filled)}[/dim]"


def print_context(b: ContextBreakdown, title: str) -> None:
    """The breakdown as rich tables: one total, what it is made of, what pruning saves, the budget."""
    out = console()
    total = b.total
    table = Table(title=f"{title}: {b.messages:,} messages; {total_line(b)}", title_justify="left")
    table.add_column("category")
    table.add_column("tokens", justify="right")
    table.add_column("%", justify="right")
    table.add_column("", no_wrap=True, min_width=BAR_WIDTH)
    table.add_column("note")
    for name, tokens, note in b.categories():
        share = (tokens or 0) / total if total else 0.0
        table.add_row(name, amount(tokens), f"{share * 100:.1f}", _bar(share), note)
    out.print(table)
    out.print(savings_line(b), highlight=False)
    if b.tokens_saved:
        saved = Table(show_header=True)
        saved.add_column("strategy")
        saved.add_column("calls", justify="right")
        saved.add_column("tokens per request", justify="right")
        for name, (calls, tokens) in b.saved.items():
            if calls:
                saved.add_row(name, f"{calls:,}", f"~{tokens:,}")
        out.print(saved)
    if b.largest:
        out.print("[bold]Largest savings[/bold]")
        for call in b.largest:
            out.print(f"  {largest_line(call)}", highlight=False, markup=False)
    if b.snapshot is not None:
        out.print("[bold]Context budget[/bold]")
        for line in ladder_lines(b.snapshot):
            out.print(f"  {line}", highlight=False, markup=False)
    out.print(f"[dim]{source_note(b)}[/dim]", highlight=False)


def run_context(args: argparse.Namespace) -> int:
    """`dcp context FILE`."""
    try:
        config = load_config_option(args.config) if args.config else None
        breakdown = context_of_file(args.file, config, args.directory)
    except SessionFileError as exc:
        print(f"dcp context: {exc}", file=sys.stderr)
        return 1
    show_breakdown(breakdown, args.json, "stdin" if str(args.file) == "-" else args.file.name)
    return 0


def show_breakdown(breakdown: ContextBreakdown, as_json: bool, title: str) -> None:
    """The breakdown as JSON on stdout, or as rich tables under ``title``."""
    if as_json:
        json.dump(breakdown.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_context(breakdown, title)


# -- dcp stats -------------------------------------------------------------------------------
def stats_dict(stats: Stats) -> dict[str, Any]:
    """All-time stats as JSON, every strategy present."""
    data = stats.to_dict()
    for name in STRATEGIES:
        data["by_strategy"].setdefault(name, {"calls": 0, "tokens_saved_per_request": 0})
    return data


def run_stats(args: argparse.Namespace) -> int:
    """`dcp stats`: read-only, except with --reset."""
    path: Path = args.db or default_path()
    if args.reset:
        if args.db is None and not os.path.lexists(path):
            print("no statistics recorded yet; nothing to reset")
            return 0
        return reset_stats(path, args.yes)
    try:
        stats = read_stats(path)
    except NotAStore as exc:
        if args.db is not None or os.path.lexists(path):
            print(f"dcp stats: {exc}", file=sys.stderr)
            return 1
        stats = Stats()  # nothing recorded yet for this user
    if args.json:
        json.dump(stats_dict(stats), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    out = console()
    table = Table(
        title=f"All-time pruning statistics ({plural(stats.sessions, 'session')}, {plural(stats.requests, 'request')})",
        title_justify="left",
    )
    table.add_column("strategy")
    table.add_column("calls pruned", justify="right")
    table.add_column("tokens saved per request", justify="right")
    table.add_column("share", no_wrap=True, min_width=BAR_WIDTH)
    total = stats.tokens_saved
    for name in [*STRATEGIES, *sorted(set(stats.by_strategy) - set(STRATEGIES))]:
        calls, tokens = stats.by_strategy.get(name, (0, 0))
        table.add_row(name, f"{calls:,}", f"~{tokens:,}", _bar(tokens / total if total else 0.0))
    table.add_row("[bold]total[/bold]", f"{stats.calls:,}", f"~{total:,}", "")
    out.print(table)
    out.print(
        f"Tokens saved over all requests: [bold green]~{stats.tokens_saved_sent:,}[/bold green] "
        f"(estimates; database {path})",
        highlight=False,
    )
    out.print(net_line(stats)[0].upper() + net_line(stats)[1:] + ".", highlight=False)
    return 0


def reset_stats(path: Path, confirmed: bool) -> int:
    """`dcp stats --reset`: zero the statistics of an existing dcp database, after asking."""
    try:
        before = read_stats(path)  # refuses anything that is not a dcp database, creates nothing
    except NotAStore as exc:
        print(f"dcp stats: nothing reset: {exc}", file=sys.stderr)
        return 1
    question = (
        f"Reset the statistics in {path} ({plural(before.sessions, 'session')}, {plural(before.calls, 'call')} pruned)? "
        "Sweeps and pruning decisions are kept. [y/N] "
    )
    if not confirmed:
        if not sys.stdin.isatty():
            print("dcp stats: --reset asks for confirmation; pass --yes to reset without asking", file=sys.stderr)
            return 1
        if input(question).strip().lower() not in ("y", "yes"):
            print("dcp stats: nothing reset")
            return 1
    store = Store(path, lambda text: print(text, file=sys.stderr))
    done = store.reset_stats()
    store.close()
    if not done:
        print(f"dcp stats: could not reset {path}", file=sys.stderr)
        return 1
    print(f"statistics reset in {path}")
    return 0
