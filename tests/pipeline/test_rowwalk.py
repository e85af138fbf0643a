"""The C walk (pipeline/rowwalk.c) decides what the compiled rows' Python loop decides, or declines and leaves the host as sent."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin import compiled
from dcp_plugin.pipeline import patches
from dcp_plugin.pipeline.applied import MISSED, UNCHECKED
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session
from tests.support.helpers import make_config

MESSAGES = generate_session(160, seed=11)["messages"]
STATE = SessionState("s", make_config(strategies={"supersedeWrites": {"enabled": True}}), DEFAULT_DIRECTORY)
STATE.update(MESSAGES)
ROWS = STATE.applied.rows()

needs_walk = pytest.mark.skipif(patches.NATIVE_WALK is None, reason=f"no C walk in {compiled.describe()}")


class Text(str):
    """A str subclass: its == could be anything, so the C walk leaves it to Python."""


class Mapping(dict[str, Any]):
    """A dict subclass, as a host may send."""


class Truthy:
    """A value whose truth is Python code."""

    def __bool__(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Truthy)

    __hash__ = object.__hash__


def _edit(part: dict[str, Any], what: str) -> None:
    """One thing a host may do to a part it sends again."""
    state = part["state"]
    if what == "call-id-subclass" and "callID" in part:
        part["callID"] = Text(part["callID"])
    elif what == "call-id-other":
        part["callID"] = "elsewhere"
    elif what == "call-id-gone":
        part.pop("callID", None)
    elif what == "state-subclass":
        part["state"] = Mapping(state)
    elif what == "status-number":
        state["status"] = 3
    elif what == "status-subclass":
        state["status"] = Text(state.get("status", "completed"))
    elif what == "status-gone":
        state.pop("status", None)
    elif what == "status-running":
        state["status"] = "running"
    elif what == "compacted":
        state["time"] = {"start": 1, "compacted": 5}
    elif what == "compacted-zero":
        state["time"] = {"start": 1, "compacted": 0}
    elif what == "compacted-object":
        state["time"] = {"compacted": Truthy()}
    elif what == "time-subclass":
        state["time"] = Mapping(compacted=1)
    elif what == "output-gone":
        state.pop("output", None)
    elif what == "output-subclass" and isinstance(state.get("output"), str):
        state["output"] = Text(state["output"])
    elif what == "output-short":
        state["output"] = "ok"
    elif what == "output-placeholder":
        state["output"] = "[dcp: earlier]" + "x" * 2000
    elif what == "output-list":
        state["output"] = ["a" * 900]


EDITS = st.sampled_from(
    ["call-id-subclass", "call-id-other", "call-id-gone", "state-subclass", "status-number", "status-subclass",
     "status-gone", "status-running", "compacted", "compacted-zero", "compacted-object", "time-subclass",
     "output-gone", "output-subclass", "output-short", "output-placeholder", "output-list"]
)  # fmt: skip


def _host(edits: list[tuple[int, str]]) -> list[dict[str, Any]]:
    messages = copy.deepcopy(MESSAGES)
    for row, what in edits:
        at = row % len(ROWS.messages)
        _edit(messages[ROWS.messages[at]]["parts"][ROWS.parts[at]], what)
    return messages


def _planned(
    messages: list[dict[str, Any]], fits: bytes, trusted_before: int, write: bool, native: bool
) -> tuple[patches.Patches | None, bytes]:
    """One planning over the rows from ``fits``; the patches and what it recorded."""
    ROWS.fits[:] = fits
    try:
        result = patches._plan_rows(messages, ROWS, True, trusted_before, write, native)
    finally:
        recorded = bytes(ROWS.fits)
        ROWS.fits[:] = bytes((UNCHECKED,)) * len(ROWS.fits)
    return result, recorded


@needs_walk
@settings(max_examples=120, deadline=None)
@given(
    edits=st.lists(st.tuples(st.integers(0, 10_000), EDITS), max_size=8),
    fits=st.lists(st.integers(MISSED, UNCHECKED), min_size=1, max_size=1),
    trusted_before=st.integers(-1, 200),
    write=st.booleans(),
)
def test_the_c_walk_plans_and_writes_what_the_python_loop_does(
    edits: list[tuple[int, str]], fits: list[int], trusted_before: int, write: bool
) -> None:
    recorded_fits = bytes(fits * len(ROWS.fits))
    native_host, python_host = _host(edits), _host(edits)
    native, native_fits = _planned(native_host, recorded_fits, trusted_before, write, native=True)
    python, python_fits = _planned(python_host, recorded_fits, trusted_before, write, native=False)
    assert (native is None) == (python is None)
    if native is not None and python is not None:
        assert list(native.decisions) == list(python.decisions)
        assert native_fits == python_fits
    assert native_host == python_host


# What a host does to a part that the C walk decides itself (no declining).
PLAIN_EDITS = st.sampled_from(
    ["status-number", "status-gone", "status-running", "compacted", "compacted-zero", "output-short",
     "output-placeholder", "output-list"]
)  # fmt: skip


@needs_walk
@settings(max_examples=80, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 10_000), PLAIN_EDITS), max_size=8), write=st.booleans())
def test_the_c_walk_decides_plain_edits_itself(edits: list[tuple[int, str]], write: bool) -> None:
    walk = patches.NATIVE_WALK
    assert walk is not None
    native_host, python_host = _host(edits), _host(edits)
    walked = walk(native_host, ROWS.messages, ROWS.parts, ROWS.calls, ROWS.lengths, ROWS.fields, ROWS.values,
                  bytearray(len(ROWS.fits)), 0, write, "[dcp:", lambda i, s: patches.still_fits(ROWS.decisions[i], s))  # fmt: skip
    python, _ = _planned(python_host, bytes((UNCHECKED,)) * len(ROWS.fits), 0, write, native=False)
    assert walked is not None and python is not None
    states, missed = walked
    assert [d for d, s in zip(ROWS.decisions, states, strict=True) if s is not None] == list(python.decisions)
    assert missed == (len(python) < len(ROWS.decisions))
    assert native_host == python_host


@needs_walk
def test_the_c_walk_declines_a_host_that_is_not_a_list() -> None:
    walk = patches.NATIVE_WALK
    assert walk is not None
    columns = (ROWS.messages, ROWS.parts, ROWS.calls, ROWS.lengths, ROWS.fields, ROWS.values)
    assert walk(tuple(MESSAGES), *columns, ROWS.fits, 0, False, "[dcp:", lambda i, s: True) is None  # type: ignore[arg-type]


@needs_walk
def test_the_c_walk_declines_columns_of_unequal_length() -> None:
    walk = patches.NATIVE_WALK
    assert walk is not None
    short = ROWS.parts[:-1]
    assert walk(MESSAGES, ROWS.messages, short, ROWS.calls, ROWS.lengths, ROWS.fields, ROWS.values, ROWS.fits, 0, False,
                "[dcp:", lambda i, s: True) is None  # fmt: skip


@needs_walk
def test_the_c_walk_says_what_its_arguments_should_be() -> None:
    walk: Any = patches.NATIVE_WALK
    with pytest.raises(TypeError, match="12 arguments"):
        walk(MESSAGES)


@needs_walk
def test_a_failing_check_midway_leaves_nothing_written_by_the_c_walk() -> None:
    walk = patches.NATIVE_WALK
    assert walk is not None
    messages = copy.deepcopy(MESSAGES)
    before = copy.deepcopy(messages)
    last = len(ROWS.messages) - 1

    def check(index: int, state: Any) -> bool:
        raise RuntimeError("a check failed")

    lengths = [*ROWS.lengths[:last], -1]  # the last row is checked by ``check``, after all others were written
    result = walk(messages, ROWS.messages, ROWS.parts, ROWS.calls, lengths, ROWS.fields, ROWS.values,
                  bytearray(ROWS.fits), 0, True, "[dcp:", check)  # fmt: skip
    assert result is None
    assert messages == before


class _Meddler:
    """A key sharing the hash of "parts": comparing it to "parts" empties the host's list."""

    host: list[Any] | None = None  # set once the list is built

    def __hash__(self) -> int:
        return hash("parts")

    def __eq__(self, other: object) -> bool:
        if self.host is not None:
            self.host.clear()
        return False


