"""`dcp replay --html`: the self-contained page, its charts, summary and tables."""

from __future__ import annotations

import re
from dataclasses import replace
from html import escape
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.cli.explain import worst_request
from dcp_plugin.cli.html_report import (
    PeerCurve,
    SessionPage,
    mask_batches,
    page_html,
    recovery_figures,
    tokens_removed_by_strategy,
)
from dcp_plugin.cli.main import main
from dcp_plugin.cli.svg_chart import MAX_POINTS, sample_indices
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.replay.anchors import AnchorTotals, LostAnchor
from dcp_plugin.replay.engine import ReplayReport, RequestRow, replay
from dcp_plugin.replay.pricing import ReplayTotals
from dcp_plugin.replay.sessionfile import example_session_path, load_session
from dcp_plugin.replay.simulate import generate_session
from tests.support.paths import ROOT

EXAMPLES = sorted((ROOT / "examples" / "sessions").glob("*.json"))


@pytest.fixture(scope="module")
def example_report() -> ReplayReport:
    info, messages = load_session(example_session_path())
    return replay(messages, info.get("directory") or ".")


def polylines(html: str, chart: str) -> dict[str, int]:
    """Series key -> number of points drawn, in the chart named ``chart``."""
    svg = re.search(rf'<svg class="chart" data-chart="{chart}".*?</svg>', html)
    assert svg is not None
    return {
        key: len(points.split())
        for key, points in re.findall(r'data-series="([^"]+)"[^>]*points="([^"]*)"', svg.group(0))
    }


def rows(count: int, **fields: Any) -> list[RequestRow]:
    return [RequestRow(i + 1, i + 2, 1000 + i, 600 + i, 1, 0.1, cost_without=100.0, cost_with=60.0, **fields) for i in range(count)]


def synthetic(requests: list[RequestRow], anchors: AnchorTotals | None = None) -> ReplayReport:
    totals = ReplayTotals()
    totals.cost_without = sum(r.cost_without for r in requests)
    totals.cost_with = sum(r.cost_with for r in requests)
    return ReplayReport("s", len(requests) + 1, len(requests), requests=requests, costs=totals, anchors=anchors or AnchorTotals())


def test_page_loads_nothing_from_the_network(example_report):
    html = page_html([SessionPage("example", example_report)])
    without_svg_namespace = html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert not re.search(r"https?://|<link|\bsrc=|@import|url\(", without_svg_namespace)


def test_single_session_page_has_no_script(example_report):
    assert "<script" not in page_html([SessionPage("example", example_report)])


def test_charts_draw_one_point_per_request(example_report):
    html = page_html([SessionPage("example", example_report)])
    count = len(example_report.requests)
    assert polylines(html, "tokens") == {"without": count, "with": count}
    assert polylines(html, "cost") == {"without": count, "with": count}


def test_long_session_is_drawn_with_at_most_max_points():
    html = page_html([SessionPage("long", synthetic(rows(MAX_POINTS * 4 + 7)))])
    assert set(polylines(html, "tokens").values()) == {MAX_POINTS}


def test_page_of_a_long_session_stays_small():
    html = page_html([SessionPage("long", synthetic(rows(50_000)))])
    assert len(html.encode()) < 3_000_000


@given(st.integers(min_value=1, max_value=20_000), st.integers(min_value=2, max_value=3_000))
def test_sampled_points_keep_first_and_last_in_order(count, limit):
    chosen = sample_indices(count, limit)
    assert len(chosen) == min(count, limit)
    assert chosen[0] == 0 and chosen[-1] == count - 1
    assert all(a < b for a, b in zip(chosen, chosen[1:], strict=False))


def test_markers_count_rewrites_and_cold_requests(example_report):
    html = page_html([SessionPage("example", example_report)])
    rewrites = sum(1 for r in example_report.requests if r.prefix_break)
    cold = sum(1 for r in example_report.requests if r.cold)
    assert f'data-markers="rewrite" data-count="{rewrites}"' in html
    assert f'data-markers="cold" data-count="{cold}"' in html
    assert rewrites and cold


def test_mask_batches_are_the_requests_where_masking_grew():
    requests = rows(5)
    masked = [0, 300, 300, 900, 0]
    requests = [replace(r, saved_by={"maskOldOutputs": m}) for r, m in zip(requests, masked, strict=True)]
    assert mask_batches(synthetic(requests)) == [1, 3]


def test_tokens_removed_by_strategy_add_up_to_the_tokens_saved(example_report):
    removed = tokens_removed_by_strategy(example_report)
    assert sum(removed.values()) == example_report.total_without - example_report.total_with
    assert removed


def test_summary_gives_net_saving_tokens_removed_and_why_they_differ(example_report):
    html = page_html([SessionPage("example", example_report)])
    cost = example_report.cost_dict()
    saved = example_report.total_without - example_report.total_with
    assert f"saves {cost['net_saved_percent']:.2f} %" in html
    assert f"Tokens removed: {saved:,}" in html
    assert "Net cost moves less than tokens" in html and "a tenth" in html


