"""Mask old outputs: under context pressure, completed tool outputs older than the newest ones become one line.

Once a request's estimated context (every decision so far counted as written) reaches the
trigger, every maskable output older than the kept ones is replaced by a placeholder that
names the tool, its key argument and the size removed. Kept: the newest outputs up to
``keepTokens`` tokens, every output of the last ``keepTurns`` user turns, errors (their output
is the error message, which is never touched), protected tools (the built-in list, with `task`,
plus ``protectedTools``), protected paths and outputs the user pinned. The decisions go through the cache scheduler
like every other, so the placeholders are written in batches.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Iterable

from dcp_plugin.budget.thresholds import Thresholds
from dcp_plugin.config.protected import HARDCODED_PROTECTED_TOOLS
from dcp_plugin.config.strategies import MASK_OLD_OUTPUTS, MaskOldOutputsConfig, Trigger
from dcp_plugin.model.messages import output_is_cleared
from dcp_plugin.model.tokens import estimate_json_tokens
from dcp_plugin.pipeline.decisions import CallRecord, ReplaceOutput
from dcp_plugin.pipeline.labels import call_label
from dcp_plugin.pipeline.strategies.base import FinishedCall, Progress, Proposal, StrategySpec

NAME = MASK_OLD_OUTPUTS


def placeholder(label: str, tokens: int) -> str:
    """What an old output becomes: the call, the size removed, and how to get it back."""
    return f"[dcp: old output of {label} cleared ({tokens:,} tokens) - repeat the call if you need it]"


def trigger_tokens(trigger: Trigger, thresholds: Thresholds) -> int:
    """The context size, in tokens, at which masking starts for this model's window."""
    if isinstance(trigger, str):
        return int(getattr(thresholds, trigger))
    if isinstance(trigger, float):
        return int(trigger * thresholds.window)
    return trigger


class MaskOldOutputs:
    """The maskable outputs not masked yet, oldest first, with their sizes."""

    def __init__(self, trigger: Trigger, keep_tokens: int, keep_turns: int, protected_tools: frozenset[str]) -> None:
        self.trigger = trigger
        self.keep_tokens = keep_tokens
        self.keep_turns = keep_turns
        self.protected_tools = protected_tools
        self._queue: deque[tuple[int, int, CallRecord]] = deque()  # (seq, tokens, call)
        self._tokens = 0

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        record = call.record
        if record.status != "completed" or call.protected or call.pinned or record.tool in self.protected_tools:
            return ()  # a pinned output stays, and the newest `keepTokens` are counted among the others
        output = call.output
        if output is None or output == "" or output_is_cleared(call.state):
            return ()
        entry = (record.seq, estimate_json_tokens(output), record)
        queue = self._queue
        if queue and queue[-1][0] > record.seq:
            # Finished after a newer call (parallel calls): keep the queue in conversation order.
            items = list(queue)
            bisect.insort(items, entry, key=lambda item: item[0])
            self._queue = deque(items)
        else:
            queue.append(entry)
        self._tokens += entry[1]
        return ()

    def advance(self, progress: Progress) -> Iterable[Proposal]:
        """At a request point whose context reached the trigger: every output older than the kept ones."""
        queue = self._queue
        if not progress.point or not queue or progress.thresholds is None:
            return ()
        if progress.context_tokens() < trigger_tokens(self.trigger, progress.thresholds):
            return ()
        out: list[Proposal] = []
        while queue:
            seq, tokens, record = queue[0]
            if self._tokens - tokens < self.keep_tokens or progress.turn - record.turn < self.keep_turns:
                break
            queue.popleft()
            self._tokens -= tokens
            state = progress.state_of(record)
            if state is not None:
                label = call_label(record.tool, state.get("input"), progress.directory or None)
                out.append((record, ReplaceOutput(placeholder(label, tokens))))
        return out


def build(config: MaskOldOutputsConfig) -> MaskOldOutputs | None:
    if not config.enabled:
        return None
    return MaskOldOutputs(
        config.trigger,
        config.keep_tokens,
        config.keep_turns,
        HARDCODED_PROTECTED_TOOLS | frozenset(config.protected_tools),
    )


SPEC = StrategySpec(NAME, "old output, context was filling up", MaskOldOutputsConfig, build)
