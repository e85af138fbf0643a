"""The benchmark's results as rich tables for the terminal and as Markdown for the docs."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from dcp_plugin.pipeline.strategies import STRATEGY_ORDER

MACHINE_LABEL = "2-core x86_64 Linux VM, Python 3.11"
YARDSTICK_TITLE = "Per request, as a ratio to json.dumps of the same list before pruning (medians)"


def _ms(stats: dict[str, Any]) -> str:
    return f"{stats['median']:,.2f} / {stats['p95']:,.2f}"


def _yes(value: bool | None) -> str:
    return "n/a" if value is None else ("yes" if value else "NO")


def timing_rows(data: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the per-request table."""
    header = [
        "session", "messages", "tool calls", "cold ms", "warm ms", "warm ms (fresh copy)", "json.dumps ms", "warm / dumps",
    ]
    rows = [
        [
            r["name"], f"{r['messages']:,}", f"{r['tool_calls']:,}", _ms(r["cold_ms"]), _ms(r["warm_ms"]),
            _ms(r["warm_fresh_copy_ms"]), _ms(r["json_dumps_ms"]), f"{r['warm_percent_of_json_dumps']['median']:.2f} %",
        ]
        for r in data["sessions"]
    ]
    return header, rows


VOUCHED_TITLE = "Warm requests, the host vouching for the messages of its previous request (unchangedBefore)"


