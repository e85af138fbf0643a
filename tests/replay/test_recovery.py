"""Forced re-reads: a lost edit anchor makes the agent read again before the edit, and that is priced."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.peer_rules import LastN
from benchmarks.peers import Session, cells, replay_rule, summarize
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.replay.engine import replay
from dcp_plugin.replay.pricing import PatchKey
from dcp_plugin.replay.recovery import REREAD_PREFIX, RecordedWalk
from dcp_plugin.replay.requests import ImpliedRequest, implied_requests
from dcp_plugin.replay.simulate import generate_session
from tests.support.helpers import PROJECT, assistant, call, tool_part, user

LINE = "def compute_the_total(items, discount_rate):"
OTHER = "    return sum(item.price for item in items) * rate"
Policy = Callable[[ImpliedRequest, list[dict[str, Any]]], dict[PatchKey, tuple[Any, int]]]


def read(name: str, text: str) -> dict[str, Any]:
    return call("read", {"filePath": f"{PROJECT}/{name}"}, output=f"1: {text}\n2: {OTHER}\n")


def edit(name: str, old: str) -> dict[str, Any]:
    return call("edit", {"filePath": f"{PROJECT}/{name}", "oldString": old, "newString": "x"}, output="ok")


def at(minute: int, message: dict[str, Any]) -> dict[str, Any]:
    message["info"]["time"] = {"created": minute * 60_000}
    return message


def session() -> list[dict[str, Any]]:
    """A read of a.py, a read of b.py, then an edit of a.py copying a line of the first read."""
    return [at(0, user()), at(1, read("a.py", LINE)), at(2, read("b.py", "nothing here")), at(3, edit("a.py", LINE))]


def hide(*keys: PatchKey) -> Policy:
    """A policy that replaces these fields whenever a request carries them."""
    return lambda request, _: {key: ("[hidden]", 10) for key in keys if request.begin <= key[0] < request.end}


def hide_older_than(calls: int) -> Policy:
    """A policy that replaces every tool output but the newest ``calls`` ones."""

    def policy(request: ImpliedRequest, messages: list[dict[str, Any]]) -> dict[PatchKey, tuple[Any, int]]:
        keys = [(m, p, "output") for m in range(request.begin, request.end)
                for p, part in enumerate(messages[m]["parts"])
                if part.get("type") == "tool" and part["state"].get("output")]
        return {key: ("[hidden]", 1) for key in keys[: max(0, len(keys) - calls)]}

    return policy


def walk(messages: list[dict[str, Any]], policy: Policy, recover: bool = True) -> tuple[RecordedWalk, list[ImpliedRequest]]:
    recorded = RecordedWalk(messages, recover)
    seen = []
    for request in recorded:
        seen.append(request)
        patches = policy(request, recorded.messages)
        recorded.check(request, patches, dict.fromkeys(patches, "rule"))
    return recorded, seen


def test_a_lost_anchor_puts_a_reread_of_the_read_holding_it_right_before_the_edit():
    messages = session()
    original = list(messages)
    recorded, _ = walk(messages, hide((1, 0, "output")))
    assert [m for m in recorded.messages if not m["info"]["id"].startswith(REREAD_PREFIX)] == original
    reread = recorded.messages[3]
    assert reread["info"]["id"].startswith(REREAD_PREFIX) and recorded.messages[4] is original[3]
    [part] = reread["parts"]
    assert (part["tool"], part["state"]["input"], part["state"]["output"]) == (
        "read", original[1]["parts"][0]["state"]["input"], original[1]["parts"][0]["state"]["output"])
    assert recorded.recovery.count == 1 and recorded.recovery.rereads[0].edit_message == 3


def test_the_reread_adds_one_request_made_when_the_edits_request_was():
    plain = list(implied_requests(session()))
    _, seen = walk(session(), hide((1, 0, "output")))
    assert len(seen) == len(plain) + 1
    reread_request, edit_request = seen[-2], seen[-1]
    assert edit_request.end == reread_request.end + 1 and edit_request.time_ms == reread_request.time_ms


def test_the_edit_then_finds_its_text_in_the_reread():
    recorded, _ = walk(session(), hide((1, 0, "output")))
    assert (recorded.anchors.totals.sourced, recorded.anchors.totals.lost, recorded.recovery.unrecovered) == (1, 0, 0)


def test_without_recovery_the_anchor_is_lost_and_nothing_is_added():
    messages = session()
    recorded, seen = walk(messages, hide((1, 0, "output")), recover=False)
    assert (recorded.anchors.totals.lost, recorded.recovery.count, len(recorded.messages)) == (1, 0, 4)
    assert len(seen) == len(list(implied_requests(session())))


def test_nothing_hidden_means_no_reread():
    recorded, _ = walk(session(), hide((2, 0, "output")))
    assert (recorded.recovery.count, len(recorded.messages)) == (0, 4)


def test_text_that_only_a_hidden_input_held_cannot_be_read_again():
    messages = [at(0, user()), at(1, call("write", {"filePath": f"{PROJECT}/a.py", "content": LINE}, output="ok")),
                at(2, edit("a.py", LINE))]
    recorded, _ = walk(messages, hide((1, 0, "input")))
    assert (recorded.recovery.count, recorded.recovery.unrecovered, len(recorded.messages)) == (0, 1, 3)


def test_two_lost_anchors_from_one_read_make_one_reread():
    both = at(3, assistant(tool_part("edit", {"filePath": f"{PROJECT}/a.py", "oldString": LINE, "newString": "x"}),
                           tool_part("edit", {"filePath": f"{PROJECT}/a.py", "oldString": OTHER, "newString": "y"})))
    messages = [*session()[:3], both]
    recorded, _ = walk(messages, hide((1, 0, "output")))
    assert recorded.recovery.count == 1 and len(recorded.messages[3]["parts"]) == 1


def test_a_reread_the_policy_hides_too_is_not_made_again():
    recorded, _ = walk(session(), hide_older_than(0))
    assert (recorded.recovery.count, recorded.recovery.unrecovered, recorded.anchors.totals.lost) == (1, 1, 1)


def test_a_replay_with_recovery_prices_the_rereads_against_the_same_cost_without_the_plugin():
    messages = generate_session(160, seed=3)["messages"]
    config = DcpConfig.model_validate(
        {"strategies": {"maskOldOutputs": {"trigger": 1000, "keepTokens": 0, "keepCalls": 0}}})
    report = replay(messages, PROJECT, config, pricing="anthropic", recovery=True)
    plain = replay(messages, PROJECT, config, pricing="anthropic")
    assert report.recovered is not None and report.recovery.count > 0
    assert report.costs.cost_without == plain.costs.cost_without
    assert report.recovered.requests == len(report.requests) + report.recovery.extra_requests
    expected = 100 * (report.costs.cost_without - report.recovered.cost_with) / report.costs.cost_without
    assert report.cost_dict()["net_saved_percent_after_recovery"] == round(expected, 2)
    assert report.cost_dict()["forced_rereads"] == report.recovery.count


def test_a_replay_without_recovery_reports_no_recovery_figures():
    report = replay(generate_session(60, seed=1)["messages"], PROJECT, pricing="anthropic")
    assert report.recovered is None and "forced_rereads" not in report.cost_dict()


def test_a_peer_rule_is_replayed_with_forced_rereads_and_the_table_shows_them():
    messages = generate_session(200, seed=2)["messages"]
    outcomes = replay_rule(Session("s", messages, PROJECT), lambda m: LastN(m, keep=1), ("anthropic", "openai"))
    assert all(o.recovered is not None for o in outcomes) and outcomes[0].recovery.count > 0
    row = summarize(outcomes)[0]
    shown = cells(row)
    assert shown["forced re-reads"] == f"{outcomes[0].recovery.count:,}"
    assert shown["after re-reads, anthropic"] == f"{row.net_after_recovery('anthropic'):+.1f} %"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(1, 10_000), keep=st.integers(0, 6), size=st.integers(30, 120))
def test_rereads_only_ever_add_messages_right_before_an_edit(seed: int, keep: int, size: int) -> None:
    messages = generate_session(size, seed=seed)["messages"]
    original = list(messages)
    recorded, seen = walk(messages, hide_older_than(keep))
    inserted = [i for i, m in enumerate(recorded.messages) if m["info"]["id"].startswith(REREAD_PREFIX)]
    assert [m for i, m in enumerate(recorded.messages) if i not in inserted] == original
    assert len(inserted) == recorded.recovery.extra_requests
    assert len(seen) == len(list(implied_requests(original))) + len(inserted)
    for i in inserted:
        follower = recorded.messages[i + 1]
        assert any(p.get("tool") in ("edit", "write", "multiedit", "apply_patch") for p in follower["parts"])
