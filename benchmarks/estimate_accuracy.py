"""Benchmark: how far the prompt-size estimate lands from the next provider-reported prompt.

For every assistant step that reports usage, the prompt it reported (input + cache
read + cache write) is compared with the estimate made from the messages before it,
on two paths:

- ``reported``: the previous step's reported prompt + its output + the new content
  (what runs on almost every request);
- ``history``: as if nothing had been reported yet (a restored session, a sub-agent
  inheriting history), the whole history estimated, with calibration learned from
  the earlier steps of the same session.

Each path is scored for the fixed ratios (the history path as the plain sum of the
messages' estimates) and for the calibrated estimate, as absolute percentage errors:
mean, median and 95th percentile. Beside them, for every recorded file and in total,
the estimator error `dcp replay` reports (median and 90th percentile per request, one
definition: ``dcp_plugin.replay.estimate_error``). Sessions come from a
generator (seeded, so runs are repeatable; one in three from a provider that
drops earlier thinking from the prompt) and from recorded files given on the
command line: ``opencode export`` output (``{info, messages}``) or a bare message
list.

Usage: ``python benchmarks/estimate_accuracy.py [--json] [FILE ...]``
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from dcp_plugin.budget.calibration import Calibrator, EstimatorState, advance, predict
from dcp_plugin.model.messages import info_of
from dcp_plugin.model.tokens import estimate_content_tokens, message_prompt_tokens, reported_usage
from dcp_plugin.replay.coverage import measured_reports, session_reports
from dcp_plugin.replay.engine import implied_requests, session_estimate_error, session_estimates
from dcp_plugin.replay.engine import session_reports as engine_reports
from dcp_plugin.replay.estimate_error import DEFINITION, EstimateError

GENERATED_SESSIONS = 24
GENERATED_SEED = 20250514


# --- generated sessions ----------------------------------------------------------

_WORDS = (
    "the function returns a value when the input is valid otherwise it raises an error "
    "config parser module test fixture refactor cache index path token request reply"
).split()


def _prose(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(_WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:chars]


def _code(rng: random.Random, lines: int) -> str:
    return "\n".join(
        f"{i + 1}: {'    ' * rng.randint(0, 3)}{rng.choice(_WORDS)}_{rng.randint(0, 99)}({rng.choice(_WORDS)}={rng.randint(0, 9999)})"
        for i in range(lines)
    )


class _Tokenizer:
    """A stand-in tokenizer with the session's own characters per token and per-item noise."""

    def __init__(self, rng: random.Random, text_cpt: float, json_cpt: float, noise: float) -> None:
        self.rng, self.text_cpt, self.json_cpt, self.noise = rng, text_cpt, json_cpt, noise

    def _jitter(self) -> float:
        return max(0.5, 1.0 + self.rng.gauss(0.0, self.noise)) if self.noise else 1.0

    def text(self, s: str) -> int:
        return math.ceil(len(s) / self.text_cpt * self._jitter())

    def json(self, value: Any) -> int:
        s = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
        return math.ceil(len(s) / self.json_cpt * self._jitter())


