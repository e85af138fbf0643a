"""Patches: the applied decisions paired with the tool states they write, planned and applied on the outgoing copy."""

from __future__ import annotations

import collections
import operator
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple, cast, overload

from dcp_plugin.model.messages import Message, ToolState, locate
from dcp_plugin.pipeline.decisions import Decision, Value
from dcp_plugin.pipeline.freshness import still_fits
from dcp_plugin.pipeline.placeholders import PLACEHOLDER_PREFIX


class Desync(Exception):
    """A decided call is no longer where the ledger saw it: the history changed under us."""


Patch = tuple[Decision, ToolState]


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
        writes: _Writes | None = None,
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


class _Writes(NamedTuple):
    """What :func:`apply` stores, one entry per patch: the field, the value, and where a value is a dict to copy."""

    fields: Sequence[str]
    values: Sequence[Value]
    copies: Sequence[int]


class _Rows:
    """The compiled rows of an :class:`Applied` list, as columns: one entry per decision in force.

    Columns rather than a tuple per row: planning zips them, and when every row fits (the usual
    warm request) the patches reuse the decision, field and value columns as they are.
    """

    __slots__ = ("decisions", "messages", "parts", "calls", "lengths", "fields", "values", "copies", "_frozen")

    def __init__(self) -> None:
        self.decisions: list[Decision] = []
        self.messages: list[int] = []  # message index
        self.parts: list[int] = []  # part index
        self.calls: list[str] = []  # the call id the part must carry
        self.lengths: list[int] = []  # the length of a whole output placeholder, or -1
        self.fields: list[str] = []  # the field each row writes
        self.values: list[Value] = []  # the value it writes there
        self.copies: list[int] = []  # the rows whose value is a dict, stored as a copy
        self._frozen: tuple[tuple[Decision, ...], _Writes] | None = None

    def add(self, decision: Decision) -> None:
        """Compile one decision in force."""
        self._frozen = None
        record, value = decision.record, decision.value
        whole = decision.cuts is None and decision.field == "output" and type(value) is str
        if type(value) is dict:
            self.copies.append(len(self.decisions))
        self.decisions.append(decision)
        self.messages.append(record.message_index)
        self.parts.append(record.part_index)
        self.calls.append(record.call_id)
        self.lengths.append(len(value) if whole else -1)
        self.fields.append(decision.field)
        self.values.append(value)

    def remove(self, decision: Decision) -> None:
        """Take a decision's row out, if it has one (it was superseded)."""
        try:
            index = self.decisions.index(decision)  # decisions compare by identity
        except ValueError:
            return
        self._frozen = None
        for column in (self.decisions, self.messages, self.parts, self.calls, self.lengths, self.fields, self.values):
            del column[index]
        self.copies[:] = [i if i < index else i - 1 for i in self.copies if i != index]

    def patches(self, states: list[ToolState]) -> Patches:
        """Every row's decision and write paired with ``states`` (one per row), on frozen copies of the columns.

        Frozen, so that later compiling leaves patches already handed out as they were; kept until
        the rows change, because a new copy per request would be thousands of fresh references
        that the cyclic collector's next young pass walks one by one (each a miss in memory).
        """
        frozen = self._frozen
        if frozen is None:
            writes = _Writes(tuple(self.fields), tuple(self.values), tuple(self.copies))
            frozen = self._frozen = (tuple(self.decisions), writes)
        return Patches(frozen[0], states, frozen[1])


