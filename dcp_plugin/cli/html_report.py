"""The replay report as one self-contained HTML page: charts, summary and tables per session, an overview of several.

Everything is inline (styles, SVG charts, the overview's few lines of sorting script): the page
opens offline and loads nothing from the network.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from itertools import accumulate

from dcp_plugin.cli.explain import GLOSSARY, why_cost_differs, worst_request
from dcp_plugin.cli.svg_chart import Markers, Series, legend, line_chart
from dcp_plugin.commands.context import PrunedCall, largest_line
from dcp_plugin.config.strategies import MASK_OLD_OUTPUTS
from dcp_plugin.pipeline.strategies import ALL_REASONS
from dcp_plugin.replay.engine import ReplayReport, SessionsTotal

WITHOUT_COLOR, WITH_COLOR = "#7a7a7a", "#1a7f37"
PEER_COLORS = ("#8250df", "#bc4c00", "#0969da", "#bf3989", "#4d2d00", "#1b7c83")
COLD_COLOR, REWRITE_COLOR, MASK_COLOR = "#c8c8c8", "#cf222e", "#0969da"
ANCHOR_TEXT_LIMIT = 140


@dataclass(frozen=True, slots=True)
class PeerCurve:
    """A peer rule replayed on the same session: what each request would have sent and cost under it."""

    name: str
    tokens_with: Sequence[int]
    cost_with: Sequence[float]


@dataclass
class SessionPage:
    """What the page shows of one session: the replay, the largest pruned outputs, the peers' curves."""

    title: str
    report: ReplayReport
    largest: Sequence[PrunedCall] = ()
    peers: Sequence[PeerCurve] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Recovery:
    """The replay's recovery figures: edits that forced a re-read of hidden text, and the net saving after them."""

    forced_rereads: int | None
    net_after_recovery: float | None  # net cost saved in percent once the re-reads are paid for
    rereads: dict[int, str]  # edit message -> the forced re-read of its anchor


def recovery_figures(report: ReplayReport) -> Recovery | None:
    """The recovery figures of a replay made with forced re-reads, else None (the one place the page reads them)."""
    if report.recovered is None:
        return None
    return Recovery(report.recovery.count, report.net_after_recovery_percent, report.recovery.labels())


def mask_batches(report: ReplayReport) -> list[int]:
    """The requests (0-based) where maskOldOutputs placeholders were added: its tokens removed grew."""
    found, before = [], 0
    for index, row in enumerate(report.requests):
        now = row.saved_by.get(MASK_OLD_OUTPUTS, 0)
        if now > before:
            found.append(index)
        before = now
    return found


def tokens_removed_by_strategy(report: ReplayReport) -> dict[str, int]:
    """Tokens each strategy's placeholders removed over every request of the session, in strategy order."""
    totals: dict[str, int] = {}
    for row in report.requests:
        for name, tokens in row.saved_by.items():
            totals[name] = totals.get(name, 0) + tokens
    order = {name: i for i, name in enumerate(ALL_REASONS)}
    return dict(sorted(totals.items(), key=lambda item: order.get(item[0], len(order))))


def _percent(part: float, whole: float) -> float:
    return 100 * part / whole if whole else 0.0


