"""Invariants of the pipeline on generated histories (hypothesis)."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.config.protected import HARDCODED_PROTECTED_TOOLS
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.protection import PathProtector, extract_paths
from dcp_plugin.store import SessionBatch, Store
from tests.support.helpers import hook_transform
from tests.support.reference import reference_decisions, written_by

pytestmark = pytest.mark.slow  # over a thousand generated histories through whole runtimes

PROJECT = "/home/dev/project"
TOOLS = ["read", "write", "bash", "grep", "edit", "task", "apply_patch", "todowrite"]
PATHS = ["a.py", "./a.py", f"{PROJECT}/a.py", f"{PROJECT}/src/b.py", "src/../src/b.py", f"{PROJECT}//.env"]

strategies_config = st.fixed_dictionaries(
    {
        "deduplication": st.fixed_dictionaries(
            {
                "enabled": st.booleans(),
                "protectedTools": st.sampled_from([[], ["grep"]]),
                "ignoreFields": st.sampled_from([{"bash": ["description"]}, {}]),
            }
        ),
        "supersedeWrites": st.fixed_dictionaries({"enabled": st.booleans()}),
        "purgeErrors": st.fixed_dictionaries({"enabled": st.booleans(), "turns": st.integers(1, 4)}),
        "staleDiagnostics": st.fixed_dictionaries({"enabled": st.booleans()}),
        "supersededReads": st.fixed_dictionaries({"enabled": st.booleans()}),
        "supersededTodos": st.fixed_dictionaries({"enabled": st.booleans()}),
        # Triggers low enough for these short histories: token counts, and fractions of the
        # window of whichever model the history switched to (200K to 1M tokens).
        "maskOldOutputs": st.fixed_dictionaries(
            {
                "enabled": st.booleans(),
                "trigger": st.sampled_from([1000, 1500, 3000, 0.005, 0.01, "warn"]),
                "mode": st.sampled_from(["window", "batch"]),
                "keepTokens": st.sampled_from([0, 150, 400, 2000]),
                "keepTokensOf": st.sampled_from(["files", "all"]),
                "keepTurns": st.integers(0, 2),
                "keepCalls": st.sampled_from([0, 1, 3]),
                "keepFileTokens": st.sampled_from([0, 300, 2000]),
                "protectedTools": st.sampled_from([[], ["bash"]]),
            }
        ),
    }
)

configs = st.builds(
    lambda strategies, tp, tp_turns, patterns, scheduler, pricing: DcpConfig.model_validate(
        {
            "strategies": strategies,
            "turnProtection": {"enabled": tp, "turns": tp_turns},
            "protectedFilePatterns": patterns,
            "cache": {"scheduler": scheduler, "pricing": pricing},
        }
    ),
    strategies_config, st.booleans(), st.integers(1, 3),
    st.sampled_from([[], ["src/**"], ["*.env", "a.py"]]),
    st.booleans(), st.sampled_from(["auto", "anthropic", "openai", "none"]),
)
# Seconds between two messages: agent steps, user think time, and breaks past every cache TTL.
GAPS = [1, 2, 30, 200, 400, 4000]
DIAGNOSTICS = [f"{PROJECT}/a.py", f"{PROJECT}/src/b.py", "src/b.py"]
MODELS = ["claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro"]

# Generating a history was most of these tests' time: Hypothesis pays for every draw (about 35 µs),
# and a history took ~200 of them. So each draw below picks a whole combination from a list built
# once (an input, an output, a message's layout), with repeated entries standing for the weights the
# individual draws had. Every combination stays reachable; lists stay at a few hundred entries, which
# Hypothesis samples evenly. Index 0 of each list is its simplest choice, where shrinking goes.
ABSENT = object()  # a key the generated dict leaves out


def diagnostics_block(file: str, header: str, errors: int) -> str:
    """A block as OpenCode appends it after a write, edit or apply_patch result."""
    lines = "\n".join(f"ERROR [{i + 1}:1] name 'x{i}' is not defined" for i in range(errors))
    return f"\n\nLSP errors detected in {header}:\n<diagnostics file=\"{file}\">\n{lines}\n</diagnostics>"


BLOCKS = [
    diagnostics_block(file, header, errors)
    for file in DIAGNOSTICS
    for header in ("this file, please fix", "other files", "src/b.py, please fix")
    for errors in range(1, 5)
]
CAPPED = "O" * 300 + "\n\n(Output capped at 50 KB. Showing lines 1-9. Use offset=10 to continue.)"
DIAGNOSED_TOOLS = ("write", "edit", "apply_patch", "bash")


def output_choices(tool: str) -> list[tuple[str, int, str]]:
    """(text, blocks, first block): a plain output, or (for tools OpenCode reports diagnostics into)
    the tool's success text and one or two blocks (the second one is drawn apart)."""
    if tool in DIAGNOSED_TOOLS:
        # Half plain, half with diagnostics (one block or two), as separate coin flips had it.
        success = {"write": "Wrote file successfully.", "edit": "Edit applied successfully."}.get(tool, "Success.")
        plain = [(text, 0, "") for text in ("ok", "O" * 300) for _ in BLOCKS]
        return plain + [(success, blocks, first) for blocks in (1, 2) for first in BLOCKS]
    if tool == "read":  # one read in four was cut at OpenCode's output cap
        return [(text, 0, "") for text in ["ok", "O" * 300] * 3 + [CAPPED] * 2]
    return [("ok", 0, ""), ("O" * 300, 0, "")]


