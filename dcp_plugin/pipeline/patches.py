"""Patches: the applied decisions paired with the tool states they write, planned and applied on the outgoing copy."""

from __future__ import annotations

import collections
import operator
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, cast, overload

from mypy_extensions import mypyc_attr

from dcp_plugin import compiled
from dcp_plugin.model.messages import Message, ToolState, locate
from dcp_plugin.pipeline.applied import FIT, MISSED, UNCHECKED, Applied, Rows, Writes
from dcp_plugin.pipeline.decisions import Decision
from dcp_plugin.pipeline.freshness import still_fits
from dcp_plugin.pipeline.placeholders import PLACEHOLDER_PREFIX

__all__ = ["Applied", "Desync", "Patch", "Patches", "apply", "plan"]

class Desync(Exception):
    """A decided call is no longer where the ledger saw it: the history changed under us."""


Patch = tuple[Decision, ToolState]
Walk = Callable[
    [list[Any], list[int], list[int], list[str], list[int], list[str], list[Any], bytearray, int, bool, str,
     Callable[[int, Any], bool]],
    "tuple[list[Any], bool] | None",
]


def _native_walk() -> Walk | None:
    """The walk of :func:`_plan_rows` in C (``rowwalk.c``), when this process runs the compiled core and the build made it."""
    if not compiled.IN_USE:
        return None
    try:
        from dcp_plugin.pipeline import _rowwalk
    except ImportError:
        return None
    return _rowwalk.walk


NATIVE_WALK: Final = _native_walk()


