"""Mask old outputs: once the context reached the trigger, tool outputs older than the newest ones become one line.

Once a request's estimated context (every decision so far counted as written) has reached the
trigger, in ``window`` mode masking is on for the rest of the session: at every request, every
maskable output older than the kept ones is replaced by a placeholder that names the tool, its
key argument and the size removed. (Stopping again once the decisions brought the context back
under the trigger would leave a deep batch waiting whose rewrite, everything after it, never
pays: on a recorded session 58 masks waited 121 requests.) In ``batch`` mode (the default) it is
a hysteresis instead: each request whose context reached the trigger masks down to the kept
outputs, and the context grows back to the trigger before the next batch, so what came since
stays whole.
Kept: the newest outputs up to ``keepTokens`` tokens, the outputs of the newest ``keepCalls``
calls, every output of the last ``keepTurns`` user turns, the newest read of each of the files
the agent touched last (read, edited or wrote) up to ``keepFileTokens`` tokens in all (the text
an edit replaces is nearly always copied from the newest read of its file), errors (their output
is the error message, which is never touched), protected tools (the built-in list, with `task`,
plus ``protectedTools``), protected paths and outputs the user pinned. The decisions go through
the cache scheduler like every other, so the placeholders are written in batches.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict, deque
from collections.abc import Iterable

from dcp_plugin.budget.thresholds import Thresholds
from dcp_plugin.config.protected import HARDCODED_PROTECTED_TOOLS
from dcp_plugin.config.strategies import MASK_OLD_OUTPUTS, MaskMode, MaskOldOutputsConfig, Trigger
from dcp_plugin.model.messages import output_is_cleared
from dcp_plugin.model.tokens import estimate_output_tokens
from dcp_plugin.pipeline.decisions import CallRecord, ReplaceOutput
from dcp_plugin.pipeline.labels import call_label
from dcp_plugin.pipeline.strategies.base import FinishedCall, Progress, Proposal, StrategySpec

NAME = MASK_OLD_OUTPUTS


def placeholder(label: str, tokens: int) -> str:
    """What an old output becomes: the call, the size removed, and how to get it back."""
    return f"[dcp: old output of {label} cleared ({tokens:,} tokens) - repeat the call if you need it]"


def trigger_tokens(trigger: Trigger, thresholds: Thresholds) -> int:
    """The context size, in tokens, at which masking starts for this model's window.

    A token count past the window's hard tier counts as the hard tier: the default 100,000 would
    never be reached in a 32K window, where the host compacts long before.
    """
    if isinstance(trigger, str):
        return int(getattr(thresholds, trigger))
    if isinstance(trigger, float):
        return int(trigger * thresholds.window)
    return min(trigger, thresholds.hard)


READ_TOOLS = frozenset({"read"})


class MaskOldOutputs:
    """The maskable outputs not masked yet, oldest first, with their sizes, and the files the agent works on."""

    def __init__(
        self,
        trigger: Trigger,
        keep_tokens: int,
        keep_turns: int,
        protected_tools: frozenset[str],
        keep_calls: int = 0,
        keep_file_tokens: int = 0,
        mode: MaskMode = "window",
    ) -> None:
        self.trigger = trigger
        self.mode = mode
        self.keep_tokens = keep_tokens
        self.keep_turns = keep_turns
        self.keep_calls = keep_calls
        self.keep_file_tokens = keep_file_tokens
        self.protected_tools = protected_tools
        self._queue: deque[tuple[int, int, CallRecord]] = deque()  # (seq, tokens, call)
        self._tokens = 0
        self._latest = -1  # the newest call's seq
        self._touched: OrderedDict[str, int] = OrderedDict()  # path -> seq of its newest read, least recent first
        self._tokens_of: dict[int, int] = {}  # seq of a read still in the queue -> its tokens
        self._started = False  # the context reached the trigger once

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        record = call.record
        self._latest = max(self._latest, record.seq)
        if call.path is not None and self.keep_file_tokens:
            read = self._touched.pop(call.path, -1)
            if record.tool.lower() in READ_TOOLS and record.status == "completed":
                read = max(read, record.seq)
            self._touched[call.path] = read
        if record.status != "completed" or call.protected or call.pinned or record.tool in self.protected_tools:
            return ()  # a pinned output stays, and the newest `keepTokens` are counted among the others
        output = call.output
        if output is None or output == "" or output_is_cleared(call.state):
            return ()
        entry = (record.seq, estimate_output_tokens(output), record)
        queue = self._queue
        if queue and queue[-1][0] > record.seq:
            # Finished after a newer call (parallel calls): keep the queue in conversation order.
            items = list(queue)
            bisect.insort(items, entry, key=lambda item: item[0])
            self._queue = deque(items)
        else:
            queue.append(entry)
        self._tokens += entry[1]
        if self.keep_file_tokens and record.tool.lower() in READ_TOOLS:
            self._tokens_of[record.seq] = entry[1]
        return ()

    def _working_set(self) -> set[int]:
        """The newest reads of the files touched most recently, up to ``keepFileTokens`` in all."""
        held: set[int] = set()
        budget = self.keep_file_tokens
        for read in reversed(self._touched.values()):
            tokens = self._tokens_of.get(read)
            if tokens is None:
                continue
            if tokens > budget:
                break
            budget -= tokens
            held.add(read)
        return held

    def advance(self, progress: Progress) -> Iterable[Proposal]:
        """At a request point whose context reached the trigger: every output older than the kept ones."""
        queue = self._queue
        if not progress.point or not queue or progress.thresholds is None:
            return ()
        if not self._started:
            if progress.context_tokens() < trigger_tokens(self.trigger, progress.thresholds):
                return ()
            # A window from now on: everything older than the kept outputs goes at every request.
            # A batch masks down to the kept outputs now and waits for the context to reach the trigger again.
            self._started = self.mode == "window"
        held = self._working_set()
        free = self._tokens - sum(self._tokens_of[seq] for seq in held) if held else self._tokens
        kept: list[tuple[int, int, CallRecord]] = []
        out: list[Proposal] = []
        while queue:
            seq, tokens, record = queue[0]
            if seq in held:
                kept.append(queue.popleft())
                continue
            if (
                free - tokens < self.keep_tokens
                or progress.turn - record.turn < self.keep_turns
                or self._latest - seq < self.keep_calls
            ):
                break
            queue.popleft()
            self._tokens -= tokens
            free -= tokens
            self._tokens_of.pop(seq, None)
            state = progress.state_of(record)
            if state is not None:
                label = call_label(record.tool, state.get("input"), progress.directory or None)
                out.append((record, ReplaceOutput(placeholder(label, tokens))))
        queue.extendleft(reversed(kept))
        return out


def build(config: MaskOldOutputsConfig) -> MaskOldOutputs | None:
    if not config.enabled:
        return None
    return MaskOldOutputs(
        config.trigger,
        config.keep_tokens,
        config.keep_turns,
        HARDCODED_PROTECTED_TOOLS | frozenset(config.protected_tools),
        config.keep_calls,
        config.keep_file_tokens,
        config.mode,
    )


SPEC = StrategySpec(NAME, "old output, context was filling up", MaskOldOutputsConfig, build)
