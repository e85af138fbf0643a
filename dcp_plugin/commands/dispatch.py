"""Routes `/dcp <sub> <args>` to its subcommand, over the runtime's public API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dcp_plugin.commands import context, pin, stats, sweep
from dcp_plugin.commands.help import help_text
from dcp_plugin.host.store import Stats
from dcp_plugin.pipeline.conversation import ModelRef, model_ref, session_id_of

if TYPE_CHECKING:
    from dcp_plugin.host.runtime import Runtime, SessionView


def parse(arguments: str) -> tuple[str, list[str]]:
    """(subcommand, its arguments); an empty line is `help`."""
    words = arguments.split()
    if not words:
        return "help", []
    return words[0].lower(), words[1:]


def run(runtime: Runtime, input: Mapping[str, Any], arguments: str) -> str:
    """The reply text for one `/dcp` invocation; ``input`` is the command hook's input."""
    sub, args = parse(arguments)
    if sub in ("help", "-h", "--help"):
        return help_text()
    raw = input.get("messages")
    messages: list[Any] | None = raw if isinstance(raw, list) and raw else None
    session_id = session_id_of(input, messages or [])
    if sub == "context":
        return run_context(runtime, session_id, messages, input)
    if sub == "stats":
        return run_stats(runtime, session_id, messages, input)
    if sub == "sweep":
        return run_sweep(runtime, session_id, messages, input, args)
    if sub in ("pin", "unpin"):
        return run_pin(runtime, session_id, messages, input, args, pinned=sub == "pin")
    return help_text(unknown=sub)


def run_context(runtime: Runtime, session_id: str, messages: list[Any] | None, input: Mapping[str, Any]) -> str:
    if messages is None:
        return "dcp context: the host sent no messages for this session; nothing to show yet."
    breakdown = context_breakdown(runtime, session_id, messages, model_ref(input.get("model")))
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
        rewritten_tokens=int(costs.get("rewritten_tokens", 0)),
    )


def session_stats(runtime: Runtime, session_id: str) -> tuple[Stats | None, Stats | None, str | None]:
    """The one accounting `/dcp stats` and `/dcp context` show: (this session's, all time, a note on the source).

    The store's counters when it answers (what `dcp stats` reads too), else this process's.
    """
    session, all_time = runtime.stored_stats(session_id)
    if all_time is not None:
        return session, all_time, None
    note = "The state database is unavailable: only this process's numbers for this session are shown."
    return session_stats_from_memory(runtime.view(session_id)), None, note


def run_stats(runtime: Runtime, session_id: str, messages: list[Any] | None, input: Mapping[str, Any]) -> str:
    runtime.sync_for_command(session_id, messages, model_ref(input.get("model")))
    session, all_time, note = session_stats(runtime, session_id)
    view = runtime.view(session_id)
    return stats.render_text(session_id, session, all_time, note, view.plugin_text if view is not None else None)


def run_sweep(
    runtime: Runtime, session_id: str, messages: list[Any] | None, input: Mapping[str, Any], args: list[str]
) -> str:
    try:
        count = sweep.parse_count(args)
    except ValueError as exc:
        return f"dcp sweep: {exc}.\nUsage: /dcp sweep [N]"
    if messages is None:
        return "dcp sweep: nothing swept: the host sent no messages."
    runtime.sync_for_command(session_id, messages, model_ref(input.get("model")))
    outcome = runtime.sweep(session_id, messages, count)
    if outcome is None:
        return "dcp sweep: nothing swept: the plugin is disabled."
    return sweep.render_text(outcome.plan, outcome.swept)


def run_pin(
    runtime: Runtime,
    session_id: str,
    messages: list[Any] | None,
    input: Mapping[str, Any],
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
    runtime.sync_for_command(session_id, messages, model_ref(input.get("model")))
    if not ids:
        view = runtime.view(session_id)
        if view is None:
            return "dcp pin: no outputs are pinned in this session."
        return pin.listing_text(view, messages)
    outcome = runtime.pin(session_id, ids, pinned=pinned)
    if outcome is None:
        return f"dcp {name}: nothing changed: the plugin has not seen this session."
    return pin.outcome_text(outcome, messages, runtime.directory)
