"""An environment switch that prints every hook call of a plugin manager: DCP_TRACE_HOOKS=1."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import pluggy

ENV_VAR = "DCP_TRACE_HOOKS"


def _summary(kwargs: Mapping[str, Any]) -> str:
    out = []
    for key, value in kwargs.items():
        messages = value.get("messages") if isinstance(value, dict) else None
        shown = f"{{messages: {len(messages)}}}" if isinstance(messages, list) else type(value).__name__
        out.append(f"{key}={shown}")
    return ", ".join(out)


def trace_hooks(pm: pluggy.PluginManager, env: Mapping[str, str] | None = None) -> bool:
    """Print each hook call and its duration to stderr when DCP_TRACE_HOOKS is set; whether it is."""
    if not (os.environ if env is None else env).get(ENV_VAR):
        return False

    def before(name: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
        plugins = ", ".join(impl.plugin_name for impl in impls)
        print(f"[hook] {name}({_summary(kwargs)}) -> {plugins}", file=sys.stderr)

    def after(outcome: pluggy.Result[Any], name: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
        failed = outcome.exception
        print(f"[hook] {name} {'raised ' + repr(failed) if failed else 'done'}", file=sys.stderr)

    pm.add_hookcall_monitoring(before, after)
    return True
