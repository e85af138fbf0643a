"""Per-session calibration of the token estimate from provider-reported usage, and the prompt predictor."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from dcp_plugin.model.messages import info_of, is_mapping
from dcp_plugin.model.refs import model_fields
from dcp_plugin.model.tokens import (
    CHARS_PER_TOKEN_TEXT,
    DEFAULT_IMAGE_TOKENS,
    OUTPUT_TOKENS_PER_CHAR,
    ZERO,
    ContentEstimate,
    ReportedUsage,
    Split,
    estimate_message_split,
    estimate_of,
    next_prompt_tokens,
    reported_usage,
)

# The fixed ratios act like one observation of this many tokens on each axis, so a
# handful of small steps cannot swing the fit far from the fixed ratios.
PRIOR_TOKENS = 300
MIN_SCALE = 0.25
MAX_SCALE = 4.0
# Steps whose new content is this small say more about noise than about the tokenizer.
MIN_OBSERVATION_TOKENS = 32
# An observed tokens-per-estimated-token outside this range means the history changed
# between the two requests (pruning, a host-side rewrite), not that the tokenizer did.
PLAUSIBLE_SCALE = (0.2, 5.0)

PredictionPath = Literal["reported", "history"]


@dataclass
class Calibration:
    """What one session has learned about one model's tokenizer and fixed overhead.

    The fit is a ridge regression, pulled towards the fixed ratios, of
    ``reported new tokens ≈ a·text_estimate + b·json_estimate``, where the
    reported new tokens of a step are its prompt minus the previous step's prompt
    and output. ``a`` and ``b`` are multipliers on the fixed-ratio estimates, so the
    learned characters per token are 4/a for text and 3/b for tool outputs (3.5/b for tool inputs).
    """

    model_id: str | None = None
    stt: float = 0.0
    sjj: float = 0.0
    stj: float = 0.0
    str_: float = 0.0
    sjr: float = 0.0
    observations: int = 0
    first_prompt: int | None = None
    first_history: ContentEstimate = ZERO
    first_carried: int = 0
    # The fit, with the observation count it was solved at: every request point of a walk asks for
    # it, and the sums change only with an observation.
    _fit: tuple[int, tuple[float, float]] | None = field(default=None, init=False, repr=False, compare=False)

    def observe_step(self, new_tokens: int, new: ContentEstimate) -> bool:
        """Record that content estimated as ``new`` cost ``new_tokens`` reported tokens."""
        chars_based = new.text + new.json
        target = new_tokens - new.media
        if chars_based < MIN_OBSERVATION_TOKENS or target <= 0:
            return False
        if not PLAUSIBLE_SCALE[0] <= target / chars_based <= PLAUSIBLE_SCALE[1]:
            return False
        t, j, r = float(new.text), float(new.json), float(target)
        self.stt += t * t
        self.sjj += j * j
        self.stj += t * j
        self.str_ += t * r
        self.sjr += j * r
        self.observations += 1
        return True

    def observe_first(self, prompt: int, history: ContentEstimate, carried: int) -> None:
        """Record the first reported prompt and what preceded it, for the fixed overhead."""
        if self.first_prompt is None:
            self.first_prompt = prompt
            self.first_history = history
            self.first_carried = carried

    @property
    def calibrated(self) -> bool:
        return self.observations > 0

    def scales(self) -> tuple[float, float]:
        """Multipliers (text, json) on the fixed-ratio estimates; (1, 1) until there is data."""
        observations = self.observations
        if not observations:
            return 1.0, 1.0
        fit = self._fit
        if fit is not None and fit[0] == observations:
            return fit[1]
        solved = self._solve()
        self._fit = (observations, solved)
        return solved

    def _solve(self) -> tuple[float, float]:
        lam = float(PRIOR_TOKENS * PRIOR_TOKENS)
        a11, a12, a22 = self.stt + lam, self.stj, self.sjj + lam
        b1, b2 = self.str_ + lam, self.sjr + lam
        det = a11 * a22 - a12 * a12
        if det <= 0 or not math.isfinite(det):
            return 1.0, 1.0
        a = (b1 * a22 - a12 * b2) / det
        b = (a11 * b2 - a12 * b1) / det
        return _clamp(a), _clamp(b)

    def scale(self, estimate: ContentEstimate) -> int:
        """Calibrated tokens of content given its fixed-ratio estimate (media is not rescaled)."""
        a, b = self.scales()
        return math.ceil(a * estimate.text + b * estimate.json) + estimate.media

    def scale_json(self, tokens: int) -> int:
        """:meth:`scale` of ``ContentEstimate(json=tokens)``: no text (0.0 added changes no float) and no media."""
        return math.ceil(self.scales()[1] * tokens)

    @property
    def overhead(self) -> int:
        """Tokens a prompt carries beyond its messages (system prompt, tool definitions)."""
        if self.first_prompt is None:
            return 0
        return max(0, self.first_prompt - self.scale(self.first_history) - self.first_carried)

    @property
    def text_chars_per_token(self) -> float:
        return CHARS_PER_TOKEN_TEXT / self.scales()[0]

    @property
    def output_chars_per_token(self) -> float:
        """Learned characters per token of tool outputs (the bulk of the second axis)."""
        num, den = OUTPUT_TOKENS_PER_CHAR
        return den / num / self.scales()[1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model_id": self.model_id,
            "sums": [self.stt, self.sjj, self.stj, self.str_, self.sjr],
            "observations": self.observations,
            "first_prompt": self.first_prompt,
            "first_history": list(self.first_history),
            "first_carried": self.first_carried,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        try:
            stt, sjj, stj, str_, sjr = (float(x) for x in data["sums"])
            first = data.get("first_prompt")
            return cls(
                model_id=data.get("model_id"),
                stt=stt, sjj=sjj, stj=stj, str_=str_, sjr=sjr,
                observations=int(data["observations"]),
                first_prompt=None if first is None else int(first),
                first_history=ContentEstimate(*(int(x) for x in data.get("first_history") or (0, 0, 0))),
                first_carried=int(data.get("first_carried") or 0),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"calibration: malformed saved state ({exc})") from exc


def _clamp(value: float) -> float:
    """``value`` within [MIN_SCALE, MAX_SCALE]; 1.0 for what is not a finite number."""
    if MIN_SCALE <= value <= MAX_SCALE:  # the common case, decided first: solved at every observation
        return value
    if not math.isfinite(value):
        return 1.0
    return MIN_SCALE if value < MIN_SCALE else MAX_SCALE


@dataclass
class Calibrator:
    """One Calibration per model a session has used; a model switch starts a fresh fit."""

    by_model: dict[str, Calibration] = field(default_factory=dict)
    current: str = ""
    # Keys of steps already learned from, so replaying a history (after a reset, or
    # the tracker re-reading its newest message) teaches each step once.
    learned: set[str] = field(default_factory=set)

    def for_model(self, model_id: str | None) -> Calibration:
        key = model_id or ""
        self.current = key
        if key not in self.by_model:
            self.by_model[key] = Calibration(model_id=model_id)
        return self.by_model[key]

    def active(self) -> Calibration:
        return self.by_model.get(self.current) or Calibration()

    def to_dict(self) -> dict[str, Any]:
        return {
            "current": self.current,
            "models": [c.to_dict() for c in self.by_model.values()],
            "learned": sorted(self.learned),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibrator:
        try:
            models = [Calibration.from_dict(m) for m in data.get("models") or ()]
        except (TypeError, AttributeError) as exc:
            raise ValueError(f"calibrator: malformed saved state ({exc})") from exc
        learned = {str(k) for k in data.get("learned") or ()}
        return cls({m.model_id or "": m for m in models}, str(data.get("current") or ""), learned)


# Not frozen: built for every message of a first sight, where a frozen dataclass pays an
# object.__setattr__ per field; nothing changes one once built.
@dataclass(slots=True)
class EstimatorState:
    """Running sums over a message list, enough to predict the next prompt in O(1).

    ``anchor`` is the newest step with reported usage; ``tail`` the fixed-ratio
    estimate of everything that reached the conversation after that step's prompt
    was read (its tool results and all later messages). The ``history_*`` sums serve
    the path without any report: incoming content and model output as characters,
    except for steps that reported their output, which count with those tokens.
    """

    anchor: ReportedUsage | None = None
    anchor_model: str | None = None
    anchor_index: int | None = None  # the anchor's position in the message list
    tail: ContentEstimate = ZERO
    history: ContentEstimate = ZERO
    history_reported_model: ContentEstimate = ZERO
    history_reported_carried: int = 0
    count: int = 0


# Not frozen: built for every request of a first sight, where a frozen dataclass pays an
# object.__setattr__ per field; nothing changes one once built.
@dataclass(slots=True)
class Prediction:
    tokens: int
    reported_prompt: int | None
    path: PredictionPath
    calibrated: bool


def message_key(message: Mapping[str, Any], index: int) -> str:
    """A message's id, or its position when it has none."""
    # is_mapping's dict case decided here: asked for every reported step of a history.
    info = message.get("info") if type(message) is dict or is_mapping(message) else None
    mid = info.get("id") if type(info) is dict or is_mapping(info) else None
    return mid if isinstance(mid, str) and mid else f"#{index}"


