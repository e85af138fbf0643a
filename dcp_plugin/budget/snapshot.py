"""Per-session context snapshot after every transform, kept up to date incrementally."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mypy_extensions import mypyc_attr

from dcp_plugin.budget.calibration import (
    Calibration,
    Calibrator,
    EstimatorState,
    Prediction,
    ReadMessage,
    advance_run,
    predict,
)
from dcp_plugin.budget.context_now import PrunedBefore, SentPrunes, nothing_pruned, pruned_since_report
from dcp_plugin.budget.limits import LimitSource, resolve_context_limit
from dcp_plugin.budget.severity import Severity, ladder_severity, severity, usage_ratio
from dcp_plugin.budget.thresholds import Thresholds, Tier, compute_thresholds, tier
from dcp_plugin.budget.tips import TipId, context_tip
from dcp_plugin.model.history import HistoryMark
from dcp_plugin.model.tokens import DEFAULT_IMAGE_TOKENS

log = logging.getLogger(__name__)

SNAPSHOT_VERSION = 1


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(frozen=True, slots=True)
class ContextSnapshot:
    """How full the context window is now: what the next request carries.

    ``estimated_input_tokens`` is "the context now": anchored on the newest
    provider-reported prompt when there is one, less ``pruned_since`` (what prunes made
    after that request remove from it), plus the calibrated estimate of what came after;
    an estimate of the whole history otherwise. ``ratio``, ``severity``, ``tier`` and
    ``tip`` all derive from it.
    """

    estimated_input_tokens: int
    provider_reported_tokens: int | None
    context_limit: int
    ratio: float
    severity: Severity
    tier: Tier | None
    thresholds: Thresholds | None
    tip: TipId | None
    limit_source: LimitSource = "default"
    model_id: str | None = None
    estimate_path: str = "history"
    calibrated: bool = False
    text_chars_per_token: float = 4.0
    pruned_since: int = 0
    # Tokens the prompt carries beyond its messages (system prompt, tool definitions), as learned
    # from the first reported prompt: steady whatever is pruned; None without a report.
    system_tokens: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": SNAPSHOT_VERSION,
            "estimated_input_tokens": self.estimated_input_tokens,
            "provider_reported_tokens": self.provider_reported_tokens,
            "context_limit": self.context_limit,
            "ratio": self.ratio,
            "severity": self.severity,
            "tier": self.tier,
            "thresholds": None if self.thresholds is None else self.thresholds.to_dict(),
            "tip": self.tip,
            "limit_source": self.limit_source,
            "model_id": self.model_id,
            "estimate_path": self.estimate_path,
            "calibrated": self.calibrated,
            "text_chars_per_token": self.text_chars_per_token,
            "pruned_since": self.pruned_since,
            "system_tokens": self.system_tokens,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ContextSnapshot:
        """Rebuild a saved snapshot; raises ValueError naming what is wrong."""
        if not isinstance(data, Mapping):
            raise ValueError(f"context snapshot: expected an object, got {type(data).__name__}")
        try:
            thresholds = data.get("thresholds")
            reported = data.get("provider_reported_tokens")
            return cls(
                estimated_input_tokens=int(data["estimated_input_tokens"]),
                provider_reported_tokens=None if reported is None else int(reported),
                context_limit=int(data["context_limit"]),
                ratio=float(data["ratio"]),
                severity=data["severity"],
                tier=data.get("tier"),
                thresholds=None if thresholds is None else Thresholds.from_dict(thresholds),
                tip=data.get("tip"),
                limit_source=data.get("limit_source", "default"),
                model_id=data.get("model_id"),
                estimate_path=str(data.get("estimate_path", "history")),
                calibrated=bool(data.get("calibrated", False)),
                text_chars_per_token=float(data.get("text_chars_per_token", 4.0)),
                pruned_since=int(data.get("pruned_since", 0)),
                system_tokens=None if data.get("system_tokens") is None else int(data["system_tokens"]),
            )
        except KeyError as exc:
            raise ValueError(f"context snapshot: missing key {exc.args[0]!r}") from exc
        except (TypeError, ValueError) as exc:
            raise ValueError(f"context snapshot: {exc}") from exc


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(frozen=True, slots=True)
class EstimateBasis:
    """How a snapshot's figure was estimated: the path taken, the calibration, what placeholders took off."""

    path: str = "history"  # "reported": from the provider's count of the last answered request
    calibrated: bool = False
    text_chars_per_token: float = 4.0
    pruned_since: int = 0  # tokens placeholders removed after the request the provider counted
    system_tokens: int | None = None  # the prompt outside the messages, when it is known


