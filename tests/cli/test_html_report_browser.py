"""The HTML replay report in a real browser (headless Chromium): it renders, draws every point, logs no error."""

from __future__ import annotations

from pathlib import Path

import pytest

from dcp_plugin.cli.main import main
from dcp_plugin.replay.engine import replay
from dcp_plugin.replay.sessionfile import load_session
from tests.support.chromium import loaded, missing_reason
from tests.support.paths import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason()))]

EXAMPLES = sorted((ROOT / "examples" / "sessions").glob("*.json"))

# Per chart: [chart name, [series key, points the browser parsed, drawn width in px]] for every line.
DRAWN = """
Array.from(document.querySelectorAll("svg.chart")).map(function (svg) {
  return [svg.dataset.chart, Array.from(svg.querySelectorAll("polyline")).map(function (line) {
    return [line.dataset.series, line.points.numberOfItems, line.getBoundingClientRect().width];
  })];
})
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["replay", *map(str, EXAMPLES), "--html", str(out)]) == 0
    return out


def requests_of(path: Path) -> int:
    info, messages = load_session(path)
    return len(replay(messages, info.get("directory") or ".").requests)


def test_report_renders_every_chart_with_a_point_per_request(report):
    expected = [requests_of(path) for path in EXAMPLES]
    with loaded(report) as page:
        charts = page.evaluate(DRAWN)
    assert [name for name, _ in charts] == ["tokens", "cost"] * len(EXAMPLES)
    for index, (_, lines) in enumerate(charts):
        assert [key for key, _, _ in lines] == ["without", "with"]
        assert all(points == expected[index // 2] for _, points, _ in lines)
        assert all(width > 100 for _, _, width in lines)


def test_report_logs_no_console_error(report):
    with loaded(report) as page:
        page.evaluate("document.querySelector('#overview th[data-column=\"2\"]').click()")
    assert page.errors == []


NET_COLUMN = "Array.from(document.querySelectorAll('#overview tbody tr')).map(r => r.cells[3].dataset.value)"
CLICK_NET = "document.querySelector('#overview th[data-column=\"3\"]').click()"


def test_overview_sorts_by_the_clicked_column_down_then_up(report):
    with loaded(report) as page:
        before = page.evaluate(NET_COLUMN)
        page.evaluate(CLICK_NET)
        down = page.evaluate(NET_COLUMN)
        page.evaluate(CLICK_NET)
        up = page.evaluate(NET_COLUMN)
    assert down == sorted(before, key=float, reverse=True)
    assert up == sorted(before, key=float) and up != down


def test_console_errors_are_caught(tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><html><body><script>console.error('boom'); notDefined();</script></body></html>")
    with loaded(broken) as page:
        pass
    assert len(page.errors) == 2 and "boom" in page.errors[0]
