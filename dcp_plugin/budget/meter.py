"""One session's context meter: the context now at any request point, from the stored history and the placeholders in force."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mypy_extensions import mypyc_attr

from dcp_plugin.budget.calibration import ReadMessage
from dcp_plugin.budget.context_now import nothing_pruned
from dcp_plugin.budget.snapshot import BudgetTracker, ContextSnapshot
from dcp_plugin.model.refs import ModelRef
from dcp_plugin.model.tokens import DEFAULT_IMAGE_TOKENS

# Tokens the first ``n`` messages send now, placeholders included (the scheduler's running sums).
SentPrefix = Callable[[int], int]


@mypyc_attr(allow_interpreted_subclasses=True)
class ContextMeter:
    """The pipeline's side of "the context now": the same figure for the nudge to the model and for every report.

    Fed each message's estimated tokens as stored (in order, as the scheduler is); the scheduler's
    sums of what the messages send now tell it what the placeholders in force take out.
    """

    def __init__(self) -> None:
        self.tracker = BudgetTracker()
        self._stored = [0]  # running sums of the messages' estimates as stored
        # The request point of a walk scheduled last, whose figure is worked out only when asked
        # (see owe): (messages, sent_prefix, image_tokens, known, known_from), with its end and figure.
        self._owed: tuple[Sequence[Mapping[str, Any]], SentPrefix, int, Sequence[ReadMessage], int] | None = None
        self._owed_end = 0
        self._figure: int | None = None

    def reset(self) -> None:
        """The history was rewritten: start over (what calibration learned stays)."""
        self.tracker.reset()
        self._stored = [0]
        self._owed, self._figure = None, None

    def add_message(self, tokens: int) -> None:
        """The next message's estimated tokens, as stored."""
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
        self.settle()
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
        self.settle()
        pruned_before = self._pruned_before(sent_prefix)
        return self.tracker.tokens(messages, image_tokens, pruned_before, end, rescan, known, known_from)

    def owe(
        self,
        messages: Sequence[Mapping[str, Any]],
        sent_prefix: SentPrefix,
        image_tokens: int,
        end: int,
        rescan: bool,
        known: Sequence[ReadMessage] = (),
        known_from: int = 0,
    ) -> None:
        """A walk schedules the request holding the first ``end`` messages: its :meth:`tokens_at` figure, when asked.

        Most request points of a first sight never ask (see :meth:`owed_tokens`): the reads of the
        points not asked are made in one go when a later point asks, or at :meth:`settle`, which
        leaves the tracker as reading at every point would. Arguments as for :meth:`tokens_at`.
        """
        figure = None
        if rescan:
            # A walk's first point: worked out now, not owed. A rescan may start the tracker over, which
            # empties the record of what each request sent took out (filled again from this point on),
            # and where it reads from depends on how far a command read since the last walk.
            self.settle()
            pruned_before = self._pruned_before(sent_prefix)
            figure = self.tracker.tokens(messages, image_tokens, pruned_before, end, True, known, known_from)
        self._owed = (messages, sent_prefix, image_tokens, known, known_from)
        self._owed_end, self._figure = end, figure

    def owed_tokens(self) -> int:
        """The figure at the request point owed last (see :meth:`owe`), as it was there.

        Asked before the request's placeholders are written; asked again, the first answer stands
        (what is written after it, a prunable list, does not change the figure the request was scheduled by).
        """
        figure = self._figure
        if figure is None:
            owed = self._owed
            if owed is None:
                raise LookupError("no request point is owed a figure")
            messages, sent_prefix, image_tokens, known, known_from = owed
            pruned_before, end = self._pruned_before(sent_prefix), self._owed_end
            figure = self.tracker.tokens(messages, image_tokens, pruned_before, end, False, known, known_from)
            self._figure = figure
        return figure

    def owed_reaches(self, tokens: int) -> bool:
        """Whether the figure at the request point owed last (see :meth:`owed_tokens`) reached ``tokens``."""
        return self.owed_tokens() >= tokens

    def settle(self) -> None:
        """Make the reads owed (see :meth:`owe`): the tracker ends where the last owed point left it."""
        owed = self._owed
        if owed is None:
            return
        self._owed = self._figure = None
        messages, sent_prefix, image_tokens, known, known_from = owed
        # The list is the one walked, unchanged since the points were owed: a read without a rescan
        # reads the same messages in the same order as one read per point.
        end = self._owed_end
        if self.tracker.seen < end:
            # The figure there is not needed: worked out all the same, once a walk, as asking it reads.
            self.tracker.tokens(messages, image_tokens, self._pruned_before(sent_prefix), end, False, known, known_from)

    def sent(self, count: int, sent_prefix: SentPrefix, *, pruned: bool = True) -> None:
        """The request carrying the first ``count`` messages went out with the placeholders in force now.

        ``pruned=False``: it went out whole (the plugin did not prune it), so nothing was taken out of it.
        """
        self.tracker.sent(count, self._pruned_before(sent_prefix) if pruned else nothing_pruned)
