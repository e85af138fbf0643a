"""`/dcp sweep [N]`: read the count, and describe what a sweep pruned and what it skipped, and why."""

from __future__ import annotations

from collections.abc import Sequence

from dcp_plugin.host.prune_notice import plural
from dcp_plugin.host.results import SweepOutcome
from dcp_plugin.host.rows import CallRow, PruneRow, SkipRow
from dcp_plugin.pipeline.labels import call_label, relative
from dcp_plugin.pipeline.sweep import Skip


def parse_count(args: Sequence[str]) -> int | None:
    """N from the arguments (None: since the last user message); ValueError saying what is wrong."""
    if not args:
        return None
    if len(args) > 1:
        raise ValueError(f"expected at most one number, got {' '.join(args)!r}")
    try:
        count = int(args[0])
    except ValueError:
        raise ValueError(f"expected a number of tool calls, got {args[0]!r}") from None
    if count < 1:
        raise ValueError(f"the number of tool calls must be at least 1, got {count}")
    return count


def scope_text(plan: SweepOutcome) -> str:
    """What the sweep looked at: `since your last message` or `in the last N tool calls`."""
    return "since your last message" if plan.count is None else f"in the last {plural(plan.count, 'tool call')}"


def label(plan: SweepOutcome, record: CallRow | PruneRow, directory: str | None) -> str:
    """The tool and its key argument (`read src/a.py`), as the user saw the call."""
    if record.call_id not in plan.inputs:
        return record.tool
    return call_label(record.tool, plan.inputs[record.call_id], directory)


def reason_text(skipped: SkipRow, directory: str | None) -> str:
    """Why a call was skipped, in words: `protected path (.env)`, `already pruned (sweep)`."""
    why, detail = skipped.why, skipped.detail
    if why is Skip.PINNED:
        return why.value if detail is None else f"{why.value} (id {detail})"
    if why is Skip.PRUNED:
        return f"{why.value} ({detail})"
    if why is Skip.PROTECTED_PATH:
        return f"{why.value} ({relative(str(detail), directory)})"
    if why is Skip.REFERENCED:
        return f"kept: {plural(int(detail or 0), 'earlier identical call')} point at this result"
    return str(why.value)


def _left_out(plan: SweepOutcome) -> list[tuple[CallRow, str]]:
    """Eligible calls the sweep found nothing to remove from, and why."""
    done = {d.call_id for d in plan.swept}
    return [
        (r, "failed call: its error message stays and its input is too short to shrink" if r.status == "error"
         else "nothing to remove (its output is already shorter than the placeholder)")
        for r in plan.eligible
        if r.call_id not in done
    ]


def render_text(plan: SweepOutcome) -> str:
    """The reply: what was swept (with the tokens it saves per request), then what was skipped and why.

    Paths are named relative to the session's project directory.
    """
    swept, directory = plan.swept, plan.directory
    scope = scope_text(plan)
    if not swept and not plan.skipped and not plan.eligible:
        return f"dcp sweep: no tool calls {scope}; nothing to sweep."
    tokens = sum(d.tokens_saved for d in swept)
    lines = [f"dcp sweep: pruned {plural(len(swept), 'tool call')} {scope} (~{tokens:,} tokens per request)"]
    lines += [f"  - {label(plan, d, directory)}: ~{d.tokens_saved:,} tokens" for d in swept]
    skipped = [(s.call, reason_text(s, directory)) for s in plan.skipped] + _left_out(plan)
    if skipped:
        lines.append(f"Skipped {plural(len(skipped), 'call')}:")
        lines += [f"  - {label(plan, record, directory)}: {why}" for record, why in skipped]
    kept = sum(1 for s in plan.skipped if s.why is Skip.PINNED)
    if kept:
        lines.append(f"Kept {plural(kept, 'pinned output')}; /dcp unpin <id> lets one be pruned.")
    return "\n".join(lines)
