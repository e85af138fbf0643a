"""Supersede writes: a completed write whose file a later completed read returned loses its content input."""

from __future__ import annotations

from collections.abc import Iterable

from dcp_plugin.config.section import Section
from dcp_plugin.pipeline.ledger import CallRecord
from dcp_plugin.pipeline.placeholders import SUPERSEDED_PLACEHOLDER, ShrinkInput
from dcp_plugin.pipeline.protection import PATH_KEYS
from dcp_plugin.pipeline.strategies.base import FinishedCall, ObserveOnly, Proposal, StrategySpec

NAME = "supersedeWrites"
WRITE_TOOLS: frozenset[str] = frozenset({"write"})
READ_TOOLS: frozenset[str] = frozenset({"read"})
EDIT = ShrinkInput(SUPERSEDED_PLACEHOLDER, frozenset(PATH_KEYS))


class SupersedeWritesConfig(Section):
    enabled: bool = False


class SupersedeWrites(ObserveOnly):
    """Per normalized path: the latest read position and the writes no read has covered yet."""

    def __init__(self) -> None:
        self._latest_read: dict[str, int] = {}
        self._waiting: dict[str, list[CallRecord]] = {}

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        record, path = call.record, call.path
        if record.status != "completed" or path is None:
            return ()
        if record.tool in READ_TOOLS:
            if record.seq > self._latest_read.get(path, -1):
                self._latest_read[path] = record.seq
            waiting = self._waiting.get(path)
            if not waiting:
                return ()
            covered = [w for w in waiting if w.seq < record.seq]
            if covered:
                self._waiting[path] = [w for w in waiting if w.seq > record.seq]
            return [(w, EDIT) for w in covered]
        if record.tool in WRITE_TOOLS and not call.protected:
            if self._latest_read.get(path, -1) > record.seq:
                return ((record, EDIT),)
            self._waiting.setdefault(path, []).append(record)
        return ()


def build(config: SupersedeWritesConfig) -> SupersedeWrites | None:
    return SupersedeWrites() if config.enabled else None


SPEC = StrategySpec(NAME, "file was read back later", SupersedeWritesConfig, build)
