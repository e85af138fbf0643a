"""`dcp replay [FILE]`: the replay report as a rich table or JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.progress import Progress
from rich.table import Table

from dcp_plugin.cli.groups import positive_int
from dcp_plugin.cli.terminal import console
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.prune_notice import plural
from dcp_plugin.pipeline.strategies import REGISTRY
from dcp_plugin.replay.contributions import Contribution, contributions
from dcp_plugin.replay.engine import ReplayReport, SessionsTotal, replay
from dcp_plugin.replay.file_error import SessionFileError
from dcp_plugin.replay.sessionfile import example_session_path, load_session

PRICING_CHOICES = ("auto", "anthropic", "anthropic-1h", "openai", "google", "none")


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
            "from the content. Without FILE, replays the example session shipped with the package. With "
            "several FILEs, one row per session and the total. Besides tokens and cost, each replay counts edit "
            "anchors: for every edit, the longest line (25 characters or more) of the text it replaces, and "
            "whether the placeholders hid it from the request the model answered with that edit."
        ),
    )
    p.add_argument(
        "file",
        nargs="*",
        type=Path,
        help="session file of OpenCode, Claude Code, Codex or provider requests, `-` for standard input "
        "(default: the shipped example); several give one row each and the total",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("--config", type=Path, metavar="DCP_JSONC", help="use this dcp.jsonc instead of the config files")
    p.add_argument("--directory", help="project directory for relative paths (default: the session's own)")
    p.add_argument("--rows", type=positive_int, default=12, help="per-request rows to show in the table (default 12)")
    p.add_argument(
        "--pricing",
        choices=PRICING_CHOICES,
        help="prompt-cache prices to assume, for the plugin's scheduler and the cost report alike "
        "(default: cache.pricing of the config; auto: from each request's provider and model)",
    )
    p.add_argument(
        "--compare",
        type=Path,
        metavar="OTHER_JSONC",
        help="also replay with this dcp.jsonc and show both side by side (same session, same pricing), "
        "with what each strategy buys in each",
    )
    p.add_argument(
        "--by-strategy",
        action="store_true",
        help="show what each enabled strategy buys: the session replayed again with that strategy alone turned off",
    )
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
    """Run the replay (and the comparison) and print the report."""
    files: list[Path] = args.file
    if len(files) > 1:
        return run_many(args, files)
    path: Path = files[0] if files else example_session_path()
    try:
        info, messages = load_session(path)
        directory = args.directory or info.get("directory") or str(Path.cwd())
        config = session_config(args.config, directory)
        other = load_config_option(args.compare) if args.compare is not None else None
    except SessionFileError as exc:
        print(f"dcp replay: {exc}", file=sys.stderr)
        return 1
    if not messages:
        print(f"dcp replay: {path}: the session has no messages", file=sys.stderr)
        return 1
    show = not args.json

    def again(with_config: DcpConfig, label: str) -> ReplayReport:
        return _replay(messages, directory, with_config, args.pricing, show, label)

    report = again(config, "replaying")
    compared = again(other, "replaying the comparison") if other is not None else None
    by_strategy = args.by_strategy or compared is not None
    shares = contributions(report, config, again) if by_strategy else []
    other_shares = contributions(compared, other, again) if compared is not None and other is not None else []
    if args.json:
        data = report.to_dict()
        if by_strategy:
            data["by_strategy"] = [c.to_dict() for c in shares]
        if compared is not None:
            data["compare"] = {
                "config": str(args.compare),
                **compared.to_dict(),
                "by_strategy": [c.to_dict() for c in other_shares],
            }
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    title = str(info.get("title") or ("stdin" if str(path) == "-" else path.name))
    print_report(report, title, args.rows)
    base_name = str(args.config or "your config files")
    if compared is not None:
        print_comparison(report, compared, base_name, str(args.compare))
    if by_strategy:
        columns = [(base_name, shares)] + ([(str(args.compare), other_shares)] if compared is not None else [])
        print_contributions(report, columns)
    return 0


def _replay(
    messages: list[dict[str, Any]], directory: str, config: DcpConfig, pricing: str | None, show: bool, label: str
) -> ReplayReport:
    err = console(stderr=True)
    if show and err.is_terminal and len(messages) > 2000:
        with Progress(console=err, transient=True) as bar:
            task = bar.add_task(label, total=None)
            return replay(
                messages, directory, config, lambda n, total: bar.update(task, completed=n, total=total), pricing=pricing
            )
    return replay(messages, directory, config, pricing=pricing)


def _pricing_line(report: ReplayReport) -> str:
    scheduler = "on" if report.scheduler else "off (every prune written at once)"
    return f"pricing {report.pricing}, cache scheduler {scheduler}"


def print_report(report: ReplayReport, title: str, rows: int) -> None:
    """The human-readable report."""
    out = console()
    data = report.to_dict()
    out.print(
        f"[bold]{title}[/bold]: {report.messages} messages, {report.tool_calls} tool calls, "
        f"{len(report.requests)} model requests; {_pricing_line(report)}",
        highlight=False,
    )
    strategies = Table(title="Pruned by strategy (at the last request)", title_justify="left")
    strategies.add_column("strategy")
    strategies.add_column("calls pruned", justify="right")
    strategies.add_column("tokens saved per request", justify="right")
    for name, count in report.pruned.items():
        strategies.add_row(name, str(count), f"{report.saved_final[name]:,}")
    out.print(strategies)
    per = Table(title="Per request (tokens are estimates; cost in base input tokens)", title_justify="left")
    for column in ("request", "messages", "without plugin", "with plugin", "saved", "cache", "cost without", "cost with", "ms"):
        per.add_column(column, justify="right")
    requests = report.requests
    step = max(1, -(-len(requests) // rows))
    shown = requests[::step]
    if requests and shown[-1] is not requests[-1]:
        shown.append(requests[-1])
    for r in shown:
        saved = r.tokens_without - r.tokens_with
        pct = f"{100 * saved / r.tokens_without:.0f}%" if r.tokens_without else "-"
        cache = "cold" if r.cold else ("rewrite" if r.prefix_break else "warm")
        per.add_row(
            str(r.request), str(r.messages), f"{r.tokens_without:,}", f"{r.tokens_with:,}", pct, cache,
            f"{r.cost_without:,.0f}", f"{r.cost_with:,.0f}", f"{r.ms:.2f}",
        )
    out.print(per)
    timing, cost = data["timing"], data["cost"]
    out.print(
        f"Tokens sent over all requests: {data['tokens_sent_without_plugin']:,} without the plugin, "
        f"{data['tokens_sent_with_plugin']:,} with it: {data['tokens_saved']:,} fewer ({data['tokens_saved_percent']}%)",
        highlight=False,
    )
    out.print(net_cost_line(cost), highlight=False)
    out.print(report.anchors.sentence(), highlight=False)
    out.print(report.estimate_error.summary(), highlight=False)
    out.print(
        f"Cache: {plural(cost['cold_requests'], 'cold request')}; the plugin's placeholders changed an already-sent "
        f"part in {plural(cost['prefix_breaks_by_plugin'], 'request')} ({cost['tokens_rewritten_by_plugin']:,} tokens processed "
        f"again). Prompt overhead outside the messages: {cost['prompt_overhead_tokens']:,} tokens.",
        highlight=False,
    )
    out.print(
        f"Time per request: median {timing['median_ms']:.2f} ms, p95 {timing['p95_ms']:.2f} ms, "
        f"max {timing['max_ms']:.2f} ms.",
        highlight=False,
    )


def net_cost_line(cost: dict[str, Any]) -> str:
    """The cost totals in one sentence; rich markup colours the net saving."""
    net, pct = cost["net_saved"], cost["net_saved_percent"]
    verdict = (
        f"[bold green]{net:,.0f} saved ({pct}%)[/bold green]"
        if net >= 0
        else f"[bold red]{-net:,.0f} MORE ({-pct}%)[/bold red]"
    )
    return (
        f"Cost in base input tokens: {cost['cost_without_plugin']:,.0f} without the plugin, "
        f"{cost['cost_with_plugin']:,.0f} with it: {verdict}"
    )


def print_comparison(base: ReplayReport, other: ReplayReport, base_name: str, other_name: str) -> None:
    """The two configs side by side on the same session."""
    out = console()
    table = Table(title=f"Same session, two configs ({base.pricing} pricing)", title_justify="left")
    table.add_column("")
    table.add_column(base_name, justify="right")
    table.add_column(other_name, justify="right")
    rows = []
    for report in (base, other):
        data, cost = report.to_dict(), report.cost_dict()
        rows.append(
            [
                "on" if report.scheduler else "off",
                f"{data['tokens_saved']:,} ({data['tokens_saved_percent']}%)",
                f"{cost['net_saved']:,.0f} ({cost['net_saved_percent']}%)",
                f"{cost['prefix_breaks_by_plugin']:,}",
                f"{cost['tokens_rewritten_by_plugin']:,}",
                f"{sum(report.pruned.values()):,}",
            ]
        )
    labels = ("cache scheduler", "tokens saved", "net cost saved", "prefix breaks", "tokens rewritten", "calls pruned (last request)")
    for index, label in enumerate(labels):
        table.add_row(label, rows[0][index], rows[1][index])
    out.print(table)


def print_contributions(report: ReplayReport, columns: list[tuple[str, list[Contribution]]]) -> None:
    """What each strategy buys: the tokens and net cost the session loses when it alone is turned off."""
    out = console()
    title = f"What each strategy buys: the session replayed without it ({report.pricing} pricing)"
    table = Table(title=title, title_justify="left")
    table.add_column("strategy")
    for name, _ in columns:
        table.add_column(f"tokens saved\n{name}", justify="right")
        table.add_column(f"net cost saved\n{name}", justify="right")
    found = [{c.strategy: c for c in shares} for _, shares in columns]
    names = [spec.name for spec in REGISTRY if any(spec.name in f for f in found)]
    for strategy in names:
        row = [strategy]
        for per in found:
            c = per.get(strategy)
            row += [f"{c.tokens_saved:,}", f"{c.net_saved:,.0f}"] if c is not None else ["off", "off"]
        table.add_row(*row)
    out.print(table)
    out.print(
        "Each strategy left out in turn, everything else unchanged: what turning it off would cost you. "
        "Overlapping strategies share the credit, so the rows need not add up to the total.",
        highlight=False,
    )


def run_many(args: argparse.Namespace, files: list[Path]) -> int:
    """Replay several sessions with the same config and pricing: one row each, and the total."""
    if args.compare is not None or args.by_strategy:
        print("dcp replay: --compare and --by-strategy take one FILE", file=sys.stderr)
        return 1
    if any(str(path) == "-" for path in files):
        print("dcp replay: standard input (`-`) can only be replayed alone", file=sys.stderr)
        return 1
    reports: list[tuple[str, ReplayReport]] = []
    for index, path in enumerate(files, 1):
        try:
            info, messages = load_session(path)
            directory = args.directory or info.get("directory") or str(Path.cwd())
            config = session_config(args.config, directory)
        except SessionFileError as exc:
            print(f"dcp replay: {exc}", file=sys.stderr)
            return 1
        if not messages:
            print(f"dcp replay: {path}: the session has no messages, left out", file=sys.stderr)
            continue
        label = f"replaying {path.name} ({index}/{len(files)})"
        reports.append((path.name, _replay(messages, directory, config, args.pricing, not args.json, label)))
    total = SessionsTotal.of([report for _, report in reports])
    if args.json:
        data = {"sessions": [{"file": name, **report.to_dict()} for name, report in reports], "total": total.to_dict()}
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print_sessions(reports, total)
    return 0


def print_sessions(reports: list[tuple[str, ReplayReport]], total: SessionsTotal) -> None:
    """One row per session and the total: tokens, net cost, prefix breaks, edit anchors."""
    out = console()
    pricing = reports[0][1].pricing if reports else "auto"
    table = Table(title=f"{len(reports)} sessions replayed ({pricing} pricing)", title_justify="left")
    for column in ("session", "requests", "tokens saved", "net cost saved", "prefix breaks", "anchors sourced",
                   "anchors lost", "hidden by"):
        table.add_column(column, justify="left" if column in ("session", "hidden by") else "right")
    for name, report in reports:
        table.add_row(name, *_session_cells(SessionsTotal.of([report])))
    table.add_section()
    table.add_row("total", *_session_cells(total), style="bold")
    out.print(table)
    out.print(
        "Net cost: what the sessions cost without the plugin minus with it, prompt caching included, as a share "
        "of the cost without it. An edit anchor is lost when every place the request held it was replaced by a "
        "placeholder.",
        highlight=False,
    )
    out.print(total.estimate_error.summary(), highlight=False)


def _session_cells(total: SessionsTotal) -> list[str]:
    anchors = total.anchors
    return [
        f"{total.costs.requests:,}",
        f"{total.tokens_saved_percent:.1f} %",
        f"{total.costs.net_percent or 0.0:+.1f} %",
        f"{total.costs.prefix_breaks:,}",
        f"{anchors.sourced:,} / {anchors.anchors:,}",
        f"{anchors.lost:,} ({anchors.lost_percent:.1f} %)",
        ", ".join(f"{name} {count}" for name, count in sorted(anchors.lost_by.items())) or "-",
    ]
