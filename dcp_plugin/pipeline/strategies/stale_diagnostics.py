"""Stale diagnostics: an LSP `<diagnostics file=F>` block in an older tool output is cut once newer results cover F.

OpenCode (1.18) appends the language server's errors to the outputs of `write`, `edit` and
`apply_patch`, one block per file, each after a header line::

    Wrote file successfully.

    LSP errors detected in this file, please fix:
    <diagnostics file="/abs/path/a.py">
    ERROR [3:1] "x" is not defined
    </diagnostics>

(`... in other files:` for other files a write reports, `... in src/a.py, please fix:` in
`apply_patch`). A block for F is stale once a newer completed tool output carries a block for
F, or a newer completed write of F (`write`, `edit`, `apply_patch`, `multiedit`) reports no
errors for it. The tool's own result line and the newest block for each file stay.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from mypy_extensions import mypyc_attr

from dcp_plugin.config.strategies import STALE_DIAGNOSTICS, StaleDiagnosticsConfig
from dcp_plugin.pipeline.decisions import CallRecord, Cut, CutOutput
from dcp_plugin.pipeline.labels import relative
from dcp_plugin.pipeline.protection import absolute_path
from dcp_plugin.pipeline.strategies.base import FinishedCall, ObserveOnly, Proposal, StrategySpec
from dcp_plugin.pipeline.strategies.scan import holds

NAME = STALE_DIAGNOSTICS
# Tools whose completed result reports the diagnostics of the files they wrote: no block for
# such a file means the language server found no errors in it.
WRITE_TOOLS: frozenset[str] = frozenset({"write", "edit", "apply_patch", "multiedit"})
BLOCK_START = '<diagnostics file="'
# A block, with the header line before it when there is one (cut together with it).
_BLOCK = re.compile(
    r"(?P<header>\n\nLSP errors detected in [^\n]*:\n)?"
    r'<diagnostics file="(?P<file>[^"\n]*)">\n(?:.*?\n)?</diagnostics>',
    re.DOTALL,
)


def placeholder(file: str) -> str:
    """What an outdated block becomes: one line naming the file."""
    return f"[dcp: outdated diagnostics for {file} removed - a newer tool result covers this file]"


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(frozen=True, slots=True)
class Block:
    """One diagnostics block of one output: where it is, and the file it reports."""

    record: CallRecord
    cut: Cut


def blocks(output: str, directory: str) -> list[tuple[str, int, int, str]]:
    """(absolute file, start, end, replacement) of each diagnostics block in an output, in order."""
    found: list[tuple[str, int, int, str]] = []
    for match in _BLOCK.finditer(output):
        given = match.group("file")
        if not given:
            continue
        start, end = match.span()
        # A cut header keeps its blank line, so the text after the tool's result line reads the same.
        replacement = ("\n\n" if match.group("header") else "") + placeholder(relative(given, directory))
        if len(replacement) < end - start:
            found.append((absolute_path(given, directory), start, end, replacement))
    return found


@mypyc_attr(allow_interpreted_subclasses=True)
class StaleDiagnostics(ObserveOnly):
    """Per file: the blocks no newer result has covered yet, and the newest result that covers it."""

    def __init__(self) -> None:
        self._live: dict[str, list[Block]] = {}
        self._newest: dict[str, int] = {}

    def looks_at(self, tool: str, status: str) -> bool:
        """Only completed results report or cover diagnostics."""
        return status == "completed"

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        record = call.record
        output = call.output
        if record.status != "completed":
            return ()
        if isinstance(output, str) and holds(output, BLOCK_START):
            found = blocks(output, call.directory)
            files = {file for file, _, _, _ in found}
        elif record.tool in WRITE_TOOLS:
            found, files = [], set()
        else:
            return ()  # no block, and no write that reports the files it wrote (most calls)
        if record.tool in WRITE_TOOLS:
            files.update(absolute_path(p, call.directory) for p in call.paths)
        if not files:
            return ()
        stale: dict[int, tuple[CallRecord, list[Cut]]] = {}
        seq = record.seq
        newer: set[str] = set()
        for file in files:
            if self._newest.get(file, -1) > seq:
                newer.add(file)  # a newer result was seen first (parallel calls finishing out of order)
            else:
                self._newest[file] = seq
            live = self._live.get(file)
            if live:
                keep = []
                for block in live:
                    if block.record.seq < seq:
                        stale.setdefault(block.record.seq, (block.record, []))[1].append(block.cut)
                    else:
                        keep.append(block)
                self._live[file] = keep
        if not call.protected:
            for file, start, end, replacement in found:
                if file in newer:
                    stale.setdefault(seq, (record, []))[1].append((start, end, replacement))
                else:
                    self._live.setdefault(file, []).append(Block(record, (start, end, replacement)))
        return [(owner, CutOutput(tuple(sorted(cuts)))) for owner, cuts in stale.values()]


def build(config: StaleDiagnosticsConfig) -> StaleDiagnostics | None:
    return StaleDiagnostics() if config.enabled else None


SPEC = StrategySpec(NAME, "diagnostics a newer result replaced", StaleDiagnosticsConfig, build)