def test_worst_request_is_the_costliest_over_without_and_named_a_rewrite():
    requests = rows(4)
    requests[2] = replace(requests[2], cost_with=450.0, prefix_break=True)
    requests[1] = replace(requests[1], cost_with=120.0)
    worst = worst_request(synthetic(requests))
    assert worst is not None and worst.row.request == 3
    assert "a rewrite" in worst.sentence() and "(4.5x)" in worst.sentence()


def test_no_worst_request_when_every_request_costs_less():
    assert worst_request(synthetic(rows(3))) is None


def test_lost_anchor_is_listed_with_the_strategy_that_hid_it():
    lost = LostAnchor(7, (3, 0), "supersededReads", "    return <parse>(text)")
    anchors = AnchorTotals(anchors=2, sourced=2, lost=1, lost_by={"supersededReads": 1}, lost_anchors=[lost])
    html = page_html([SessionPage("s", synthetic(rows(3), anchors))])
    row = re.search(r"<tr><td[^>]*>7</td>.*?</tr>", html)
    assert row is not None
    assert "supersededReads" in row.group(0) and "return &lt;parse&gt;(text)" in row.group(0)
    assert "forced re-read" not in html


def test_recovery_figures_are_shown_when_the_replay_has_them():
    messages = generate_session(160, seed=3)["messages"]
    config = DcpConfig.model_validate(
        {"strategies": {"maskOldOutputs": {"trigger": 1000, "keepTokens": 0, "keepCalls": 0}}})
    report = replay(messages, "/home/dev/project", config, pricing="anthropic", recovery=True)
    figures = recovery_figures(report)
    assert figures is not None and figures.forced_rereads == report.recovery.count > 0
    html = page_html([SessionPage("s", report)])
    assert escape(report.recovery_sentence() or "") in html
    lost = {anchor.edit_message for anchor in report.anchors.lost_anchors}
    shown = [label for edit, label in figures.rereads.items() if edit in lost]
    assert shown and all(label.startswith("read (message ") and label in html for label in shown)


def test_no_recovery_figures_without_them_in_the_replay(example_report):
    assert recovery_figures(example_report) is None


def test_peer_curves_are_drawn_with_the_same_points(example_report):
    count = len(example_report.requests)
    peer = PeerCurve("last-5", [1] * count, [1.0] * count)
    html = page_html([SessionPage("example", example_report, peers=[peer])])
    assert polylines(html, "tokens") == {"peer-0": count, "without": count, "with": count}
    assert "last-5" in html


def test_titles_are_escaped():
    html = page_html([SessionPage("<script>alert(1)</script>", synthetic(rows(2)))])
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)" in html


def test_several_sessions_get_a_sortable_overview_linking_to_each(example_report):
    html = page_html([SessionPage("one", example_report), SessionPage("two", synthetic(rows(3)))])
    overview = re.search(r'<table id="overview".*?</table>', html)
    assert overview is not None
    assert 'href="#s1"' in overview.group(0) and 'href="#s2"' in overview.group(0)
    assert 'id="s1"' in html and 'id="s2"' in html
    assert "<tfoot><tr><th>total</th>" in overview.group(0) and "<script>" in html


def test_cli_writes_one_report_for_the_shipped_sessions(tmp_path, capsys):
    out = tmp_path / "report.html"
    assert main(["replay", *map(str, EXAMPLES), "--html", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert html.count('<section class="session"') == len(EXAMPLES)
    assert f"wrote {out}" in capsys.readouterr().out


def test_cli_peers_adds_every_peer_rule(tmp_path):
    out = tmp_path / "report.html"
    assert main(["replay", str(EXAMPLES[0]), "--html", str(out), "--peers"]) == 0
    series = polylines(out.read_text(encoding="utf-8"), "tokens")
    assert len(series) > 2 and len(set(series.values())) == 1


def test_cli_peers_without_html_says_what_is_missing(capsys):
    assert main(["replay", "--peers"]) == 1
    assert "--html" in capsys.readouterr().err


def test_cli_report_into_a_missing_folder_says_where(tmp_path, capsys):
    out = tmp_path / "nowhere" / "report.html"
    assert main(["replay", str(EXAMPLES[0]), "--html", str(out)]) == 1
    assert f"{out}: cannot write the report" in capsys.readouterr().err


def test_summary_of_a_session_the_plugin_made_dearer_says_it_costs_more():
    requests = [replace(r, cost_with=150.0) for r in rows(3)]
    html = page_html([SessionPage("s", synthetic(requests))])
    assert 'class="bad">costs 50.00 % more' in html


def test_summary_of_a_session_with_nothing_pruned_says_so():
    requests = [replace(r, tokens_with=r.tokens_without, cost_with=r.cost_without) for r in rows(3)]
    html = page_html([SessionPage("s", synthetic(requests))])
    assert "Nothing was pruned: the requests send and cost the same" in html
    assert "Net cost moves less than tokens" not in html


def test_cli_peers_without_the_benchmarks_says_they_need_a_source_checkout(tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "benchmarks", None)  # as in an installed package: no benchmarks to import
    monkeypatch.delitem(sys.modules, "benchmarks.peers", raising=False)
    assert main(["replay", str(EXAMPLES[0]), "--html", str(tmp_path / "r.html"), "--peers"]) == 1
    assert "--peers needs the project's benchmarks (a source checkout" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()
