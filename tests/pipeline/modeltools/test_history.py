"""The model's prunes follow from the history: the same after a restart, in a replay, and when the prefix is warm."""

from __future__ import annotations

import copy
import hashlib
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.ids import assign_id, normalize_id, short_id
from dcp_plugin.pipeline.placeholders import DISCARDED_PLACEHOLDERS, DUPLICATE_PLACEHOLDER
from dcp_plugin.replay.engine import plugin_host, replay
from dcp_plugin.replay.simulate import generate_session
from tests.support.helpers import (
    PROJECT,
    SESSION,
    assistant,
    hook_transform,
    make_config,
    named,
    tool_part,
    tool_parts,
    user,
)
from tests.support.tools_helpers import BIG, ToolHost

MINUTE = 60_000


# -- ids --------------------------------------------------------------------------------------


def test_an_id_depends_only_on_the_call_id() -> None:
    assert short_id("call_1") == short_id("call_1") and len(short_id("call_1")) == 4
    assert short_id("call_1") != short_id("call_2")


def _digits_by_division(call_id: str) -> str:
    """The ids' definition: the call id's 128-bit blake2b digest in base 32, least significant digit first."""
    digest = int.from_bytes(hashlib.blake2b(call_id.encode("utf-8", "surrogatepass"), digest_size=16).digest(), "big")
    out = []
    for _ in range(25):
        digest, rest = divmod(digest, 32)
        out.append("0123456789abcdefghjkmnpqrstvwxyz"[rest])
    return "".join(out)


@given(st.text(max_size=40))
def test_an_id_is_the_base_32_digits_of_the_call_ids_digest(call_id: str) -> None:
    assert short_id(call_id, 25) == _digits_by_division(call_id)


@given(st.text(max_size=40), st.integers(min_value=1, max_value=25))
def test_a_shorter_id_is_the_first_digits_of_the_full_one(call_id: str, length: int) -> None:
    assert short_id(call_id, length) == _digits_by_division(call_id)[:length]


def test_ids_stay_those_already_shown_to_models_and_stored() -> None:
    assert [short_id(c, 25) for c in ("call_1", "toolu_01ABC", "")] == [
        "k37nh9x5tc90g49njvm45essg", "e9erajdspjzrmzmne42jwmft4", "gkxca7pe8ckw40nqffp3mmswa"
    ]


def test_a_colliding_id_gets_one_character_more_and_the_first_call_keeps_its_own() -> None:
    taken = {short_id("call_1"): object()}
    # A call whose 4-character id is taken by another: every digest differs, so 5 characters differ.
    found = next(c for c in (f"c{n}" for n in range(2_000_000)) if short_id(c) == short_id("call_1") and c != "call_1")
    assert assign_id(found, taken) == short_id(found, 5) and assign_id("call_1", {}) == short_id("call_1")


def test_ids_read_back_whatever_way_the_model_writes_them() -> None:
    ident = short_id("call_1")
    assert {normalize_id(v) for v in (ident, ident.upper(), f"#{ident}", f"id {ident}", f"(id {ident})")} == {ident}
    assert normalize_id("not an id!") is None and normalize_id(17) is None


def test_placeholders_keep_their_ids_across_requests_a_restart_and_an_undo() -> None:
    host = ToolHost.start().add(user())
    host.read("a.py", BIG)
    host.read("a.py", BIG)
    expected = named(DUPLICATE_PLACEHOLDER, host.messages[1])
    first = host.outputs(host.request())[0]
    again = host.outputs(host.request())[0]
    restarted = ToolHost(Runtime(PROJECT, StaticConfig(make_config())), host.messages).request()
    host.read("b.py")
    host.read("b.py")
    host.request()
    undone = copy.deepcopy(host.messages[:3])
    hook_transform(host.runtime, {}, {"messages": undone})
    assert [first, again, tool_parts(restarted)[0]["state"]["output"], tool_parts(undone)[0]["state"]["output"]] == [expected] * 4


# -- restart and replay -----------------------------------------------------------------------


def model_session() -> ToolHost:
    host = ToolHost.start().add(user("read everything"))
    a = host.read("a.py", BIG + "a")
    b = host.read("b.py", BIG + "b")
    c = host.read("c.py", BIG + "c")
    host.use("discard", {"ids": [a], "reason": "noise"})
    for name in ("d.py", "e.py", "f.py"):
        host.read(name)
    host.use("extract", {"ids": [b, c], "distillation": ["b: nothing", "c: the bug is on line 3"]})
    host.use("restore", {"ids": [a]})
    return host


def test_a_restarted_host_makes_the_same_prunes_from_the_history_alone() -> None:
    host = model_session()
    live = host.request()
    restarted = Runtime(PROJECT, StaticConfig(make_config()))
    restarted.tool_definitions()
    again = copy.deepcopy(host.messages)
    hook_transform(restarted, {}, {"messages": again})
    assert again == live
    assert restarted.view(SESSION).model_tools == host.runtime.view(SESSION).model_tools


def test_the_models_prunes_and_restores_are_counted_per_tool() -> None:
    host = model_session()
    host.request()
    tallies = host.runtime.view(SESSION).model_tools
    assert {name: (t.accepted, t.refused, t.outputs) for name, t in tallies.items()} == {
        "discard": (1, 0, 1),
        "extract": (1, 0, 2),
        "restore": (1, 0, 1),
    }


def test_dcp_replay_makes_the_models_prunes_of_a_recorded_session() -> None:
    host = model_session()
    pm, runtime = plugin_host(PROJECT, make_config())
    report = replay(host.messages, PROJECT, host=(pm, runtime))
    assert (report.pruned["discard"], report.pruned["extract"]) == (1, 2)


