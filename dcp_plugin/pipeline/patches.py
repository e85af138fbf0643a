"""Patches: the applied decisions paired with the tool states they write, planned and applied on the outgoing copy."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

from dcp_plugin.model.messages import Message, ToolState, locate
from dcp_plugin.pipeline.decisions import Decision
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
    """

    __slots__ = ("decisions", "states")

    def __init__(self, decisions: list[Decision] | None = None, states: list[ToolState] | None = None) -> None:
        self.decisions: list[Decision] = decisions if decisions is not None else []
        self.states: list[ToolState] = states if states is not None else []

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
            return self.decisions == other.decisions and self.states == other.states
        if isinstance(other, (list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return f"Patches({list(self)!r})"


class Applied(list[Decision]):
    """The decisions of one epoch in the order applied, with where those in force write (see :func:`plan`).

    A prefix never changes within an epoch, so each decision's target (message and part index,
    call id, the length of a whole placeholder) is compiled once into a flat row: a warm request
    then reads thousands of rows instead of thousands of decision and record objects spread over
    the heap. Only positions and lengths are kept, never the host's content, so an idle session
    holds nothing of a request's list; a checkpoint pickles the decisions alone.
    """

    __slots__ = ("_rows", "_compiled")

    def __init__(self, decisions: Iterable[Decision] = ()) -> None:
        super().__init__(decisions)
        self._rows: list[_Row] = []
        self._compiled = 0  # how many decisions of the list the rows cover

    def __reduce__(self) -> tuple[type[Applied], tuple[list[Decision]]]:
        return Applied, (list(self),)

    def rows(self) -> list[_Row]:
        """A row per decision in force (not superseded, not a withdrawal), in the order applied.

        An applied decision is superseded only when the one taking its field over (or the
        withdrawal of a list) is applied, which appends to this list: the rows are filtered
        again only then.
        """
        if self._compiled != len(self):
            rows = [row for row in self._rows if not row[0].superseded]
            for decision in itertools.islice(self, self._compiled, None):
                if decision.superseded or decision.withdraws is not None:
                    continue  # a withdrawal is only sent after a client's token, never in a whole set
                record = decision.record
                whole = decision.cuts is None and decision.field == "output" and type(decision.value) is str
                length = len(decision.value) if whole else -1
                rows.append((decision, record.message_index, record.part_index, record.call_id, length))
            self._rows, self._compiled = rows, len(self)
        return self._rows


# (decision, message index, part index, call id, length of a whole output placeholder or -1)
_Row = tuple[Decision, int, int, str, int]


def _plan_rows(messages: Sequence[Message], rows: list[_Row]) -> Patches | None:
    """:func:`plan` over compiled rows; None when a row needs the general loop (which then decides).

    The freshness check of a whole output placeholder is :func:`~.freshness.still_fits` inlined
    (it runs for each of them on every request); every other row gets ``still_fits`` itself.
    Anything unusual (a position that is gone, a state that is not a dict, a part whose
    ``callID`` is not the call's) goes to the general loop, which raises :class:`Desync` or
    accepts the part by its other identity, as always.
    """
    decisions: list[Decision] = []
    states: list[ToolState] = []
    keep_decision = decisions.append
    keep_state = states.append
    prefix = PLACEHOLDER_PREFIX
    for decision, message_index, part_index, call_id, length in rows:
        try:
            part = messages[message_index]["parts"][part_index]
            state = part["state"]
        except (IndexError, KeyError, TypeError):
            return None
        if type(state) is not dict or type(part) is not dict or part.get("callID") != call_id:
            return None
        if length >= 0:
            current = state.get("output")
            if type(current) is str:
                if (
                    len(current) > length
                    and not current.startswith(prefix)
                    and state.get("status") == "completed"
                    and not (type(when := state.get("time")) is dict and when.get("compacted"))
                ):
                    keep_decision(decision)
                    keep_state(state)
                continue
        if still_fits(decision, state):
            keep_decision(decision)
            keep_state(state)
    return Patches(decisions, states)


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
    for decision, state in zip(patches.decisions, patches.states, strict=False):
        value = decision.value
        # Inputs are copied so that a host mutating what it sent cannot alter our cached value.
        state[decision.field] = dict(value) if type(value) is dict else value
