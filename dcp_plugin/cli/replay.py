"""`dcp replay [FILE]`: the replay report as a rich table or JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich import box
from rich.table import Table

from dcp_plugin.cli.explain import GLOSSARY, row_note, why_cost_differs
from dcp_plugin.cli.groups import positive_int
from dcp_plugin.cli.session_config import load_config_option, session_config
from dcp_plugin.cli.terminal import ReplayProgress, console
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.prune_notice import plural
from dcp_plugin.pipeline.strategies import REGISTRY
from dcp_plugin.replay.contributions import Contribution, contributions
from dcp_plugin.replay.engine import ReplayReport, RequestRow, SessionsTotal, replay
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
    p.add_argument(
        "--html",
        type=Path,
        metavar="OUT",
        help="write the report as one self-contained HTML page (charts per request, summary, an overview of "
        "several sessions) to OUT; opens offline",
    )
    p.add_argument(
        "--peers",
        action="store_true",
        help="with --html: add the curves of the peer rules (OpenCode's, Anthropic's, LangChain's, last-5 masking)",
    )
    p.add_argument("--wide", action="store_true", help="every column of the per-request table (wider than 80 columns)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the replay (and the comparison) and print the report."""
    files: list[Path] = args.file
    if args.html is not None or args.peers:
        from dcp_plugin.cli.html_replay import run_html

        return run_html(args, files or [example_session_path()])
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

    def again(with_config: DcpConfig, label: str, recovery: bool = False) -> ReplayReport:
        return _replay(messages, directory, with_config, args.pricing, show, label, recovery)

    report = again(config, "replaying", recovery=True)
    compared = again(other, "replaying the comparison", recovery=True) if other is not None else None
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
    print_report(report, title, args.rows, args.wide)
    base_name = str(args.config or "your config files")
    if compared is not None:
        print_comparison(report, compared, base_name, str(args.compare))
    if by_strategy:
        columns = [(base_name, shares)] + ([(str(args.compare), other_shares)] if compared is not None else [])
        print_contributions(report, columns)
    return 0


def _replay(
    messages: list[dict[str, Any]],
    directory: str,
    config: DcpConfig,
    pricing: str | None,
    show: bool,
    label: str,
    recovery: bool = False,
) -> ReplayReport:
    """One replay (``recovery``: and the second one with forced re-reads), with progress when ``show``."""
    if not show:
        return replay(messages, directory, config, pricing=pricing, recovery=recovery)
    with ReplayProgress(label) as progress:
        return replay(messages, directory, config, progress, pricing=pricing, recovery=recovery)


def _pricing_line(report: ReplayReport) -> str:
    scheduler = "on" if report.scheduler else "off (every prune written at once)"
    return f"pricing {report.pricing}, cache scheduler {scheduler}"


def print_report(report: ReplayReport, title: str, rows: int, wide: bool = False) -> None:
    """The human-readable report; fits 80 columns unless ``wide`` asks for every column."""
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
    idle = []
    for name, count in report.pruned.items():
        if count or wide:
            strategies.add_row(name, str(count), f"{report.saved_final[name]:,}")
        else:
            idle.append(name)
    out.print(strategies)
    if idle:
        out.print(f"[dim]Pruned nothing: {', '.join(idle)}.[/dim]", highlight=False)
    out.print(per_request_table(report, rows, wide))
    out.print(f"[dim]A rewrite is {GLOSSARY['rewrite']}.[/dim]", highlight=False)
    timing, cost = data["timing"], data["cost"]
    out.print(
        f"Tokens sent over all requests: {data['tokens_sent_without_plugin']:,} without the plugin, "
        f"{data['tokens_sent_with_plugin']:,} with it: {data['tokens_saved']:,} fewer ({data['tokens_saved_percent']}%)",
        highlight=False,
    )
    out.print(net_cost_line(cost), highlight=False)
    out.print(why_cost_differs(report), highlight=False)
    out.print(report.anchors.sentence(), highlight=False)
    out.print(f"[dim]An edit anchor is {GLOSSARY['edit anchor']}.[/dim]", highlight=False)
    recovery = report.recovery_sentence()
    if recovery is not None:
        out.print(recovery, highlight=False)
    out.print(report.estimate_error.summary(), highlight=False)
    out.print(
        f"Cache: {plural(cost['cold_requests'], 'cold request')}; the plugin's placeholders changed an already-sent "
        f"part in {plural(cost['prefix_breaks_by_plugin'], 'request')} ({cost['tokens_rewritten_by_plugin']:,} tokens processed "
        f"again: rewrites). Prompt overhead outside the messages: {cost['prompt_overhead_tokens']:,} tokens "
        f"({GLOSSARY['prompt overhead']}){_after_compactions(cost['prompt_overhead_tokens_after_compactions'])}.",
        highlight=False,
    )
    out.print(
        f"Time per request: median {timing['median_ms']:.2f} ms, p95 {timing['p95_ms']:.2f} ms, "
        f"max {timing['max_ms']:.2f} ms.",
        highlight=False,
    )