def _model_of(message: Mapping[str, Any]) -> str | None:
    named = model_fields(info_of(message))
    return named[1] if named is not None else None


# One message as a walk of the history read it: its estimate, the model its info names, and the
# usage it reports (:func:`reported_usage`; None: not known, read from the message when needed).
ReadMessage = tuple[Split, str | None, ReportedUsage | None]


def advance(
    state: EstimatorState,
    message: Mapping[str, Any],
    calibrator: Calibrator | None,
    image_tokens: int = DEFAULT_IMAGE_TOKENS,
    read: ReadMessage | None = None,
) -> EstimatorState:
    """The state after one more message; teaches ``calibrator`` when the message reports usage.

    ``read``: the message's :func:`estimate_message_split`, model id and usage, when the caller has them already.
    """
    known = (read,) if read is not None else ()
    return advance_run(state, (message,), state.count + 1, calibrator, image_tokens, known, state.count, state.count)[1]


def advance_run(
    state: EstimatorState,
    messages: Sequence[object],
    end: int,
    calibrator: Calibrator | None,
    image_tokens: int = DEFAULT_IMAGE_TOKENS,
    known: Sequence[ReadMessage] = (),
    known_from: int = 0,
    first: int = 0,
) -> tuple[EstimatorState, EstimatorState]:
    """The states before and after the last message from position ``state.count`` up to ``end`` (both ``state`` when none).

    The message at position ``i`` is ``messages[i - first]``; ``known[i - known_from]``, when there,
    is what the caller read of it already (:data:`ReadMessage`). Each message with usage teaches
    ``calibrator``, as :func:`advance` one at a time would.
    """
    count = state.count
    if end <= count:
        return state, state
    # The sums run in locals, and states are built for the last two positions only: a first sight
    # reads every message of its history here, where a state per message cost three objects each.
    anchor, anchor_model, anchor_index = state.anchor, state.anchor_model, state.anchor_index
    tail_text, tail_json, tail_media = state.tail
    history_text, history_json, history_media = state.history
    model_text, model_json, model_media = state.history_reported_model
    carried = state.history_reported_carried
    before = state
    last = end - 1
    n_known = len(known)
    for index in range(count, end):
        if index == last:
            tail, history = (tail_text, tail_json, tail_media), (history_text, history_json, history_media)
            before = _state(anchor, anchor_model, anchor_index, tail, history, (model_text, model_json, model_media), carried, index)
        message = messages[index - first]
        if type(message) is not dict and not is_mapping(message):
            continue  # a malformed entry: counted, nothing read
        at = index - known_from
        read = known[at] if 0 <= at < n_known else None
        if read is not None:
            (model, incoming), model_id, usage = read
            if usage is None:
                usage = reported_usage(message)
        else:
            model, incoming = estimate_message_split(message, image_tokens)
            usage = reported_usage(message)
            model_id = _model_of(message) if usage is not None else None
        if usage is None:
            text = model.text + incoming.text
            json_ = model.json + incoming.json
            media = model.media + incoming.media
            tail_text, tail_json, tail_media = tail_text + text, tail_json + json_, tail_media + media
            history_text, history_json, history_media = history_text + text, history_json + json_, history_media + media
            continue
        if calibrator is not None:
            key = message_key(message, index)
            learned = calibrator.learned
            if key not in learned:
                learned.add(key)
                calibration = calibrator.for_model(model_id)
                if anchor is not None and anchor_model == model_id:
                    new_tokens = usage.prompt - anchor.prompt - anchor.carried
                    calibration.observe_step(new_tokens, estimate_of((tail_text, tail_json, tail_media)))
                if calibration.first_prompt is None:  # observe_first keeps only the first
                    calibration.observe_first(usage.prompt, estimate_of((history_text, history_json, history_media)), carried)
        anchor, anchor_model, anchor_index = usage, model_id, index
        tail_text, tail_json, tail_media = incoming
        history_text, history_json, history_media = (
            history_text + incoming.text,
            history_json + incoming.json,
            history_media + incoming.media,
        )
        model_text, model_json, model_media = model_text + model.text, model_json + model.json, model_media + model.media
        carried += usage.output + usage.reasoning  # what the step carried
    tail, history = (tail_text, tail_json, tail_media), (history_text, history_json, history_media)
    return before, _state(anchor, anchor_model, anchor_index, tail, history, (model_text, model_json, model_media), carried, end)


