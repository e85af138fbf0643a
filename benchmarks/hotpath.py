"""Measures one session: cold and warm requests, json.dumps, step breakdown, memory, savings."""

from __future__ import annotations

import cProfile
import gc
import json
import pstats
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.equivalence import decision_map, from_scratch
from benchmarks.harness import BenchHost
from benchmarks.sessions import BenchSession
from benchmarks.stats import summary
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.checkpoints import FOLDER, code_fingerprint
from dcp_plugin.model.tokens import estimate_message_tokens
from dcp_plugin.pipeline.patches import plan
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.pipeline.strategies import ALL_REASONS
from dcp_plugin.replay.engine import undo_patches
from dcp_plugin.store import Store

Progress = Callable[[str], None]

CONFIGS: dict[str, DcpConfig] = {
    "default": DcpConfig(),
    "supersedeWrites": DcpConfig.model_validate({"strategies": {"supersedeWrites": {"enabled": True}}}),
}


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def hook_timings(session: BenchSession, repeat: int, warm: int, host: BenchHost) -> dict[str, Any]:
    """Through the hook: cold requests at the base size, then warm ones each adding one message.

    ``warm`` pairs of warm requests reuse the working copy (placeholders undone after each); of
    the rest, in pairs too, half get a freshly built shallow copy of the history (new dicts over
    the history's own strings and inputs, as a host that keeps its history in memory sends it),
    half a copy decoded from JSON (as a host that loads it from storage sends it), each of those
    timed with ``json.dumps`` of what it sent. Of each pair the first host says nothing, the second
    vouches for the messages of its previous request (``unchangedBefore``), so that a change of
    load hits both alike.

    Each cold request is timed right after ``json.dumps`` of its list, with no session held: the
    yardstick the first-sight targets are judged by (:func:`yardstick_ratios`), taken next to each
    sample so that a change of load between them hits both alike. The session the previous sample
    dropped is collected first, untimed: its garbage is the benchmark's doing (a host sees a session
    for the first time once), and while it stayed in memory the same ``json.dumps`` took 1.2-1.5 times as long.
    """
    cold: list[float] = []
    quiet: list[float] = []
    cold_list = host.working[: session.base]
    for _ in range(repeat):
        host.forget()
        gc.collect()
        quiet.append(_dumps_ms(cold_list))
        cold.append(host.request(session.base))
    count = session.base
    samples: dict[str, list[float]] = {"reused": [], "reused_vouched": [], "fresh": [], "fresh_vouched": []}
    copies = (session.extra - 2 * warm) // 4  # pairs on fresh copies, and as many on decoded ones
    for kind, pairs in (("reused", warm), ("fresh", copies)):
        send = host.request if kind == "reused" else host.request_fresh
        for _ in range(pairs):
            samples[kind].append(send(count + 1))
            samples[f"{kind}_vouched"].append(send(count + 2, vouch=True))
            count += 2
    decoded: dict[str, list[float]] = {"said_nothing": [], "vouched": [], "dumps": [], "percent": [], "percent_vouched": []}
    for _ in range(copies):
        for vouch, key in ((False, ""), (True, "_vouched")):
            count += 1
            request_ms, dumps_ms = host.request_decoded(count, vouch=vouch)
            decoded["vouched" if vouch else "said_nothing"].append(request_ms)
            decoded["dumps"].append(dumps_ms)
            decoded[f"percent{key}"].append(100 * request_ms / dumps_ms)
    host.forget_json()  # the history as JSON: about 110 MB for the busy session, not needed after
    return {
        "cold_ms": summary(cold),
        "json_dumps_quiet_cold_list_ms": summary(quiet),
        "warm_ms": summary(samples["reused"]),
        "warm_vouched_ms": summary(samples["reused_vouched"]),
        "warm_fresh_copy_ms": summary(samples["fresh"]),
        "warm_fresh_copy_vouched_ms": summary(samples["fresh_vouched"]),
        "warm_decoded_copy_ms": summary(decoded["said_nothing"]),
        "warm_decoded_copy_vouched_ms": summary(decoded["vouched"]),
        "json_dumps_decoded_copy_ms": summary(decoded["dumps"]),
        # Each request against json.dumps of the very list it pruned (a decoded list serializes slower too).
        "warm_decoded_copy_percent_of_json_dumps": summary(decoded["percent"]),
        "warm_decoded_copy_vouched_percent_of_json_dumps": summary(decoded["percent_vouched"]),
        "warm_resyncs": host.restarts(),
    }