class Applied(list[Decision]):
    """The decisions of one epoch in the order applied, with where those in force write (see :func:`plan`).

    A prefix never changes within an epoch, so each decision's target (message and part index,
    call id, the length of a whole placeholder) is compiled once into flat rows: a warm request
    then reads thousands of rows instead of thousands of decision and record objects spread over
    the heap. Only positions and lengths are kept, never the host's content, so an idle session
    holds nothing of a request's list; a checkpoint pickles the decisions alone.
    """

    __slots__ = ("_rows", "_compiled")

    def __init__(self, decisions: Iterable[Decision] = ()) -> None:
        super().__init__(decisions)
        self._rows = _Rows()
        self._compiled = 0  # how many decisions of the list the rows cover

    def __reduce__(self) -> tuple[type[Applied], tuple[list[Decision]]]:
        return Applied, (list(self),)

    def rows(self) -> _Rows:
        """A row per decision in force (not superseded, not a withdrawal), in the order applied.

        An applied decision is superseded only when the one taking its field over (or the
        withdrawal of a list) is applied, which appends to this list: so only the decisions
        appended since the last call are read, and only the rows those replace are taken out.
        """
        if self._compiled != len(self):
            rows, fresh = self._rows, self[self._compiled :]
            for decision in fresh:
                for taken in (decision.replaces, decision.withdraws):
                    if taken is not None and taken.superseded:
                        rows.remove(taken)
            for decision in fresh:
                if decision.superseded or decision.withdraws is not None:
                    continue  # a withdrawal is only sent after a client's token, never in a whole set
                rows.add(decision)
            self._compiled = len(self)
        return self._rows


def _plan_rows(messages: Sequence[Message], rows: _Rows) -> Patches | None:
    """:func:`plan` over compiled rows; None when a row needs the general loop (which then decides).

    The freshness check of a whole output placeholder is :func:`~.freshness.still_fits` inlined
    (it runs for each of them on every request); every other row gets ``still_fits`` itself.
    Anything unusual (a position that is gone, a state that is not a dict, a part without the
    call's ``callID``, a state without an output) goes to the general loop, which raises
    :class:`Desync` or accepts the part by its other identity, as always.
    """
    states: list[ToolState | None] = []
    keep = states.append
    prefix = PLACEHOLDER_PREFIX
    missed = False
    # One pass, one object visited once: the cost is the host's objects' memory, not the tests.
    try:
        for decision, message_index, part_index, call_id, length in zip(
            rows.decisions, rows.messages, rows.parts, rows.calls, rows.lengths, strict=True
        ):
            part = messages[message_index]["parts"][part_index]
            state = part["state"]
            if type(state) is not dict or type(part) is not dict or part["callID"] != call_id:
                return None
            if length >= 0:
                current = state["output"]
                if type(current) is str:
                    if (
                        len(current) > length
                        and not current.startswith(prefix)
                        and state.get("status") == "completed"
                        and not (type(when := state.get("time")) is dict and when.get("compacted"))
                    ):
                        keep(state)
                    else:
                        keep(None)
                        missed = True
                    continue
            if still_fits(decision, state):
                keep(state)
            else:
                keep(None)
                missed = True
    except (IndexError, KeyError, TypeError):
        return None
    if not missed:
        return rows.patches(states)  # type: ignore[arg-type]  # no None left
    kept = [index for index, state in enumerate(states) if state is not None]
    fields, values = rows.fields, rows.values
    kept_values = [values[i] for i in kept]
    return Patches(
        [rows.decisions[i] for i in kept],
        [states[i] for i in kept],  # type: ignore[misc]  # only the kept ones
        _Writes([fields[i] for i in kept], kept_values, [i for i, v in enumerate(kept_values) if type(v) is dict]),
    )


def plan(messages: Sequence[Message], applied: Sequence[Decision], *, since_token: bool = False) -> Patches:
    """(decision, state) pairs for every applied decision still in force; Desync if a call moved.

    A decision whose field the host changed since it was made (cleared, nulled, replaced) is left
    out (:func:`~dcp_plugin.pipeline.freshness.still_fits`).

    ``since_token``: ``applied`` is what came after a client's patch token, added to the patches
    it keeps; a withdrawal (the output as stored, taking a list out) is then a patch to send, while
    a whole set simply leaves the output alone. Pure: nothing in ``messages`` changes (the bridge
    plans against its never-patched mirror). Over an epoch's :class:`Applied` list the decisions'
    targets are compiled once (:func:`_plan_rows`), with the same result as the loop.
    """
    if type(applied) is Applied and not since_token:
        planned = _plan_rows(messages, applied.rows())
        if planned is not None:
            return planned
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
    return Patches(decisions, states)


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
