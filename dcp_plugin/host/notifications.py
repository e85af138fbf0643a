"""Prune notifications: the text shown after a request that pruned something, per `pruneNotification`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from dcp_plugin.pipeline.ledger import CallRecord
from dcp_plugin.pipeline.strategies import DEDUPLICATION, PURGE_ERRORS, SUPERSEDE_WRITES, SWEEP

Level = Literal["off", "minimal", "detailed"]

# Why a call was pruned, in a few words (our own wording).
REASON_TEXT: dict[str, str] = {
    DEDUPLICATION: "same call made again later",
    SUPERSEDE_WRITES: "file was read back later",
    PURGE_ERRORS: "failed call, input removed",
    SWEEP: "swept by /dcp sweep",
}

# Detailed notifications list at most this many calls; the rest are summarized in one line.
DETAILED_LIMIT = 20


def plural(count: int, word: str) -> str:
    """'1 call', '2 calls'."""
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def reason_text(reason: str | None) -> str:
    """A short human description of a pruning reason."""
    return REASON_TEXT.get(reason or "", reason or "unknown reason")


def summary_line(records: Sequence[CallRecord]) -> str:
    """One line: how many calls were pruned and about how many tokens that saves per request."""
    tokens = sum(r.tokens_saved for r in records)
    return f"dcp: pruned {plural(len(records), 'tool call')} (~{tokens:,} tokens saved per request)"


def detail_line(record: CallRecord) -> str:
    """One call of a detailed notification: tool, call id, why, saving."""
    return f"  - {record.tool} {record.call_id}: {reason_text(record.reason)}, ~{record.tokens_saved:,} tokens"


def format_notification(records: Sequence[CallRecord], level: str) -> str | None:
    """The notification for new decisions at a `pruneNotification` level; None when nothing to say."""
    if level == "off" or not records:
        return None
    head = summary_line(records)
    if level != "detailed":
        return head
    lines = [head + ":"]
    lines.extend(detail_line(r) for r in records[:DETAILED_LIMIT])
    if len(records) > DETAILED_LIMIT:
        rest = records[DETAILED_LIMIT:]
        lines.append(f"  ... and {plural(len(rest), 'more call')} (~{sum(r.tokens_saved for r in rest):,} tokens)")
    return "\n".join(lines)
