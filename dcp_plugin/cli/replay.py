"""`dcp replay [FILE]`: the replay report as a rich table or JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from dcp_plugin.cli.groups import positive_int
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.replay.engine import ReplayReport, replay
from dcp_plugin.replay.sessionfile import SessionFileError, example_session_path, load_session


def add_parser(subparsers: Any) -> None:
    """Register `replay`."""
    p = subparsers.add_parser(
        "replay",
        help="replay a recorded session through the plugin and show what it saves",
        description=(
            "Replay a recorded session request by request through a real pluggy host that loads the plugin "
            "from its entry point. FILE is an `opencode export` JSON or a bare messages array, a Claude Code "
            "session (~/.claude/projects/<project>/<session>.jsonl), a Codex CLI rollout "
            "(~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl), or OpenAI Chat, OpenAI Responses or Anthropic "
            "messages or requests (a JSON list or request, or one request per line); the format is detected "
            "from the content. Without FILE, replays the example session shipped with the package."
        ),
    )
    p.add_argument(
        "file",
        nargs="?",
        type=Path,
        help="session file of OpenCode, Claude Code, Codex or provider requests, `-` for standard input "
        "(default: the shipped example)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("--config", type=Path, metavar="DCP_JSONC", help="use this dcp.jsonc instead of the config files")
    p.add_argument("--directory", help="project directory for relative paths (default: the session's own)")
    p.add_argument("--rows", type=positive_int, default=12, help="per-request rows to show in the table (default 12)")
    p.set_defaults(func=run)


def load_config_option(path: Path) -> DcpConfig:
    """The config of a `--config FILE` option; problems go to stderr, an unusable file raises."""
    from dcp_plugin.config.loader import load_config_file

    config, problems = load_config_file(path)
    for text in problems:
        print(text, file=sys.stderr)
    if config is None:
        raise SessionFileError(f"{path}: config file could not be used (see above)")
    return config


def files_config(directory: str) -> DcpConfig:
    """The config the dcp.jsonc files give for ``directory``; problems go to stderr.

    Unlike a real host's, this never creates the global file: a CLI only reads settings.
    """
    from dcp_plugin.config.source import ConfigSource

    source = ConfigSource(Path(directory), lambda _session, text: print(text, file=sys.stderr), create_global=False)
    return source.get()


def session_config(option: Path | None, directory: str) -> DcpConfig:
    """The config a CLI replays a session with: the `--config` file alone, else the config files."""
    return load_config_option(option) if option is not None else files_config(directory)


def run(args: argparse.Namespace) -> int:
    """Run the replay and print the report."""
    err = Console(stderr=True)
    path: Path = args.file or example_session_path()
    try:
        info, messages = load_session(path)
        directory = args.directory or info.get("directory") or str(Path.cwd())
        config = session_config(args.config, directory)
    except SessionFileError as exc:
        print(f"dcp replay: {exc}", file=sys.stderr)
        return 1
    if not messages:
        print(f"dcp replay: {path}: the session has no messages", file=sys.stderr)
        return 1
    show_progress = not args.json and err.is_terminal and len(messages) > 2000
    if show_progress:
        with Progress(console=err, transient=True) as bar:
            task = bar.add_task("replaying", total=None)
            report = replay(messages, directory, config, lambda n, total: bar.update(task, completed=n, total=total))
    else:
        report = replay(messages, directory, config)
    if args.json:
        json.dump(report.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_report(report, str(info.get("title") or ("stdin" if str(path) == "-" else path.name)), args.rows)
    return 0


def print_report(report: ReplayReport, title: str, rows: int) -> None:
    """The human-readable report."""
    console = Console()
    data = report.to_dict()
    console.print(
        f"[bold]{title}[/bold]: {report.messages} messages, {report.tool_calls} tool calls, "
        f"{len(report.requests)} model requests",
        highlight=False,
    )
    strategies = Table(title="Pruned by strategy (at the last request)", title_justify="left")
    strategies.add_column("strategy")
    strategies.add_column("calls pruned", justify="right")
    strategies.add_column("tokens saved per request", justify="right")
    for name, count in report.pruned.items():
        strategies.add_row(name, str(count), f"{report.saved_final[name]:,}")
    console.print(strategies)
    per = Table(title="Estimated tokens sent per request", title_justify="left")
    for column in ("request", "messages", "without plugin", "with plugin", "saved", "ms"):
        per.add_column(column, justify="right")
    requests = report.requests
    step = max(1, -(-len(requests) // rows))
    shown = requests[::step]
    if requests and shown[-1] is not requests[-1]:
        shown.append(requests[-1])
    for r in shown:
        saved = r.tokens_without - r.tokens_with
        pct = f"{100 * saved / r.tokens_without:.0f}%" if r.tokens_without else "-"
        per.add_row(str(r.request), str(r.messages), f"{r.tokens_without:,}", f"{r.tokens_with:,}", pct, f"{r.ms:.2f}")
    console.print(per)
    timing = data["timing"]
    console.print(
        f"Total over all requests: {data['tokens_sent_without_plugin']:,} tokens without the plugin, "
        f"{data['tokens_sent_with_plugin']:,} with it: [bold green]{data['tokens_saved']:,} saved "
        f"({data['tokens_saved_percent']}%)[/bold green]",
        highlight=False,
    )
    console.print(
        f"Time per request: median {timing['median_ms']:.2f} ms, p95 {timing['p95_ms']:.2f} ms, "
        f"max {timing['max_ms']:.2f} ms. Token counts are estimates (text chars/4, JSON chars/2).",
        highlight=False,
    )