@needs_walk
def test_a_host_emptied_by_its_own_key_midway_is_survived() -> None:
    meddler = _Meddler()
    # The meddler first: a lookup of "parts" meets it before the key itself.
    messages: list[Any] = [{meddler: 1, **message} for message in copy.deepcopy(MESSAGES)]
    meddler.host = messages
    walk = patches.NATIVE_WALK
    assert walk is not None
    result = walk(messages, ROWS.messages, ROWS.parts, ROWS.calls, ROWS.lengths, ROWS.fields, ROWS.values,
                  bytearray(ROWS.fits), 0, True, "[dcp:", lambda i, s: True)  # fmt: skip
    assert result is None  # the list it walked went away: the Python loop decides
    assert messages == []


@needs_walk
def test_the_c_walk_returns_the_states_it_wrote() -> None:
    walk = patches.NATIVE_WALK
    assert walk is not None
    messages = copy.deepcopy(MESSAGES)
    walked = walk(messages, ROWS.messages, ROWS.parts, ROWS.calls, ROWS.lengths, ROWS.fields, ROWS.values,
                  bytearray(len(ROWS.fits)), 0, True, "[dcp:", lambda i, s: patches.still_fits(ROWS.decisions[i], s))  # fmt: skip
    assert walked is not None
    states, _ = walked
    written = [(d, s) for d, s in zip(ROWS.decisions, states, strict=True) if s is not None]
    assert len(written) > 20
    for decision, state in written:
        record = decision.record
        assert messages[record.message_index]["parts"][record.part_index]["state"] is state
        assert state[decision.field] == decision.value


def test_without_the_compiled_core_there_is_no_c_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compiled, "IN_USE", False)
    assert patches._native_walk() is None


def test_the_compiled_core_brings_the_c_walk() -> None:
    if not compiled.IN_USE:
        pytest.skip(f"this process runs {compiled.describe()}")
    assert patches.NATIVE_WALK is not None
