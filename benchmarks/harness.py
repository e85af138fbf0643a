"""A pluggy host for benchmarks: loads the plugin from its entry point and replays requests cheaply.

The host of a real agent rebuilds the outgoing messages from storage for every request,
so the plugin sees pristine tool states each time. Copying a 20,000-message history per
request would cost far more than the plugin, so the host here keeps one working copy
whose tool-state dicts are shallow copies of the originals, sends prefixes of it, and
after each request puts back the original values of the fields the plugin replaced
(the same ``state.last_patches`` the plugin keeps). Restoring is not timed.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.replay.engine import load_plugin_host, undo_patches
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.pipeline.session import SessionState


def working_copy(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages whose parts and tool states are fresh dicts over the original values."""
    return [
        {
            **m,
            "parts": [
                {**p, "state": dict(p["state"])} if isinstance(p.get("state"), dict) else dict(p)
                for p in m["parts"]
            ],
        }
        for m in messages
    ]


class BenchHost:
    """Sends requests of one session through the hook and restores the working copy after each."""

    def __init__(self, messages: list[dict[str, Any]], directory: str, config: DcpConfig, session_id: str) -> None:
        self.original = messages
        self.working = working_copy(messages)
        self.session_id = session_id
        self.pm, self._plugin = load_plugin_host()
        # The hooks call the module's RUNTIME: a runtime of our own stands in for it while the
        # benchmark runs, so the process's plugin state is left as it was.
        self._saved_runtime = self._plugin.RUNTIME
        self.runtime = self._plugin.RUNTIME = Runtime()
        # A pinned config: the benchmark must not depend on the config files of the machine.
        self.runtime.use_config(config)
        # Nothing persisted: a benchmark must not write sessions into the user's data directory.
        use_store = getattr(self.runtime, "use_store", None)
        if callable(use_store):
            use_store(None)
        self.pm.hook.host_startup(context={"directory": directory})
        self._hook = self.pm.hook.chat_messages_transform
        # The history stands for the host's own heap: frozen, so that a collection triggered
        # during a request scans what the plugin allocated, not 20,000 messages of host data.
        gc.collect()
        gc.freeze()

    def state(self) -> SessionState | None:
        """The plugin's state of the benchmarked session."""
        return self.runtime.sessions.get(self.session_id)

    def forget(self) -> None:
        """Drop the session so the next request is a cold one."""
        self.runtime.sessions.pop(self.session_id, None)

    def request(self, count: int, keep: bool = False) -> float:
        """Send the first ``count`` messages through the hook; milliseconds it took (restore excluded).

        With ``keep`` the placeholders stay in the working copy until the caller restores them.
        """
        outgoing = self.working[:count]
        hook = self._hook
        start = time.perf_counter()
        hook(input={"sessionID": self.session_id}, output={"messages": outgoing})
        elapsed = (time.perf_counter() - start) * 1000
        state = self.state()
        if state is not None and not keep:
            undo_patches(self.original, state.last_patches)
        return elapsed

    def request_fresh(self, count: int) -> float:
        """Send a fresh copy of the first ``count`` messages; milliseconds it took.

        Building the copy and collecting the garbage it leaves are the host's work, not timed.
        """
        outgoing = working_copy(self.original[:count])
        gc.collect()
        hook = self._hook
        start = time.perf_counter()
        hook(input={"sessionID": self.session_id}, output={"messages": outgoing})
        return (time.perf_counter() - start) * 1000

    def close(self) -> None:
        """Forget the session, put the plugin's own runtime back, let the collector see the history again."""
        self.forget()
        self._plugin.RUNTIME = self._saved_runtime
        gc.unfreeze()
