"""A held session's read-only picture for the commands, in frozen rows."""

from __future__ import annotations

from types import MappingProxyType

from dcp_plugin.cost.overhead import PluginText, plugin_text
from dcp_plugin.cost.prices import pricing_for
from dcp_plugin.host.held import HeldSession
from dcp_plugin.host.results import SessionView
from dcp_plugin.host.rows import call_rows, prune_rows
from dcp_plugin.pipeline.modeltools import definitions, system_text
from dcp_plugin.pipeline.session import SessionState


def session_view(session: HeldSession, tools_offered: bool) -> SessionView:
    """The picture of a session as it stands (hold its lock)."""
    state = session.state
    return SessionView(
        state.session_id,
        state.config,
        state.directory,
        prune_rows(state.in_force()),
        prune_rows(state.waiting()),
        call_rows(state.records),
        state.saved_by_strategy(),
        state.restarts,
        {**state.describe_costs(), "pricing": pricing_for(session.model, state.config.cache).family},
        MappingProxyType(state.tool_tallies()),
        state.pinned,
        _plugin_text(state, tools_offered),
    )


def _plugin_text(state: SessionState, tools_offered: bool) -> PluginText:
    """What the plugin's own text adds to every request of the session (nothing while the tools are not offered)."""
    if not (tools_offered and state.config.enabled):
        return PluginText()
    tools = state.config.tools
    return plugin_text(system_text(tools), definitions(tools), state.list_tokens)
