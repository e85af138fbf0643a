"""Superseded reads: an older read's output goes once a newer read shows its lines or a write replaced the file."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from mypy_extensions import mypyc_attr

from dcp_plugin.config.strategies import SUPERSEDED_READS, SupersededReadsConfig
from dcp_plugin.pipeline.decisions import CallRecord, ReplaceOutput
from dcp_plugin.pipeline.labels import path_label
from dcp_plugin.pipeline.strategies.base import FinishedCall, ObserveOnly, Proposal, StrategySpec
from dcp_plugin.pipeline.strategies.reads import READ_TOOLS, WRITE_TOOLS, Lines, covers, read_lines, shows_less

NAME = SUPERSEDED_READS


def placeholder(label: str) -> str:
    """What an older read's output becomes."""
    return f"[dcp: output of {label} removed - a newer read or write of this file supersedes it]"


@functools.lru_cache(maxsize=4096)
def _edit(tool: str, path: str, directory: str) -> ReplaceOutput:
    """The edit for an older read of ``path``: one per file (an edit is immutable), not one per read."""
    return ReplaceOutput(placeholder(path_label(tool, path, directory)))


# Not frozen: built for every read of a first sight, where a frozen dataclass pays an
# object.__setattr__ per field; nothing changes one once built.
@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(slots=True)
class _Read:
    record: CallRecord
    lines: Lines  # the range it asked for
    shown: Lines | None  # what it is known to have shown in full (None: cut short by the host)
    protected: bool  # its path is protected: it supersedes others but is never pruned itself


@mypyc_attr(allow_interpreted_subclasses=True)
class SupersededReads(ObserveOnly):
    """Per normalized path: the reads no newer read or write has superseded yet.

    A newer completed read supersedes an older one when it shows at least the older one's
    lines (no ``offset``/``limit``, or a range that covers the older range) and the host did not
    cut it short; a newer completed `write` of the path supersedes every older read of it.
    """

    def __init__(self) -> None:
        self._live: dict[str, list[_Read]] = {}
        self._newest: dict[str, int] = {}  # per path, the newest read or write seen
        self._newest_write: dict[str, int] = {}
        self._directory = ""

    def looks_at(self, tool: str, status: str) -> bool:
        """Only completed reads and writes show or replace a file."""
        return status == "completed" and (tool in READ_TOOLS or tool in WRITE_TOOLS)

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        record, path = call.record, call.path
        tool = record.tool
        if record.status != "completed" or path is None or not (tool in READ_TOOLS or tool in WRITE_TOOLS):
            return ()
        self._directory = call.directory
        seq = record.seq
        newest = self._newest.get(path, -1)
        late = newest > seq
        if not late:
            self._newest[path] = seq
        if tool in WRITE_TOOLS:
            self._newest_write[path] = max(seq, self._newest_write.get(path, -1))
            return self._take(path, seq, None)
        lines = read_lines(call.input)
        if lines is None:
            return ()
        # shown_lines(input, output), without reading the range a second time.
        shown = None if shows_less(call.output) else lines
        read = _Read(record, lines, shown, call.protected)
        out = [] if shown is None else self._take(path, seq, shown)
        if late and self._superseded_later(path, read):
            if not read.protected:
                out.append((record, _edit(tool, path, self._directory)))
        else:
            live = self._live.get(path)
            if live is None:
                self._live[path] = [read]
            else:
                live.append(read)
        return out

    def _take(self, path: str, seq: int, shown: Lines | None) -> list[Proposal]:
        """Drop the live reads of ``path`` older than ``seq`` (with ``shown``, only those it covers); proposals for those that may be pruned.

        A read whose output a whole placeholder keeps already (deduplication took it at the same
        call, masking before) gets none: the arbiter would refuse it.
        """
        live = self._live.get(path)
        if not live:
            return []
        kept: list[_Read] = []
        out: list[Proposal] = []
        directory = self._directory
        for read in live:
            old = read.record
            # covers(shown, read.lines), inlined: asked for every live read of a file at each newer read.
            if old.seq < seq and (shown is None or (shown[0] <= read.lines[0] and shown[1] >= read.lines[1])):
                if not read.protected and not old.output_kept:
                    out.append((old, _edit(old.tool, path, directory)))
            else:
                kept.append(read)
        if len(kept) != len(live):
            self._live[path] = kept
        return out

    def _superseded_later(self, path: str, read: _Read) -> bool:
        """Whether a newer read or write seen before ``read`` finished supersedes it (parallel calls).

        A newer read that covered it is live, or was superseded by a still newer one covering
        it in turn, or by a write: so the live reads and the newest write tell.
        """
        seq = read.record.seq
        if self._newest_write.get(path, -1) > seq:
            return True
        return any(
            other.record.seq > seq and other.shown is not None and covers(other.shown, read.lines)
            for other in self._live.get(path, ())
        )


def build(config: SupersededReadsConfig) -> SupersededReads | None:
    return SupersededReads() if config.enabled else None


SPEC = StrategySpec(NAME, "a newer read or write of the file", SupersededReadsConfig, build)