def generate_session(
    seed: int,
    steps: int = 120,
    *,
    text_cpt: float | None = None,
    json_cpt: float | None = None,
    overhead: int | None = None,
    noise: float = 0.06,
    thinking_factor: float | None = None,
    keeps_reasoning: bool = True,
) -> list[dict[str, Any]]:
    """A synthetic agent session in OpenCode's {info, parts} shape with consistent usage.

    Every assistant step reports the prompt it would really have had: a fixed
    overhead (system prompt, tool definitions) + the true tokens of everything
    before it, where a step's own contribution is its reported output + reasoning
    (its thinking counted at full size while the transcript keeps a shorter
    summary, as real hosts do). With ``keeps_reasoning=False`` the provider drops
    earlier thinking from the prompt instead, which the estimator does not assume.
    """
    rng = random.Random(seed)
    text_cpt = text_cpt if text_cpt is not None else rng.uniform(3.0, 4.6)
    json_cpt = json_cpt if json_cpt is not None else rng.uniform(1.8, 3.4)
    overhead = overhead if overhead is not None else rng.randint(6_000, 34_000)
    thinking_factor = thinking_factor if thinking_factor is not None else rng.uniform(1.0, 3.0)
    tok = _Tokenizer(rng, text_cpt, json_cpt, noise)
    sid = f"ses_gen{seed}"
    messages: list[dict[str, Any]] = []
    prompt = overhead
    n = 0

    def new_id(prefix: str) -> str:
        nonlocal n
        n += 1
        return f"{prefix}_{seed}_{n:05d}"

    def user() -> None:
        nonlocal prompt
        text = _prose(rng, rng.randint(40, 2_500))
        mid = new_id("msg")
        messages.append({
            "info": {"id": mid, "sessionID": sid, "role": "user"},
            "parts": [{"id": new_id("prt"), "type": "text", "text": text}],
        })
        prompt += tok.text(text)

    user()
    for step in range(steps):
        if step and rng.random() < 0.08:
            user()
        parts: list[dict[str, Any]] = []
        output = reasoning = incoming = 0
        if rng.random() < 0.5:
            summary = _prose(rng, rng.randint(80, 900))
            parts.append({"id": new_id("prt"), "type": "reasoning", "text": summary})
            reasoning += math.ceil(tok.text(summary) * thinking_factor)
        if rng.random() < 0.6:
            text = _prose(rng, rng.randint(20, 1_200))
            parts.append({"id": new_id("prt"), "type": "text", "text": text})
            output += tok.text(text)
        for call in range(rng.choice((0, 1, 1, 1, 2, 3))):
            tool = rng.choice(("read", "read", "bash", "grep", "edit", "glob"))
            args: dict[str, Any] = {"filePath": f"/home/dev/project/src/{rng.choice(_WORDS)}_{rng.randint(0, 40)}.py"}
            if tool == "edit":
                args |= {"oldString": _code(rng, rng.randint(1, 12)), "newString": _code(rng, rng.randint(1, 14))}
            output += tok.json(args)
            if rng.random() < 0.1:
                state = {"status": "error", "input": args, "error": f"Error: {_prose(rng, rng.randint(30, 300))}"}
                incoming += tok.json(state["error"])
            else:
                body = _code(rng, rng.choice((3, 10, 40, 120, 400)))
                state = {"status": "completed", "input": args, "output": body, "title": tool, "metadata": {}}
                incoming += tok.json(body)
            parts.append({"id": new_id("prt"), "type": "tool", "tool": tool, "callID": f"call_{seed}_{step}_{call}", "state": state})
        if not parts:
            text = _prose(rng, rng.randint(20, 400))
            parts.append({"id": new_id("prt"), "type": "text", "text": text})
            output += tok.text(text)
        read = rng.randint(0, prompt)
        write = rng.randint(0, prompt - read)
        usage = {
            "total": prompt + output + reasoning,
            "input": prompt - read - write,
            "output": output,
            "reasoning": reasoning,
            "cache": {"read": read, "write": write},
        }
        messages.append({
            "info": {"id": new_id("msg"), "sessionID": sid, "role": "assistant", "modelID": "gen-model", "tokens": usage},
            "parts": parts,
        })
        prompt += output + (reasoning if keeps_reasoning else 0) + incoming
    return messages


# --- scoring ---------------------------------------------------------------------

def _stats(errors: Sequence[float]) -> dict[str, float | int | None]:
    if not errors:
        return {"n": 0, "mean": None, "median": None, "p95": None}
    ordered = sorted(errors)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return {
        "n": len(ordered),
        "mean": round(statistics.fmean(ordered), 3),
        "median": round(statistics.median(ordered), 3),
        "p95": round(p95, 3),
    }


def _pct(estimate: int, actual: int) -> float:
    return abs(estimate - actual) / actual * 100.0


