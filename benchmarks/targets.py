"""The issue's performance targets, checked against measured sessions."""

from __future__ import annotations

from typing import Any

WARM_MS_AT_1000 = 2.0
WARM_MS_AT_20000 = 30.0
WARM_PERCENT_OF_DUMPS_AT_20000 = 5.0
MB_PER_1000_CALLS = 1.0
# The cold target, 1.5 s for the busy 20,000-message session, as a ratio to json.dumps of
# that list before pruning (about 1 s on the machine the issue was measured on), so that load cancels out.
COLD_PER_DUMPS_AT_20000 = 1.5
# Sync + strategies may vary with what the new message holds, not with the history's length:
# counted in Python function calls, which unlike microseconds do not depend on cache state, per
# append over the same appends. What those appends set off differs a little with the history
# (masking running or not, outputs it keeps in view): 0.97-1.03 between 100, 1,000 and 20,000
# messages. A call per message or per record of the history would multiply it by about thirty.
FLAT_RATIO = 1.1


# Targets read straight from the busy 20,000-message row: (name, the row's key, limit).
_BUSY_RATIOS = (
    (
        "busy session, warm request on a fresh copy as % of json.dumps before pruning at 20,000",
        "warm_fresh_copy_percent_of_unpruned_json_dumps",
        WARM_PERCENT_OF_DUMPS_AT_20000,
    ),
    (
        "busy session, cold request / json.dumps of the same list before pruning at 20,000",
        "cold_per_json_dumps",
        COLD_PER_DUMPS_AT_20000,
    ),
    (
        "busy session, a restarted host's first request (checkpoint) / json.dumps at 20,000",
        "restart_per_json_dumps",
        COLD_PER_DUMPS_AT_20000,
    ),
    (
        "busy session, cold request / json.dumps of that list, no session held, timed next to it, at 20,000",
        "cold_per_quiet_json_dumps",
        COLD_PER_DUMPS_AT_20000,
    ),
    (
        "busy session, restart (checkpoint) / json.dumps of that list, no session held, at 20,000",
        "restart_per_quiet_json_dumps",
        COLD_PER_DUMPS_AT_20000,
    ),
)


def _generated(rows: list[dict[str, Any]], size: int) -> dict[str, Any] | None:
    return next((r for r in rows if r["source"] == "generated" and r["messages"] == size), None)


def _target(name: str, limit: str, value: float | None, met: bool | None) -> dict[str, Any]:
    return {"target": name, "limit": limit, "measured": value, "met": met}


def _at_most(name: str, limit: float, value: float | None) -> dict[str, Any]:
    """A target met when ``value`` is at most ``limit``; unknown when not measured."""
    return _target(name, f"<= {limit:g}", value, None if value is None else value <= limit)


def _both_in_one_run(busy: dict[str, Any] | None, vouched: bool) -> dict[str, Any]:
    """The warm and the first-sight targets of the busy 20,000-message session, met together in one run.

    Warm: % of json.dumps of the request sent (``vouched``: the host vouching for the messages
    of its previous request); first sight: cold / json.dumps of the same list with no session
    held, timed next to each cold request (the same json.dumps timed while the benchmark holds its
    session took 1.2-1.5 times as long, a yardstick that flattered the plugin). Both come from the
    same run, so one cannot be bought with load the other missed.
    """
    host = "host vouching for its previous request" if vouched else "host saying nothing"
    name = f"busy session, warm <= 5 % of json.dumps ({host}) and first sight <= 1.5 x json.dumps (no session held), same run, at 20,000"
    limit = f"<= {WARM_PERCENT_OF_DUMPS_AT_20000:g} % and <= {COLD_PER_DUMPS_AT_20000:g}"
    if busy is None:
        return _target(name, limit, None, None)
    key = "warm_vouched_percent_of_json_dumps" if vouched else "warm_percent_of_json_dumps"
    warm, cold = busy[key]["median"], busy["cold_per_quiet_json_dumps"]
    met = warm <= WARM_PERCENT_OF_DUMPS_AT_20000 and cold <= COLD_PER_DUMPS_AT_20000
    return {**_target(name, limit, warm, met), "note": f"warm {warm:g} %, first sight {cold:g} x json.dumps"}


def evaluate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each target with its measured value (median) and whether it is met; None when not measured."""
    out: list[dict[str, Any]] = []
    at_1000, at_20000 = _generated(rows, 1_000), _generated(rows, 20_000)
    value = at_1000["warm_ms"]["median"] if at_1000 else None
    out.append(_at_most("warm request at 1,000 messages (ms)", WARM_MS_AT_1000, value))
    value = at_20000["warm_ms"]["median"] if at_20000 else None
    out.append(_at_most("warm request at 20,000 messages (ms)", WARM_MS_AT_20000, value))
    value = at_20000["warm_percent_of_json_dumps"]["median"] if at_20000 else None
    out.append(_at_most("warm request as % of json.dumps at 20,000", WARM_PERCENT_OF_DUMPS_AT_20000, value))
    generated = sorted((r for r in rows if r["source"] == "generated"), key=lambda r: r["messages"])
    value, note = None, None
    if len(generated) >= 2:
        small, large = generated[0], generated[-1]
        value = round(large["sync_and_strategies_python_calls"] / small["sync_and_strategies_python_calls"], 2)
        small_ms, large_ms = small["sync_and_strategies_ms"]["median"], large["sync_and_strategies_ms"]["median"]
        note = f"{small_ms:g} ms at {small['messages']:,} messages, {large_ms:g} ms at {large['messages']:,}"
    target = _at_most(
        "sync + strategies work, largest / smallest history (Python calls per append, the same one-message appends)", FLAT_RATIO, value
    )
    target["note"] = note
    out.append(target)
    busy = next((r for r in rows if r["source"] == "busy" and r["messages"] == 20_000), None)
    value = None
    if busy is not None and busy["json_dumps_ms"]["median"]:
        value = round(100 * busy["warm_fresh_copy_ms"]["median"] / busy["json_dumps_ms"]["median"], 2)
    out.append(_at_most(
        "busy session, warm request on a fresh copy as % of json.dumps at 20,000", WARM_PERCENT_OF_DUMPS_AT_20000, value
    ))
    for name, key, limit in _BUSY_RATIOS:
        out.append(_at_most(name, limit, busy[key] if busy is not None else None))
    warm = busy["warm_percent_of_json_dumps"]["median"] if busy is not None else None
    out.append(_at_most("busy session, warm request as % of json.dumps at 20,000", WARM_PERCENT_OF_DUMPS_AT_20000, warm))
    warm = busy["warm_vouched_percent_of_json_dumps"]["median"] if busy is not None else None
    out.append(_at_most(
        "busy session, warm request as % of json.dumps at 20,000, the host vouching for its previous request",
        WARM_PERCENT_OF_DUMPS_AT_20000,
        warm,
    ))
    out.append(_both_in_one_run(busy, vouched=False))
    out.append(_both_in_one_run(busy, vouched=True))
    value = max((r["memory"]["mb_per_1000_calls"] for r in rows), default=None)
    out.append(_at_most("session memory per 1,000 tool calls (MB)", MB_PER_1000_CALLS, value))
    return out