def restart_timings(session: BenchSession, repeat: int, host: BenchHost) -> dict[str, Any]:
    """A restarted host's first request on the session: it loads the checkpoint the last process wrote.

    The host keeps a store of its own in a temporary folder for this (never the user's). Each
    sample drops the session, so its next request starts from the file, as a new process does.
    """
    samples: list[float] = []
    written = 0
    with tempfile.TemporaryDirectory() as folder:
        host.runtime.use_store(Store(Path(folder) / "dcp.sqlite3"))
        try:
            host.forget()
            host.request(session.base)  # first sight: the whole walk, then a checkpoint
            host.runtime.wait_for_checkpoints()
            written = sum(path.stat().st_size for path in (Path(folder) / FOLDER).glob("*"))
            for _ in range(repeat):
                host.forget()
                code_fingerprint.cache_clear()  # a new process reads its code's digest once
                samples.append(host.request(session.base))
        finally:
            host.forget()
            host.runtime.wait_for_checkpoints()
            host.runtime.use_store(None)
    return {"restart_ms": summary(samples), "checkpoint_bytes": written}


def step_timings(session: BenchSession, warm: int, host: BenchHost, config: DcpConfig) -> dict[str, Any]:
    """The warm request's two steps called directly, each repeated back to back on its own.

    Sync + strategies: the same one-message appends as the warm requests, timed, and counted in
    Python function calls (a measure of work that does not depend on the machine) on a session of
    their own, so that the profiler slows no timed append.
    Placeholders: planning and writing every placeholder of the last of those requests.
    Timed apart so that one step's cache misses are not billed to the other.
    """
    working, original = host.working, host.original
    counts = range(session.base + 1, session.base + warm + 1)
    calls = append_calls(session, working, counts, config)
    gc.collect()  # the counting session, dropped: not collected during the timed appends
    state = SessionState("bench-steps", config, session.directory)
    state.update(working[: session.base])
    state.update(working[: counts[0]])
    update_ms: list[float] = []
    for count in counts[1:]:
        outgoing = working[:count]
        start = time.perf_counter()
        state.update(outgoing)
        update_ms.append(_ms(start))
    outgoing = working[: counts[-1]]
    placeholders: list[float] = []
    patches: Any = []
    for _ in counts:
        start = time.perf_counter()
        patches = plan(outgoing, state.applied, write=True)  # as a request writes them: each as it is planned
        placeholders.append(_ms(start))
        undo_patches(original, patches)
    per_part = [1000 * ms / len(patches) for ms in placeholders] if patches else []
    return {
        "sync_and_strategies_ms": summary(update_ms),
        "sync_and_strategies_python_calls": calls,
        "placeholders_ms": summary(placeholders),
        "placeholder_us_per_part": summary(per_part),
        "pruned_parts": len(patches),
        "decided_calls": len(state.in_force()),
    }


def append_calls(session: BenchSession, working: list[Any], counts: range, config: DcpConfig) -> float:
    """Python function calls of syncing each of ``counts`` (one message more each), per append, on average.

    Every append is counted, not only the first: what one append costs depends on what it sets off
    (a mask that starts, a duplicate it makes), and the first append of two histories of different
    lengths may set off different things while the same run of appends averages them out.
    """
    state = SessionState("bench-calls", config, session.directory)
    state.update(working[: session.base])
    profiler = cProfile.Profile()
    profiler.enable()
    for count in counts:
        state.update(working[:count])
    profiler.disable()
    return round(profiled_calls(profiler) / len(counts), 1)