def _after_compactions(overheads: list[int]) -> str:
    """The overheads of the histories sent after compactions, as a clause (empty when none taught one)."""
    if not overheads:
        return ""
    shown = ", ".join(f"{tokens:,}" for tokens in overheads)
    return f"; after {plural(len(overheads), 'compaction')}: {shown} (the host sends more beside a summary)"


def per_request_table(report: ReplayReport, rows: int, wide: bool) -> Table:
    """Every ``len/rows``-th request: tokens and cost with and without the plugin, and why a row costs more.

    Seven columns fit 80 columns; ``wide`` adds the message count, the cache state and the time.
    """
    table = Table(
        title="Per request (tokens are estimates; cost in base input tokens)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    columns = ["req", "tokens\nwithout", "tokens\nwith", "saved", "cost\nwithout", "cost\nwith"]
    columns += ["messages", "cache", "ms"] if wide else []
    for column in columns:
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("note", no_wrap=not wide)
    requests = report.requests
    step = max(1, -(-len(requests) // rows))
    shown = requests[::step]
    if requests and shown[-1] is not requests[-1]:
        shown.append(requests[-1])
    for r in shown:
        saved = r.tokens_without - r.tokens_with
        pct = f"{100 * saved / r.tokens_without:.0f}%" if r.tokens_without else "-"
        cells = [
            str(r.request), f"{r.tokens_without:,}", f"{r.tokens_with:,}", pct,
            f"{r.cost_without:,.0f}", f"{r.cost_with:,.0f}",
        ]
        if wide:
            cells += [str(r.messages), "cold" if r.cold else ("rewrite" if r.prefix_break else "warm"), f"{r.ms:.2f}"]
        table.add_row(*cells, request_note(r))
    return table


def request_note(row: RequestRow) -> str:
    """Why a per-request row costs what it does: a rewrite costs more than without the plugin (and says how much)."""
    note = row_note(row)
    if row.cost_with > row.cost_without and row.cost_without:
        times = f"{row.cost_with / row.cost_without:.1f}x the cost"
        return f"{note or 'more uncached'}: {times}"
    return note


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
        reports.append((path.name, _replay(messages, directory, config, args.pricing, not args.json, label, True)))
    total = SessionsTotal.of([report for _, report in reports])
    if args.json:
        data = {"sessions": [{"file": name, **report.to_dict()} for name, report in reports], "total": total.to_dict()}
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print_sessions(reports, total, args.wide)
    return 0


def print_sessions(reports: list[tuple[str, ReplayReport]], total: SessionsTotal, wide: bool = False) -> None:
    """One row per session and the total: tokens, net cost, rewrites, edit anchors (``wide``: sourced and by whom too)."""
    out = console()
    pricing = reports[0][1].pricing if reports else "auto"
    table = Table(
        title=f"{len(reports)} sessions replayed ({pricing} pricing)", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False
    )
    columns = ["session", "requests", "tokens\nsaved", "net cost\nsaved", "after\nre-reads", "rewrites"]
    columns += ["anchors\nsourced", "anchors\nlost", "hidden by"] if wide else ["anchors\nlost"]
    for column in columns:
        left = column in ("session", "hidden by")
        table.add_column(column, justify="left" if left else "right", no_wrap=not left, overflow="fold")
    for name, report in reports:
        table.add_row(name, *_session_cells(SessionsTotal.of([report]), wide))
    table.add_section()
    table.add_row("total", *_session_cells(total, wide), style="bold")
    out.print(table)
    out.print(
        "Net cost: what the sessions cost without the plugin minus with it, prompt caching included, as a share "
        f"of the cost without it. Rewrites: requests where a placeholder changed a part already sent. An edit "
        f"anchor is {GLOSSARY['edit anchor']}; it is lost when every place the request held it was a placeholder"
        + ("." if wide else " (--wide: which strategy hid them).")
        + " After re-reads: the net cost when the agent reads again what each lost anchor needed.",
        highlight=False,
    )
    recovery = total.recovery_sentence()
    if recovery is not None:
        out.print(recovery, highlight=False)
    out.print(total.estimate_error.summary(), highlight=False)


def _session_cells(total: SessionsTotal, wide: bool) -> list[str]:
    anchors = total.anchors
    cells = [
        f"{total.costs.requests:,}",
        f"{total.tokens_saved_percent:.1f} %",
        f"{total.costs.net_percent or 0.0:+.1f} %",
        f"{after:+.1f} %" if (after := total.net_after_recovery_percent) is not None else "-",
        f"{total.costs.prefix_breaks:,}",
    ]
    lost = f"{anchors.lost:,} ({anchors.lost_percent:.1f} %)"
    if not wide:
        return [*cells, lost]
    by = ", ".join(f"{name} {count}" for name, count in sorted(anchors.lost_by.items())) or "-"
    return [*cells, f"{anchors.sourced:,} / {anchors.anchors:,}", lost, by]
