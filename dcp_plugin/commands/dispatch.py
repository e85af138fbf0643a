"""Routes `/dcp <sub> <args>` to its subcommand over the plain data the runtime hands in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dcp_plugin.budget.snapshot import ContextSnapshot
from dcp_plugin.commands import context, stats, sweep
from dcp_plugin.commands.help import help_text
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline.ledger import CallRecord
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.host.store import Stats
from dcp_plugin.pipeline.strategies import SWEEP


@dataclass
class CommandEnv:
    """What a subcommand may use: the synced session (None when the plugin is off), and callbacks."""

    session_id: str
    messages: list[Any] | None
    state: SessionState | None
    config: DcpConfig
    snapshot: ContextSnapshot | None
    record_sweep: Callable[[list[CallRecord]], None]
    stored_stats: Callable[[], tuple[Stats | None, Stats | None]]


def parse(arguments: str) -> tuple[str, list[str]]:
    """(subcommand, its arguments); an empty line is `help`."""
    words = arguments.split()
    if not words:
        return "help", []
    return words[0].lower(), words[1:]


def run(env: CommandEnv, arguments: str) -> str:
    """The reply text for one `/dcp` invocation."""
    sub, args = parse(arguments)
    if sub in ("help", "-h", "--help"):
        return help_text()
    if sub == "context":
        return run_context(env)
    if sub == "stats":
        return run_stats(env)
    if sub == "sweep":
        return run_sweep(env, args)
    return help_text(unknown=sub)


def run_context(env: CommandEnv) -> str:
    if env.messages is None:
        return "dcp context: the host sent no messages for this session; nothing to show yet."
    decided = env.state.decided if env.state is not None else []
    breakdown = context.build_breakdown(
        env.session_id,
        env.messages,
        decided,
        env.snapshot,
        env.config.context_budget.image_token_estimate,
        env.state.directory if env.state is not None else None,
    )
    text = context.render_text(breakdown)
    if env.state is None:
        text += "\nThe plugin is disabled (`enabled: false`): nothing is pruned."
    return text


def session_stats_from_memory(state: SessionState | None) -> Stats | None:
    """This process's view of a session, when the store cannot answer."""
    if state is None:
        return None
    return Stats(by_strategy={k: v for k, v in state.saved_by_strategy().items() if k}, sessions=1)


def run_stats(env: CommandEnv) -> str:
    session, all_time = env.stored_stats()
    note = None
    if all_time is None:
        session = session_stats_from_memory(env.state)
        note = "The state database is unavailable: only this process's numbers for this session are shown."
    return stats.render_text(env.session_id, session, all_time, note)


def run_sweep(env: CommandEnv, args: list[str]) -> str:
    try:
        count = sweep.parse_count(args)
    except ValueError as exc:
        return f"dcp sweep: {exc}.\nUsage: /dcp sweep [N]"
    if env.state is None or env.messages is None:
        reason = "the plugin is disabled" if env.messages is not None else "the host sent no messages"
        return f"dcp sweep: nothing swept: {reason}."
    state = env.state
    plan = sweep.select(
        state.ledger.records, env.messages, count, env.config.sweep_protected(), state.protector, state.directory
    )
    swept = state.add_manual(env.messages, plan.eligible, SWEEP)
    env.record_sweep(swept)
    return sweep.render_text(plan, swept)