@mypyc_attr(allow_interpreted_subclasses=True)
class Patches(Sequence[Patch]):
    """The (decision, tool state) pairs of one request, held as two parallel lists.

    A long session re-applies thousands of placeholders on every request. One tuple per pair
    would be thousands of new container objects per request, each one the cyclic collector
    then has to scan (measured: about a quarter of a warm request at 20,000 messages); two
    flat lists cost two objects. Iterating yields ``(decision, state)`` pairs.

    Planned over compiled rows, the patches also carry each one's field and value as flat lists
    (``writes``), so that :func:`apply` never reads a decision object: one store per patch.
    """

    __slots__ = ("decisions", "states", "writes")

    def __init__(
        self,
        decisions: Sequence[Decision] | None = None,
        states: list[ToolState] | None = None,
        writes: Writes | None = None,
    ) -> None:
        self.decisions: Sequence[Decision] = decisions if decisions is not None else []
        self.states: list[ToolState] = states if states is not None else []
        self.writes = writes

    def __len__(self) -> int:
        return len(self.decisions)

    def __iter__(self) -> Iterator[Patch]:
        return zip(self.decisions, self.states, strict=False)

    @overload
    def __getitem__(self, index: int) -> Patch: ...

    @overload
    def __getitem__(self, index: slice) -> Patches: ...

    def __getitem__(self, index: int | slice) -> Patch | Patches:
        if isinstance(index, slice):
            return Patches(self.decisions[index], self.states[index])
        return self.decisions[index], self.states[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Patches):
            return list(self.decisions) == list(other.decisions) and self.states == other.states
        if isinstance(other, (list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return f"Patches({list(self)!r})"


def _whole(rows: Rows, states: list[ToolState]) -> Patches:
    """Every row's decision and write paired with ``states`` (one per row)."""
    decisions, writes = rows.frozen()
    return Patches(decisions, states, writes)


def _kept(rows: Rows, states: Sequence[ToolState | None]) -> Patches:
    """The rows whose state is not None, with their writes."""
    kept = [index for index, state in enumerate(states) if state is not None]
    fields, values = rows.fields, rows.values
    kept_values = [values[i] for i in kept]
    return Patches(
        [rows.decisions[i] for i in kept],
        [states[i] for i in kept],  # type: ignore[misc]  # only the kept ones
        Writes([fields[i] for i in kept], kept_values, [i for i, v in enumerate(kept_values) if type(v) is dict]),
    )


def _plan_rows(
    messages: Sequence[Message], rows: Rows, record: bool, trusted_before: int, write: bool, native: bool = True
) -> Patches | None:
    """:func:`plan` over compiled rows; None when a row needs the general loop (which then decides).

    The freshness check of a whole output placeholder is :func:`~.freshness.still_fits` inlined
    (it runs for each of them on every request); every other row gets ``still_fits`` itself.
    Anything unusual (a position that is gone, a state that is not a dict, a part without the
    call's ``callID``, a state without an output) goes to the general loop, which raises
    :class:`Desync` or accepts the part by its other identity, as always. ``record``: keep what
    each row's check found (``Rows.fits``), for a next request whose host vouches for it.

    ``trusted_before``: a row in a message before it keeps what its last check found (the host
    vouches for those messages; the row must still be reached, its part still name its call).
    ``write``: each value is stored as soon as its row is found to fit, while the host's objects
    are still in the cache (stored in a second pass, they were reached again from memory: a third
    of the placeholders' cost); None puts back what was stored, so nothing stays half-written.

    ``native``: let the C walk (:data:`NATIVE_WALK`) do it first. It decides as this loop does, with
    the next rows' objects asked for while the current ones are checked; on anything it does not
    cover it puts back what it wrote and declines, and this loop runs as if it had not been called.
    """
    walk = NATIVE_WALK if native else None
    if walk is not None and type(messages) is list:
        decisions_in_force = rows.decisions

        def check(index: int, state: Any) -> bool:
            return still_fits(decisions_in_force[index], state)

        walked = walk(
            messages,
            rows.messages, rows.parts, rows.calls, rows.lengths, rows.fields, rows.values, rows.fits,
            trusted_before, write, PLACEHOLDER_PREFIX, check,
        )  # fmt: skip
        if walked is not None:
            walked_states, walked_missed = walked
            return _planned(rows, walked_states, record, walked_missed)
    # The host's dicts, read as it sent them: each value is checked here before it is used.
    host: Sequence[Any] = messages
    states: list[Any] = []  # the rows' state dicts (None where a check failed)
    olds: list[object] = []  # with ``write``: what each stored field held before, row by row
    prefix, fits, decisions, fields = PLACEHOLDER_PREFIX, rows.fits, rows.decisions, rows.fields
    missed = unusual = False
    index = -1
    # One pass, one object visited once: the cost is the host's objects' memory, not the tests.
    # Decisions are read by index, when a row needs one (zipped, each would be reached too), and
    # the zip takes no ``strict``: mypyc compiles a bare zip of lists into one indexed loop, where
    # any keyword makes it a generic iterator with a tuple per row (Rows keeps its columns equal).
    try:
        for message_index, part_index, call_id, length, value in zip(  # noqa: B905
            rows.messages, rows.parts, rows.calls, rows.lengths, rows.values
        ):
            index += 1
            part = host[message_index]["parts"][part_index]
            state = part["state"]
            if type(state) is not dict or type(part) is not dict or part["callID"] != call_id:
                unusual = True
                break
            old: object = None  # the field's value, when the check read it
            if message_index < trusted_before and (found := fits[index]) != UNCHECKED:
                fit = found == FIT
            elif length >= 0 and type(current := state["output"]) is str:
                fit = (
                    len(current) > length
                    and not current.startswith(prefix)
                    and state.get("status") == "completed"
                    and not (type(when := state.get("time")) is dict and when.get("compacted"))
                )
                old = current
            else:
                fit = still_fits(decisions[index], state)
            if not fit:
                states.append(None)
                if write:
                    olds.append(None)
                missed = True
                continue
            states.append(state)
            if write:
                field = fields[index]
                # Always there: a value fits only over a field the state has.
                olds.append(old if old is not None else state[field])
                # Inputs are copied so that a host mutating what it sent cannot alter our cached value.
                state[field] = dict(value) if type(value) is dict else value
    except (IndexError, KeyError, TypeError):
        unusual = True
    except BaseException:
        if write:
            _put_back(states, rows.fields, olds)
        raise
    if unusual:
        if write:
            _put_back(states, rows.fields, olds)
        return None
    return _planned(rows, states, record, missed)


def _planned(rows: Rows, states: list[Any], record: bool, missed: bool) -> Patches:
    """The patches of rows whose states were found (None where a check failed), recorded in ``rows.fits`` with ``record``."""
    if record:
        # In one store, then the misses (few): a store per row would be a call per row.
        fits = rows.fits
        fits[:] = bytes((FIT,)) * len(states)
        if missed:
            for index, reached in enumerate(states):
                if reached is None:
                    fits[index] = MISSED
    if not missed:
        return _whole(rows, states)  # no None left
    return _kept(rows, states)


def _put_back(states: list[Any], fields: Sequence[str], olds: list[object]) -> None:
    """Undo the stores of an unfinished :func:`_plan_rows`, the latest first (a state the host sent twice)."""
    for index in range(min(len(states), len(olds)) - 1, -1, -1):
        state = states[index]
        if state is not None:
            state[fields[index]] = olds[index]


def plan(
    messages: Sequence[Message],
    applied: Sequence[Decision],
    *,
    since_token: bool = False,
    unchanged_before: int = 0,
    record: bool = True,
    write: bool = False,
) -> Patches:
    """(decision, state) pairs for every applied decision still in force; Desync if a call moved.

    A decision whose field the host changed since it was made (cleared, nulled, replaced) is left
    out (:func:`~dcp_plugin.pipeline.freshness.still_fits`).

    ``since_token``: ``applied`` is what came after a client's patch token, added to the patches
    it keeps; a withdrawal (the output as stored, taking a list out) is then a patch to send, while
    a whole set simply leaves the output alone. Pure: nothing in ``messages`` changes (the bridge
    plans against its never-patched mirror). Over an epoch's :class:`Applied` list the decisions'
    targets are compiled once (:func:`_plan_rows`), with the same result as the loop.

    ``unchanged_before``: the host vouches that its first so many messages are, in content, those
    of the request planned last (their objects may be new): the decisions there keep what that
    request's check found. ``record=False``: a list that is not a request (a command's), whose
    checks must not stand for the next request.

    ``write``: the patches are also applied (as :func:`apply` does), each as soon as it is
    planned; on :class:`Desync` nothing is written.
    """
    if type(applied) is Applied and not since_token:
        rows = applied.rows()
        trusted_before = unchanged_before if record else 0
        planned = _plan_rows(messages, rows, record, trusted_before, write)
        if planned is not None:
            return planned
        if record:
            rows.fits[:] = bytes((UNCHECKED,)) * len(rows.fits)  # the general loop below records nothing
    decisions: list[Decision] = []
    states: list[ToolState] = []
    keep_decision = decisions.append
    keep_state = states.append
    for decision in applied:
        if decision.superseded or (decision.withdraws is not None and not since_token):
            continue
        state = locate(messages, decision.record)
        if state is None:
            raise Desync(decision.record.call_id)
        if decision.withdraws is None and not still_fits(decision, state):
            continue  # the host changed the field since: it goes out as the host sent it
        keep_decision(decision)
        keep_state(state)
    patches = Patches(decisions, states)
    if write:
        apply(patches)
    return patches


def apply(patches: Patches) -> None:
    """Write the placeholders; plain dict stores, so this step cannot fail halfway."""
    writes = patches.writes
    if writes is not None:
        # Flat stores driven from C, then the inputs stored again as copies (below).
        states = cast("list[dict[str, object]]", patches.states)
        fields, values = writes.fields, writes.values
        collections.deque(map(operator.setitem, states, fields, values), maxlen=0)
        for index in writes.copies:
            states[index][fields[index]] = dict(cast("dict[str, object]", values[index]))
        return
    for decision, state in zip(patches.decisions, patches.states, strict=False):
        value = decision.value
        # Inputs are copied so that a host mutating what it sent cannot alter our cached value.
        state[decision.field] = dict(value) if type(value) is dict else value
