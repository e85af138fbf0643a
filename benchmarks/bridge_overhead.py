"""Per-request cost of the OpenCode bridge: one-message deltas through the real server process over pipes.

    python benchmarks/bridge_overhead.py [--sizes 100,1000,10000] [--requests 40]

For each size N a generated session of N messages is sent once in full (the cold request, as
after a bridge start), then `--requests` warm requests each add one message, exactly as the JS
shim sends them (base, fingerprint, one new message, the last reply's patch token, so
replies carry only new patches). Timed on the Python side: encode the
request, write it to the child's stdin, read and decode the reply line. For comparison: the
same warm requests answered by the server in-process (no pipes), a `ping` round trip (the pipe
and JSON floor), and one `json.dumps` of the whole N-message list (what the host pays to send
the request anyway). The child runs with a throwaway HOME, so its config is the defaults and
its store lives in a temp dir. Prints a table; nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dcp_plugin.adapters.bridge.client import BridgeClient
from dcp_plugin.adapters.bridge.server import BridgeServer
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session

SESSION = "ses_bench"


def fingerprint(messages: list[dict[str, Any]], base: int) -> dict[str, Any]:
    return {
        "count": base,
        "firstID": messages[0]["info"]["id"] if base else None,
        "lastID": messages[base - 1]["info"]["id"] if base else None,
    }


def request(rid: int, messages: list[dict[str, Any]], base: int, total: int, token: str | None = None) -> dict[str, Any]:
    """The shim's transform request for ``messages[:total]`` when the child holds ``messages[:base]``."""
    return {
        "id": rid,
        "op": "transform",
        "sessionID": SESSION,
        "reset": base == 0,
        "base": base,
        "messages": messages[base:total],
        "fingerprint": fingerprint(messages, base),
        "total": total,
        "model": {"providerID": "bench", "modelID": "bench-model", "limit": {"context": 200000, "output": 8192}},
        "patchToken": token,
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def isolated_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_CACHE_HOME=str(home / ".cache"),
    )
    env.pop("OPENCODE_CONFIG_DIR", None)
    return env


def over_pipes(messages: list[dict[str, Any]], size: int, warm: int, home: Path) -> dict[str, Any]:
    """Cold and warm round trips through a real `python -m dcp_plugin.adapters.bridge` child."""
    with BridgeClient(env=isolated_env(home), cwd=str(home), stderr=None) as client:
        client.request("startup", context={"directory": DEFAULT_DIRECTORY, "worktree": DEFAULT_DIRECTORY, "projectID": "bench"})
        pings = []
        for _ in range(20):
            start = time.perf_counter()
            client.request("ping")
            pings.append(time.perf_counter() - start)
        stdout = client.proc.stdout
        assert stdout is not None

        def round_trip(body: dict[str, Any]) -> tuple[float, dict[str, Any], int, int]:
            start = time.perf_counter()
            line = (json.dumps(body, separators=(",", ":")) + "\n").encode()
            client.stdin.write(line)
            client.stdin.flush()
            while True:
                raw = stdout.readline()
                reply = json.loads(raw)
                if "event" not in reply:
                    break
            elapsed = time.perf_counter() - start
            if not reply.get("ok"):
                raise RuntimeError(f"bridge answered {reply}")
            return elapsed, reply, len(line), len(raw)

        cold, reply, cold_bytes, cold_in = round_trip(request(1, messages, 0, size))
        patches = len(reply["patches"])
        times: list[float] = []
        sent: list[int] = []
        received: list[int] = []
        for i in range(warm):
            token = reply.get("patchToken")
            elapsed, reply, out_bytes, in_bytes = round_trip(request(2 + i, messages, size + i, size + i + 1, token))
            patches = patches + len(reply["patches"]) if reply.get("incremental") else len(reply["patches"])
            times.append(elapsed)
            sent.append(out_bytes)
            received.append(in_bytes)
    return {
        "cold": cold,
        "cold_bytes": cold_bytes,
        "warm": times,
        "ping": statistics.median(pings),
        "patches": patches,
        "cold_in": cold_in,
        "sent": statistics.median(sent),
        "received": statistics.median(received),
    }


class TimedRuntime(Runtime):
    """A runtime that adds up the time spent in the plugin's own work (prepare and finish)."""

    core = 0.0

    def prepare(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return super().prepare(*args, **kwargs)
        finally:
            self.core += time.perf_counter() - start

    def finish(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return super().finish(*args, **kwargs)
        finally:
            self.core += time.perf_counter() - start


def in_process(messages: list[dict[str, Any]], size: int, warm: int) -> tuple[list[float], float]:
    """The same warm requests handled by a BridgeServer in this process (JSON in and out, no pipes).

    Returns the times and the median share of them spent in the plugin itself (Runtime.prepare and
    finish); the rest is the bridge's own work (parse, mirror, patch serialization).
    """
    lines: list[str] = []
    runtime = TimedRuntime(DEFAULT_DIRECTORY)
    server = BridgeServer(lines.append, runtime)
    server.handle_line(json.dumps(request(1, messages, 0, size)))
    token = json.loads(lines[-1]).get("patchToken")
    times = []
    core = []
    for i in range(warm):
        line = json.dumps(request(2 + i, messages, size + i, size + i + 1, token), separators=(",", ":"))
        runtime.core = 0.0
        start = time.perf_counter()
        server.handle_line(line)
        token = json.loads(lines[-1]).get("patchToken")
        times.append(time.perf_counter() - start)
        core.append(runtime.core)
    return times, statistics.median(core)


def dumps_time(messages: list[dict[str, Any]]) -> float:
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        json.dumps(messages)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000", help="session sizes in messages, comma-separated")
    parser.add_argument("--requests", type=int, default=40, help="warm requests per size (default 40)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    warm = max(1, args.requests)

    ms = 1000.0
    rows = []
    for size in sizes:
        messages = generate_session(size + warm, seed=1)["messages"]
        with tempfile.TemporaryDirectory(prefix="dcp-bridge-bench-") as tmp:
            piped = over_pipes(messages, size, warm, Path(tmp))
        local, core = in_process(messages, size, warm)
        rows.append(
            (
                f"{size:,}",
                f"{statistics.median(piped['warm']) * ms:.2f}",
                f"{percentile(piped['warm'], 0.95) * ms:.2f}",
                f"{statistics.median(local) * ms:.2f}",
                f"{core * ms:.2f}",
                f"{piped['ping'] * ms:.3f}",
                f"{piped['cold'] * ms:.0f}",
                f"{dumps_time(messages[:size]) * ms:.1f}",
                f"{piped['patches']:,}",
                f"{piped['sent'] / 1024:.1f} / {piped['received'] / 1024:.1f}",
                f"{piped['cold_bytes'] / 1024 / 1024:.1f} / {piped['cold_in'] / 1024 / 1024:.2f}",
            )
        )

    header = (
        "messages",
        "warm ms (median)",
        "warm ms (p95)",
        "in-process ms",
        "of it plugin ms",
        "ping ms",
        "cold ms",
        "json.dumps ms",
        "patches",
        "warm KiB out/in",
        "cold MiB out/in",
    )
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print(f"bridge round trip, {warm} warm one-message requests per size; Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs")
    print("  ".join(h.rjust(w) for h, w in zip(header, widths, strict=False)))
    for row in rows:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=False)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
