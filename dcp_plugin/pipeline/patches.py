"""Patches: the applied decisions paired with the tool states they write, planned and applied on the outgoing copy."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from dcp_plugin.model.messages import Message, ToolState, call_id_of
from dcp_plugin.pipeline.decisions import Decision
from dcp_plugin.pipeline.freshness import still_fits


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


def plan(messages: Sequence[Message], applied: Sequence[Decision], *, since_token: bool = False) -> Patches:
    """(decision, state) pairs for every applied decision still in force; Desync if a call moved.

    A decision whose field the host changed since it was made (cleared, nulled, replaced) is left
    out (:func:`~dcp_plugin.pipeline.freshness.still_fits`).

    ``since_token``: ``applied`` is what came after a client's patch token, added to the patches
    it keeps; a withdrawal (the output as stored, taking a list out) is then a patch to send, while
    a whole set simply leaves the output alone. Pure: nothing in ``messages`` changes (the bridge
    plans against its never-patched mirror).
    """
    decisions: list[Decision] = []
    states: list[ToolState] = []
    keep_decision = decisions.append
    keep_state = states.append
    for decision in applied:
        if decision.superseded or (decision.withdraws is not None and not since_token):
            continue
        record = decision.record
        call_id = record.call_id
        try:
            message = messages[record.message_index]
            part = message["parts"][record.part_index]
            state = part["state"]
        except (IndexError, KeyError, TypeError):
            raise Desync(call_id) from None
        if type(state) is not dict:
            raise Desync(call_id)
        if part.get("callID") != call_id and call_id_of(part, message, record.message_index, record.part_index) != call_id:
            raise Desync(call_id)
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
