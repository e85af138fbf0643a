"""Compaction controller: decides before each request whether to summarize, with a circuit breaker."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from mypy_extensions import mypyc_attr

from dcp_plugin.budget.thresholds import COMPACT_MAX_OUTPUT_TOKENS, Thresholds

log = logging.getLogger(__name__)

MAX_CONSECUTIVE_FAILURES = 3

# finish_reason values meaning "stopped at the output cap" across providers and SDKs.
TRUNCATED_FINISH_REASONS = frozenset({"length", "max_tokens", "max_output_tokens", "max-tokens", "model_length"})

SUMMARY_SYSTEM_PROMPT = (
    "You are summarizing a coding session so that work can continue from the summary alone. "
    "Write a concise, self-contained summary covering: the user's goals and constraints, "
    "decisions made and why, files read or changed with the relevant details, commands run "
    "and their outcomes, errors met and how they were resolved, and the exact next steps. "
    "Keep identifiers, paths and numbers verbatim. Do not invent anything."
)

Summarize = Callable[[dict[str, Any]], Any]


class CompactionStatus(StrEnum):
    NONE = "none"  # below the auto threshold, or no thresholds known
    DISABLED = "disabled"  # turned off in config
    COMPACTED = "compacted"  # automatic compaction produced a summary
    FORCED = "forced"  # hard threshold crossed; compaction ran and produced a summary
    SKIPPED_BREAKER_OPEN = "skipped-breaker-open"  # too many automatic failures in a row
    UNSUPPORTED = "unsupported"  # the host offers no side query
    FAILED = "failed"  # the side query raised or answered nothing usable
    DISCARDED_TRUNCATED = "discarded-truncated"  # the summary hit the output cap and was dropped


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    """What the host should do before sending this request.

    Only ``compacted`` and ``forced`` carry a ``summary`` to put in place of the
    history; every other status means "send the request as it is".
    """

    status: CompactionStatus
    tokens: int
    forced: bool = False
    summary: str | None = None
    consecutive_failures: int = 0
    error: str | None = None
    usage: Mapping[str, Any] | None = None

    @property
    def has_summary(self) -> bool:
        return self.summary is not None


def summary_request(messages: Sequence[Mapping[str, Any]], max_output_tokens: int = COMPACT_MAX_OUTPUT_TOKENS) -> dict[str, Any]:
    """The side-query request (see ``hostspec.host_startup``'s ``summarize``)."""
    return {
        "messages": list(messages),
        "system": SUMMARY_SYSTEM_PROMPT,
        "max_output_tokens": max_output_tokens,
        "thinking": False,
    }


@mypyc_attr(allow_interpreted_subclasses=True)
class CompactionController:
    """Per-session compaction decisions and the circuit breaker.

    Below ``auto``: nothing. From ``auto``: an automatic attempt, unless
    ``max_failures`` automatic attempts in a row have failed (the breaker is open).
    From ``hard``: a forced attempt, which first closes the breaker and whose
    failure is not counted. Any success closes the breaker.
    """

    def __init__(
        self,
        enabled: bool = True,
        max_failures: int = MAX_CONSECUTIVE_FAILURES,
        max_output_tokens: int = COMPACT_MAX_OUTPUT_TOKENS,
    ) -> None:
        self.enabled = enabled
        self.max_failures = max_failures
        self.max_output_tokens = max_output_tokens
        self.consecutive_failures = 0

    @property
    def breaker_open(self) -> bool:
        return self.consecutive_failures >= self.max_failures

    def before_request(
        self,
        tokens: int,
        thresholds: Thresholds | None,
        summarize: Summarize | None,
        messages: Sequence[Mapping[str, Any]],
    ) -> CompactionOutcome:
        """Decide, and when due run the side query once. Never raises."""
        try:
            return self._decide(tokens, thresholds, summarize, messages)
        except Exception as exc:  # noqa: BLE001 - a broken controller must not stop the request
            log.exception("compaction controller failed")
            return self._outcome(CompactionStatus.FAILED, tokens, error=f"controller error: {exc}")

    def _outcome(self, status: CompactionStatus, tokens: int, **extra: Any) -> CompactionOutcome:
        return CompactionOutcome(status, tokens, consecutive_failures=self.consecutive_failures, **extra)

    def _decide(
        self,
        tokens: int,
        thresholds: Thresholds | None,
        summarize: Summarize | None,
        messages: Sequence[Mapping[str, Any]],
    ) -> CompactionOutcome:
        if not self.enabled:
            return self._outcome(CompactionStatus.DISABLED, tokens)
        if thresholds is None or tokens < thresholds.auto:
            return self._outcome(CompactionStatus.NONE, tokens)
        forced = tokens >= thresholds.hard
        if forced:
            self.consecutive_failures = 0
        elif self.breaker_open:
            return self._outcome(CompactionStatus.SKIPPED_BREAKER_OPEN, tokens)
        if summarize is None:
            return self._outcome(CompactionStatus.UNSUPPORTED, tokens, forced=forced)
        # The summary must fit the room the ladder keeps for it (a sixth of a small window).
        cap = min(self.max_output_tokens, thresholds.window - thresholds.effective_window)
        try:
            answer = summarize(summary_request(messages, cap))
        except Exception as exc:  # noqa: BLE001 - the host's side query may fail in any way
            return self._failed(tokens, forced, f"side query raised {type(exc).__name__}: {exc}")
        if not isinstance(answer, Mapping):
            return self._failed(tokens, forced, f"side query answered {type(answer).__name__}, expected a dict")
        usage = answer.get("usage") if isinstance(answer.get("usage"), Mapping) else None
        finish = str(answer.get("finish_reason") or "").lower()
        if finish in TRUNCATED_FINISH_REASONS:
            return self._failed(
                tokens, forced, f"summary stopped at the {cap}-token output cap",
                status=CompactionStatus.DISCARDED_TRUNCATED, usage=usage,
            )
        text = answer.get("text")
        if not isinstance(text, str) or not text.strip():
            return self._failed(tokens, forced, "side query returned an empty summary", usage=usage)
        self.consecutive_failures = 0
        status = CompactionStatus.FORCED if forced else CompactionStatus.COMPACTED
        return self._outcome(status, tokens, forced=forced, summary=text, usage=usage)

    def _failed(
        self,
        tokens: int,
        forced: bool,
        error: str,
        status: CompactionStatus = CompactionStatus.FAILED,
        usage: Mapping[str, Any] | None = None,
    ) -> CompactionOutcome:
        if not forced:
            self.consecutive_failures += 1
        log.warning("compaction %s: %s", "(forced) failed" if forced else "failed", error)
        return self._outcome(status, tokens, forced=forced, error=error, usage=usage)

    def to_dict(self) -> dict[str, int]:
        return {"consecutive_failures": self.consecutive_failures}

    def load(self, data: Mapping[str, Any]) -> None:
        """Restore saved breaker state; malformed data leaves the breaker closed."""
        value = data.get("consecutive_failures") if isinstance(data, Mapping) else None
        self.consecutive_failures = value if isinstance(value, int) and value >= 0 else 0
