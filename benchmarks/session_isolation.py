"""How long one session's requests wait while another session rebuilds (its first request on a long history).

    python benchmarks/session_isolation.py [--size 20000] [--other 200] [--requests 20] [--pause-ms 20]

A host restarted on a long session replays the history that session implies on its first
request (seconds at 20,000 messages). Meanwhile another session of the same process keeps
sending requests, each one message longer than the one before, ``--pause-ms`` apart. Measured
in one run on one runtime (no store): the other session's request alone (median of
``--requests``), then its requests while the long session rebuilds on another thread, and the
rebuild itself. The figure that matters is the other session's
longest request during the rebuild as a share of the rebuild: near 100 % means it waited for
the whole rebuild (one lock for every session), a few percent means it only shared the CPU.
Prints a table; nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session

LONG, OTHER = "ses_long", "ses_other"
# The share of the rebuild the other session may wait at most: it shares the CPU, never the lock.
TARGET_PERCENT = 10.0


def request(runtime: Runtime, session_id: str, messages: list[dict[str, Any]]) -> float:
    """One request of a session through the runtime's public API (prepare, then finish); its seconds."""
    start = time.perf_counter()
    outgoing = runtime.prepare(session_id, messages)
    if outgoing is not None:
        runtime.finish(outgoing, messages)
    return time.perf_counter() - start


def measure(size: int, other: int, requests: int, pause: float) -> dict[str, float]:
    """Seconds: the other session's request alone and during the rebuild (median, longest), and the rebuild."""
    runtime = Runtime(DEFAULT_DIRECTORY, StaticConfig(DcpConfig()))
    long_history = generate_session(size, seed=1)["messages"]
    other_history = generate_session(other + requests + 5_000, seed=2)["messages"]
    sent = other

    def other_request() -> float:
        nonlocal sent
        sent = min(sent + 1, len(other_history))
        return request(runtime, OTHER, other_history[:sent])

    request(runtime, OTHER, other_history[:sent])  # the other session is warm
    alone = []
    for _ in range(requests):
        alone.append(other_request())
        time.sleep(pause)

    rebuild: list[float] = []
    started = threading.Event()

    def rebuild_long() -> None:
        started.set()
        rebuild.append(request(runtime, LONG, long_history))

    thread = threading.Thread(target=rebuild_long)
    thread.start()
    started.wait()
    during: list[float] = []
    while thread.is_alive() or not during:
        during.append(other_request())
        time.sleep(pause)
    thread.join()
    return {
        "alone": statistics.median(alone),
        "during": statistics.median(during),
        "longest": max(during),
        "during_count": float(len(during)),
        "rebuild": rebuild[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=20_000, help="messages of the session that rebuilds (default 20000)")
    parser.add_argument("--other", type=int, default=200, help="messages of the other session (default 200)")
    parser.add_argument("--requests", type=int, default=20, help="requests of the other session alone (default 20)")
    parser.add_argument("--pause-ms", type=float, default=20.0, help="between the other session's requests (default 20)")
    args = parser.parse_args(argv)
    found = measure(max(2, args.size), max(2, args.other), max(1, args.requests), max(0.0, args.pause_ms) / 1000)
    ms = 1000.0
    share = 100 * found["longest"] / found["rebuild"] if found["rebuild"] else 0.0
    print(f"one session rebuilds while another sends requests; Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs")
    header = ("rebuild msgs", "rebuild ms", "other alone ms", "other during ms", "other longest ms", "requests during",
              "longest / rebuild")
    row = (f"{args.size:,}", f"{found['rebuild'] * ms:.0f}", f"{found['alone'] * ms:.2f}", f"{found['during'] * ms:.2f}",
           f"{found['longest'] * ms:.1f}", f"{found['during_count']:.0f}", f"{share:.1f} %")
    widths = [max(len(h), len(c)) for h, c in zip(header, row, strict=True)]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
    verdict = "met" if share <= TARGET_PERCENT else "MISSED"
    print(f"target: the other session waits at most {TARGET_PERCENT:.0f} % of the rebuild: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
