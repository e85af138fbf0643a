"""Per-request cost of the provider adapters (OpenAI Chat, Responses, Anthropic), as a ratio to ``json.dumps``.

    python -m benchmarks.formats_overhead [--sizes 1000,10000] [--requests 30]

For each size N the project's generated session of N messages (seed 1) is rendered in each
provider format. One cold request syncs the whole session; then ``--requests`` warm requests
each append one agent step (a read of a file already read, so every request decides one new
duplicate) to the same list, the way a host appends to its message list, and call the
format's entry point on it. Timed per warm request: the whole entry point (view of the new
items, runtime, placeholders, rebuild, bookkeeping); the same with a fresh deep copy of the
list each time (a host that rebuilds its list from storage: the items are equal, not the same
objects; the copying is not timed); the view of the whole list read from scratch (what a cold
request or a rewritten history costs); and ``json.dumps`` of the list (what the host pays to
send the request anyway). Medians; a table on stdout. The runtime saves nothing and uses the
default config. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dcp_plugin.adapters.formats import FORMATS, Pruner
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session

Step = Callable[[int], list[dict[str, Any]]]


def _tool_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in message["parts"] if p.get("type") == "tool" and p["state"].get("status") in ("completed", "error")]


def _text(message: dict[str, Any]) -> str:
    return "\n".join(p["text"] for p in message["parts"] if p.get("type") == "text" and p.get("text")) or "..."


def _result(state: dict[str, Any]) -> str:
    return str(state.get("output") if state["status"] == "completed" else state.get("error"))


def to_openai_chat(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An OpenCode-shaped session as Chat Completions messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for message in messages:
        calls = _tool_parts(message)
        if message["info"]["role"] == "user":
            out.append({"role": "user", "content": _text(message)})
            continue
        entry: dict[str, Any] = {"role": "assistant", "content": _text(message) if not calls else None}
        if calls:
            entry["tool_calls"] = [{"id": p["callID"], "type": "function",
                                    "function": {"name": p["tool"], "arguments": json.dumps(p["state"]["input"])}} for p in calls]
        out.append(entry)
        out.extend({"role": "tool", "tool_call_id": p["callID"], "content": _result(p["state"])} for p in calls)
    return out


def to_openai_responses(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An OpenCode-shaped session as Responses input items."""
    out: list[dict[str, Any]] = [{"role": "developer", "content": "You are a coding agent."}]
    for message in messages:
        calls = _tool_parts(message)
        if message["info"]["role"] == "user":
            out.append({"role": "user", "content": _text(message)})
        elif not calls:
            out.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": _text(message)}]})
        out.extend({"type": "function_call", "call_id": p["callID"], "name": p["tool"],
                    "arguments": json.dumps(p["state"]["input"])} for p in calls)
        out.extend({"type": "function_call_output", "call_id": p["callID"], "output": _result(p["state"])} for p in calls)
    return out


def to_anthropic(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An OpenCode-shaped session as Messages API messages."""
    out: list[dict[str, Any]] = []
    for message in messages:
        calls = _tool_parts(message)
        if message["info"]["role"] == "user":
            out.append({"role": "user", "content": [{"type": "text", "text": _text(message)}]})
            continue
        blocks = [{"type": "tool_use", "id": p["callID"], "name": p["tool"], "input": p["state"]["input"]} for p in calls]
        out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": _text(message)}]})
        if calls:
            out.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": p["callID"], "content": _result(p["state"]),
                 **({"is_error": True} if p["state"]["status"] == "error" else {})} for p in calls]})
    return out


RENDER = {"openai_chat": to_openai_chat, "openai_responses": to_openai_responses, "anthropic": to_anthropic}


def warm_step(name: str, path: str, output: str) -> Step:
    """One agent step in the format: a read of ``path`` and its result."""
    def step(n: int) -> list[dict[str, Any]]:
        session = [{"info": {"id": f"bench{n}", "role": "assistant"}, "parts": [{
            "type": "tool", "tool": "read", "callID": f"bench_{n}",
            "state": {"status": "completed", "input": {"filePath": path}, "output": output}}]}]
        rendered = RENDER[name](session)
        return rendered[1:] if name != "anthropic" else rendered  # the first two formats open with a system message
    return step


def measure(name: str, size: int, requests: int) -> dict[str, float]:
    """Median milliseconds per warm request for one format and size."""
    session = generate_session(size, seed=1)["messages"]
    items = RENDER[name](session)
    adapter = FORMATS[name]
    pruner = Pruner(Runtime(DEFAULT_DIRECTORY))
    step = warm_step(name, f"{DEFAULT_DIRECTORY}/src/app.py", "1: line\n" * 200)
    items.extend(step(0))
    model = "bench-model"  # hosts know the model they call; without one the runtime scans for it
    pruner.prune(adapter, items, session_id="bench", model=model)  # cold: syncs the whole session
    gc.collect()
    gc.freeze()  # the session stands for the host's own heap
    total: list[float] = []
    view: list[float] = []
    dumps: list[float] = []
    for n in range(1, requests + 1):
        items.extend(step(n))
        start = time.perf_counter()
        pruner.prune(adapter, items, session_id="bench", model=model)
        total.append(time.perf_counter() - start)
        start = time.perf_counter()
        adapter.to_view(items, "bench")  # what reading the whole list would cost
        view.append(time.perf_counter() - start)
        start = time.perf_counter()
        json.dumps(items)
        dumps.append(time.perf_counter() - start)
    fresh: list[float] = []
    for n in range(requests + 1, requests + 1 + max(1, requests // 6)):
        items.extend(step(n))
        rebuilt = copy.deepcopy(items)
        start = time.perf_counter()
        pruner.prune(adapter, rebuilt, session_id="bench", model=model)
        fresh.append(time.perf_counter() - start)
        del rebuilt
    gc.unfreeze()
    ms = {k: statistics.median(v) * 1000 for k, v in (("total", total), ("fresh", fresh), ("view", view), ("dumps", dumps))}
    ms["items"] = len(items)
    return ms


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="1000,10000", help="session sizes in OpenCode messages (default 1000,10000)")
    parser.add_argument("--requests", type=int, default=30, help="warm requests per size (default 30)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    print(f"Python {platform.python_version()}, {platform.machine()}; medians of {args.requests} warm requests (ms)")
    print(f"{'messages':>8} {'format':<17} {'items':>7} {'warm':>7} {'fresh copy':>10} {'cold view':>9} "
          f"{'json.dumps':>10} {'warm/dumps':>10} {'fresh/dumps':>11} {'cold/dumps':>10}")
    for size in sizes:
        for name in RENDER:
            ms = measure(name, size, args.requests)
            print(f"{size:>8} {name:<17} {int(ms['items']):>7} {ms['total']:>7.2f} {ms['fresh']:>10.2f} {ms['view']:>9.2f} "
                  f"{ms['dumps']:>10.2f} {ms['total'] / ms['dumps']:>10.1%} {ms['fresh'] / ms['dumps']:>11.1%} "
                  f"{ms['view'] / ms['dumps']:>10.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
