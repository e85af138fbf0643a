"""A pluggy host for benchmarks: loads the plugin from its entry point and replays requests cheaply.

The host of a real agent rebuilds the outgoing messages from storage for every request,
so the plugin sees pristine tool states each time. Copying a 20,000-message history per
request would cost far more than the plugin, so the host here keeps one working copy
whose tool-state dicts are shallow copies of the originals, sends prefixes of it, and
after each request puts back the original values of the fields the plugin replaced
(the decisions of the runtime's ``last_sent``). Restoring is not timed.
"""

from __future__ import annotations

import gc
import json
import time
from typing import Any

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline.decisions import Decision
from dcp_plugin.replay.engine import plugin_host, undo_patches


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
        # A plugin instance of its own with a pinned config (the benchmark must not depend on the
        # machine's config files) and no store (nothing written into the user's data directory).
        self.pm, self.runtime = plugin_host(directory, config)
        self._hook = self.pm.hook.chat_messages_transform
        self._sent = 0  # messages in the latest request: what a vouching host says is unchanged
        self._texts: list[str] | None = None  # each message as JSON, made on the first decoded request
        # The history stands for the host's own heap: frozen, so that a collection triggered
        # during a request scans what the plugin allocated, not 20,000 messages of host data.
        gc.collect()
        gc.freeze()

    def in_force(self) -> tuple[Decision, ...]:
        """The decisions in force in the benchmarked session."""
        view = self.runtime.view(self.session_id)
        return view.in_force if view is not None else ()

    def restarts(self) -> int:
        """How often the benchmarked session started over (a rewritten history)."""
        view = self.runtime.view(self.session_id)
        return view.restarts if view is not None else 0

    def forget(self) -> None:
        """Drop the session so the next request is a cold one."""
        self.runtime.drop(self.session_id)
        self._sent = 0

    def _input(self, count: int, vouch: bool) -> dict[str, Any]:
        """The hook's input; with ``vouch``, the host's word that the messages of its previous request are unchanged.

        True of this host: after every request the fields the plugin wrote are put back.
        """
        hook_input: dict[str, Any] = {"sessionID": self.session_id}
        if vouch and self._sent:
            hook_input["unchangedBefore"] = min(self._sent, count)
        self._sent = count
        return hook_input

    def request(self, count: int, keep: bool = False, vouch: bool = False) -> float:
        """Send the first ``count`` messages through the hook; milliseconds it took (restore excluded).

        With ``keep`` the placeholders stay in the working copy until the caller restores them;
        ``vouch``: the host says which messages are unchanged since its previous request.
        """
        outgoing = self.working[:count]
        hook, hook_input = self._hook, self._input(count, vouch)
        start = time.perf_counter()
        hook(input=hook_input, output={"messages": outgoing})
        elapsed = (time.perf_counter() - start) * 1000
        if not keep:
            self.undo()
        return elapsed

    def undo(self) -> None:
        """Put back what the latest request replaced in the working copy."""
        sent = self.runtime.last_sent(self.session_id)
        if sent is not None:
            undo_patches(self.original, sent.located(self.working[: self._sent]))

    def request_fresh(self, count: int, vouch: bool = False) -> float:
        """Send a fresh copy of the first ``count`` messages; milliseconds it took (``vouch`` as for :meth:`request`).

        Building the copy and collecting the garbage it leaves are the host's work, not timed.
        """
        outgoing = working_copy(self.original[:count])
        gc.collect()
        hook, hook_input = self._hook, self._input(count, vouch)
        start = time.perf_counter()
        hook(input=hook_input, output={"messages": outgoing})
        return (time.perf_counter() - start) * 1000

    def request_decoded(self, count: int, vouch: bool = False) -> tuple[float, float]:
        """Send the first ``count`` messages decoded from JSON; milliseconds of the request, then of ``json.dumps`` of what it sent.

        A host that loads its history from storage for every request sends objects as decoding
        lays them out: each message's dicts among its own strings, none shared with another list
        (a fresh copy's strings and inputs are the history's own, allocated long before). The
        plugin's cost is reaching those objects, so it depends on that layout; ``json.dumps`` of
        the pruned list, as the host then sends it, is timed right after on the same objects.
        Decoding and collecting the garbage it leaves are the host's work, not timed.
        """
        if self._texts is None:
            self._texts = [json.dumps(message) for message in self.original]
        outgoing = json.loads("[" + ",".join(self._texts[:count]) + "]")
        gc.collect()
        hook, hook_input = self._hook, self._input(count, vouch)
        start = time.perf_counter()
        hook(input=hook_input, output={"messages": outgoing})
        elapsed = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        json.dumps(outgoing)
        return elapsed, (time.perf_counter() - start) * 1000

    def forget_json(self) -> None:
        """Let go of the history as JSON that decoded requests are made from."""
        self._texts = None

    def close(self) -> None:
        """Forget the session and let the collector see the history again."""
        self.forget()
        self.forget_json()
        gc.unfreeze()
