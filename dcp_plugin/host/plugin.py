"""The hook implementations the host loads through the `agent_host` entry point: wiring only."""

from __future__ import annotations

from typing import Any

from dcp_plugin.host.hostspec import hookimpl
from dcp_plugin.host.runtime import Runtime

RUNTIME = Runtime()


@hookimpl
def host_startup(context: dict[str, Any]) -> None:
    """Adopt the host's project directory and capabilities."""
    RUNTIME.startup(context)


@hookimpl
def chat_messages_transform(input: dict[str, Any], output: dict[str, Any]) -> None:
    """Prune obsolete tool content from the outgoing messages, in place."""
    RUNTIME.transform(input, output)


@hookimpl
def command_execute_before(input: dict[str, Any], output: dict[str, Any]) -> None:
    """Answer `/dcp ...` commands."""
    RUNTIME.command(input, output)