def summary_lines(report: ReplayReport) -> list[str]:
    """The page's plain-language summary of a session, as HTML sentences."""
    data = report.to_dict()  # the figures `dcp replay` prints, so the page and the terminal agree
    cost = data["cost"]
    net, whole = cost["net_saved"], cost["cost_without_plugin"]
    verdict = (
        f'<strong class="good">saves {cost["net_saved_percent"]:.2f} %</strong> of the cost '
        f"({net:,.0f} of {whole:,.0f} cost units)"
        if net >= 0
        else f'<strong class="bad">costs {-cost["net_saved_percent"]:.2f} % more</strong> '
        f"({-net:,.0f} cost units over {whole:,.0f})"
    )
    lines = [
        f"Net: the plugin {verdict}.",
        f"Tokens removed: {data['tokens_saved']:,} of the {data['tokens_sent_without_plugin']:,} the requests send "
        f"without it ({data['tokens_saved_percent']:.1f} %).",
        escape(why_cost_differs(report)),
    ]
    worst = worst_request(report)
    lines.append(escape(worst.sentence()) if worst else "No request cost more with the plugin than without it.")
    lines.append(escape(report.anchors.sentence()))
    recovery = report.recovery_sentence()
    if recovery is not None:
        lines.append(escape(recovery))
    return lines


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1, cls: str = "") -> str:
    ths = "".join(f'<th class="{"num" if i >= numeric_from else ""}">{escape(h)}</th>' for i, h in enumerate(head))
    body = "".join(
        "<tr>" + "".join(f'<td class="{"num" if i >= numeric_from else ""}">{cell}</td>' for i, cell in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f'<table class="{cls}"><thead><tr>{ths}</tr></thead><tbody>{body}</tbody></table>'


def _charts(page: SessionPage) -> str:
    report = page.report
    rows = report.requests
    count = len(rows)
    if not count:
        return "<p>No model request in this session.</p>"
    markers = [
        Markers("cold", "cold cache", [i for i, r in enumerate(rows) if r.cold], COLD_COLOR, "full"),
        Markers("rewrite", "rewrite (prefix break)", [i for i, r in enumerate(rows) if r.prefix_break], REWRITE_COLOR),
        Markers("mask", "mask batch", mask_batches(report), MASK_COLOR, "top"),
    ]
    peers = list(zip(page.peers, PEER_COLORS * (1 + len(page.peers) // len(PEER_COLORS)), strict=False))
    tokens = [
        Series("without", "without the plugin", [r.tokens_without for r in rows], WITHOUT_COLOR),
        Series("with", "with the plugin", [r.tokens_with for r in rows], WITH_COLOR),
        *[Series(f"peer-{i}", p.name, p.tokens_with, color, True) for i, (p, color) in enumerate(peers)],
    ]
    costs = [
        Series("without", "without the plugin", list(accumulate(r.cost_without for r in rows)), WITHOUT_COLOR),
        Series("with", "with the plugin", list(accumulate(r.cost_with for r in rows)), WITH_COLOR),
        *[Series(f"peer-{i}", p.name, list(accumulate(p.cost_with)), color, True) for i, (p, color) in enumerate(peers)],
    ]
    # The peers are drawn first so that a peer that prunes nothing does not hide the line without the plugin.
    return (
        "<h3>Tokens per request</h3>"
        + line_chart("tokens", "Tokens per request, with and without the plugin", count, tokens[2:] + tokens[:2], markers)
        + "<h3>Cumulative cost (cost units)</h3>"
        + line_chart("cost", "Cumulative cost, with and without the plugin", count, costs[2:] + costs[:2], markers)
        + legend(tokens, markers)
        + f'<p class="gloss">Rewrite: {escape(GLOSSARY["rewrite"])}. Cold: {escape(GLOSSARY["cold"])}. '
        f'Mask batch: {escape(GLOSSARY["mask batch"])}. Cost unit: {escape(GLOSSARY["cost unit"])}.</p>'
    )


def _strategies(report: ReplayReport) -> str:
    removed = tokens_removed_by_strategy(report)
    total = sum(removed.values())
    rows = [
        [escape(name), f"{report.pruned.get(name, 0):,}", f"{tokens:,}", f"{_percent(tokens, total):.1f} %"]
        for name, tokens in removed.items()
    ]
    if not rows:
        return "<h3>Savings per strategy</h3><p>Nothing was pruned.</p>"
    head = ("strategy", "calls pruned (last request)", "tokens removed (all requests)", "share")
    return "<h3>Savings per strategy</h3>" + _table(head, rows)


def _largest(page: SessionPage) -> str:
    if not page.largest:
        return ""
    items = "".join(f"<li>{escape(largest_line(call))}</li>" for call in page.largest)
    return f"<h3>Largest pruned outputs (last request)</h3><ul>{items}</ul>"


def _anchors(report: ReplayReport) -> str:
    lost = report.anchors.lost_anchors
    gloss = f'<p class="gloss">An edit anchor is {escape(GLOSSARY["edit anchor"])}.</p>'
    if not lost:
        return f"<h3>Edit anchors lost</h3><p>None. {escape(report.anchors.sentence())}</p>{gloss}"
    recovery = recovery_figures(report)
    rereads = recovery.rereads if recovery is not None else {}
    head = ["edit (message)", "hidden by", "anchor", *(["forced re-read"] if rereads else [])]
    rows = []
    for anchor in lost:
        text = anchor.anchor if len(anchor.anchor) <= ANCHOR_TEXT_LIMIT else anchor.anchor[:ANCHOR_TEXT_LIMIT] + "…"
        row = [str(anchor.edit_message), escape(anchor.hidden_by), f"<code>{escape(text)}</code>"]
        if rereads:
            row.append(escape(rereads.get(anchor.edit_message, "-")))
        rows.append(row)
    return f"<h3>Edit anchors lost ({len(lost):,})</h3>" + gloss + _table(head, rows, numeric_from=9, cls="anchors")


def session_section(page: SessionPage, anchor_id: str) -> str:
    """One session's part of the page."""
    report = page.report
    summary = "".join(f"<li>{line}</li>" for line in summary_lines(report))
    facts = (
        f"{report.messages:,} messages, {report.tool_calls:,} tool calls, {len(report.requests):,} model requests; "
        f"pricing {report.pricing}, cache scheduler {'on' if report.scheduler else 'off'}; prompt overhead "
        f"{report.overhead:,} tokens ({GLOSSARY['prompt overhead']})"
    )
    return (
        f'<section class="session" id="{anchor_id}"><h2>{escape(page.title)}</h2>'
        f'<ul class="summary">{summary}</ul><p class="facts">{escape(facts)}</p>'
        + _charts(page)
        + _strategies(report)
        + _largest(page)
        + _anchors(report)
        + "</section>"
    )


OVERVIEW_COLUMNS = ("session", "requests", "tokens saved %", "net cost saved %", "rewrites", "anchors lost")


def _overview_cells(total: SessionsTotal) -> list[tuple[float, str]]:
    """An overview row's figures: (sort value, text), the same for a session as for the total."""
    net = total.costs.net_percent or 0.0
    return [
        (total.costs.requests, f"{total.costs.requests:,}"),
        (round(total.tokens_saved_percent, 2), f"{total.tokens_saved_percent:.1f} %"),
        (round(net, 2), f"{net:.1f} %"),
        (total.costs.prefix_breaks, f"{total.costs.prefix_breaks:,}"),
        (total.anchors.lost, f"{total.anchors.lost:,}"),
    ]


def _overview(pages: Sequence[SessionPage]) -> str:
    rows = []
    for index, page in enumerate(pages, 1):
        cells = [f'<td data-value="{escape(page.title)}"><a href="#s{index}">{escape(page.title)}</a></td>']
        cells += [
            f'<td class="num" data-value="{value}">{text}</td>'
            for value, text in _overview_cells(SessionsTotal.of([page.report]))
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    total = SessionsTotal.of([page.report for page in pages])
    foot = "<tr><th>total</th>" + "".join(f'<th class="num">{text}</th>' for _, text in _overview_cells(total)) + "</tr>"
    ths = "".join(
        f'<th class="{"num" if i else ""}" data-column="{i}" title="click to sort">{escape(h)}</th>'
        for i, h in enumerate(OVERVIEW_COLUMNS)
    )
    return (
        f'<h2>{len(pages)} sessions</h2><p class="gloss">Click a column to sort; a session\'s name leads to its report.</p>'
        f'<table id="overview" class="sortable"><thead><tr>{ths}</tr></thead><tbody>{"".join(rows)}</tbody>'
        f"<tfoot>{foot}</tfoot></table>"
    )


# Sorts the overview by the clicked column (numbers as numbers); the page's only script.
SORT_SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0], column = Number(th.dataset.column);
    var down = th.dataset.order !== "desc";
    table.querySelectorAll("th").forEach(function (other) { delete other.dataset.order; });
    th.dataset.order = down ? "desc" : "asc";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[column].dataset.value, y = b.cells[column].dataset.value;
      var nx = Number(x), ny = Number(y);
      var order = isNaN(nx) || isNaN(ny) ? x.localeCompare(y) : nx - ny;
      return down ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
"""

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:980px;color:#1f2328;padding:0 12px}
h1{font-size:22px}h2{font-size:19px;border-bottom:1px solid #d0d7de;padding-bottom:4px;margin-top:32px}h3{font-size:15px;margin:18px 0 6px}
.summary li{margin:3px 0}.good{color:#1a7f37}.bad{color:#cf222e}.facts,.gloss{color:#59636e;font-size:13px}
svg.chart{width:100%;height:auto;background:#fff;border:1px solid #d0d7de;border-radius:6px}
svg .grid{stroke:#eaeef2}svg .axis{font-size:11px;fill:#59636e}svg .markers line{stroke-width:1.2}
table{border-collapse:collapse;font-size:13px;margin:4px 0}th,td{padding:3px 10px;border-bottom:1px solid #eaeef2;text-align:left}
.num{text-align:right;font-variant-numeric:tabular-nums}table.sortable th{cursor:pointer}
table.anchors code{font-size:12px;white-space:pre-wrap;word-break:break-all}
.legend{font-size:13px;margin:6px 0}.key{margin-right:16px;white-space:nowrap}
.swatch{display:inline-block;width:18px;border-top:3px solid;vertical-align:middle;margin-right:5px}
.swatch.dashed{border-top-style:dashed}.tick{display:inline-block;width:3px;height:12px;vertical-align:middle;margin-right:5px}
"""


def page_html(pages: Sequence[SessionPage], title: str = "dcp replay report") -> str:
    """The whole report: an overview when there are several sessions, then a section per session."""
    sections = "".join(session_section(page, f"s{index}") for index, page in enumerate(pages, 1))
    overview = _overview(pages) if len(pages) > 1 else ""
    script = f"<script>{SORT_SCRIPT}</script>" if len(pages) > 1 else ""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        '<p class="gloss">Tokens are estimates; cost is in cost units (one uncached input token at the base price), '
        "prompt caching included.</p>"
        f"{overview}{sections}{script}</body></html>\n"
    )
