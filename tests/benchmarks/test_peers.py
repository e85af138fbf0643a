"""The peers' rules replayed as their tools apply them, and the benchmark that sets them beside the plugin."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks import peers, readme_tables
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.model.tokens import COMPACTED_OUTPUT_TEXT
from dcp_plugin.replay.engine import ImpliedRequest, implied_requests
from dcp_plugin.replay.peer_rules import (
    ANTHROPIC_PLACEHOLDER,
    ClearToolUses,
    CountedOnce,
    LangChainContextEditing,
    LastN,
    OpenCodePrune,
    ToolResults,
    tool_results,
)
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session
from tests.support.helpers import call, user


def session(turns: list[int], size: int = 4_000) -> list[dict[str, Any]]:
    """User turns of ``turns[i]`` bash calls each, every output ``size`` characters."""
    messages: list[dict[str, Any]] = []
    for n, calls in enumerate(turns):
        messages.append(user(f"turn {n}"))
        messages += [call("bash", {"command": f"echo {n}.{i}"}, output=(f"{n}.{i} " + "x" * size)[:size]) for i in range(calls)]
    return messages


def last_request(messages: list[dict[str, Any]]) -> ImpliedRequest:
    return list(implied_requests(messages))[-1]


def cleared(patches: dict[Any, Any]) -> list[int]:
    return sorted(m for m, _, _ in patches)


def test_last_n_sends_only_the_newest_n_results_whole():
    messages = session([8])
    request = ImpliedRequest(1, 0, len(messages), 0, None)
    patches = LastN(messages, keep=5).at(request, 0)
    assert cleared(patches) == [1, 2, 3]
    assert all(value.startswith("Old environment output: (1 lines omitted)") for value, _ in patches.values())


def test_clear_tool_uses_waits_for_its_trigger():
    messages = session([8])
    request = ImpliedRequest(1, 0, len(messages), 0, None)
    assert ClearToolUses(messages).at(request, 100_000) == {}


def test_clear_tool_uses_over_its_trigger_keeps_the_newest_three():
    messages = session([8])
    request = ImpliedRequest(1, 0, len(messages), 0, None)
    patches = ClearToolUses(messages).at(request, 100_001)
    assert cleared(patches) == [1, 2, 3, 4, 5]
    assert {value for value, _ in patches.values()} == {ANTHROPIC_PLACEHOLDER}


def test_langchain_s_middleware_clears_all_but_the_newest_three_once_its_own_count_passes_100k():
    small = session([8], size=1_000)
    assert LangChainContextEditing(small).at(last_request(small), 0) == {}
    big = session([40], size=12_000)  # about 120K tokens by LangChain's chars/4
    request = ImpliedRequest(1, 0, len(big), 0, None)
    patches = LangChainContextEditing(big).at(request, 0)
    assert cleared(patches) == [m for m, _, _ in tool_results(big, 0, len(big))][:-3]
    assert {value for value, _ in patches.values()} == {"[cleared]"}


def test_the_shared_result_index_gives_tool_results_of_any_request():
    messages = generate_session(300, seed=4, busy=True)["messages"]
    index = ToolResults(messages)
    for request in implied_requests(messages):
        assert index.between(request.begin, request.end) == tool_results(messages, request.begin, request.end)


def test_counting_each_langchain_message_once_gives_langchains_count_at_every_request():
    from langchain_core.messages.utils import count_tokens_approximately

    messages = session([40], size=12_000)
    seen: list[tuple[int, int]] = []

    def both(converted: Any) -> int:
        seen.append((once(converted), count_tokens_approximately(converted)))
        return seen[-1][1]

    once = CountedOnce(count_tokens_approximately)
    rule = LangChainContextEditing(messages, count=both)
    for request in implied_requests(messages):
        rule.at(request, 0)
    assert seen and all(a == b for a, b in seen)
    assert any(b > 100_000 for _, b in seen)  # past the trigger, where cleared copies are counted too


def test_the_langchain_rule_keeps_counts_only_of_the_sessions_own_messages():
    from langchain.agents.middleware import ClearToolUsesEdit

    messages = session([40], size=12_000)
    rule = LangChainContextEditing(messages)
    rule.edits = [ClearToolUsesEdit(clear_at_least=1)]  # counts again after each clearing: copies too
    for request in implied_requests(messages):
        rule.at(request, 0)
    assert isinstance(rule.count, CountedOnce)
    assert {id(kept) for kept, _ in rule.count.memo.values()} <= {id(m) for m in rule.converted}


def test_the_langchain_rule_clears_what_it_clears_with_langchains_own_counter():
    from langchain_core.messages.utils import count_tokens_approximately

    messages = generate_session(250, seed=2, busy=True)["messages"]
    fast, plain = LangChainContextEditing(messages), LangChainContextEditing(messages, count=count_tokens_approximately)
    patched = [(fast.at(request, 0), plain.at(request, 0)) for request in implied_requests(messages)]
    assert all(a == b for a, b in patched)
    assert any(a for a, _ in patched)  # the session passes the trigger: something is cleared


def test_a_config_named_twice_is_replayed_once_per_pricing(monkeypatch):
    replayed: list[str] = []
    real = peers.replay_ours

    def counted(session, config, label, pricing):
        replayed.append(label)
        return real(session, config, label, pricing)

    monkeypatch.setattr(peers, "replay_ours", counted)
    one = peers.Session("generated", generate_session(60, seed=1, busy=True)["messages"], DEFAULT_DIRECTORY)
    outcomes = peers.measure(one, [("first", DcpConfig()), ("again", DcpConfig())], peers.PRICINGS)
    assert replayed == ["first"] * len(peers.PRICINGS)
    ours = [o for o in outcomes if o.policy in ("first", "again")]
    assert [o.policy for o in ours] == ["first", "again"] * len(peers.PRICINGS)
    assert ours[0].to_dict() | {"policy": "again"} == ours[1].to_dict()


def test_opencode_prune_leaves_the_last_two_user_turns_alone():
    messages = session([70, 70])  # prune runs once the answer to the last user message ended
    rule = OpenCodePrune(messages)
    rule.prune(0, len(messages))
    assert rule.cleared == set()


def test_opencode_prune_clears_past_the_newest_40k_once_more_than_20k_goes():
    # Three turns of 30 outputs of 1,000 tokens each (chars/4); the newest two turns are protected.
    messages = session([30, 30, 30])
    rule = OpenCodePrune(messages)
    rule.prune(0, len(messages))
    assert rule.cleared == set()  # the oldest turn's 30K: within the 40K protected
    more = session([70, 30, 30])
    rule = OpenCodePrune(more)
    rule.prune(0, len(more))
    assert len(rule.cleared) == 30  # 70K: the newest 40 stay, 30K goes


def test_opencode_prune_runs_when_a_new_user_message_arrives_and_its_marks_stay():
    messages = session([70, 1, 1, 1])
    rule = OpenCodePrune(messages)
    counts = [len(rule.at(request, 0)) for request in implied_requests(messages)]
    assert counts[0] == 0
    assert counts[-1] == 30
    assert counts == sorted(counts)
    assert all(value == COMPACTED_OUTPUT_TEXT for value, _ in rule.at(last_request(messages), 0).values())


def test_the_benchmark_puts_every_peer_beside_the_plugin(tmp_path, capsys):
    out = tmp_path / "peers.json"
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"info": {}, "messages": session([12, 12], size=20_000)}))
    assert peers.main([str(path), "--corpus", str(tmp_path / "absent"), "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert "development corpus not found" in captured.err
    data = json.loads(out.read_text())
    policies = [row["policy"] for row in data["groups"]["all"]["rows"]]
    assert policies == [peers.OURS, "LangChain ContextEditingMiddleware", "Anthropic clear_tool_uses",
                        "OpenCode prune", "last-5 masking"]
    assert {o["pricing"] for o in data["sessions"]} == set(peers.PRICINGS)
    assert data["groups"]["long"]["sessions"] == ["one"]
    assert "edit anchors lost" in captured.out


def test_pricing_prices_the_run_and_names_its_columns_under_the_pricings_given(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(peers, "PRICINGS", peers.PRICINGS)
    monkeypatch.setattr(peers, "COLUMNS", peers.COLUMNS)
    out = tmp_path / "peers.json"
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"info": {}, "messages": session([12, 12], size=20_000)}))
    argv = [str(path), "--corpus", str(tmp_path / "absent"), "--json", str(out), "--pricing", "anthropic-1h"]
    assert peers.main(argv) == 0
    assert {o["pricing"] for o in json.loads(out.read_text())["sessions"]} == {"anthropic-1h"}
    assert "net, anthropic-1h" in peers.COLUMNS and "net, openai" not in peers.COLUMNS
    assert "anthropic-1h" in capsys.readouterr().out


def test_pricing_with_readme_is_refused_since_readmes_figures_are_priced_the_default_way(capsys):
    with pytest.raises(SystemExit):
        peers.main(["--pricing", "anthropic-1h", "--readme", str(peers.ROOT / "README.md")])
    assert "leave out --pricing" in capsys.readouterr().err


@pytest.mark.parametrize("rule", [LastN, ClearToolUses, OpenCodePrune, LangChainContextEditing])
def test_a_rule_never_makes_a_result_bigger(rule: Any):
    messages = session([3, 40, 5], size=15_000)
    found = rule(messages)
    for request in implied_requests(messages):
        assert all(saved > 0 for _, saved in found.at(request, 10**6).values())


# -- README's tables against a run ----------------------------------------------------------------
README_SECTION = """
### Against other tools' rules

