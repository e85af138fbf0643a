"""Superseded todos: an older `todowrite` or `todoread` result goes once a newer `todowrite` completed."""

from __future__ import annotations

from collections.abc import Iterable

from mypy_extensions import mypyc_attr

from dcp_plugin.config.strategies import SUPERSEDED_TODOS, SupersededTodosConfig
from dcp_plugin.pipeline.decisions import CallRecord, ReplaceOutput
from dcp_plugin.pipeline.strategies.base import FinishedCall, ObserveOnly, Proposal, StrategySpec

NAME = SUPERSEDED_TODOS
WRITE_TOOLS: frozenset[str] = frozenset({"todowrite"})
TODO_TOOLS: frozenset[str] = WRITE_TOOLS | {"todoread"}


def placeholder() -> str:
    """What an older todo list becomes."""
    return "[dcp: older todo list removed - a newer todowrite replaced it]"


EDIT = ReplaceOutput(placeholder())


@mypyc_attr(allow_interpreted_subclasses=True)
class SupersededTodos(ObserveOnly):
    """The todo results no newer `todowrite` has replaced yet, and the newest `todowrite`.

    The todo tools are on the built-in protected list, which keeps deduplication and
    purge-errors off them; this strategy exists to prune exactly them, and only lists a newer
    list replaced: the newest list (and any read of it) always stays.
    """

    def __init__(self) -> None:
        self._live: list[CallRecord] = []
        self._newest_write = -1

    def looks_at(self, tool: str, status: str) -> bool:
        """Only completed todo calls."""
        return status == "completed" and tool in TODO_TOOLS

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        record = call.record
        if record.status != "completed" or record.tool not in TODO_TOOLS or call.protected:
            return ()
        seq = record.seq
        if self._newest_write > seq:
            return ((record, EDIT),)  # a newer list finished first (parallel calls)
        self._live.append(record)
        if record.tool not in WRITE_TOOLS:
            return ()
        self._newest_write = seq
        gone = [old for old in self._live if old.seq < seq]
        if not gone:
            return ()
        self._live = [old for old in self._live if old.seq >= seq]
        return [(old, EDIT) for old in gone]


def build(config: SupersededTodosConfig) -> SupersededTodos | None:
    return SupersededTodos() if config.enabled else None


SPEC = StrategySpec(NAME, "a newer todo list", SupersededTodosConfig, build)