def _state(
    anchor: ReportedUsage | None,
    anchor_model: str | None,
    anchor_index: int | None,
    tail: tuple[int, int, int],
    history: tuple[int, int, int],
    model: tuple[int, int, int],
    carried: int,
    count: int,
) -> EstimatorState:
    """An :class:`EstimatorState` from :func:`advance_run`'s running sums (text, json, media each)."""
    return EstimatorState(
        anchor, anchor_model, anchor_index, estimate_of(tail), estimate_of(history), estimate_of(model), carried, count
    )


def predict(
    state: EstimatorState,
    calibrator: Calibrator | None,
    *,
    use_reports: bool = True,
) -> Prediction:
    """Expected tokens of the next prompt.

    With a reported step: its prompt + its output and reasoning (they stay in the
    conversation) + the calibrated estimate of what came after. Without one, or with
    ``use_reports=False`` (the first-request path): the learned overhead + the
    calibrated estimate of the whole history, where steps that reported their output
    count at least those tokens. Never below the last reported prompt.
    """
    # The anchor's model's fit, else the active one (asked only then: this runs at every request point).
    found = calibrator.by_model.get(state.anchor_model) if calibrator is not None and state.anchor_model is not None else None
    if found is not None:
        calibration = found
    else:
        calibration = calibrator.active() if calibrator is not None else Calibration()
    reported = state.anchor.prompt if state.anchor is not None else None
    if use_reports and state.anchor is not None:
        tokens = next_prompt_tokens(state.anchor.prompt, state.anchor.carried, calibration.scale(state.tail))
        return Prediction(tokens, reported, "reported", calibration.calibrated)
    model_part = max(state.history_reported_carried, calibration.scale(state.history_reported_model))
    tokens = calibration.overhead + calibration.scale(state.history) + model_part
    if reported is not None:
        tokens = max(tokens, reported)
    return Prediction(tokens, reported, "history", calibration.calibrated)


def predict_prompt_tokens(
    messages: list[dict[str, Any]],
    calibrator: Calibrator | None = None,
    image_tokens: int = DEFAULT_IMAGE_TOKENS,
    *,
    use_reports: bool = True,
) -> Prediction:
    """From-scratch prediction of the prompt that sends ``messages``.

    The session's own reported steps calibrate the estimate; pass a ``calibrator``
    to keep what was learned (or to start from an earlier fit).
    """
    calibrator = calibrator if calibrator is not None else Calibrator()
    state = advance_run(EstimatorState(), messages, len(messages), calibrator, image_tokens)[1]
    return predict(state, calibrator, use_reports=use_reports)
