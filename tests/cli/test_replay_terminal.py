"""`dcp replay` in a terminal: fits 80 columns, explains its figures and jargon, shows progress only on a terminal."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from rich.console import Console

import dcp_plugin.cli.replay as cli_replay
from dcp_plugin.cli.main import main
from dcp_plugin.cli.replay import request_note
from dcp_plugin.cli.terminal import ReplayProgress
from dcp_plugin.replay.engine import RequestRow, replay
from dcp_plugin.replay.sessionfile import example_session_path, load_session
from tests.support.paths import ROOT

EXAMPLES = sorted((ROOT / "examples" / "sessions").glob("*.json"))


@pytest.fixture
def screen(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """What `dcp replay` prints on an 80-column terminal."""
    buffer = io.StringIO()
    monkeypatch.setattr(cli_replay, "console", lambda stderr=False: Console(file=buffer, width=80, color_system=None))
    yield buffer


def printed(screen: io.StringIO, *argv: str) -> str:
    assert main(["replay", *argv]) == 0
    return screen.getvalue()


def assert_fits_80_columns(text: str) -> None:
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text


def test_report_fits_80_columns_uncut(screen):
    assert_fits_80_columns(printed(screen))


def test_per_request_rows_show_whole_numbers_at_80_columns(screen):
    text = printed(screen, "--rows", "500")
    info, messages = load_session(example_session_path())
    for row in replay(messages, info.get("directory") or ".").requests:
        assert f" {row.tokens_without:,} " in text and f" {row.cost_with:,.0f} " in text


def test_per_request_headers_are_whole_at_80_columns(screen):
    header = next(line for line in printed(screen).splitlines() if line.split()[:1] == ["req"])
    assert header.split() == ["req", "without", "with", "saved", "without", "with", "note"]


def test_several_sessions_fit_80_columns(screen):
    assert_fits_80_columns(printed(screen, *map(str, EXAMPLES)))


@pytest.fixture
def wide_screen(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """What `dcp replay` prints on a terminal wide enough for every column."""
    buffer = io.StringIO()
    monkeypatch.setattr(cli_replay, "console", lambda stderr=False: Console(file=buffer, width=200, color_system=None))
    yield buffer


def test_wide_adds_every_column(wide_screen):
    header = next(line for line in printed(wide_screen, "--wide").splitlines() if line.split()[:1] == ["req"])
    assert {"messages", "cache", "ms"} <= set(header.split())


def test_one_line_says_why_net_cost_moves_less_than_tokens(screen):
    lines = [line for line in printed(screen).replace("\n", " ").split(". ") if "Net cost moves less than tokens" in line]
    assert lines and "a tenth" in lines[0]


def test_jargon_is_glossed(screen):
    text = " ".join(printed(screen).split())
    assert "An edit anchor is the longest line of the text an edit replaced" in text
    assert "Prompt overhead outside the messages: 11,002 tokens (what the provider counted" in text
    assert "A rewrite is a request where a placeholder changed a part already sent" in text


def row(**fields: object) -> RequestRow:
    base: dict[str, object] = dict(request=5, messages=9, tokens_without=1000, tokens_with=500, pruned_calls=1, ms=0.1)
    return RequestRow(**{**base, **fields})  # type: ignore[arg-type]


def test_row_costing_more_with_the_plugin_says_it_is_a_rewrite():
    assert request_note(row(cost_without=100.0, cost_with=450.0, prefix_break=True)) == "rewrite: 4.5x the cost"


def test_row_costing_less_has_no_cost_note():
    assert request_note(row(cost_without=100.0, cost_with=50.0)) == ""


def test_shipped_example_marks_its_costlier_rows_as_rewrites(screen):
    notes = [line for line in printed(screen, "--rows", "500").splitlines() if "x the cost" in line]
    assert notes and all("rewrite: " in line for line in notes)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_appears_once_a_replay_runs_past_two_seconds_on_a_terminal():
    clock = Clock()
    err = Console(file=io.StringIO(), force_terminal=True, width=80)
    with ReplayProgress("replaying", err, clock=clock) as progress:
        progress(1, 10)
        assert progress.bar is None
        clock.now = 2.5
        progress(2, 10)
        assert progress.bar is not None and progress.bar.tasks[0].completed == 2


def test_progress_is_never_shown_on_a_pipe():
    clock = Clock()
    err = Console(file=io.StringIO(), force_terminal=False, width=80)
    with ReplayProgress("replaying", err, clock=clock) as progress:
        clock.now = 60.0
        progress(5, 10)
        assert progress.bar is None
    assert err.file.getvalue() == ""
