"""Supersede writes: a completed write whose whole file a later completed read showed loses its content input."""

from __future__ import annotations

from collections.abc import Iterable

from mypy_extensions import mypyc_attr

from dcp_plugin.config.strategies import SUPERSEDE_WRITES, SupersedeWritesConfig
from dcp_plugin.pipeline.decisions import CallRecord, ShrinkInput
from dcp_plugin.pipeline.placeholders import SUPERSEDED_PLACEHOLDER
from dcp_plugin.pipeline.protection import PATH_KEYS
from dcp_plugin.pipeline.strategies.base import FinishedCall, ObserveOnly, Proposal, StrategySpec
from dcp_plugin.pipeline.strategies.reads import READ_TOOLS, WRITE_TOOLS, line_count, shown_lines

NAME = SUPERSEDE_WRITES
EDIT = ShrinkInput(SUPERSEDED_PLACEHOLDER, frozenset(PATH_KEYS))


@mypyc_attr(allow_interpreted_subclasses=True)
class SupersedeWrites(ObserveOnly):
    """Per normalized path: the reads that showed it from line 1, and the writes no read has covered yet.

    A read covers a write when it shows every line the write produced: from line 1 (no
    ``offset``) to at least the write's last line, and the host did not cut it short. A read of
    ``offset: 50, limit: 5`` shows part of the file, so the write keeps its content.
    """

    def __init__(self) -> None:
        self._reads: dict[str, list[tuple[int, int]]] = {}  # (seq, last line shown) of reads from line 1
        self._newest_read: dict[str, int] = {}
        self._waiting: dict[str, list[tuple[CallRecord, int]]] = {}  # (write, its line count)

    def looks_at(self, tool: str, status: str) -> bool:
        """Only completed reads and writes."""
        return status == "completed" and (tool in READ_TOOLS or tool in WRITE_TOOLS)

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        record, path = call.record, call.path
        if record.status != "completed" or path is None:
            return ()
        if record.tool in READ_TOOLS:
            shown = shown_lines(call.input, call.output)
            if shown is None or shown[0] != 1:
                return ()
            self._reads.setdefault(path, []).append((record.seq, shown[1]))
            self._newest_read[path] = max(record.seq, self._newest_read.get(path, -1))
            waiting = self._waiting.get(path)
            if not waiting:
                return ()
            covered = [w for w, lines in waiting if w.seq < record.seq and lines <= shown[1]]
            if covered:
                self._waiting[path] = [
                    (w, lines) for w, lines in waiting if not (w.seq < record.seq and lines <= shown[1])
                ]
            return [(w, EDIT) for w in covered]
        if record.tool in WRITE_TOOLS and not call.protected:
            content = call.input.get("content") if isinstance(call.input, dict) else None
            lines = max(1, line_count(content)) if isinstance(content, str) else 1
            # A read that finished first but sits later in the conversation (rare: parallel calls).
            if self._newest_read.get(path, -1) > record.seq and any(
                seq > record.seq and last >= lines for seq, last in self._reads[path]
            ):
                return ((record, EDIT),)
            self._waiting.setdefault(path, []).append((record, lines))
        return ()


def build(config: SupersedeWritesConfig) -> SupersedeWrites | None:
    return SupersedeWrites() if config.enabled else None


SPEC = StrategySpec(NAME, "file was read back later", SupersedeWritesConfig, build)