def profiled_calls(profiler: cProfile.Profile) -> int:
    """Python function calls a profiler counted, less its own ``disable`` (which it counts as a call)."""
    calls: int = pstats.Stats(profiler).total_calls  # type: ignore[attr-defined]
    return calls - 1


def dumps_timings(host: BenchHost, count: int, repeat: int) -> dict[str, Any]:
    """json.dumps of the outgoing list of the last warm request, as the host would send it (after pruning)."""
    outgoing = host.working[:count]
    host.request(count, keep=True)
    samples: list[float] = []
    size = 0
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            size = len(json.dumps(outgoing))
            samples.append(_ms(start))
    finally:
        host.undo()
    return {"json_dumps_ms": summary(samples), "request_json_mb": round(size / 1e6, 2)}


def unpruned_dumps_timings(host: BenchHost, session: BenchSession, repeat: int) -> dict[str, Any]:
    """json.dumps of the lists as the host holds them, before pruning: the cold request's and the last one's.

    The yardsticks the issue sets: what the host spends anyway to serialize a request it has
    not pruned. Samples of the two alternate, so that a change of load hits both alike.
    """
    cold_list, last_list = host.working[: session.base], host.working
    cold: list[float] = []
    last: list[float] = []
    for _ in range(repeat):
        cold.append(_dumps_ms(cold_list))
        last.append(_dumps_ms(last_list))
    return {"json_dumps_cold_list_ms": summary(cold), "json_dumps_unpruned_ms": summary(last)}


def _dumps_ms(outgoing: list[Any]) -> float:
    start = time.perf_counter()
    json.dumps(outgoing)
    return _ms(start)


def _ratio(value: float, yardstick: float, scale: float = 1.0, digits: int = 2) -> float:
    return round(scale * value / yardstick, digits) if yardstick else 0.0


def yardstick_ratios(row: dict[str, Any]) -> dict[str, Any]:
    """Cold and warm requests as ratios to json.dumps of the same list before pruning (the issue's yardstick)."""
    unpruned = row["json_dumps_unpruned_ms"]["median"]
    return {
        "cold_per_json_dumps": _ratio(row["cold_ms"]["median"], row["json_dumps_cold_list_ms"]["median"]),
        "restart_per_json_dumps": _ratio(row["restart_ms"]["median"], row["json_dumps_cold_list_ms"]["median"]),
        "cold_per_quiet_json_dumps": _ratio(row["cold_ms"]["median"], row["json_dumps_quiet_cold_list_ms"]["median"]),
        "restart_per_quiet_json_dumps": _ratio(
            row["restart_ms"]["median"], row["json_dumps_quiet_cold_list_ms"]["median"]
        ),
        "warm_percent_of_unpruned_json_dumps": {
            "median": _ratio(row["warm_ms"]["median"], unpruned, 100),
            "p95": _ratio(row["warm_ms"]["p95"], unpruned, 100),
        },
        "warm_fresh_copy_percent_of_unpruned_json_dumps": _ratio(row["warm_fresh_copy_ms"]["median"], unpruned, 100),
    }


def memory(session: BenchSession, config: DcpConfig) -> dict[str, Any]:
    """Bytes allocated and still held by a session's ledger and state after syncing the base history."""
    messages = session.messages[: session.base]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        state = SessionState("bench-memory", config, session.directory)
        state.update(messages)
        patches = plan(messages, state.applied)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    calls = max(1, session.tool_calls)
    del state, patches
    return {
        "session_bytes": held,
        "bytes_per_1000_calls": round(held * 1000 / calls),
        "mb_per_1000_calls": round(held / calls * 1000 / 1e6, 3),
    }


