"""One session's context meter: the context now at any request point, from the stored history and the placeholders in force."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dcp_plugin.budget.calibration import ReadMessage
from dcp_plugin.budget.context_now import nothing_pruned
from dcp_plugin.budget.snapshot import BudgetTracker, ContextSnapshot
from dcp_plugin.model.refs import ModelRef
from dcp_plugin.model.tokens import DEFAULT_IMAGE_TOKENS

# Tokens the first ``n`` messages send now, placeholders included (the scheduler's running sums).
SentPrefix = Callable[[int], int]


class ContextMeter:
    """The pipeline's side of "the context now": the same figure for the nudge to the model and for every report.

    Fed each message's estimated tokens as stored (in order, as the scheduler is); the scheduler's
    sums of what the messages send now tell it what the placeholders in force take out.
    """

    def __init__(self) -> None:
        self.tracker = BudgetTracker()
        self._stored = [0]  # running sums of the messages' estimates as stored

    def reset(self) -> None:
        """The history was rewritten: start over (what calibration learned stays)."""
        self.tracker.reset()
        self._stored = [0]

    def add_message(self, tokens: int) -> None:
        self._stored.append(self._stored[-1] + tokens)

    def _pruned_before(self, sent_prefix: SentPrefix) -> Callable[[int], int]:
        def pruned_before(count: int) -> int:
            count = min(count, len(self._stored) - 1)
            return self._stored[count] - sent_prefix(count)

        return pruned_before

    def at(
        self,
        messages: Sequence[Mapping[str, Any]],
        sent_prefix: SentPrefix,
        model: ModelRef | None = None,
        image_tokens: int = DEFAULT_IMAGE_TOKENS,
        end: int | None = None,
    ) -> ContextSnapshot:
        """The context now of the first ``end`` (default: all) messages. Never raises."""
        return self.tracker.observe(
            messages,
            model.context_limit if model is not None else None,
            model.model_id if model is not None else None,
            image_tokens,
            self._pruned_before(sent_prefix),
            end,
        )

    def tokens_at(
        self,
        messages: Sequence[Mapping[str, Any]],
        sent_prefix: SentPrefix,
        image_tokens: int,
        end: int,
        rescan: bool = True,
        known: Sequence[ReadMessage] = (),
        known_from: int = 0,
    ) -> int:
        """The figure of :meth:`at` alone, for the request points of a walk (no snapshot is built).

        ``rescan=False``: ``messages`` is the list read last, unchanged since (the same walk).
        ``known``: the estimates and model ids of messages ``known_from`` on, as the walk read them (not read again).
        """
        pruned_before = self._pruned_before(sent_prefix)
        return self.tracker.tokens(messages, image_tokens, pruned_before, end, rescan, known, known_from)

    def sent(self, count: int, sent_prefix: SentPrefix, *, pruned: bool = True) -> None:
        """The request carrying the first ``count`` messages went out with the placeholders in force now.

        ``pruned=False``: it went out whole (the plugin did not prune it), so nothing was taken out of it.
        """
        self.tracker.sent(count, self._pruned_before(sent_prefix) if pruned else nothing_pruned)