| policy (long sessions) | net, Anthropic | worst session | edit anchors lost |
|---|---:|---:|---:|
| **dcp_plugin defaults** | +19.3 % | **−0.1 %** | 4 / 10 (40.0 %) |

| `keepTokensOf` | `keepTokens` | `overdraft` | net, Anthropic |
|---|---:|---:|---:|
| all | **20,000** | 5 % | +1.0 % |

## Next section
"""


def measured_row(policy: str, cost_with: float, worst: float, lost: int) -> peers.Row:
    row = peers.Row(policy, {"anthropic": 100.0, "openai": 100.0}, {"anthropic": cost_with, "openai": 100.0})
    row.worst = worst
    row.anchors.sourced, row.anchors.lost = 10, lost
    return row


def test_a_config_table_row_is_replayed_with_the_settings_it_shows():
    [(label, config)] = readme_tables.configs(README_SECTION)
    assert label == "dcp_plugin keepTokensOf all, keepTokens 20,000, overdraft 5 %"
    mask = config.strategies.mask_old_outputs
    assert (mask.keep_tokens_of, mask.keep_tokens, config.cache.overdraft) == ("all", 20_000, 0.05)


def test_readme_figures_that_are_the_measured_ones_pass():
    rows = {"long": [measured_row(peers.OURS, 80.7, -0.1, 4),
                     measured_row("dcp_plugin keepTokensOf all, keepTokens 20,000, overdraft 5 %", 99.0, 0.0, 0)]}
    assert readme_tables.mismatches(README_SECTION, rows, peers.cells) == []


def test_a_readme_figure_that_is_not_the_measured_one_is_named():
    rows = {"long": [measured_row(peers.OURS, 80.7, -0.1, 5),
                     measured_row("dcp_plugin keepTokensOf all, keepTokens 20,000, overdraft 5 %", 98.0, 0.0, 0)]}
    assert readme_tables.mismatches(README_SECTION, rows, peers.cells) == [
        "long sessions, dcp_plugin defaults, edit anchors lost: README '4 / 10 (40.0 %)', measured '5 / 10 (50.0 %)'",
        "long sessions, dcp_plugin keepTokensOf all, keepTokens 20,000, overdraft 5 %, net, Anthropic: "
        "README '+1.0 %', measured '+2.0 %'",
    ]


def test_a_readme_row_the_run_did_not_measure_is_named():
    assert readme_tables.mismatches(README_SECTION, {"long": []}, peers.cells) == [
        "long sessions: 'dcp_plugin defaults' was not measured",
        "long sessions: 'dcp_plugin keepTokensOf all, keepTokens 20,000, overdraft 5 %' was not measured",
    ]


@pytest.mark.slow
@pytest.mark.skipif(not peers.corpus_sessions(peers.CORPUS), reason="the development corpus is not next to the project")
def test_every_figure_of_readmes_peers_tables_is_the_one_measured_on_the_development_corpus(capsys):
    assert peers.main(["--readme", str(peers.ROOT / "README.md")]) == 0, capsys.readouterr().err


@pytest.mark.slow
def test_replaying_sessions_in_parallel_gives_what_one_process_gives():
    sessions = [
        peers.Session(f"generated {seed}", generate_session(120, seed=seed, busy=True)["messages"], DEFAULT_DIRECTORY)
        for seed in (1, 2, 3)
    ]
    configs = [(peers.OURS, DcpConfig())]
    one = peers.run(sessions, configs, jobs=1)
    assert peers.run(sessions, configs, jobs=2)["sessions"] == one["sessions"]

