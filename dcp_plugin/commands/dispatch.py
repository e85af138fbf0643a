"""Answers `/dcp <sub> <args>`: routes it to its subcommand over the runtime's public API, returns the text.

Every host path that runs a command (the pluggy hook, the bridge, the provider adapters) calls
:func:`answer` with plain values; the runtime never calls back up here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from dcp_plugin.commands import context, pin, stats, sweep
from dcp_plugin.commands.help import help_text
from dcp_plugin.host.results import SessionView
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.model.refs import ModelRef
from dcp_plugin.printable import escape_reply
from dcp_plugin.store import Stats

log = logging.getLogger("dcp_plugin")

COMMAND = "dcp"

# The shape of :func:`answer`: (runtime, command, arguments, session id, messages, model) -> the reply or None.
Answer = Callable[[Runtime, str, str, str, Sequence[Any] | None, ModelRef | None], str | None]


def answer(
    runtime: Runtime,
    command: str,
    arguments: str,
    session_id: str,
    messages: Sequence[Any] | None = None,
    model: ModelRef | None = None,
    *,
    items: int | None = None,
) -> str | None:
    """The reply to a slash command; None when it is not ``/dcp`` or the config leaves commands to the host.

    ``messages``: the session's history as the host holds it (None or empty when it sent none);
    ``model``: the model the host would send the next request to. A failing subcommand is
    answered with what failed, never raised: `/dcp` must not reach the model.
    """
    if command.strip().lstrip("/") != COMMAND:
        return None
    try:
        config = runtime.config()
        if not config.enabled or not config.commands.enabled:
            return None
    except Exception:  # noqa: BLE001
        log.exception("dcp: could not read the config for /dcp")
        return None
    try:
        return run(runtime, arguments, session_id, list(messages) if messages else None, model, items)
    except Exception as exc:  # noqa: BLE001 - answer the user rather than send /dcp to the model
        log.exception("dcp: /dcp %s failed", arguments)
        return escape_reply(f"dcp: /dcp {arguments} failed: {type(exc).__name__}: {exc}".replace("  ", " "))


def parse(arguments: str) -> tuple[str, list[str]]:
    """(subcommand, its arguments); an empty line is `help`."""
    words = arguments.split()
    if not words:
        return "help", []
    return words[0].lower(), words[1:]


def run(
    runtime: Runtime,
    arguments: str,
    session_id: str,
    messages: list[Any] | None,
    model: ModelRef | None,
    items: int | None = None,
) -> str:
    """The reply text for one `/dcp` invocation (raises when a subcommand fails).

    Replies echo what the user typed and what tools named (ids, paths, session ids): their control
    and bidirectional characters are escaped, so none can restyle or reorder the user's screen.
    """
    return escape_reply(_route(runtime, arguments, session_id, messages, model, items))


def _route(
    runtime: Runtime,
    arguments: str,
    session_id: str,
    messages: list[Any] | None,
    model: ModelRef | None,
    items: int | None = None,
) -> str:
    sub, args = parse(arguments)
    if sub in ("help", "-h", "--help"):
        return help_text()
    if sub == "context":
        return run_context(runtime, session_id, messages, model, items)
    if sub == "stats":
        return run_stats(runtime, session_id, messages, model)
    if sub == "sweep":
        return run_sweep(runtime, session_id, messages, model, args)
    if sub in ("pin", "unpin"):
        return run_pin(runtime, session_id, messages, model, args, pinned=sub == "pin")
    return help_text(unknown=sub)


def run_context(
    runtime: Runtime, session_id: str, messages: list[Any] | None, model: ModelRef | None, items: int | None = None
) -> str:
    if messages is None:
        return "dcp context: the host sent no messages for this session; nothing to show yet."
    breakdown = context_breakdown(runtime, session_id, messages, model)
    if items is not None:
        breakdown.messages = items
    text = context.render_text(breakdown)
    if not runtime.config().enabled:
        text += "\nThe plugin is disabled (`enabled: false`): nothing is pruned."
    return text


def context_breakdown(
    runtime: Runtime, session_id: str, messages: list[Any], model: ModelRef | None
) -> context.ContextBreakdown:
    """The `/dcp context` breakdown of a session as it stands (``dcp opencode context`` shows the same)."""
    snapshot = runtime.sync_for_command(session_id, messages, model)
    view = runtime.view(session_id)
    config = view.config if view is not None else runtime.config()
    breakdown = context.build_breakdown(
        session_id,
        messages,
        view.in_force if view is not None else (),
        snapshot,
        config.context_budget.image_token_estimate,
        view.directory if view is not None else runtime.directory,
    )
    if view is not None:
        breakdown.waiting = (len(view.waiting), sum(d.tokens_saved for d in view.waiting))
        breakdown.model_tools = dict(view.model_tools)
        breakdown.plugin_text = view.plugin_text
    breakdown.stats = session_stats(runtime, session_id)[0]
    return breakdown


def session_stats_from_memory(view: SessionView | None) -> Stats | None:
    """This process's view of a session, when the store cannot answer."""
    if view is None:
        return None
    costs = view.costs
    return Stats(
        by_strategy=dict(view.saved_by_strategy),
        sessions=1,
        requests=int(costs.get("requests", 0)),
        cost_without=float(costs.get("cost_without", 0.0)),
        cost_with=float(costs.get("cost_with", 0.0)),
        rewritten=int(costs.get("rewritten_tokens", 0)),
    )


