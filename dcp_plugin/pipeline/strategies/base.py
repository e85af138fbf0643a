"""The strategy interface: observe each finished call, say which calls became obsolete and how to shrink them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from mypy_extensions import mypyc_attr

from dcp_plugin.budget.thresholds import Thresholds
from dcp_plugin.config.section import Section
from dcp_plugin.model.messages import HostValue, Message, ToolState, locate
from dcp_plugin.pipeline.decisions import CallRecord, Edit
from dcp_plugin.pipeline.labels import call_label

Proposal = tuple[CallRecord, Edit]


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(slots=True)
class FinishedCall:
    """A tool call that just reached a final status, as every strategy sees it.

    Built for every finished call of a history, by position: keyword arguments cost as much again.
    """

    record: CallRecord
    state: ToolState
    paths: tuple[str, ...]  # every file path the call names, as given
    path: str | None  # the first of them, absolute and normalized against the project
    protected: bool  # a path matches protectedFilePatterns: no strategy may prune this call
    directory: str  # the project directory (relative paths and labels)
    pinned: bool  # the user pinned it: no proposal for it is ever taken (it may still make others obsolete)
    # The state's input and output, read once: every strategy asks for them, for every call of a history.
    input: HostValue  # as the host sent them: anything
    output: HostValue

    @property
    def tool(self) -> str:
        return self.record.tool

    @property
    def status(self) -> str:
        return self.record.status

    def label(self) -> str:
        """How a placeholder names this call: the tool and its key argument (`read src/a.py`)."""
        return call_label(self.record.tool, self.input, self.directory or None)


def _zero(end: int) -> int:
    """No context measured: a Progress off a request point."""
    return 0


def _warm(messages: Sequence[Message], end: int) -> bool:
    """The next request's cache taken as warm: a Progress off a request point."""
    return False


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(slots=True)
class Progress:
    """Where the session stands after a sync: the strategies' clock, and what they may look up.

    ``point``: the synced messages are exactly those of a request the history shows was made
    and answered (the next message is the model's answer). A strategy that acts on the
    context's size acts only at points, so it acts at the same places in incremental operation
    and in a from-scratch run, whatever requests cut the history into.
    ``thresholds``: the budget ladder of the model the request goes to.
    ``end``: how many messages that request held; ``measure`` and ``cold_after`` answer for it when
    asked (the session's own methods: nothing is built per point to hold the question).
    """

    turn: int
    new_turns: bool
    point: bool = False
    thresholds: Thresholds | None = None
    directory: str = ""
    end: int = 0
    measure: Callable[[int], int] = _zero  # the estimated prompt of the request holding the first n messages
    messages: Sequence[Message] = ()  # the list being walked: a lookup works whenever it is asked
    cold_after: Callable[[Sequence[Message], int], bool] = _warm  # the cache is cold after the first n of them

    def context_tokens(self) -> int:
        """The estimated prompt of the request holding these messages, as it was sent.

        Only the placeholders that request carried count: a decision still waiting for the
        scheduler relieves nothing yet. Every run (incremental, a restart, a replay) asks once the
        request was scheduled, so it measures the same.
        """
        return self.measure(self.end)

    def next_cold(self) -> bool:
        """Whether the prompt cache will be cold for the next request, the first to carry what is decided here.

        The pause before it outlives the cache, or the pricing has no cache: that request writes
        the whole prompt anew anyway.
        """
        return self.cold_after(self.messages, self.end)

    def state_of(self, record: CallRecord) -> ToolState | None:
        """A finished call's tool state in the walked messages (None when it is no longer there)."""
        return locate(self.messages, record)


class Strategy(Protocol):
    """An incremental index over finished calls; every call is observed once, in conversation order."""

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        """Index a finished call; the calls it makes obsolete now (possibly itself)."""
        ...

    def advance(self, progress: Progress) -> Iterable[Proposal]:
        """After each sync's observations (and their decisions): calls that became obsolete with time."""
        ...


@mypyc_attr(allow_interpreted_subclasses=True)
class ObserveOnly:
    """Base for strategies that only react to new calls."""

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        return ()

    def advance(self, progress: Progress) -> Iterable[Proposal]:
        return ()


def acts_with_time(strategy: Strategy) -> bool:
    """Whether a strategy's ``advance`` may propose anything (an observe-only one never does).

    A session asks only these at each request point: on a cold request that is every point of
    the history.
    """
    return getattr(type(strategy), "advance", None) is not ObserveOnly.advance


def observes(strategy: Strategy, tool: str, status: str) -> bool:
    """Whether a strategy's ``observe`` may index or propose anything for a call of ``tool`` with ``status``.

    A strategy narrows it with a ``looks_at(tool, status)`` method (its observe returns nothing and
    changes nothing for the other calls); without one it sees every call.
    """
    looks_at = getattr(strategy, "looks_at", None)
    return looks_at is None or bool(looks_at(tool, status))


def acts_off_points(strategy: Strategy) -> bool:
    """Whether a strategy's ``advance`` may propose anything off a request point.

    One that acts on the context's size says ``points_only``: it acts only at points, where it
    is handed the measure and the cold question (see :class:`Progress`).
    """
    return not getattr(strategy, "points_only", False)


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(frozen=True, slots=True)
class StrategySpec:
    """A strategy's entry in the registry: its config key, its config section and how to build it.

    ``name`` is the key under ``strategies`` in dcp.jsonc and the name statistics use;
    ``reason`` says in a few words why a call was pruned; ``build`` returns None when the
    section disables the strategy.
    """

    name: str
    reason: str
    config: type[Section]
    build: Callable[[Any], Strategy | None]
