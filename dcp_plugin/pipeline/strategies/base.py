"""The strategy interface: observe each finished call, say which calls became obsolete and how to shrink them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from dcp_plugin.config.section import Section
from dcp_plugin.pipeline.ledger import CallRecord
from dcp_plugin.pipeline.placeholders import Edit

Proposal = tuple[CallRecord, Edit]


@dataclass(slots=True)
class FinishedCall:
    """A tool call that just reached a final status, as every strategy sees it."""

    record: CallRecord
    state: dict[str, Any]
    paths: tuple[str, ...]  # every file path the call names, as given
    path: str | None  # the first of them, absolute and normalized against the project
    protected: bool  # a path matches protectedFilePatterns: no strategy may prune this call

    @property
    def tool(self) -> str:
        return self.record.tool

    @property
    def status(self) -> str:
        return self.record.status

    @property
    def input(self) -> Any:
        return self.state.get("input")


@dataclass(slots=True)
class Progress:
    """Where the session stands after a sync: the strategies' clock."""

    turn: int
    new_turns: bool


class Strategy(Protocol):
    """An incremental index over finished calls; every call is observed once, in conversation order."""

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        """Index a finished call; the calls it makes obsolete now (possibly itself)."""
        ...

    def advance(self, progress: Progress) -> Iterable[Proposal]:
        """After each sync's observations: calls that became obsolete with time."""
        ...


class ObserveOnly:
    """Base for strategies that only react to new calls."""

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        return ()

    def advance(self, progress: Progress) -> Iterable[Proposal]:
        return ()


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