def build_snapshot(
    tokens: int,
    reported: int | None,
    limit: int,
    limit_source: LimitSource = "default",
    model_id: str | None = None,
    basis: EstimateBasis = EstimateBasis(),
) -> ContextSnapshot:
    """A snapshot from its numbers: ratio, severity, tier, thresholds and tip follow."""
    system_tokens = basis.system_tokens
    thresholds = compute_thresholds(limit) if limit > 0 else None
    ratio = usage_ratio(tokens, limit)
    return ContextSnapshot(
        estimated_input_tokens=tokens,
        provider_reported_tokens=reported,
        context_limit=limit,
        ratio=ratio,
        severity=severity(ratio) if thresholds is None else ladder_severity(tokens, thresholds),
        tier=None if thresholds is None else tier(tokens, thresholds),
        thresholds=thresholds,
        tip=context_tip(tokens, thresholds, ratio),
        limit_source=limit_source,
        model_id=model_id,
        estimate_path=basis.path,
        calibrated=basis.calibrated,
        text_chars_per_token=basis.text_chars_per_token,
        pruned_since=basis.pruned_since,
        system_tokens=None if system_tokens is None else max(0, min(system_tokens, tokens)),
    )


@mypyc_attr(allow_interpreted_subclasses=True)
class BudgetTracker:
    """Keeps one session's snapshot current; call :meth:`observe` after every transform.

    The host hands the same growing message list on each request, so only messages
    not seen before are read (plus the newest seen one, which may have grown). If
    the list got shorter or an already seen message changed id, the history was
    rewritten and the tracker starts over on its own; callers that know of a
    rewrite (a compaction, an undo) call :meth:`reset`. What calibration learned
    survives both.
    """

    def __init__(self, calibrator: Calibrator | None = None) -> None:
        self.calibrator = calibrator if calibrator is not None else Calibrator()
        self.last: ContextSnapshot | None = None
        self._state = EstimatorState()
        self._before_last = EstimatorState()
        self._mark = HistoryMark()
        self._image_tokens = DEFAULT_IMAGE_TOKENS
        self._sent = SentPrunes()

    @property
    def seen(self) -> int:
        """How many messages of the current history have been read."""
        return self._state.count

    def reset(self) -> None:
        """Forget the history read so far (it was rewritten); keep the calibration."""
        self._state = EstimatorState()
        self._before_last = EstimatorState()
        self._mark = HistoryMark()
        self._sent.clear()

    def _read(
        self,
        messages: Sequence[Mapping[str, Any]],
        image_tokens: int,
        end: int,
        rescan: bool = True,
        known: Sequence[ReadMessage] = (),
        known_from: int = 0,
    ) -> None:
        # rescan=False: the list read last, unchanged since, so it continues what was marked.
        if image_tokens != self._image_tokens or (rescan and not self._mark.continues(messages)):
            self.reset()
            self._image_tokens = image_tokens
        elif end < self._before_last.count:
            # An earlier request point than the one read up to (a command read past it): read
            # the history again up to ``end``; what was sent and what was learned stay.
            self._state = self._before_last = EstimatorState()
            self._mark = HistoryMark()
        if rescan or end < self._state.count:
            # Re-read the newest seen message: it may have gained parts or usage since.
            state = self._before_last if self._state.count else self._state
            before_last = state
        else:
            # The same list, unchanged since the last read (one walk of the implied history): the
            # newest message read is as it was, and reading it again gives the same state.
            state, before_last = self._state, self._before_last
        if end > state.count:
            before_last, state = advance_run(state, messages, end, self.calibrator, image_tokens, known, known_from)
        self._before_last = before_last
        self._state = state
        self._mark.advance(messages, end, same_list=not rescan)

    def sent(self, count: int, pruned_before: PrunedBefore) -> None:
        """A request carrying ``count`` messages went out with the placeholders in force now."""
        self._sent.sent(count, pruned_before(count))

    def observe(
        self,
        messages: Sequence[Mapping[str, Any]],
        model_limit: int | None = None,
        model_id: str | None = None,
        image_tokens: int = DEFAULT_IMAGE_TOKENS,
        pruned_before: PrunedBefore = nothing_pruned,
        end: int | None = None,
    ) -> ContextSnapshot:
        """The context now of the first ``end`` (default: all) of ``messages``, as stored (unpruned). Never raises.

        ``pruned_before(n)``: the tokens the placeholders in force take out of the first ``n`` messages.
        """
        count = len(messages) if end is None else end
        try:
            self._read(messages, image_tokens, count)
            return self._snapshot(model_limit, model_id, pruned_before, count)
        except Exception:  # noqa: BLE001 - the host must keep working whatever happens here
            log.exception("context budget: could not update the snapshot; starting over")
        try:
            self.reset()
            self._read(messages, image_tokens, count)
            return self._snapshot(model_limit, model_id, pruned_before, count)
        except Exception:  # noqa: BLE001
            log.exception("context budget: snapshot unavailable for this request")
            fallback = self.last or build_snapshot(0, None, 0)
            return fallback

    def tokens(
        self,
        messages: Sequence[Mapping[str, Any]],
        image_tokens: int,
        pruned_before: PrunedBefore,
        end: int,
        rescan: bool = True,
        known: Sequence[ReadMessage] = (),
        known_from: int = 0,
    ) -> int:
        """Only the figure of :meth:`observe` (no snapshot is built or kept): the estimated input tokens.

        ``known``: the estimates and model ids of messages ``known_from`` on, read by the caller
        in this very list (unchanged since): they are not estimated again.
        """
        try:
            self._read(messages, image_tokens, end, rescan, known, known_from)
            return self._tokens(pruned_before, end)[0]
        except Exception:  # noqa: BLE001 - the path that never raises decides
            return self.observe(messages, None, None, image_tokens, pruned_before, end).estimated_input_tokens

    def _tokens(self, pruned_before: PrunedBefore, count: int) -> tuple[int, Prediction, Calibration, int]:
        """(the context now, the prediction it starts from, the calibration used, the tokens pruned since)."""
        prediction = predict(self._state, self.calibrator)
        calibration = self.calibrator.by_model.get(self._state.anchor_model or "") or self.calibrator.active()
        anchor = self._state.anchor_index if prediction.path == "reported" else None
        removed = pruned_since_report(anchor, count, pruned_before, self._sent)
        # Placeholders are counted at the fixed ratios of tool content: calibrate them like the tail.
        removed = calibration.scale_json(removed) if removed else 0
        return max(0, prediction.tokens - removed), prediction, calibration, removed

    def _snapshot(
        self, model_limit: int | None, model_id: str | None, pruned_before: PrunedBefore, count: int
    ) -> ContextSnapshot:
        model = model_id or self._state.anchor_model
        limit, source = resolve_context_limit(model, model_limit)
        tokens, prediction, calibration, removed = self._tokens(pruned_before, count)
        snap = build_snapshot(
            tokens,
            prediction.reported_prompt,
            limit,
            source,
            model,
            EstimateBasis(
                prediction.path,
                prediction.calibrated,
                round(calibration.text_chars_per_token, 3),
                removed,
                calibration.overhead if prediction.path == "reported" else None,
            ),
        )
        self.last = snap
        return snap
