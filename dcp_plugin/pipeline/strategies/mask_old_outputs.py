"""Mask old outputs: once the context reached the trigger, tool outputs older than the newest ones become one line.

Once a request's estimated context, as it was sent (placeholders still waiting for the cache
scheduler relieve nothing), has reached the trigger, in ``window`` mode masking is on for the rest
of the session: at every request, every maskable output older than the kept ones is replaced by
a placeholder that names the tool, its key argument and the size removed. (Stopping again once the decisions brought the context back
under the trigger would leave a deep batch waiting whose rewrite, everything after it, never
pays: on a recorded session 58 masks waited 121 requests.) In ``batch`` mode (the default) it is
a hysteresis instead: each request whose context reached the trigger masks down to the kept
outputs, and the context grows back to the trigger before the next batch, so what came since
stays whole. A batch the scheduler has not written yet leaves the context where it was, so the
next request masks what has grown old since into the same batch: what it removes keeps pace with
what its rewrite would process again, and a warm session that never pauses gets to write it.
Kept: at least ``keepTokens`` tokens of outputs (with ``keepTokensOf: "files"``, the default, only
outputs that show a file's contents are held there, so older command output, searches and
listings go first: the text an edit replaces comes from reads). Masking walks from the oldest
output and passes over one whose masking would leave less than ``keepTokens`` whole, then goes on:
a large read that straddles the limit stays while smaller newer outputs go, which masks them
while they are still shallow in the cached prefix. Also kept: the outputs of the newest
``keepCalls`` calls; the outputs of the last ``keepTurns`` cycles of work (with ``keepTurnsOf:
"files"``, the default, only those that show a file): a cycle begins at each user message and,
with ``turnsEndAtChecks``, after each test run, build, commit or script run, so what the agent read
since its last checks stays whole (on recorded sessions it held most of the text the next edits
replaced) while what it read before goes; the newest read of each of the files
the agent touched last (read, edited or wrote) up to ``keepFileTokens`` tokens in all (the text
an edit replaces is nearly always copied from the newest read of its file), errors (their output
is the error message, which is never touched), protected tools (the built-in list, with `task`,
plus ``protectedTools``), protected paths and outputs the user pinned. With ``editedWhenCold``,
at a request the prompt cache is cold for (the pause before it outlived the cache: the whole
prompt is written anew at the full price anyway, so a placeholder costs no rewrite and pays at
once), the views of files the agent has edited are not held as their cycle's: what it changed
there is in its own edit inputs, which stay. The decisions go through
the cache scheduler like every other, so the placeholders are written in batches.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict, deque
from collections.abc import Iterable

from mypy_extensions import mypyc_attr

from dcp_plugin.budget.thresholds import Thresholds
from dcp_plugin.config.protected import HARDCODED_PROTECTED_TOOLS
from dcp_plugin.config.strategies import (
    MASK_OLD_OUTPUTS,
    KeepTokensOf,
    KeepTurnsOf,
    MaskMode,
    MaskOldOutputsConfig,
    Trigger,
)
from dcp_plugin.model.messages import locate, output_is_cleared
from dcp_plugin.model.tokens import estimate_output_tokens
from dcp_plugin.pipeline.decisions import CallRecord, ReplaceOutput
from dcp_plugin.pipeline.labels import call_label
from dcp_plugin.pipeline.strategies.base import FinishedCall, Progress, Proposal, StrategySpec
from dcp_plugin.pipeline.strategies.file_views import EDITS_FILE, RUNS_CHECK, SHOWS_FILE, traits

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
Entry = tuple[int, int, CallRecord]  # (seq, tokens, call)


@mypyc_attr(allow_interpreted_subclasses=True)
class MaskOldOutputs:
    """The maskable outputs not masked yet, oldest first, with their sizes, and the files the agent works on."""

    points_only = True  # it acts on the context's size: at request points only

    def __init__(
        self,
        trigger: Trigger,
        keep_tokens: int,
        keep_turns: int,
        protected_tools: frozenset[str],
        keep_calls: int = 0,
        keep_file_tokens: int = 0,
        mode: MaskMode = "window",
        keep_tokens_of: KeepTokensOf = "all",
        keep_turns_of: KeepTurnsOf = "all",
        turns_end_at_checks: bool = False,
        edited_when_cold: bool = False,
    ) -> None:
        self.trigger = trigger
        self.mode = mode
        self.keep_tokens = keep_tokens
        self.keep_turns = keep_turns
        self.keep_calls = keep_calls
        self.keep_file_tokens = keep_file_tokens
        self.keep_tokens_of = keep_tokens_of
        self.keep_turns_of = keep_turns_of
        self._views: set[int] = set()  # "files": seqs of the queued outputs that show a file
        self.turns_end_at_checks = turns_end_at_checks
        # Seqs of the checks seen (test runs, builds, commits, scripts), ascending: a call's cycle of
        # work is its user turn plus the checks made before it, whatever order the calls finished in.
        self._checks: list[int] = []
        self.protected_tools = protected_tools
        self._queue: deque[Entry] = deque()
        self._windowed: dict[int, int] = {}  # seq -> tokens of each queued output keepTokens holds
        self._tokens = 0  # their sum
        self._latest = -1  # the newest call's seq
        self._touched: OrderedDict[str, int] = OrderedDict()  # path -> seq of its newest read, least recent first
        self._tokens_of: dict[int, int] = {}  # seq of a read still in the queue -> its tokens
        self._started = False  # the context reached the trigger once
        self.edited_when_cold = edited_when_cold
        self._edited: set[str] = set()  # editedWhenCold: the paths the agent edited or wrote
        self._view_paths: dict[int, str] = {}  # editedWhenCold: seq of a queued file view -> its path
        self._trigger_of: Thresholds | None = None  # the ladder the trigger was last worked out for
        self._trigger_at = 0  # the trigger, in tokens, for that ladder

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        record = call.record
        seq, tool, path = record.seq, record.tool, call.path
        completed = record.status == "completed"
        if seq > self._latest:
            self._latest = seq
        # Whether it shows a file, edits one, runs a check: worked out once, for a completed call.
        kinds = traits(tool, call.input) if completed else 0
        if kinds & RUNS_CHECK and self.turns_end_at_checks:
            bisect.insort(self._checks, seq)  # what comes after it is a cycle of its own; its output is not
        if path is not None:
            if self.keep_file_tokens:
                read = self._touched.pop(path, -1)
                if completed and tool.lower() in READ_TOOLS:
                    read = max(read, seq)
                self._touched[path] = read
            if kinds & EDITS_FILE and self.edited_when_cold:
                self._edited.add(path)  # before the protection check: edit tools are protected
        if not completed or call.protected or call.pinned or tool in self.protected_tools:
            return ()  # a pinned output stays, and the newest `keepTokens` are counted among the others
        output = call.output
        if output is None or output == "" or output_is_cleared(call.state):
            return ()
        tokens = estimate_output_tokens(output)
        entry = (seq, tokens, record)
        view = kinds & SHOWS_FILE
        if view:
            if self.keep_turns_of == "files":
                self._views.add(seq)
            if self.edited_when_cold and path is not None:
                self._view_paths[seq] = path
        queue = self._queue
        if queue and queue[-1][0] > seq:
            # Finished after a newer call (parallel calls): keep the queue in conversation order.
            items = list(queue)
            bisect.insort(items, entry, key=lambda item: item[0])
            self._queue = deque(items)
        else:
            queue.append(entry)
        if view or self.keep_tokens_of == "all":
            self._windowed[seq] = tokens
            self._tokens += tokens
        if self.keep_file_tokens and tool.lower() in READ_TOOLS:
            self._tokens_of[seq] = tokens
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
        thresholds = progress.thresholds
        if not progress.point or not queue or thresholds is None:
            return ()
        if not self._started:
            # The trigger of the same (immutable) ladder is the same number: worked out once per ladder.
            if thresholds is not self._trigger_of:
                self._trigger_at = trigger_tokens(self.trigger, thresholds)
                self._trigger_of = thresholds
            if progress.context_tokens() < self._trigger_at:
                return ()
            # A window from now on: everything older than the kept outputs goes at every request.
            # A batch masks down to the kept outputs now and waits for the context to reach the trigger again.
            self._started = self.mode == "window"
        # Nothing is touched without keepFileTokens: no working set to hold then.
        held = self._working_set() if self._touched else None
        free = self._tokens - sum(self._tokens_of[seq] for seq in held) if held else self._tokens
        kept: list[Entry] = []
        out: list[Proposal] = []
        checks = self._checks
        n_checks = len(checks)
        current = progress.turn + n_checks
        keep_turns, keep_calls, keep_tokens = self.keep_turns, self.keep_calls, self.keep_tokens
        turns_of_all = self.keep_turns_of == "all"
        latest = self._latest
        views, windowed_tokens, view_paths, tokens_of = self._views, self._windowed, self._view_paths, self._tokens_of
        # A view of an edited file is not held as its cycle's at a cold request. Whether the next
        # request is cold is asked only when such a view is met past the newest ``keepCalls`` (the
        # answer depends on nothing this loop changes), and at most once.
        edited = self._edited if self.edited_when_cold else None
        cold: bool | None = None
        # Checks arrive in conversation order nearly always: a call newer than every check is in
        # as many cycles as there are checks, without a search.
        newest_check = checks[-1] if checks else -1
        directory = progress.directory or None
        messages = progress.messages
        while queue:
            seq, tokens, record = queue[0]
            if latest - seq < keep_calls:
                break  # the newest calls stay whatever their cycle: nothing past them is asked
            recent = current - (record.turn + (n_checks if seq > newest_check else bisect.bisect_left(checks, seq))) < keep_turns
            if recent and edited and view_paths.get(seq) in edited:
                if cold is None:
                    cold = progress.next_cold()
                if cold:
                    recent = False  # a view of an edited file, at a cold request: not held as its cycle's
            if recent and turns_of_all:
                break
            windowed = seq in windowed_tokens
            if (held and seq in held) or (recent and seq in views) or (windowed and free - tokens < keep_tokens):
                # Passed over, not a stop: newer outputs may still go while keepTokens stay whole.
                kept.append(queue.popleft())
                continue
            if windowed:
                free -= tokens
                self._tokens -= tokens
                del windowed_tokens[seq]
            queue.popleft()
            tokens_of.pop(seq, None)
            views.discard(seq)
            view_paths.pop(seq, None)
            if record.output_kept:
                # The arbiter would refuse this proposal: it is neither named nor made.
                continue
            state = locate(messages, record)
            if state is not None:
                label = call_label(record.tool, state.get("input"), directory)
                out.append((record, ReplaceOutput(placeholder(label, tokens))))
        if kept:
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
        config.keep_tokens_of,
        config.keep_turns_of,
        config.turns_end_at_checks,
        config.edited_when_cold,
    )


SPEC = StrategySpec(NAME, "old output, context was filling up", MaskOldOutputsConfig, build)