def score_session(messages: Sequence[dict[str, Any]]) -> dict[str, list[float]]:
    """Absolute % errors of each estimator on each reported step of one session."""
    errors: dict[str, list[float]] = {
        "reported.fixed": [], "reported.calibrated": [], "history.fixed": [], "history.calibrated": [],
    }
    fixed_state = EstimatorState()
    state = EstimatorState()
    calibrator = Calibrator()
    history_chars_estimate = 0
    for message in messages:
        usage = reported_usage(message)
        if usage is not None:
            actual = usage.prompt
            if fixed_state.anchor is not None:
                errors["reported.fixed"].append(_pct(predict(fixed_state, None).tokens, actual))
                errors["reported.calibrated"].append(_pct(predict(state, calibrator).tokens, actual))
            if state.count and calibrator.active().first_prompt is not None:
                errors["history.fixed"].append(_pct(history_chars_estimate, actual))
                errors["history.calibrated"].append(_pct(predict(state, calibrator, use_reports=False).tokens, actual))
        fixed_state = advance(fixed_state, message, None)
        state = advance(state, message, calibrator)
        history_chars_estimate += estimate_content_tokens([message])
    return errors


# A reported prompt below this share of the previous one: the history was replaced (a compaction the
# replay does not recognize), so later estimates are of a history the provider no longer read.
RESET_SHARE = 0.7


def error_before_reset(messages: Sequence[dict[str, Any]]) -> EstimateError:
    """The replay's estimator error over the requests before the first history reset the reports show.

    The first step of a turn is not taken as a reset: some recorders report only the cached prefix there.
    """
    pairs: list[tuple[int, int | None]] = []
    previous: int | None = None
    partial = 0
    for request, scored in session_estimates(messages):
        if scored is None:
            continue
        turn_start = info_of(messages[request.end - 1]).get("role") == "user"
        if not turn_start:
            if previous is not None and scored.reported < RESET_SHARE * previous:
                break
            previous = scored.reported
        pairs.append((scored.estimate, scored.reported))
        partial += scored.partial
    return EstimateError.of(pairs, partial=partial)


def error_after_compaction(messages: Sequence[dict[str, Any]]) -> EstimateError:
    """The replay's estimator error over the requests that sent a compacted history (one not from message 0)."""
    scored = [s for request, s in session_estimates(messages) if s is not None and request.begin > 0]
    return EstimateError.of(((s.estimate, s.reported) for s in scored), partial=sum(s.partial for s in scored))


