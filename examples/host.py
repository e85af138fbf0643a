"""The handful of lines a Python agent host needs to run dcp_plugin before every request."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pluggy

import dcp_plugin.host.hostspec
from dcp_plugin.host.tracing import trace_hooks
from dcp_plugin.replay.sessionfile import example_session_path, load_session


def main() -> None:
    pm = pluggy.PluginManager("agent_host")
    pm.add_hookspecs(dcp_plugin.host.hostspec)
    pm.load_setuptools_entrypoints("agent_host")
    trace_hooks(pm)  # DCP_TRACE_HOOKS=1 prints every hook call to stderr
    # "persist": False keeps this demo out of your pruning statistics; a real host leaves it out.
    pm.hook.host_startup(
        context={"directory": str(Path.cwd()), "notify": lambda sid, text: print(f"[{sid}] {text}"), "persist": False}
    )

    path = Path(sys.argv[1]) if len(sys.argv) > 1 else example_session_path()
    _, stored = load_session(path)
    # A host builds the outgoing list from its storage for every request; the plugin edits that copy.
    outgoing = copy.deepcopy(stored)
    pm.hook.chat_messages_transform(input={}, output={"messages": outgoing})
    before, after = len(json.dumps(stored)), len(json.dumps(outgoing))
    print(f"{len(outgoing)} messages: {before:,} characters stored, {after:,} sent ({100 * (before - after) / before:.0f}% less)")


if __name__ == "__main__":
    main()