# -- the cache scheduler ----------------------------------------------------------------------


def timed(message: dict[str, Any], minute: int) -> dict[str, Any]:
    message["info"]["time"] = {"created": minute * MINUTE}
    return message


def test_a_discard_deep_in_a_warm_prefix_waits_and_is_written_when_the_cache_is_cold() -> None:
    host = ToolHost.start(cache={"scheduler": True}).add(timed(user(), 0))
    a = host.read("a.py", BIG + "a")
    for n, name in enumerate(("b.py", "c.py", "d.py"), 1):
        host.read(name, BIG * 4)
        timed(host.messages[-1], n)
    result = host.use("discard", {"ids": [a], "reason": "noise"})
    timed(host.messages[-1], 4)
    assert not result.error
    assert host.outputs(host.request())[0] == BIG + "a"  # rewriting the warm prefix does not pay yet
    host.add(timed(user("after lunch"), 90))  # past every provider's cache lifetime
    assert host.outputs(host.request())[0] == named(DISCARDED_PLACEHOLDERS["noise"], host.messages[1])


def test_restore_answers_at_the_tail_and_rewrites_nothing_of_a_warm_prefix() -> None:
    host = ToolHost.start(cache={"scheduler": True}).add(timed(user(), 0))
    first = host.read("a.py", BIG)
    host.read("a.py", BIG)  # the newer read: the first is a duplicate, written while it is at the tail
    before = host.request()
    assert host.outputs(before)[0] == named(DUPLICATE_PLACEHOLDER, host.messages[1])
    result = host.use("restore", {"ids": [first]})
    after = host.request()
    assert not result.error and after[: len(before)] == before
    assert BIG in host.outputs(after)[-1]


# -- the verdict when the host runs a call equals the verdict found in the history ----------


# Masking starts at the request whose context first reaches 3,000 tokens (a.py and b.py), and masks
# every output but the newest: a.py goes at that request's point, when its answer arrives.
MASK_AT_B = {"strategies": {"maskOldOutputs": {"trigger": 3000, "keepCalls": 1, "keepTurns": 0}}}


def discard_as_masking_starts() -> ToolHost:
    """The model discards a.py in the answer to the request masking starts at; the host accepted it."""
    host = ToolHost.start(**MASK_AT_B).add(user())
    a = host.read("a.py", BIG + "a")
    host.request()
    host.read("b.py", BIG * 4)
    result = host.use("discard", {"ids": [a], "reason": "noise"})
    assert not result.error
    return host


def test_a_call_the_host_accepted_stays_accepted_when_masking_starts_as_its_answer_arrives() -> None:
    host = discard_as_masking_starts()
    host.request()
    restarted = Runtime(PROJECT, StaticConfig(make_config(**MASK_AT_B)))
    restarted.tool_definitions()
    hook_transform(restarted, {}, {"messages": copy.deepcopy(host.messages)})
    for runtime in (host.runtime, restarted):
        tally = runtime.view(SESSION).model_tools["discard"]
        assert (tally.accepted, tally.refused, tally.outputs) == (1, 0, 1)


def test_the_models_discard_takes_an_output_before_masking_that_starts_as_its_answer_arrives() -> None:
    host = discard_as_masking_starts()
    assert host.outputs(host.request())[0] == named(DISCARDED_PLACEHOLDERS["noise"], host.messages[1])


def random_ids(rng: random.Random, messages: list[dict[str, Any]]) -> list[str]:
    known = [short_id(p["callID"]) for p in tool_parts(messages)]
    picks = rng.sample(known, k=min(len(known), rng.randint(1, 3))) if known else []
    return picks + (["zzzz"] if rng.random() < 0.2 else [])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), scheduler=st.booleans())
def test_the_verdict_given_when_a_call_runs_is_the_one_found_in_the_history(seed: int, scheduler: bool) -> None:
    rng = random.Random(seed)
    base = generate_session(60, seed=seed % 50)["messages"]
    runtime = Runtime(base[0]["info"].get("directory", PROJECT), StaticConfig(make_config(cache={"scheduler": scheduler}, tools={"cooldownSteps": 1})))
    runtime.tool_definitions()
    session = base[0]["info"]["sessionID"]
    history: list[dict[str, Any]] = []
    told: dict[str, bool] = {}
    for n, message in enumerate(base):
        history.append(message)
        if message["info"]["role"] != "assistant" or rng.random() > 0.3:
            continue
        hook_transform(runtime, {}, {"messages": copy.deepcopy(history)})
        name = rng.choice(["discard", "extract", "restore"])
        ids = random_ids(rng, history)
        arguments: dict[str, Any] = {"ids": ids, "reason": "done"} if name == "discard" else {"ids": ids}
        if name == "extract":
            arguments["distillation"] = ["kept"] * len(ids)
        call_id = f"call_model_{n}"
        result = runtime.execute_tool(session, name, arguments, copy.deepcopy(history), call_id=call_id)
        assert result is not None
        told[call_id] = not result.error
        part = tool_part(name, arguments, status="error", error=result.output, call_id=call_id) if result.error else tool_part(name, arguments, output=result.output, call_id=call_id)
        history.append(assistant(part, session=session))
    hook_transform(runtime, {}, {"messages": copy.deepcopy(history)})
    fresh = Runtime(runtime.directory, StaticConfig(make_config(cache={"scheduler": scheduler}, tools={"cooldownSteps": 1})))
    fresh.tool_definitions()
    hook_transform(fresh, {}, {"messages": copy.deepcopy(history)})
    for host in (runtime, fresh):
        verdicts = host._registry.find(session).state.tools.verdicts  # noqa: SLF001 - the verdicts are what is compared
        assert {c: v.accepted for c, v in verdicts.items()} == told
