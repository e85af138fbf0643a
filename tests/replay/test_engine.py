"""`dcp replay`, the shipped example and the session generator."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dcp_plugin.cli.main import main
from dcp_plugin.model.tokens import estimate_content_tokens, message_prompt_tokens
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.replay.engine import plugin_host, replay, request_points
from dcp_plugin.replay.file_error import SessionFileError
from dcp_plugin.replay.sessionfile import example_session_path, load_session, parse_session
from dcp_plugin.replay.simulate import generate_session
from tests.support.helpers import hook_transform, make_config
from tests.support.paths import ROOT


def run_json(capsys, *argv: str) -> dict:
    assert main(["replay", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def shipped_report() -> dict[str, Any]:
    """`dcp replay --json` of the shipped example, replayed once for the tests that only read it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["replay", "--json"]) == 0
    report: dict[str, Any] = json.loads(out.getvalue())
    return report


def test_generator_is_deterministic_by_seed():
    assert generate_session(120, seed=3) == generate_session(120, seed=3)
    assert generate_session(120, seed=3) != generate_session(120, seed=4)


def test_generator_makes_the_requested_number_of_messages():
    assert len(generate_session(257, seed=1)["messages"]) == 257


def test_shipped_example_is_the_generator_output():
    info, messages = load_session(example_session_path())
    assert {"info": info, "messages": messages} == generate_session(400, seed=42)


def test_examples_folder_holds_the_shipped_session():
    assert json.loads((ROOT / "examples/sessions/example-400-seed42.json").read_text()) == json.loads(example_session_path().read_text())


def test_example_session_looks_like_coding_work():
    _, messages = load_session(example_session_path())
    tools = {(p["tool"], p["state"]["status"]) for m in messages for p in m["parts"] if p["type"] == "tool"}
    assert {("read", "completed"), ("read", "error"), ("write", "completed"), ("edit", "completed"), ("bash", "error"), ("task", "completed"), ("todowrite", "completed")} <= tools


def test_replay_of_shipped_example_reports_pruning(shipped_report):
    report = shipped_report
    assert report["messages"] == 400
    assert report["pruned_calls"]["deduplication"] > 0
    assert report["pruned_calls"]["purgeErrors"] > 0
    assert report["pruned_calls"]["supersedeWrites"] == 0  # off by default
    assert 0 < report["tokens_saved"] == report["tokens_sent_without_plugin"] - report["tokens_sent_with_plugin"]


def test_replay_requests_are_one_per_assistant_message(shipped_report):
    _, messages = load_session(example_session_path())
    report = shipped_report
    assert report["requests"] == len(request_points(messages)) == len(report["per_request"])


def test_replay_tokens_without_plugin_match_the_estimate_of_each_prefix(shipped_report):
    _, messages = load_session(example_session_path())
    report = shipped_report
    for row in report["per_request"][::37]:
        assert row["tokens_without"] == sum(message_prompt_tokens(m) for m in messages[: row["messages"]])


def test_replay_last_request_with_plugin_matches_a_single_transform(shipped_report):
    import copy

    from dcp_plugin.host.runtime import Runtime, StaticConfig

    _, messages = load_session(example_session_path())
    report = shipped_report
    last = report["per_request"][-1]
    outgoing = copy.deepcopy(messages[: last["messages"]])
    # The default config, as the replay reads it: the scheduler's choices are part of the result.
    hook_transform(Runtime("/home/dev/project", StaticConfig()), {}, {"messages": outgoing})
    # What the placeholders removed, by the fixed ratios, off what the messages cost unpruned.
    removed = estimate_content_tokens(messages[: last["messages"]]) - estimate_content_tokens(outgoing)
    assert last["tokens_with"] == last["tokens_without"] - removed


def test_replay_with_config_file_turns_on_supersede(capsys, tmp_path):
    cfg = tmp_path / "dcp.jsonc"
    cfg.write_text('{ // comment\n "strategies": {"supersedeWrites": {"enabled": true}},}')
    assert run_json(capsys, "--config", str(cfg))["pruned_calls"]["supersedeWrites"] > 0


def test_replay_of_a_file(capsys, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(generate_session(60, seed=9)))
    assert run_json(capsys, str(path))["messages"] == 60


def test_replay_of_a_bare_message_array(capsys, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(generate_session(60, seed=9)["messages"]))
    assert run_json(capsys, str(path))["messages"] == 60


def test_replay_does_not_alter_the_session_it_replays():
    session = generate_session(150, seed=5)
    before = json.dumps(session)
    replay(session["messages"], "/home/dev/project")
    assert json.dumps(session) == before