def left_out(messages: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Why reports were not scored: the overhead of their history came from them, or they measure nothing estimated."""
    requests = list(implied_requests(messages))
    tokens = [message_prompt_tokens(m) for m in messages]
    measured = measured_reports(messages, requests, tokens)
    scored = session_reports(messages, requests, tokens).scored
    return {
        "taught_an_overhead": sum(1 for m, s in zip(measured, scored, strict=True) if m is not None and s is None),
        "counted_no_message_or_missed_the_cache": sum(
            1 for r, m in zip(requests, measured, strict=True)
            if m is None and r.end < len(messages) and reported_usage(messages[r.end]) is not None
        ),
    }


def _load(path: str) -> list[dict[str, Any]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    messages = data.get("messages") if isinstance(data, dict) else data
    if isinstance(messages, list):
        return [m for m in messages if isinstance(m, dict)]
    raise ValueError(f"{path}: expected an `opencode export` object with `messages` or a list of messages")


def _summarize(per_session: Iterable[dict[str, list[float]]]) -> dict[str, dict[str, Any]]:
    pooled: dict[str, list[float]] = {}
    for errors in per_session:
        for key, values in errors.items():
            pooled.setdefault(key, []).extend(values)
    return {key: _stats(values) for key, values in sorted(pooled.items())}


def run(paths: list[str], generated_sessions: int = GENERATED_SESSIONS) -> dict[str, Any]:
    """Score the generated sessions and every recorded file; numbers only, no timings."""
    sessions = [_load(path) for path in paths]
    per_file = [score_session(messages) for messages in sessions]
    replay_errors = [session_estimate_error(messages) for messages in sessions]
    replay_total = before_reset = after_compaction = EstimateError()
    reasons = {"taught_an_overhead": 0, "counted_no_message_or_missed_the_cache": 0}
    for messages, error in zip(sessions, replay_errors, strict=True):
        replay_total = replay_total.plus(error)
        before_reset = before_reset.plus(error_before_reset(messages))
        after_compaction = after_compaction.plus(error_after_compaction(messages))
        for reason, count in left_out(messages).items():
            reasons[reason] += count
    # Every third session comes from a provider that drops earlier thinking.
    generated = [
        score_session(generate_session(GENERATED_SEED + i, keeps_reasoning=i % 3 != 2))
        for i in range(generated_sessions)
    ]
    return {
        "generated": {"sessions": generated_sessions, "errors": _summarize(generated)},
        "recorded": {
            "files": len(paths),
            "errors": _summarize(per_file),
            "replay_estimate_error": replay_total.to_dict(),
            "replay_estimate_error_before_reset": before_reset.to_dict(),
            "replay_estimate_error_after_compaction": after_compaction.to_dict(),
            "reports_left_out": reasons,
            "per_file": [
                {"path": p, "errors": _summarize([e]), "replay_estimate_error": r.to_dict(),
                 "prompt_overheads": list(engine_reports(messages).overheads.to_dict().values())}
                for p, e, r, messages in zip(paths, per_file, replay_errors, sessions, strict=True)
            ],
        },
        "replay_estimate_error_definition": DEFINITION,
    }


def _print_table(result: dict[str, Any]) -> None:
    def block(title: str, errors: dict[str, dict[str, Any]]) -> None:
        print(title)
        print(f"  {'estimator':<22}{'n':>6}{'mean %':>10}{'median %':>10}{'p95 %':>10}")
        for key, s in errors.items():
            cells = ["-" if s[k] is None else f"{s[k]:.2f}" for k in ("mean", "median", "p95")]
            print(f"  {key:<22}{s['n']:>6}{cells[0]:>10}{cells[1]:>10}{cells[2]:>10}")

    block(f"generated ({result['generated']['sessions']} sessions)", result["generated"]["errors"])
    recorded = result["recorded"]
    if recorded["files"]:
        block(f"recorded ({recorded['files']} files)", recorded["errors"])
        print("replay's estimator error per request (median / p90 %, requests with reported usage)")
        rows = [(Path(f["path"]).name, f["replay_estimate_error"]) for f in recorded["per_file"]]
        totals = [("total", recorded["replay_estimate_error"]),
                  ("before a history reset", recorded["replay_estimate_error_before_reset"]),
                  ("after a compaction", recorded["replay_estimate_error_after_compaction"])]
        for name, e in [*rows, *totals]:
            cells = ["-" if e[k] is None else f"{e[k]:.1f}" for k in ("median_percent", "p90_percent")]
            print(f"  {name:<44}{cells[0]:>8}{cells[1]:>9}{e['requests_with_reported_usage']:>7}")
        scored = recorded["replay_estimate_error"]
        reasons = recorded["reports_left_out"]
        overheads = [f["prompt_overheads"] for f in recorded["per_file"] if f["prompt_overheads"]]
        if overheads:
            first = sorted(o[0] for o in overheads)
            later = sorted(b - o[0] for o in overheads for b in o[1:])
            print(f"  (prompt overhead at a session's start: {first[0]:,}-{first[-1]:,} tokens"
                  + (f"; after a compaction {later[0]:,}-{later[-1]:,} more" if later else "") + ")")
        print(f"  ({scored['without_cache_writes']:,} of the scored reports recorded no cache write; left out: "
              f"{reasons['taught_an_overhead']:,} that taught their history's overhead, "
              f"{reasons['counted_no_message_or_missed_the_cache']:,} that counted no message or missed the cache)")
        print(f"  ({DEFINITION})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Token-estimate error against the next reported prompt size.")
    parser.add_argument("files", nargs="*", help="opencode export files or message-list JSON files")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    try:
        result = run(list(args.files))
    except (OSError, ValueError) as exc:
        print(f"estimate_accuracy: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_table(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
