"""maskOldOutputs' fast paths decide what the plain scan decides: the same masks, in the same order, the same queue after."""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.budget.thresholds import Thresholds
from dcp_plugin.pipeline.decisions import CallRecord, Decision, ReplaceOutput
from dcp_plugin.pipeline.labels import call_label
from dcp_plugin.pipeline.protection import absolute_path, extract_paths
from dcp_plugin.pipeline.strategies.base import FinishedCall, Progress, Proposal
from dcp_plugin.pipeline.strategies.mask_old_outputs import Entry, MaskOldOutputs, placeholder, trigger_tokens

DIRECTORY = "/p"
LADDERS = (Thresholds(800, 900, 1000, 1000, 1200), Thresholds(800, 900, 1000, 1000, 1200), Thresholds(80, 90, 100, 100, 120))


class PlainScan(MaskOldOutputs):
    """The scan as first written: the trigger worked out and the cold question asked at every point, a search per output."""

    def advance(self, progress: Progress) -> Iterable[Proposal]:
        queue = self._queue
        if not progress.point or not queue or progress.thresholds is None:
            return ()
        if not self._started:
            if progress.context_tokens() < trigger_tokens(self.trigger, progress.thresholds):
                return ()
            self._started = self.mode == "window"
        held = self._working_set()
        free = self._tokens - sum(self._tokens_of[seq] for seq in held) if held else self._tokens
        kept: list[Entry] = []
        out: list[Proposal] = []
        current = progress.turn + len(self._checks)
        checks = self._checks
        edited = self._edited if self.edited_when_cold and progress.next_cold() else None
        while queue:
            seq, tokens, record = queue[0]
            recent = current - (record.turn + bisect.bisect_left(checks, seq)) < self.keep_turns
            if edited and recent and self._view_paths.get(seq) in edited:
                recent = False
            if self._latest - seq < self.keep_calls or (recent and self.keep_turns_of == "all"):
                break
            windowed = seq in self._windowed
            if seq in held or (recent and seq in self._views) or (windowed and free - tokens < self.keep_tokens):
                kept.append(queue.popleft())
                continue
            if windowed:
                free -= tokens
                self._tokens -= tokens
                del self._windowed[seq]
            queue.popleft()
            self._tokens_of.pop(seq, None)
            self._views.discard(seq)
            self._view_paths.pop(seq, None)
            state = progress.state_of(record)
            if state is not None:
                label = call_label(record.tool, state.get("input"), progress.directory or None)
                out.append((record, ReplaceOutput(placeholder(label, tokens))))
        queue.extendleft(reversed(kept))
        return out


_configs = st.fixed_dictionaries(
    {
        "trigger": st.sampled_from([0, 50, 500, "auto", 0.5]),
        "keep_tokens": st.sampled_from([0, 10, 60]),
        "keep_turns": st.integers(0, 2),
        "protected_tools": st.just(frozenset({"task"})),
        "keep_calls": st.integers(0, 2),
        "keep_file_tokens": st.sampled_from([0, 30, 200]),
        "mode": st.sampled_from(["window", "batch"]),
        "keep_tokens_of": st.sampled_from(["all", "files"]),
        "keep_turns_of": st.sampled_from(["all", "files"]),
        "turns_end_at_checks": st.booleans(),
        "edited_when_cold": st.booleans(),
    }
)
_calls = st.tuples(
    st.sampled_from(["read", "edit", "write", "bash", "grep", "task"]),
    st.sampled_from(["a.py", "b.py", "c.py"]),
    st.sampled_from(["pytest -q", "cat a.py", "ls", "git commit -m x"]),
    st.sampled_from(["completed", "completed", "completed", "error"]),
    st.integers(0, 300),  # output characters
    st.integers(-2, 0),  # seq offset: a call that finished after newer ones
    st.booleans(),  # protected
)
_point = st.tuples(st.integers(0, 2), st.sampled_from([0, 400, 1500, 1500]), st.sampled_from([True, True, False]), st.booleans())
_events = st.lists(
    st.one_of(
        st.tuples(st.just("call"), _calls),
        st.tuples(st.just("call"), _calls),
        st.tuples(st.just("turn"), st.none()),
        st.tuples(st.just("point"), _point),
        st.tuples(st.just("point"), _point),
        st.tuples(st.just("claim"), st.tuples(st.integers(0, 200), st.booleans())),
    ),
    min_size=30,
    max_size=120,
)


def _answer(value: Any, *asked: object) -> Any:
    """A question's answer fixed in advance, whatever the point asks it of."""
    return value


def _input(tool: str, path: str, command: str) -> dict[str, Any]:
    if tool == "bash":
        return {"command": command}
    if tool == "grep":
        return {"pattern": "x", "path": path}
    return {"filePath": f"{DIRECTORY}/{path}"}


@settings(max_examples=150, deadline=None)
@given(_configs, _events)
def test_the_masks_equal_those_of_the_plain_scan(config: dict[str, Any], events: list[tuple[str, Any]]) -> None:
    fast, plain = MaskOldOutputs(**config), PlainScan(**config)
    messages: list[dict[str, Any]] = []
    records: list[CallRecord] = []
    turn, seq = 0, 0
    for kind, value in events:
        if kind == "turn":
            turn += 1
        elif kind == "claim":
            # Another strategy's decision takes a call's output: whole (the field is its own for
            # good) or a cut (which a mask may still take over).
            index, whole = value
            if records:
                record = records[index % len(records)]
                record.output_decision = Decision(record, "other", "output", "v", 1, cuts=None if whole else ((0, 1, "c"),))
        elif kind == "call":
            tool, path, command, status, chars, back, protected = value
            seq += 1
            call_id = f"c{len(messages)}"
            tool_input = _input(tool, path, command)
            state = {"status": status, "input": tool_input, "output": "o" * chars}
            messages.append({"info": {"id": f"m{len(messages)}", "role": "assistant"}, "parts": [{"type": "tool", "callID": call_id, "tool": tool, "state": state}]})
            record = CallRecord(call_id, tool, max(0, seq + back), len(messages) - 1, 0, None, None, turn, status)
            records.append(record)
            paths = extract_paths(tool, tool_input)
            path_of = absolute_path(paths[0], DIRECTORY) if paths else None
            for strategy in (fast, plain):
                call = FinishedCall(record, state, paths, path_of, protected, DIRECTORY, pinned=False, input=tool_input, output=state["output"])  # type: ignore[arg-type]
                assert list(strategy.observe(call)) == []
        else:
            ladder, tokens, point, cold = value
            answers: list[list[Proposal]] = []
            for strategy in (fast, plain):
                measure, cold_after = functools.partial(_answer, tokens), functools.partial(_answer, cold)
                progress = Progress(turn, False, point, LADDERS[ladder], DIRECTORY, len(messages), measure, messages, cold_after)  # type: ignore[arg-type]
                answers.append(list(strategy.advance(progress)))
            # A field a whole placeholder owns is refused by the arbiter: the fast scan does not propose it.
            plain_answers = [(r.call_id, e) for r, e in answers[1] if r.output_decision is None or r.output_decision.cuts is not None]
            assert [(r.call_id, e) for r, e in answers[0]] == plain_answers
            assert list(fast._queue) == list(plain._queue)  # noqa: SLF001 - what stays queued is compared
            assert fast._tokens == plain._tokens  # noqa: SLF001