def test_replay_table_output(capsys):
    assert main(["replay"]) == 0
    out = capsys.readouterr().out
    assert "deduplication" in out and "Tokens sent over all requests" in out
    assert "Cost in base input tokens" in out and "cache scheduler on" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "1:2: not valid JSON"),
        ("42", "top level is int"),
        ('{"info": {}}', "`messages` array"),
        ('[{"info": {}, "parts": {}}]', "messages[0] has no `parts` array"),
        ('[{"parts": []}]', "messages[0] has no `info` object"),
        ("[1]", "messages[0] is int"),
    ],
)
def test_replay_bad_file_says_what_and_where(capsys, tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert main(["replay", str(path)]) == 1
    assert message in capsys.readouterr().err


def test_replay_missing_file(capsys, tmp_path):
    assert main(["replay", str(tmp_path / "nope.json")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_replay_directory_given_as_file(capsys, tmp_path):
    assert main(["replay", str(tmp_path)]) == 1
    assert "is a directory" in capsys.readouterr().err


def test_parse_session_accepts_export_shape():
    info, messages = parse_session({"info": {"id": "s"}, "messages": []})
    assert info == {"id": "s"} and messages == []


def test_parse_session_rejects_bad_part():
    with pytest.raises(SessionFileError, match=r"messages\[0\]\.parts\[1\]"):
        parse_session([{"info": {}, "parts": [{}, 5]}])


@pytest.mark.slow  # a replay of the example session in a new process
def test_dcp_console_script_runs_replay():
    done = subprocess.run([sys.executable, "-m", "dcp_plugin.cli.main", "replay", "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["messages"] == 400


def test_replay_prices_the_session_with_the_pricing_asked_for(capsys):
    assert main(["replay", "--json", "--pricing", "openai"]) == 0
    cost = json.loads(capsys.readouterr().out)["cost"]
    assert cost["pricing"] == "openai"
    assert cost["net_saved"] == round(cost["cost_without_plugin"] - cost["cost_with_plugin"], 1)
    assert cost["cold_requests"] >= 1


@pytest.mark.slow  # two full replays of the example session
def test_replay_compare_puts_a_second_config_beside_the_first(capsys, tmp_path):
    other = tmp_path / "off.jsonc"
    other.write_text('{"cache": {"scheduler": false}}')
    assert main(["replay", "--json", "--pricing", "anthropic", "--compare", str(other)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["cost"]["scheduler"], data["compare"]["cost"]["scheduler"]) == (True, False)
    # Writing every prune at once rewrites cached prefixes: it costs more than waiting until it pays.
    assert data["compare"]["cost"]["net_saved"] < data["cost"]["net_saved"]


def test_replay_sends_only_what_follows_an_opencode_compaction():
    from dcp_plugin.replay.pricing import compaction_starts

    messages = [
        {"info": {"id": "u1", "role": "user"}, "parts": []},
        {"info": {"id": "a1", "role": "assistant", "parentID": "u1"}, "parts": []},
        {"info": {"id": "u2", "role": "user"}, "parts": [{"type": "compaction"}]},
        {"info": {"id": "s", "role": "assistant", "parentID": "u2", "summary": True, "finish": "stop"}, "parts": []},
        {"info": {"id": "u3", "role": "user"}, "parts": []},
        {"info": {"id": "a3", "role": "assistant", "parentID": "u3"}, "parts": []},
    ]
    starts = compaction_starts(messages)
    # The summary's own request still sent everything; every request after it starts at u2.
    assert (starts[3], starts[5], starts[6]) == (0, 2, 2)


def test_replay_sends_only_what_follows_a_claude_code_summary():
    from dcp_plugin.replay.pricing import CONTINUATION_OPENING, compaction_starts

    summary = f"{CONTINUATION_OPENING} that ran out of context. The summary below covers the earlier part."
    messages = [
        {"info": {"id": "u1", "role": "user"}, "parts": [{"type": "text", "text": "fix it"}]},
        {"info": {"id": "a1", "role": "assistant"}, "parts": []},
        {"info": {"id": "u2", "role": "user"}, "parts": [{"type": "text", "text": summary}]},
        {"info": {"id": "a2", "role": "assistant"}, "parts": []},
        {"info": {"id": "a3", "role": "assistant"}, "parts": []},
    ]
    starts = compaction_starts(messages)
    assert (starts[1], starts[3], starts[4]) == (0, 2, 2)


def test_a_user_message_that_only_quotes_the_summary_opening_is_no_compaction():
    from dcp_plugin.replay.pricing import CONTINUATION_OPENING, compaction_starts

    quoted = f"why did you write '{CONTINUATION_OPENING}'?"
    messages = [
        {"info": {"id": "u1", "role": "user"}, "parts": [{"type": "text", "text": "fix it"}]},
        {"info": {"id": "a1", "role": "assistant"}, "parts": []},
        {"info": {"id": "u2", "role": "user"}, "parts": [{"type": "text", "text": quoted}]},
        {"info": {"id": "a2", "role": "assistant"}, "parts": []},
    ]
    assert compaction_starts(messages)[3] == 0


def _session_file(tmp_path: Path, messages: list[dict]) -> Path:
    path = tmp_path / "session.json"
    path.write_text(json.dumps({"info": {"directory": "/home/dev/project"}, "messages": messages}))
    return path


def test_replay_by_strategy_gives_each_enabled_strategy_what_turning_it_off_loses(capsys, tmp_path):
    messages = generate_session(160, seed=5, lsp=True)["messages"]
    config = tmp_path / "dcp.jsonc"
    config.write_text('{"strategies": {"supersededTodos": {"enabled": false}}}')
    session = str(_session_file(tmp_path, messages))
    data = run_json(capsys, session, "--config", str(config), "--by-strategy", "--pricing", "anthropic")
    shares = {row["strategy"]: row for row in data["by_strategy"]}
    # Every enabled strategy in registry order; the one turned off is not listed.
    assert list(shares) == ["deduplication", "purgeErrors", "staleDiagnostics", "supersededReads", "maskOldOutputs"]
    # A contribution is the whole replay minus a replay with that strategy alone turned off.
    off = {"supersededTodos": {"enabled": False}}
    full = replay(messages, "/home/dev/project", make_config(cache={}, strategies=off), pricing="anthropic")
    without = make_config(cache={}, strategies={**off, "staleDiagnostics": {"enabled": False}})
    rest = replay(messages, "/home/dev/project", without, pricing="anthropic")
    expected = (full.total_without - full.total_with) - (rest.total_without - rest.total_with)
    assert shares["staleDiagnostics"]["tokens_saved"] == expected > 0
    assert shares["staleDiagnostics"]["net_saved"] == round(full.costs.saved - rest.costs.saved, 1)


@pytest.mark.slow  # a replay per strategy, in two configs, twice
def test_replay_compare_shows_what_each_strategy_buys_in_both_configs(capsys, tmp_path):
    other = tmp_path / "lean.jsonc"
    other.write_text('{"strategies": {"maskOldOutputs": {"enabled": false}}}')
    # Which strategies are listed, not what they save: a short session does (a quarter of the time).
    session = str(_session_file(tmp_path, generate_session(120, seed=7)["messages"]))
    data = run_json(capsys, session, "--pricing", "anthropic", "--compare", str(other))
    mine = [row["strategy"] for row in data["by_strategy"]]
    theirs = [row["strategy"] for row in data["compare"]["by_strategy"]]
    assert "maskOldOutputs" in mine and theirs == [name for name in mine if name != "maskOldOutputs"]
    assert main(["replay", session, "--pricing", "anthropic", "--compare", str(other)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "What each strategy buys" in text and "need not add up" in text


def test_the_lsp_shape_does_the_same_calls_with_opencode_s_results():
    plain, lsp = generate_session(300, seed=2), generate_session(300, seed=2, lsp=True)

    def calls(session: dict) -> list[tuple[str, str]]:
        parts = [p for m in session["messages"] for p in m["parts"] if p.get("type") == "tool"]
        return [(p["tool"], p["state"]["status"]) for p in parts]

    assert calls(plain) == calls(lsp)
    outputs = [p["state"].get("output", "") for m in lsp["messages"] for p in m["parts"] if p.get("type") == "tool"]
    blocks = [o for o in outputs if "<diagnostics file=" in o]
    heads = ("Wrote file successfully.\n\nLSP errors detected in ", "Edit applied successfully.\n\nLSP errors detected")
    assert blocks and all(o.startswith(heads) for o in blocks)


def test_a_request_the_plugin_failed_on_is_replayed_as_sent_unpruned(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    messages = generate_session(200, seed=5)["messages"]
    directory = "/proj"
    pm, runtime = plugin_host(directory, make_config())
    failing = len(request_points(messages)) // 2
    calls = 0
    patches = SessionState.patches

    def fails_once(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == failing:  # one planning per request: the session's list never moves a decided call
            raise RuntimeError("a bug in the plugin")
        return patches(*args, **kwargs)

    monkeypatch.setattr(SessionState, "patches", fails_once)
    report = replay(messages, directory, host=(pm, runtime))
    failed = report.requests[failing - 1]
    assert "a bug in the plugin" in caplog.text
    assert failed.tokens_with == failed.tokens_without and failed.pruned_calls == 0
    assert report.requests[failing - 2].tokens_with < report.requests[failing - 2].tokens_without
    assert report.requests[failing].tokens_with < report.requests[failing].tokens_without
