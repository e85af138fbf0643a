"""The loop guard: a cooldown after each prune by the model, a pause after repeated refusals, one restore per turn.

A model that starts managing its context can get stuck doing only that (one such loop made
20+ prunes in a row). The guard reads nothing but the history: the step (assistant message)
and user turn of each call of the tools and whether it was accepted, so a restart or a replay
arrives at the same state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dcp_plugin.config.model import ToolsConfig


@dataclass(slots=True)
class LoopGuard:
    """Where the session stands: the step of the latest prune, refusals in a row, and a pause."""

    last_prune_step: int | None = None
    failures: int = 0
    failures_turn: int = 0  # the user turn the refusals were counted in: a new turn starts over
    paused_turn: int | None = None  # refusals reached the limit in this turn: paused until the next
    # (call id, part) -> the user turn it was last restored in: each restore adds the output (or that
    # part of it) to the context again, so a model looping on restore (30 of one id were accepted)
    # gets each part once per turn.
    restored: dict[tuple[str, int], int] = field(default_factory=dict)

    def cooldown_left(self, config: ToolsConfig, step: int) -> int:
        """How many more steps discard and extract wait at ``step`` (0: they may prune)."""
        last = self.last_prune_step
        if last is None or step <= last:
            # Calls in the same step as the prune were made before its result was seen.
            return 0
        return max(0, last + config.cooldown_steps - step + 1)

    def paused(self, turn: int) -> bool:
        """Whether discard and extract refuse (and no list is shown) at this user turn."""
        return self.paused_turn is not None and self.paused_turn == turn

    def restored_this_turn(self, call_id: str, turn: int, part: int = 1) -> bool:
        """Whether the output of ``call_id`` (that part of it) was already restored in this user turn."""
        return self.restored.get((call_id, part)) == turn

    def record(
        self,
        config: ToolsConfig,
        accepted: bool,
        pruned: bool,
        step: int,
        turn: int,
        restored: Sequence[str] = (),
        part: int = 1,
    ) -> None:
        """Take in one judged call, in conversation order (``restored``: the call ids whose ``part`` it restored)."""
        for call_id in restored:
            self.restored[(call_id, part)] = turn
        if turn != self.failures_turn:
            self.failures_turn = turn
            self.failures = 0
        if accepted:
            self.failures = 0
            if pruned:
                self.last_prune_step = step
            return
        self.failures += 1
        if self.failures >= config.max_failures:
            self.paused_turn = turn
