"""The notice shown after a request that pruned something, per `pruneNotification`, and the words it is made of."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from dcp_plugin.pipeline.decisions import Decision
from dcp_plugin.pipeline.sizes import pruned_size
from dcp_plugin.pipeline.strategies import REASON_TEXT
from dcp_plugin.printable import plural

__all__ = ["plural"]  # re-exported: the commands import it from here

Level = Literal["off", "minimal", "detailed"]

# Detailed notifications list at most this many calls; the rest are summarized in one line.
DETAILED_LIMIT = 20


def reason_text(reason: str | None) -> str:
    """A short human description of a pruning reason."""
    return REASON_TEXT.get(reason or "", reason or "unknown reason")


def summary_line(decisions: Sequence[Decision], net: str | None = None) -> str:
    """One line: how many calls were pruned, the tokens they held (the sizes the list and `/dcp pin` show), the net so far."""
    tokens = sum(pruned_size(d) for d in decisions)
    tail = f" (this session so far: {net})" if net else ""
    return f"dcp: pruned {plural(len(decisions), 'tool call')} holding ~{tokens:,} tokens{tail}"


def detail_line(decision: Decision) -> str:
    """One call of a detailed notification: tool, call id, why, saving."""
    return f"  - {decision.tool} {decision.call_id}: {reason_text(decision.strategy)}, ~{pruned_size(decision):,} tokens"


def format_notification(decisions: Sequence[Decision], level: str, net: str | None = None) -> str | None:
    """The notification for new decisions at a `pruneNotification` level; None when nothing to say.

    ``net``: the session's net cost so far, in words (see ``cost.net_sentence``).
    """
    if level == "off" or not decisions:
        return None
    head = summary_line(decisions, net)
    if level != "detailed":
        return head
    lines = [head + ":"]
    lines.extend(detail_line(d) for d in decisions[:DETAILED_LIMIT])
    if len(decisions) > DETAILED_LIMIT:
        rest = decisions[DETAILED_LIMIT:]
        lines.append(f"  ... and {plural(len(rest), 'more call')} (~{sum(pruned_size(d) for d in rest):,} tokens)")
    return "\n".join(lines)