def input_choices(tool: str) -> list[dict[str, Any]]:
    """Every input the generated calls of ``tool`` may have."""
    def without_absent(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        return {k: v for k, v in pairs if v is not ABSENT}

    if tool in ("read", "write", "edit"):
        contents = ["short", "C" * 200, "line\n" * 30] if tool == "write" else [ABSENT]
        # A read's offset and limit are each left out half the time.
        offsets = [ABSENT] * 5 + [None, 0, 1, 2, 20] if tool == "read" else [ABSENT]
        limits = [ABSENT] * 4 + [None, 5, 30, 2000] if tool == "read" else [ABSENT]
        return [
            without_absent([("filePath", path), ("content", content), ("offset", offset), ("limit", limit)])
            for path in PATHS
            for content in contents
            for offset in offsets
            for limit in limits
        ]
    if tool == "apply_patch":
        return [{"patchText": f"*** Begin Patch\n*** Update File: {path}\n" + "+x\n" * 40} for path in PATHS]
    if tool == "todowrite":
        return [{"todos": [{"content": "T" * size, "status": "pending"}]} for size in (5, 80)]
    key = "command" if tool == "bash" else "pattern"
    descriptions = [ABSENT, ABSENT, "List files", "Run it again"] if tool == "bash" else [ABSENT]
    inputs = []
    for value in ("ls", "cat a.py", "L" * 120):
        for path in [None, *PATHS]:
            for description in descriptions:
                inp = without_absent([(key, value), ("path", path), ("description", description)])
                inputs += [inp, dict(reversed(list(inp.items())))]  # key order must not matter
    return inputs


# Who sends a message: the assistant three times in four; a user message switches the model (to
# one of MODELS, maybe the same) one time in six.
SENDERS = st.sampled_from(["assistant"] * 54 + ["user"] * 15 + MODELS)
# An assistant message's tool parts (0 to 2) and whether a text part comes first.
LAYOUTS = st.sampled_from([(calls, text) for text in (False, True) for calls in range(3)])
TOOL_STATUSES = st.sampled_from([(t, s) for t in TOOLS for s in ("completed", "completed", "completed", "error", "running")])
INPUTS = {tool: st.sampled_from(input_choices(tool)) for tool in TOOLS}
OUTPUTS = {tool: st.sampled_from(output_choices(tool)) for tool in TOOLS}
BLOCK = st.sampled_from(BLOCKS)


@st.composite
def histories(draw: Any) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    n = draw(st.integers(1, 40))
    counter = 0
    clock = 1_790_000_000_000
    model = "claude-sonnet-4-5"
    for i in range(n):
        counter += 1
        mid = f"msg_{counter:04d}"
        clock += 1000 * draw(st.sampled_from(GAPS))
        who = draw(SENDERS)
        if i == 0 or who != "assistant":
            model = who if who in MODELS else model
            info = {"id": mid, "sessionID": "s", "role": "user", "time": {"created": clock}, "model": {"modelID": model}}
            messages.append({"info": info, "parts": [{"id": f"p{mid}", "type": "text", "text": "go"}]})
            continue
        calls, text = draw(LAYOUTS)
        parts = []
        for j in range(calls):
            tool, status = draw(TOOL_STATUSES)
            state: dict[str, Any] = {"status": status, "input": copy.deepcopy(draw(INPUTS[tool]))}
            if status == "completed":
                output, blocks, first = draw(OUTPUTS[tool])
                state["output"] = output + first + (draw(BLOCK) if blocks == 2 else "")
            elif status == "error":
                state["error"] = "failed"
            parts.append({"id": f"p{mid}_{j}", "type": "tool", "tool": tool, "callID": f"c{mid}_{j}", "state": state})
        if text:
            parts.insert(0, {"id": f"t{mid}", "type": "text", "text": "thinking"})
        info = {"id": mid, "sessionID": "s", "role": "assistant", "modelID": model, "time": {"created": clock, "completed": clock + 500}}
        messages.append({"info": info, "parts": parts})
    return messages


def implied_points(messages: list[dict[str, Any]]) -> list[int]:
    """The requests a history implies: one before each assistant message (and the final one)."""
    return [i for i, m in enumerate(messages) if i > 0 and m["info"].get("role") == "assistant"]


def run_once(messages: list[dict[str, Any]], config: DcpConfig) -> tuple[list[dict[str, Any]], Runtime]:
    runtime = Runtime(PROJECT, StaticConfig(config))
    out = copy.deepcopy(messages)
    hook_transform(runtime, {}, {"messages": out})
    return out, runtime


def decisions(runtime: Runtime) -> dict[tuple[str, str], str]:
    """(call id, field) -> strategy of every decision, written or waiting for the scheduler, over all sessions.

    A waiting decision that will replace one in force (a cut grown or made whole) wins.
    """
    out: dict[tuple[str, str], str] = {}
    for session_id in runtime.session_ids():
        view = runtime.view(session_id)
        assert view is not None
        out.update({(d.call_id, d.field): d.strategy for d in (*view.in_force, *view.waiting)})
    return out


def reference(runtime: Runtime, messages: list[dict[str, Any]], config: DcpConfig) -> dict[tuple[str, str], str]:
    """The reference semantics of ``messages``, told what the runtime's cache scheduler wrote when."""
    # The chain of decisions each one replaced says what was written when: the live decisions, not the view's rows.
    in_force = [d for sid in runtime.session_ids() for d in runtime._registry.find(sid).state.in_force()]  # noqa: SLF001
    return reference_decisions(messages, config, PROJECT, written_by(in_force) if config.cache.scheduler else None)


# 100 generated histories per property (Hypothesis' default): fourteen properties run whole runtimes over
# them, each run draws new ones, and the example database replays any that failed before.
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(histories(), configs)
def test_decisions_equal_the_reference_semantics(messages, config):
    _, runtime = run_once(messages, config)
    assert decisions(runtime) == reference(runtime, messages, config)


@SETTINGS
@given(histories(), configs)
def test_transform_is_idempotent(messages, config):
    once, _ = run_once(messages, config)
    twice, _ = run_once(once, config)
    assert twice == once


@SETTINGS
@given(histories(), configs)
def test_transforming_the_same_list_again_in_one_runtime_is_idempotent(messages, config):
    runtime = Runtime(PROJECT, StaticConfig(config))
    out = copy.deepcopy(messages)
    hook_transform(runtime, {}, {"messages": out})
    first = copy.deepcopy(out)
    hook_transform(runtime, {}, {"messages": out})
    assert out == first


@SETTINGS
@given(histories(), configs)
def test_only_pruned_fields_change(messages, config):
    out, runtime = run_once(messages, config)
    pruned: dict[tuple[int, int], set[str]] = {}
    for sid in runtime.session_ids():
        for d in runtime.view(sid).in_force:  # type: ignore[union-attr]
            pruned.setdefault((d.message_index, d.part_index), set()).add(d.field)
    assert len(out) == len(messages)
    for mi, (before, after) in enumerate(zip(messages, out, strict=False)):
        assert after["info"] == before["info"]
        assert len(after["parts"]) == len(before["parts"])
        for pi, (p0, p1) in enumerate(zip(before["parts"], after["parts"], strict=False)):
            fields = pruned.get((mi, pi))
            if fields is None:
                assert p1 == p0
            else:
                kept_before = {k: v for k, v in p0["state"].items() if k not in fields}
                assert {k: v for k, v in p1["state"].items() if k not in fields} == kept_before
                assert {k: v for k, v in p1.items() if k != "state"} == {k: v for k, v in p0.items() if k != "state"}


@SETTINGS
@given(histories(), configs)
def test_protected_tools_are_never_pruned_by_automatic_strategies(messages, config):
    _, runtime = run_once(messages, config)
    for sid in runtime.session_ids():
        view = runtime.view(sid)
        assert view is not None
        for decision in (*view.in_force, *view.waiting):
            if decision.tool not in HARDCODED_PROTECTED_TOOLS:
                continue
            # Only rules about these very tools touch them: a write read back, an older todo list,
            # and diagnostics the host appended (cut out of the result, which itself stays).
            assert decision.strategy in ("supersedeWrites", "staleDiagnostics", "supersededTodos")
            if decision.strategy == "staleDiagnostics":
                assert decision.cuts is not None and decision.cuts[0][0] > 0


@SETTINGS
@given(histories(), configs)
def test_protected_paths_are_never_pruned(messages, config):
    _, runtime = run_once(messages, config)
    protector = PathProtector(config.protected_file_patterns, PROJECT)
    for sid in runtime.session_ids():
        view = runtime.view(sid)
        assert view is not None
        for decision in (*view.in_force, *view.waiting):
            part = messages[decision.message_index]["parts"][decision.part_index]
            assert not protector.is_protected(extract_paths(part["tool"], part["state"]["input"]))


@SETTINGS
@given(histories(), configs, st.lists(st.integers(0, 40), max_size=6))
def test_incremental_result_equals_from_scratch_after_appends(messages, config, cuts):
    runtime = Runtime(PROJECT, StaticConfig(config))
    if config.cache.scheduler:
        # Requests happen where the history says they did (one before each assistant message).
        points = implied_points(messages)
        cuts = [max((p for p in points if p <= cut), default=0) for cut in cuts]
    for cut in sorted(cuts) + [len(messages)]:
        prefix = copy.deepcopy(messages[:cut])
        if prefix:
            # The newest message may still be in flight: its calls not finished yet.
            for part in prefix[-1]["parts"]:
                if part.get("type") == "tool":
                    part["state"] = {"status": "running", "input": part["state"]["input"]}
            hook_transform(runtime, {}, {"messages": prefix})
    final = copy.deepcopy(messages)
    hook_transform(runtime, {}, {"messages": final})
    scratch, fresh = run_once(messages, config)
    assert final == scratch
    assert decisions(runtime) == decisions(fresh)


@SETTINGS
@given(histories(), histories(), configs, st.integers(0, 40))
def test_rewritten_history_equals_from_scratch(first, second, config, keep):
    """An undo (drop the tail) or a compaction followed by new messages re-syncs exactly."""
    # Keep less than all of `first`, so the history is rewritten: keeping it all would be an
    # append after a request (at its end) that the longer history need not imply, which the
    # cache scheduler rightly treats differently (appends are tested at implied points above).
    keep = min(keep, max(0, len(first) - 1))
    runtime = Runtime(PROJECT, StaticConfig(config))
    hook_transform(runtime, {}, {"messages": copy.deepcopy(first)})
    renamed = copy.deepcopy(second)
    for m in renamed:
        m["info"]["id"] = "new_" + m["info"]["id"]
        for p in m["parts"]:
            if "callID" in p:
                p["callID"] = "new_" + p["callID"]
    rewritten = copy.deepcopy(first[:keep]) + renamed
    out = copy.deepcopy(rewritten)
    hook_transform(runtime, {}, {"messages": out})
    scratch, _ = run_once(rewritten, config)
    assert out == scratch
    assert decisions(runtime) == reference(runtime, rewritten, config)


@SETTINGS
@given(histories(), configs)
def test_decisions_are_monotonic_while_history_grows(messages, config):
    """A pruned field stays pruned; only a partial cut changes, into more cuts or a whole placeholder."""
    runtime = Runtime(PROJECT, StaticConfig(config))
    previous: dict[tuple[str, str], tuple[str, frozenset[Any] | None]] = {}
    for cut in [*implied_points(messages), len(messages)]:
        hook_transform(runtime, {}, {"messages": copy.deepcopy(messages[:cut])})
        current = {}
        for sid in runtime.session_ids():
            view = runtime.view(sid)
            assert view is not None
            for d in (*view.in_force, *view.waiting):
                current[(d.call_id, d.field)] = (d.strategy, None if d.cuts is None else frozenset(d.cuts))
        assert previous.keys() <= current.keys()
        for key, (strategy, cuts) in previous.items():
            now_strategy, now_cuts = current[key]
            if cuts is None:
                assert (now_strategy, now_cuts) == (strategy, None)
            else:
                assert now_cuts is None or cuts <= now_cuts
        previous = current


# -- fuzzer shapes: what a careless or hostile host may send ----------------------------------

ODD_IDS = [None, "", 0, False, "dup", "c1"]
ODD_OUTPUTS = [None, 7, ["x"] * 3, {"k": "v" * 200}, "", "O" * 300, ["L" * 100] * 3]
ODD_PARTS = [None, 3, "text", ["p"]]
ODD_STATES = [None, [], "state"]
KEEP = object()  # the state stays the dict built for it
# As for histories() above: one draw per combination, repeated entries for the weights. A message:
# its id (its own twice as often as a duplicate or none), its role (user one time in four) and
# how many parts it has.
FUZZ_MESSAGES = st.sampled_from(
    [(mid, role, parts) for parts in range(4) for role in ["assistant"] * 3 + ["user"] for mid in ["own", "own", "mdup", None]]
)
# A part: one in ten is not a dict; a tool part's tool and status.
FUZZ_STATUSES = ("completed", "completed", "error", "running", "weird", None)
NOT_A_DICT = object()  # the status drawn with a part that is not a dict
FUZZ_KINDS = st.sampled_from(
    [(tool, status) for status in FUZZ_STATUSES for tool in ["read", "bash", "write", 5] * 9]
    + [(odd, NOT_A_DICT) for _ in FUZZ_STATUSES for odd in ODD_PARTS]
)
# Its input, and an output half the time.
FUZZ_CONTENTS = st.sampled_from(
    [
        (inp, out)
        for out in [ABSENT] * len(ODD_OUTPUTS) + ODD_OUTPUTS
        for inp in [{"filePath": "a.py"}, {"command": "L" * 120}, "str", None, {"content": "C" * 300}]
    ]
)
# One state in five is not a dict; half the parts have a call id, half an id.
FUZZ_STATES = st.sampled_from([(state, call) for call in [ABSENT] * len(ODD_IDS) + ODD_IDS for state in [KEEP] * 12 + ODD_STATES])
FUZZ_IDS = st.sampled_from([ABSENT] * len(ODD_IDS) + ODD_IDS)


@st.composite
def fuzzed_histories(draw: Any) -> list[Any]:
    """Histories with non-dict parts, odd statuses, falsy or duplicate ids and non-string outputs."""
    messages: list[Any] = []
    for i in range(draw(st.integers(1, 25))):
        mid, role, count = draw(FUZZ_MESSAGES)
        parts: list[Any] = []
        for _ in range(count):
            tool, status = draw(FUZZ_KINDS)
            if status is NOT_A_DICT:
                parts.append(tool)
                continue
            inp, output = draw(FUZZ_CONTENTS)
            state: Any = {"status": status, "input": copy.deepcopy(inp)}
            if output is not ABSENT:
                state["output"] = output
            odd_state, call_id = draw(FUZZ_STATES)
            part: dict[str, Any] = {"type": "tool", "tool": tool, "state": state if odd_state is KEEP else odd_state}
            if call_id is not ABSENT:
                part["callID"] = call_id
            part_id = draw(FUZZ_IDS)
            if part_id is not ABSENT:
                part["id"] = part_id
            parts.append(part)
        info: dict[str, Any] = {"sessionID": "s", "role": "user" if i == 0 else role}
        if mid is not None:
            info["id"] = f"m{i}" if mid == "own" else mid
        messages.append({"info": info, "parts": parts})
    return messages


def _sizes(messages: list[Any]) -> list[int]:
    import json

    return [len(json.dumps(p, default=str)) for m in messages for p in m["parts"]]


def _transform_logging_errors(runtime: Runtime, messages: list[Any]) -> list[str]:
    import logging

    seen: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    handler = Catch(logging.ERROR)
    logger = logging.getLogger("dcp_plugin")
    logger.addHandler(handler)
    try:
        hook_transform(runtime, {}, {"messages": messages})
    finally:
        logger.removeHandler(handler)
    return seen


@SETTINGS
@given(fuzzed_histories(), configs)
def test_fuzzed_histories_never_raise_inside_the_plugin(messages, config):
    runtime = Runtime(PROJECT, StaticConfig(config))
    assert _transform_logging_errors(runtime, copy.deepcopy(messages)) == []


@SETTINGS
@given(fuzzed_histories(), configs)
def test_fuzzed_histories_never_grow_a_part_and_keep_their_shape(messages, config):
    out, _ = run_once(messages, config)
    assert len(out) == len(messages)
    assert [len(m["parts"]) for m in out] == [len(m["parts"]) for m in messages]
    assert all(after <= before for before, after in zip(_sizes(messages), _sizes(out), strict=False))
    for before, after in zip(messages, out, strict=False):
        assert after["info"] == before["info"]
        for p0, p1 in zip(before["parts"], after["parts"], strict=False):
            if isinstance(p0, dict):
                assert {k: v for k, v in p1.items() if k != "state"} == {k: v for k, v in p0.items() if k != "state"}
                if isinstance(p0.get("state"), dict):
                    assert set(p1["state"]) == set(p0["state"])
            else:
                assert p1 == p0


@SETTINGS
@given(fuzzed_histories(), configs)
def test_fuzzed_histories_are_idempotent(messages, config):
    once, _ = run_once(messages, config)
    twice, _ = run_once(once, config)
    assert twice == once


@SETTINGS
@given(fuzzed_histories(), configs, st.lists(st.integers(0, 25), max_size=4))
def test_fuzzed_histories_incremental_equals_from_scratch(messages, config, cuts):
    runtime = Runtime(PROJECT, StaticConfig(config))
    if config.cache.scheduler:
        points = [i for i, m in enumerate(messages) if i > 0 and m["info"].get("role") == "assistant"]
        cuts = [max((p for p in points if p <= cut), default=0) for cut in cuts]
    for cut in sorted(cuts):
        hook_transform(runtime, {}, {"messages": copy.deepcopy(messages[:cut])})
    final = copy.deepcopy(messages)
    hook_transform(runtime, {}, {"messages": final})
    scratch, fresh = run_once(messages, config)
    assert final == scratch
    assert decisions(runtime) == decisions(fresh)


def _stored_pins(directory: str, pins: set[str]) -> Store:
    """A store in ``directory`` holding pins of session "s" (the generated histories' session)."""
    store = Store(Path(directory) / "dcp.sqlite3")
    store.save([SessionBatch("s", pins={call_id: True for call_id in pins})])
    return store


@SETTINGS
@given(histories(), configs, st.lists(st.integers(0, 40), max_size=6), st.data())
def test_incremental_result_equals_from_scratch_with_pins(messages, config, cuts, data):
    """Pins are an input like the config: restored at start or made between requests, the result is a fresh run's."""
    call_ids = sorted({p["callID"] for m in messages for p in m["parts"] if p.get("type") == "tool"})
    early = data.draw(st.sets(st.sampled_from(call_ids))) if call_ids else set()
    late = data.draw(st.sets(st.sampled_from(call_ids))) if call_ids else set()
    if config.cache.scheduler:
        points = implied_points(messages)
        cuts = [max((p for p in points if p <= cut), default=0) for cut in cuts]
    with tempfile.TemporaryDirectory() as incremental_dir, tempfile.TemporaryDirectory() as scratch_dir:
        runtime = Runtime(PROJECT, StaticConfig(config), store=_stored_pins(incremental_dir, early))
        for cut in sorted(cuts) + [len(messages)]:
            hook_transform(runtime, {}, {"messages": copy.deepcopy(messages[:cut])})
        view = runtime.view("s")
        idents = [r.ident for r in view.records if r.call_id in late and r.ident] if view is not None else []
        if idents:
            runtime.pin("s", idents)
        final = copy.deepcopy(messages)
        hook_transform(runtime, {}, {"messages": final})
        fresh = Runtime(PROJECT, StaticConfig(config), store=_stored_pins(scratch_dir, early | late))
        scratch = copy.deepcopy(messages)
        hook_transform(fresh, {}, {"messages": scratch})
        assert final == scratch
        assert decisions(runtime) == decisions(fresh)
        assert not {call_id for call_id, _ in decisions(fresh)} & (early | late)