def savings(state: SessionState, request_tokens: int) -> dict[str, Any]:
    """Calls pruned and tokens saved per strategy on the final request, and in total."""
    totals = state.saved_by_strategy()
    by_strategy = {
        name: {"calls": totals.get(name, (0, 0))[0], "tokens": totals.get(name, (0, 0))[1]}
        for name in ALL_REASONS
    }
    saved = sum(v["tokens"] for v in by_strategy.values())
    decided = saved + sum(d.tokens_saved for d in state.waiting())
    costs = state.scheduler.totals
    return {
        "by_strategy": by_strategy,
        "calls": sum(v["calls"] for v in by_strategy.values()),
        "tokens": saved,
        "percent": round(100 * saved / request_tokens, 2) if request_tokens else 0.0,
        "decided_tokens": decided,
        "net_cost_saved_percent": round(100 * costs.saved / costs.cost_without, 2) if costs.cost_without else 0.0,
    }


PRICINGS: tuple[str, ...] = ("anthropic", "openai", "google")


def net_costs(history: list[dict[str, Any]], directory: str) -> dict[str, dict[str, float]]:
    """Per pricing, the session's net saving (% of its cost without the plugin), scheduler on and off.

    The plugin's own accounting of the request history the session implies: prompt-cache
    prices, the cached prefix of each request, the rewrites its placeholders cause.
    """
    out: dict[str, dict[str, float]] = {}
    for pricing in PRICINGS:
        out[pricing] = {}
        for mode, on in (("on", True), ("off", False)):
            config = DcpConfig.model_validate({"cache": {"scheduler": on, "pricing": pricing}})
            totals = from_scratch(history, directory, config).scheduler.totals
            out[pricing][mode] = round(100 * totals.saved / totals.cost_without, 2) if totals.cost_without else 0.0
    return out


def measure(session: BenchSession, repeat: int, warm: int, progress: Progress | None = None) -> dict[str, Any]:
    """Every number of one session: ``repeat`` samples of cold requests and json.dumps, ``warm`` of
    warm requests and steps, the session's remaining appended messages as fresh-copy warm requests."""
    say = progress or (lambda _text: None)
    config = CONFIGS["default"]
    row: dict[str, Any] = {
        "name": session.name,
        "source": session.source,
        "messages": session.base,
        "messages_appended": session.extra,
        "tool_calls": session.tool_calls,
    }
    host = BenchHost(session.messages, session.directory, config, f"bench-{session.name}")
    try:
        say(f"{session.name}: cold and warm requests through the hook")
        row.update(hook_timings(session, repeat, warm, host))
        incremental_decisions = decision_map(host.in_force())
        say(f"{session.name}: pipeline steps")
        row.update(step_timings(session, warm, host, config))
        say(f"{session.name}: json.dumps")
        row.update(dumps_timings(host, len(session.messages), repeat))
        row.update(unpruned_dumps_timings(host, session, repeat))
        say(f"{session.name}: restarts from a checkpoint")
        row.update(restart_timings(session, repeat, host))
    finally:
        host.close()
    row.update(yardstick_ratios(row))
    dumps_ms = row["json_dumps_ms"]
    for key in ("warm", "warm_vouched"):
        warm_ms = row[f"{key}_ms"]
        row[f"{key}_percent_of_json_dumps"] = {
            "median": _ratio(warm_ms["median"], dumps_ms["median"], 100),
            "p95": _ratio(warm_ms["p95"], dumps_ms["median"], 100),
        }
    say(f"{session.name}: from scratch, savings, memory")
    start = time.perf_counter()
    scratch = from_scratch(session.messages, session.directory, config)
    row["from_scratch_ms"] = round(_ms(start), 3)
    row["incremental_equals_from_scratch"] = incremental_decisions == decision_map(scratch.in_force())
    del scratch
    # Savings on the session as it was, without the benchmark's appended steps.
    history = session.messages[: session.base]
    request_tokens = sum(estimate_message_tokens(m) for m in history)
    row["request_tokens"] = request_tokens
    row["savings"] = {
        name: savings(from_scratch(history, session.directory, cfg), request_tokens) for name, cfg in CONFIGS.items()
    }
    row["net_cost_saved_percent"] = net_costs(history, session.directory)
    row["memory"] = memory(session, config)
    return row