def session_stats(runtime: Runtime, session_id: str) -> tuple[Stats | None, Stats | None, str | None]:
    """The one accounting `/dcp stats` and `/dcp context` show: (this session's, all time, a note on the source).

    The store's counters when it answers (what `dcp stats` reads too), else this process's.
    """
    session, all_time = runtime.stored_stats(session_id)
    if all_time is not None:
        return session, all_time, None
    note = (
        "The state database is busy (another process holds its lock): this process's numbers for this "
        "session are shown, from memory; they are saved once the database is free."
        if runtime.store_busy()
        else "The state database is unavailable: only this process's numbers for this session are shown."
    )
    return session_stats_from_memory(runtime.view(session_id)), None, note


def run_stats(runtime: Runtime, session_id: str, messages: list[Any] | None, model: ModelRef | None) -> str:
    runtime.sync_for_command(session_id, messages, model)
    session, all_time, note = session_stats(runtime, session_id)
    view = runtime.view(session_id)
    return stats.render_text(session_id, session, all_time, note, view.plugin_text if view is not None else None)


def run_sweep(
    runtime: Runtime, session_id: str, messages: list[Any] | None, model: ModelRef | None, args: list[str]
) -> str:
    try:
        count = sweep.parse_count(args)
    except ValueError as exc:
        return f"dcp sweep: {exc}.\nUsage: /dcp sweep [N]"
    if messages is None:
        return "dcp sweep: nothing swept: the host sent no messages."
    runtime.sync_for_command(session_id, messages, model)
    outcome = runtime.sweep(session_id, messages, count)
    if outcome is None:
        return "dcp sweep: nothing swept: the plugin is disabled."
    return sweep.render_text(outcome)


def run_pin(
    runtime: Runtime,
    session_id: str,
    messages: list[Any] | None,
    model: ModelRef | None,
    args: list[str],
    *,
    pinned: bool,
) -> str:
    name = "pin" if pinned else "unpin"
    ids = pin.parse_ids(args)
    if not ids and not pinned:
        return f"dcp unpin: name the outputs to unpin.\nUsage: /dcp unpin <id> [<id>...]\n{pin.WHERE_IDS}"
    if messages is None:
        return f"dcp {name}: the host sent no messages for this session; nothing to {name}."
    runtime.sync_for_command(session_id, messages, model)
    if not ids:
        view = runtime.view(session_id)
        if view is None:
            return "dcp pin: no outputs are pinned in this session."
        return pin.listing_text(view, messages)
    outcome = runtime.pin(session_id, ids, pinned=pinned)
    if outcome is None:
        return f"dcp {name}: nothing changed: the plugin has not seen this session."
    return pin.outcome_text(outcome, messages, runtime.directory)
