"""Supersede writes: a completed write whose file a later completed read returned loses its content input."""

from __future__ import annotations

from dcp_plugin.pipeline.ledger import CallRecord

WRITE_TOOLS: frozenset[str] = frozenset({"write"})
READ_TOOLS: frozenset[str] = frozenset({"read"})


class SupersedeWrites:
    """Per normalized path: the latest read position and the writes no read has covered yet."""

    def __init__(self) -> None:
        self._latest_read: dict[str, int] = {}
        self._waiting: dict[str, list[CallRecord]] = {}

    def observe(self, record: CallRecord, path: str | None, path_protected: bool) -> list[CallRecord]:
        """Index a finished call; return the writes it supersedes (or itself, if already read)."""
        if record.status != "completed" or path is None:
            return []
        if record.tool in READ_TOOLS:
            if record.seq > self._latest_read.get(path, -1):
                self._latest_read[path] = record.seq
            waiting = self._waiting.get(path)
            if not waiting:
                return []
            covered = [w for w in waiting if w.seq < record.seq]
            if covered:
                self._waiting[path] = [w for w in waiting if w.seq > record.seq]
            return covered
        if record.tool in WRITE_TOOLS and not path_protected:
            if self._latest_read.get(path, -1) > record.seq:
                return [record]
            self._waiting.setdefault(path, []).append(record)
        return []