def vouched_rows(data: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the table of warm requests whose host vouches for an unchanged prefix."""
    header = ["session", "warm ms", "warm ms (fresh copy)", "warm / dumps"]
    rows = [
        [
            r["name"], _ms(r["warm_vouched_ms"]), _ms(r["warm_fresh_copy_vouched_ms"]),
            f"{r['warm_vouched_percent_of_json_dumps']['median']:.2f} %",
        ]
        for r in data["sessions"]
    ]
    return header, rows


DECODED_TITLE = "Warm requests on a copy decoded from JSON, as a host that loads its history from storage sends it"


def decoded_rows(data: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the table of warm requests on lists decoded from JSON, each against json.dumps of what it sent."""
    header = ["session", "warm ms", "warm ms (vouching)", "json.dumps ms (that list)", "warm / dumps", "vouching / dumps"]
    rows = [
        [
            r["name"], _ms(r["warm_decoded_copy_ms"]), _ms(r["warm_decoded_copy_vouched_ms"]),
            _ms(r["json_dumps_decoded_copy_ms"]),
            f"{r['warm_decoded_copy_percent_of_json_dumps']['median']:.2f} %",
            f"{r['warm_decoded_copy_vouched_percent_of_json_dumps']['median']:.2f} %",
        ]
        for r in data["sessions"]
    ]
    return header, rows


def yardstick_rows(data: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the table of requests as ratios to json.dumps of the same list before pruning."""
    header = [
        "session", "json.dumps ms (cold list)", "cold / dumps", "restart ms", "restart / dumps",
        "json.dumps ms (cold list, no session held)", "cold / that", "restart / that",
        "json.dumps ms (last list)", "warm / dumps", "warm (fresh copy) / dumps",
    ]
    rows = [
        [
            r["name"], _ms(r["json_dumps_cold_list_ms"]), f"{r['cold_per_json_dumps']:.2f}", _ms(r["restart_ms"]),
            f"{r['restart_per_json_dumps']:.2f}", _ms(r["json_dumps_quiet_cold_list_ms"]),
            f"{r['cold_per_quiet_json_dumps']:.2f}", f"{r['restart_per_quiet_json_dumps']:.2f}",
            _ms(r["json_dumps_unpruned_ms"]),
            f"{r['warm_percent_of_unpruned_json_dumps']['median']:.2f} %",
            f"{r['warm_fresh_copy_percent_of_unpruned_json_dumps']:.2f} %",
        ]
        for r in data["sessions"]
    ]
    return header, rows


def breakdown_rows(data: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the table of where a warm request's time goes, with memory and exactness."""
    header = [
        "session", "sync+strategies ms", "py calls", "placeholders ms", "pruned parts", "µs / part", "MB / 1k calls",
        "= from scratch",
    ]
    rows = [
        [
            r["name"], _ms(r["sync_and_strategies_ms"]), f"{r['sync_and_strategies_python_calls']:,}",
            _ms(r["placeholders_ms"]), f"{r['pruned_parts']:,}",
            f"{r['placeholder_us_per_part']['median']:.2f}", f"{r['memory']['mb_per_1000_calls']:.3f}",
            _yes(r["incremental_equals_from_scratch"]),
        ]
        for r in data["sessions"]
    ]
    return header, rows


def savings_rows(data: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the savings table (tokens saved on the session's last request)."""
    header = ["session", "request tokens", *STRATEGY_ORDER, "total (default)", "total (+supersedeWrites)"]
    rows = []
    for r in data["sessions"]:
        default, superseding = r["savings"]["default"], r["savings"]["supersedeWrites"]
        cells = []
        for name in STRATEGY_ORDER:
            source = superseding if name == "supersedeWrites" else default
            s = source["by_strategy"][name]
            cells.append(f"{s['tokens']:,} ({s['calls']:,} calls)")
        rows.append([
            r["name"], f"{r['request_tokens']:,}", *cells,
            f"{default['tokens']:,} ({default['percent']:.1f} %)", f"{superseding['tokens']:,} ({superseding['percent']:.1f} %)",
        ])
    return header, rows


def net_cost_rows(data: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the net-cost table: what the session saves after cache rewrites, scheduler on/off."""
    pricings = list(data["sessions"][0]["net_cost_saved_percent"]) if data["sessions"] else []
    header = ["session", *[f"{p}: scheduler on / off" for p in pricings]]
    rows = [
        [r["name"], *[f"{v['on']:+.1f} % / {v['off']:+.1f} %" for v in r["net_cost_saved_percent"].values()]]
        for r in data["sessions"]
    ]
    return header, rows


def target_rows(data: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the targets table."""
    header = ["target", "limit", "measured (median)", "met"]
    rows = [
        [
            t["target"],
            t["limit"],
            ("n/a" if t["measured"] is None else f"{t['measured']:g}") + (f" ({t['note']})" if t.get("note") else ""),
            _yes(t["met"]),
        ]
        for t in data["targets"]
    ]
    return header, rows


def print_tables(data: dict[str, Any], console: Console) -> None:
    """The tables on the terminal."""
    titles = (
        ("Per request: median / p95 over repeated runs", timing_rows),
        (VOUCHED_TITLE, vouched_rows),
        (DECODED_TITLE, decoded_rows),
        (YARDSTICK_TITLE, yardstick_rows),
        ("Steps of a warm request timed apart, memory, exactness", breakdown_rows),
        ("Tokens saved on the last request, per strategy", savings_rows),
        ("Net cost saved (prompt-cache pricing; negative: costs more than no plugin)", net_cost_rows),
        ("Targets", target_rows),
    )
    for title, build in titles:
        header, rows = build(data)
        table = Table(title=title, title_justify="left")
        for index, name in enumerate(header):
            table.add_column(name, justify="left" if index == 0 else "right")
        for row in rows:
            table.add_row(*row)
        console.print(table)


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub pipe table; the first column left-aligned, the others right-aligned."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(data: dict[str, Any]) -> str:
    """The results as Markdown, with the machine they came from and no local paths."""
    repeat = data["repeat"]
    parts = [
        "# Benchmark results",
        "",
        f"Measured on a {MACHINE_LABEL} with `python -m benchmarks` ({repeat} samples of each timing; "
        f"times in ms as median / p95), {data.get('machine', {}).get('build', 'build not recorded')}.",
        "",
        "## Per request",
        "",
        markdown_table(*timing_rows(data)),
        "",
        f"## {VOUCHED_TITLE}",
        "",
        "The same warm requests, in pairs with those above: the host saying nothing, then its word that",
        "the messages of its previous request are unchanged, so their placeholders are not checked again.",
        "",
        markdown_table(*vouched_rows(data)),
        "",
        f"## {DECODED_TITLE}",
        "",
        "The warm requests above reuse one working copy or get a shallow one, whose strings and inputs",
        "are the history's own. These get a list decoded from JSON, whose objects lie as decoding laid",
        "them out; each is set against `json.dumps` of the list it pruned, timed right after it (medians",
        "of the per-request ratios).",
        "",
        markdown_table(*decoded_rows(data)),
        "",
        f"## {YARDSTICK_TITLE}",
        "",
        "The host serializes every request it sends; these ratios are measured in the same run, so a",
        "loaded machine slows both sides alike. The cold request's list has the session's messages, the",
        "warm requests' yardstick is the last request's list.",
        "",
        markdown_table(*yardstick_rows(data)),
        "",
        "## Steps of a warm request, timed apart",
        "",
        markdown_table(*breakdown_rows(data)),
        "",
        "## Tokens saved on the last request",
        "",
        markdown_table(*savings_rows(data)),
        "",
        "## Net cost saved under prompt-cache pricing",
        "",
        "What each session costs less than without the plugin, in % of that cost, after the cache",
        "rewrites its placeholders cause (negative: it costs more), with the cache scheduler on and off.",
        "",
        markdown_table(*net_cost_rows(data)),
        "",
        "## Targets",
        "",
        markdown_table(*target_rows(data)),
        "",
    ]
    return "\n".join(parts)
