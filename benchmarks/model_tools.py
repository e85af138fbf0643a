"""Benchmark: what the model's tools cost, the numbers behind the defaults of the `tools` settings.

- **A prune's own cost** (``minTokens``): a discard of one output stays in the history (the call,
  its result, the placeholder in place of the output), so every later request carries it. A prune
  that removes fewer tokens than that makes every later request bigger, not smaller.
- **The list's cost** (``nudgeFrequency``): a list stays where it was written until taking it out
  pays for the prompt cache (the scheduler writes its withdrawal like a prune: when the cache is
  cold, for instance), so older lists linger. Generated sessions are run with the cache scheduler
  on and the tools offered (never called); the share of all the session's prompt tokens that
  lists take is reported per frequency.
- **The hot path**: a warm request (one new message) and a cold one (a session seen for the
  first time) with the tools offered, as a ratio to the same request without them, in one run.
- **A looping model** (``cooldownSteps``, ``maxFailures``): a model that calls discard on every
  step of one user turn, always naming a prunable output. Reported per setting: calls accepted,
  refused, and the tokens those calls leave in every later request.

Usage: ``python -m benchmarks.model_tools [--json] [--messages N] [--seeds N]``
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import statistics
import sys
import time
from typing import Any

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.model.tokens import estimate_part_tokens
from dcp_plugin.pipeline.ids import short_id
from dcp_plugin.pipeline.modeltools import texts
from dcp_plugin.pipeline.placeholders import DISCARDED_PLACEHOLDERS, tag
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.replay.engine import undo_patches
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session

FREQUENCIES = (2, 5, 10, 20, 40)
GUARDS = ((0, 1000), (1, 3), (3, 3), (3, 5), (5, 3))  # (cooldownSteps, maxFailures)
LOOP_STEPS = 30
_ids = itertools.count(1)


def _config(**tools: Any) -> DcpConfig:
    return DcpConfig.model_validate({"cache": {"scheduler": False}, "tools": tools})


def prune_cost() -> dict[str, int]:
    """Tokens a one-output discard leaves in every later request (call, result, placeholder)."""
    ident = short_id("call_example")
    arguments = {"ids": [ident], "reason": "done"}
    result = texts.pruned("discarded", [f"{ident} read src/module/service.py"], 1234)
    part = {"type": "tool", "tool": "discard", "callID": "c", "state": {"status": "completed", "input": arguments, "output": result}}
    call = estimate_part_tokens(part)
    placeholder = estimate_part_tokens({"type": "tool", "state": {"status": "completed", "input": {}, "output": tag(DISCARDED_PLACEHOLDERS["done"], ident)}})
    return {"call_and_result": call, "placeholder": placeholder, "added_per_request": call + placeholder}


def list_cost(messages: int, seeds: int) -> list[dict[str, Any]]:
    """Per nudgeFrequency: lists written, and the share of all prompt tokens of the session that lists take.

    Each generated session runs through its implied request history with the tools offered (never
    called) and the cache scheduler on. A list counts in every request from the one it is written
    in until the one its withdrawal is written in (or to the end).
    """
    rows = []
    for frequency in FREQUENCIES:
        written = carried = prompts = 0
        for seed in range(1, seeds + 1):
            history = generate_session(messages, seed=seed)["messages"]
            config = DcpConfig.model_validate({"tools": {"nudgeFrequency": frequency}})  # the cache scheduler on
            state = SessionState("bench", config, DEFAULT_DIRECTORY, tools_offered=True, log_costs=True)
            state.update(history)
            points = state.scheduler.take_costs()
            prompts += sum(p.tokens_with for p in points)
            ends = {id(d.withdraws): d.applied_at for d in state.decisions if d.withdraws is not None and d.applied_at}
            lists = [d for d in state.decisions if d.is_list and d.withdraws is None and d.applied_at is not None]
            written += len(lists)
            for d in lists:
                start, end = d.applied_at or 0, ends.get(id(d)) or len(points) + 1
                carried += -d.tokens_saved * max(0, end - start)
        rows.append(
            {
                "nudge_frequency": frequency,
                "lists_per_session": round(written / seeds, 1),
                "share_of_prompt_tokens_percent": round(100 * carried / prompts, 2) if prompts else 0.0,
            }
        )
    return rows


def _looping_session(cooldown: int, max_failures: int) -> dict[str, Any]:
    runtime = Runtime(DEFAULT_DIRECTORY, StaticConfig(_config(cooldownSteps=cooldown, maxFailures=max_failures)))
    runtime.tool_definitions()
    history: list[dict[str, Any]] = [_message("user", [])]
    reads = []
    for n in range(LOOP_STEPS):
        call_id = f"read_{next(_ids)}"
        state = {"status": "completed", "input": {"filePath": f"{DEFAULT_DIRECTORY}/f{n}.py"}, "output": "x = 1\n" * 300}
        history.append(_message("assistant", [{"type": "tool", "tool": "read", "callID": call_id, "state": state}]))
        reads.append(short_id(call_id))
    history.append(_message("user", []))
    accepted = refused = added = 0
    for step in range(LOOP_STEPS):
        runtime.prune("bench", copy.deepcopy(history))
        call_id = f"loop_{next(_ids)}"
        arguments = {"ids": [reads[step]], "reason": "noise"}
        result = runtime.execute_tool("bench", "discard", arguments, copy.deepcopy(history), call_id=call_id)
        assert result is not None
        state = {"status": "error", "input": arguments, "error": result.output} if result.error else {"status": "completed", "input": arguments, "output": result.output}
        part = {"type": "tool", "tool": "discard", "callID": call_id, "state": state}
        history.append(_message("assistant", [part]))
        added += estimate_part_tokens(part)
        accepted += not result.error
        refused += result.error
    return {"cooldown_steps": cooldown, "max_failures": max_failures, "calls": LOOP_STEPS, "accepted": accepted, "refused": refused, "tokens_of_the_calls": added}


def _message(role: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    mid = f"msg_{next(_ids):06d}"
    return {"info": {"id": mid, "sessionID": "bench", "role": role}, "parts": parts}


def loop_cost() -> list[dict[str, Any]]:
    """Per (cooldownSteps, maxFailures): what a model that calls discard on every step of a turn gets."""
    return [_looping_session(cooldown, failures) for cooldown, failures in GUARDS]


def _request_times(history: list[dict[str, Any]], size: int, offered: bool, warm: int) -> tuple[float, float]:
    """(cold ms, median warm ms) of a runtime on ``history[:size]`` and ``warm`` one-message appends."""
    runtime = Runtime(DEFAULT_DIRECTORY, StaticConfig(DcpConfig()))
    if offered:
        runtime.tool_definitions()
    session = history[0]["info"]["sessionID"]
    # Tool states are copied once, so placeholders can be undone from the originals.
    working = [{**m, "parts": [{**p, "state": dict(p["state"])} if isinstance(p.get("state"), dict) else p for p in m["parts"]]} for m in history]
    start = time.perf_counter()
    runtime.prune(session, working[:size])
    cold = (time.perf_counter() - start) * 1000
    times = []
    for count in range(size, size + warm + 1):
        sent = runtime.last_sent(session)
        if sent is not None:
            undo_patches(history, sent.located(working[:count]))
        start = time.perf_counter()
        runtime.prune(session, working[: count + 1])
        times.append((time.perf_counter() - start) * 1000)
    return cold, statistics.median(times)


def hot_path(sizes: tuple[int, ...], warm: int = 40) -> list[dict[str, Any]]:
    """Per session size: cold and warm request times with the tools offered and without, and their ratio."""
    rows = []
    for size in sizes:
        history = generate_session(size + warm + 2, seed=1)["messages"]
        (cold_without, warm_without), (cold_with, warm_with) = (_request_times(history, size, o, warm) for o in (False, True))
        rows.append(
            {
                "messages": size,
                "cold_ms": [round(cold_without, 1), round(cold_with, 1)],
                "warm_ms": [round(warm_without, 3), round(warm_with, 3)],
                "cold_ratio": round(cold_with / cold_without, 2),
                "warm_ratio": round(warm_with / warm_without, 2),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.model_tools", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.add_argument("--messages", type=int, default=1000, help="messages per generated session (default 1000)")
    parser.add_argument("--seeds", type=int, default=3, help="generated sessions per row (default 3)")
    parser.add_argument("--sizes", default="1000,5000", help="session sizes of the hot-path rows (default 1000,5000)")
    args = parser.parse_args(argv)
    sizes = tuple(int(n) for n in args.sizes.split(",") if n.strip())
    result: dict[str, Any] = {
        "prune": prune_cost(),
        "lists": list_cost(args.messages, args.seeds),
        "loop": loop_cost(),
        "hot_path": hot_path(sizes),
    }
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
        return 0
    prune = result["prune"]
    print(f"a one-output discard leaves ~{prune['added_per_request']} tokens in every later request "
          f"(call and result ~{prune['call_and_result']}, placeholder ~{prune['placeholder']})")
    print(f"\n{'nudgeFrequency':>14} {'lists':>7} {'of all prompt tokens':>21}")
    for row in result["lists"]:
        print(f"{row['nudge_frequency']:>14} {row['lists_per_session']:>7} {row['share_of_prompt_tokens_percent']:>20}%")
    print(f"\n{'messages':>8} {'cold ms without / with':>23} {'warm ms without / with':>23} {'cold':>6} {'warm':>6}")
    for row in result["hot_path"]:
        cold, warm = row["cold_ms"], row["warm_ms"]
        print(f"{row['messages']:>8,} {cold[0]:>11} / {cold[1]:<9} {warm[0]:>11} / {warm[1]:<9} {row['cold_ratio']:>5}x {row['warm_ratio']:>5}x")
    print(f"\n{'cooldownSteps':>13} {'maxFailures':>11} {'accepted':>9} {'refused':>8} {'tokens of the calls':>20}")
    for row in result["loop"]:
        print(f"{row['cooldown_steps']:>13} {row['max_failures']:>11} {row['accepted']:>9} {row['refused']:>8} {row['tokens_of_the_calls']:>20,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
