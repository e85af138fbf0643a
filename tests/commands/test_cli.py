"""`dcp context FILE` and `dcp stats` on known data, as JSON and as rich tables."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dcp_plugin.cli.main import main
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.model.tokens import estimate_content_tokens, estimate_part_tokens
from dcp_plugin.replay.simulate import generate_session
from dcp_plugin.store import DecisionRow, SessionBatch, Store, default_path
from tests.support.helpers import hook_transform


@pytest.fixture
def session_file(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    session = generate_session(160, seed=7)
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session))
    return path, session


def expected_breakdown(session: dict[str, Any]) -> dict[str, int]:
    """From scratch: one transform of the final request's messages (its placeholders are the last written),
    then plain sums over the whole session as it stands, as /dcp context shows it."""
    messages = session["messages"]
    last = max(i for i, m in enumerate(messages) if i > 0 and m["info"]["role"] == "assistant")
    final = copy.deepcopy(messages[:last])
    runtime = Runtime(session["info"]["directory"], StaticConfig(DcpConfig()))
    runtime.use_store(None)
    hook_transform(runtime, {}, {"messages": final})
    sums = {"user": 0, "assistant": 0, "tools": 0}
    for m in final + copy.deepcopy(messages[last:]):
        for p in m["parts"]:
            key = "tools" if p["type"] == "tool" else ("assistant" if m["info"]["role"] == "assistant" else "user")
            sums[key] += estimate_part_tokens(p)
    sums["without"] = estimate_content_tokens(messages)
    # A call counts as pruned when its placeholder made it smaller, not merely when it was decided.
    sums["pruned"] = sum(
        1
        for sent, original in zip(final, messages[:last], strict=False)
        for p, o in zip(sent["parts"], original["parts"], strict=False)
        if p["type"] == "tool" and estimate_part_tokens(p) < estimate_part_tokens(o)
    )
    return sums


def test_context_json_matches_a_from_scratch_computation(session_file: tuple[Path, dict[str, Any]], capsys: Any) -> None:
    path, session = session_file
    assert main(["context", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    want = expected_breakdown(session)
    categories = data["categories"]
    assert data["estimates"] == {"user": want["user"], "assistant": want["assistant"], "tools": want["tools"]}
    assert data["pruned_calls"] == want["pruned"]
    assert data["total_without_plugin"] - data["total_now"] == want["without"] - (want["user"] + want["assistant"] + want["tools"])
    # One total, the snapshot's; the rows are its parts.
    assert data["total_now"] == data["snapshot"]["estimated_input_tokens"]
    assert data["total_now"] == sum(categories[name]["tokens"] or 0 for name in ("system", "user", "assistant", "tools"))


def test_context_json_carries_the_snapshot_severity_and_ladder(session_file: tuple[Path, dict[str, Any]], capsys: Any) -> None:
    path, _ = session_file
    main(["context", str(path), "--json"])
    snapshot = json.loads(capsys.readouterr().out)["snapshot"]
    assert snapshot["severity"] in ("normal", "info", "warning", "danger", "critical")
    assert snapshot["thresholds"]["warn"] <= snapshot["thresholds"]["auto"] <= snapshot["thresholds"]["hard"]


def test_context_table_shows_the_categories_and_the_ladder(session_file: tuple[Path, dict[str, Any]], capsys: Any) -> None:
    path, session = session_file
    assert main(["context", str(path)]) == 0
    out = capsys.readouterr().out
    main(["context", str(path), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert f"Context now: ~{data['total_now']:,} tokens" in out
    assert f"~{data['categories']['tools']['tokens']:,}" in out
    assert "Hard threshold" in out and "Severity:" in out


def test_context_of_a_file_does_not_touch_the_users_saved_state(session_file: tuple[Path, dict[str, Any]], capsys: Any) -> None:
    path, _ = session_file
    main(["context", str(path), "--json"])
    assert not default_path().exists()


def test_context_of_a_missing_file_fails_with_a_clear_message(tmp_path: Path, capsys: Any) -> None:
    assert main(["context", str(tmp_path / "nope.json")]) == 1
    assert "nope.json: no such file" in capsys.readouterr().err


def test_stats_json_reports_all_time_numbers(capsys: Any) -> None:
    store = Store(default_path())
    store.save(
        [
            SessionBatch("a", [DecisionRow("1", "read", "deduplication", 100), DecisionRow("2", "bash", "purgeErrors", 10)], requests=5, tokens_saved_sent=300),
            SessionBatch("b", [DecisionRow("1", "read", "sweep", 40)], requests=1, tokens_saved_sent=40),
        ]
    )
    store.close()
    assert main(["stats", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["sessions"], data["requests"], data["calls_pruned"], data["tokens_saved_per_request"], data["tokens_saved_over_requests"]) == (2, 6, 3, 150, 340)
    assert data["by_strategy"]["supersedeWrites"] == {"calls": 0, "tokens_saved_per_request": 0}
    assert data["by_strategy"]["sweep"] == {"calls": 1, "tokens_saved_per_request": 40}


def test_stats_without_a_database_reports_zeros_and_creates_nothing(capsys: Any) -> None:
    assert main(["stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sessions"] == 0
    assert not default_path().exists()


def test_stats_table_lists_every_strategy(capsys: Any) -> None:
    store = Store(default_path())
    store.save([SessionBatch("a", [DecisionRow("1", "read", "deduplication", 1234)], requests=2, tokens_saved_sent=2468)])
    store.close()
    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    assert "1 session, 2 requests" in out
    for name in ("deduplication", "supersedeWrites", "purgeErrors", "sweep"):
        assert name in out
    assert "~1,234" in out and "~2,468" in out


def test_stats_db_never_changes_the_file_it_is_given(tmp_path: Path, capsys: Any) -> None:
    other = tmp_path / "other.db"
    other.write_bytes(b"some other file " * 64)
    assert main(["stats", "--db", str(other)]) == 1
    assert "is not a dcp state database" in capsys.readouterr().err
    assert other.read_bytes() == b"some other file " * 64
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "other.db"]


def test_stats_db_of_a_missing_file_is_an_error_and_creates_nothing(tmp_path: Path, capsys: Any) -> None:
    assert main(["stats", "--db", str(tmp_path / "missing.db")]) == 1
    assert "missing.db: no such file" in capsys.readouterr().err
    assert not (tmp_path / "missing.db").exists()


def test_stats_reset_with_yes_starts_over_and_keeps_sweeps(capsys: Any) -> None:
    store = Store(default_path())
    store.save([SessionBatch("a", [DecisionRow("1", "read", "deduplication", 100)], manual={"2": "sweep"}, requests=5)])
    store.close()
    assert main(["stats", "--reset", "--yes"]) == 0
    assert main(["stats", "--json"]) == 0
    data = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert (data["sessions"], data["requests"], data["calls_pruned"]) == (0, 0, 0)
    assert Store(default_path()).load_session("a").manual == {"2": "sweep"}


def test_stats_reset_without_a_terminal_asks_for_yes(capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(default_path())
    store.save([SessionBatch("a", requests=5)])
    store.close()
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert main(["stats", "--reset"]) == 1
    assert "pass --yes" in capsys.readouterr().err
    assert main(["stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["requests"] == 5


def test_stats_reset_asks_on_a_terminal_and_does_nothing_unless_told_yes(capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(default_path())
    store.save([SessionBatch("a", requests=5)])
    store.close()
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    answers = iter(["", "y"])
    monkeypatch.setattr("builtins.input", lambda _question: next(answers))
    assert main(["stats", "--reset"]) == 1
    assert main(["stats", "--reset"]) == 0
    capsys.readouterr()
    assert main(["stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["requests"] == 0


def test_stats_reset_without_a_database_has_nothing_to_do(capsys: Any) -> None:
    assert main(["stats", "--reset", "--yes"]) == 0
    assert "nothing to reset" in capsys.readouterr().out
    assert not default_path().exists()
