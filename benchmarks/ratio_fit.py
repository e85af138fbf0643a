"""Benchmark: the characters per token that recorded provider reports imply, per kind of content.

Every report `dcp replay` can measure (``dcp_plugin.replay.coverage``: a report counts its own
request, or the prefix it read from the cache when it lost its cache writes) is modelled as one
intercept per history sent (its prompt overhead) plus a multiplier per kind on the fixed-ratio
estimate of the messages it counts: text (chars/4), tool inputs (chars/3.5), tool outputs
(chars/3), and the output a step reported beyond its parts' estimate. Solved by least squares on
relative errors (each report weighted by 1 / reported), once on every file and once leaving each
file out. A multiplier of 1 means the fixed ratio is right.

Usage: ``python -m benchmarks.ratio_fit [--json] FILE ...``
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dcp_plugin.model.tokens import (
    CHARS_PER_TOKEN_TEXT,
    JSON_TOKENS_PER_CHAR,
    OUTPUT_TOKENS_PER_CHAR,
    estimate_message_split,
    message_prompt_tokens,
    reported_usage,
)
from dcp_plugin.replay.coverage import measured_reports
from dcp_plugin.replay.requests import implied_requests

KINDS = ("text", "tool inputs", "tool outputs", "reported output beyond the parts")
# Characters per token each kind's fixed ratio assumes (None: not a ratio of characters).
FIXED_CHARS: tuple[float | None, ...] = (
    float(CHARS_PER_TOKEN_TEXT),
    JSON_TOKENS_PER_CHAR[1] / JSON_TOKENS_PER_CHAR[0],
    OUTPUT_TOKENS_PER_CHAR[1] / OUTPUT_TOKENS_PER_CHAR[0],
    None,
)


@dataclass(frozen=True, slots=True)
class Observation:
    """One measured report: what the messages it counts hold per kind, and what it said."""

    file: int
    history: tuple[int, int]  # (file, first message of the history)
    kinds: tuple[float, ...]
    reported: int


def message_kinds(message: dict[str, Any]) -> tuple[float, ...]:
    """The fixed-ratio estimate of one message per kind (see :data:`KINDS`)."""
    model, incoming = estimate_message_split(message)
    usage = reported_usage(message)
    beyond = max(0, usage.carried - model.total) if usage is not None else 0
    return float(model.text + incoming.text), float(model.json), float(incoming.json), float(beyond)


def observations(file: int, messages: Sequence[dict[str, Any]]) -> list[Observation]:
    """Every measured report of one session, with the sums per kind of the messages it counts."""
    sums = [(0.0,) * len(KINDS)]
    for message in messages:
        sums.append(tuple(a + b for a, b in zip(sums[-1], message_kinds(message), strict=True)))
    requests = list(implied_requests(messages))
    found = measured_reports(messages, requests, [message_prompt_tokens(m) for m in messages])
    return [
        Observation(file, (file, m.begin),
                    tuple(b - a for a, b in zip(sums[m.begin], sums[m.end], strict=True)), m.reported)
        for m in found if m is not None
    ]


def fit(rows: Sequence[Observation]) -> tuple[float, ...]:
    """The multiplier per kind, with one intercept per history, by weighted least squares."""
    histories = sorted({row.history for row in rows})
    column = {history: len(KINDS) + i for i, history in enumerate(histories)}
    size = len(KINDS) + len(histories)
    normal = [[0.0] * size for _ in range(size)]
    right = [0.0] * size
    for row in rows:
        x = [0.0] * size
        x[: len(KINDS)] = row.kinds
        x[column[row.history]] = 1.0
        w = 1.0 / (row.reported * row.reported)
        nonzero = [i for i, v in enumerate(x) if v]
        for i in nonzero:
            right[i] += w * x[i] * row.reported
            for j in nonzero:
                normal[i][j] += w * x[i] * x[j]
    for i in range(size):  # a kind no report holds: keep its fixed ratio (multiplier 1)
        if normal[i][i] == 0.0:
            normal[i][i], right[i] = 1.0, 1.0
    return tuple(_solve(normal, right)[: len(KINDS)])


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (the system is small: kinds + histories)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            factor = m[r][col] / m[col][col]
            if factor:
                for c in range(col, n + 1):
                    m[r][c] -= factor * m[col][c]
    out = [0.0] * n
    for r in range(n - 1, -1, -1):
        out[r] = (m[r][n] - sum(m[r][c] * out[c] for c in range(r + 1, n))) / m[r][r]
    return out


def run(paths: Sequence[str]) -> dict[str, Any]:
    """The fit on every file, and its range leaving each file out."""
    rows: list[Observation] = []
    for index, path in enumerate(paths):
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        messages = data.get("messages") if isinstance(data, dict) else data
        if not isinstance(messages, list):
            raise ValueError(f"{path}: expected an `opencode export` object with `messages` or a list of messages")
        rows.extend(observations(index, [m for m in messages if isinstance(m, dict)]))
    every = fit(rows)
    apart = [fit([r for r in rows if r.file != left]) for left in range(len(paths))] if len(paths) > 1 else [every]
    result: dict[str, Any] = {"reports": len(rows), "files": len(paths), "kinds": {}}
    for k, kind in enumerate(KINDS):
        low, high = min(f[k] for f in apart), max(f[k] for f in apart)
        entry: dict[str, Any] = {"multiplier": round(every[k], 3),
                                 "leave_one_out": [round(low, 3), round(high, 3)]}
        fixed = FIXED_CHARS[k]
        if fixed is not None:
            entry["chars_per_token"] = round(fixed / every[k], 2)
            entry["chars_per_token_leave_one_out"] = [round(fixed / high, 2), round(fixed / low, 2)]
        result["kinds"][kind] = entry
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ratio_fit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="recorded sessions with provider-reported usage")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    try:
        result = run(args.files)
    except (OSError, ValueError) as exc:
        print(f"ratio_fit: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['reports']:,} measured reports in {result['files']} files")
    for kind, entry in result["kinds"].items():
        low, high = entry["leave_one_out"]
        line = f"  {kind:<34} x{entry['multiplier']:.3f} ({low:.3f}-{high:.3f} leaving one file out)"
        if "chars_per_token" in entry:
            a, b = entry["chars_per_token_leave_one_out"]
            line += f"  = {entry['chars_per_token']:.2f} chars/token ({a:.2f}-{b:.2f})"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
