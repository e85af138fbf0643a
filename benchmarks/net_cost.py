"""Net cost of pruning under prompt-cache pricing: replays sessions with the cache scheduler on and off.

    python -m benchmarks.net_cost [--sizes 400,2000] [--seeds 5] [FILE ...]

For each session (generated ones, the shipped example, and any recorded session given) and
each pricing, `dcp replay`'s accounting: tokens removed, and what the session cost with the
plugin against without it (negative: it cost more), with the scheduler on (the default) and
off (every prune written at once, as the first release did).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.replay.engine import replay
from dcp_plugin.replay.sessionfile import example_session_path, load_session
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session

PRICINGS = ("anthropic", "openai", "google", "none")
MODES = {"on": DcpConfig(), "off": DcpConfig.model_validate({"cache": {"scheduler": False}})}


def measure(name: str, messages: list[dict[str, Any]], directory: str) -> dict[str, Any]:
    """Tokens and net cost of one session under every pricing, scheduler on and off."""
    row: dict[str, Any] = {"session": name, "messages": len(messages), "pricing": {}}
    for pricing in PRICINGS:
        row["pricing"][pricing] = {}
        for mode, config in MODES.items():
            report = replay(messages, directory, config, pricing=pricing)
            data, cost = report.to_dict(), report.cost_dict()
            row["pricing"][pricing][mode] = {
                "tokens_saved_percent": data["tokens_saved_percent"],
                "net_saved_percent": cost["net_saved_percent"],
                "prefix_breaks": cost["prefix_breaks_by_plugin"],
            }
    return row


def sessions(sizes: list[int], seeds: int, files: list[Path]) -> list[tuple[str, list[dict[str, Any]], str]]:
    out: list[tuple[str, list[dict[str, Any]], str]] = []
    info, messages = load_session(example_session_path())
    out.append(("shipped example", messages, str(info.get("directory") or DEFAULT_DIRECTORY)))
    for size in sizes:
        for seed in range(1, seeds + 1):
            out.append((f"generated {size:,} #{seed}", generate_session(size, seed=seed)["messages"], DEFAULT_DIRECTORY))
    for path in files:
        info, messages = load_session(path)
        out.append((path.name, messages, str(info.get("directory") or DEFAULT_DIRECTORY)))
    return out


def table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table: per pricing, net saved with the scheduler on / off."""
    header = ["session", "messages", *[f"{p}: on / off" for p in PRICINGS]]
    lines = ["| " + " | ".join(header) + " |", "|:---|---:|" + "---:|" * len(PRICINGS)]
    for row in rows:
        cells = [
            f"{row['pricing'][p]['on']['net_saved_percent']:+.1f} % / {row['pricing'][p]['off']['net_saved_percent']:+.1f} %"
            for p in PRICINGS
        ]
        lines.append(f"| {row['session']} | {row['messages']:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.net_cost", description=__doc__)
    parser.add_argument("--sizes", default="400,2000", help="generated session sizes, comma-separated (default 400,2000)")
    parser.add_argument("--seeds", type=int, default=5, help="generated sessions per size (default 5)")
    parser.add_argument("files", nargs="*", type=Path, help="recorded sessions to replay too")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    rows = []
    for name, messages, directory in sessions(sizes, args.seeds, args.files):
        print(f"replaying {name}", file=sys.stderr)
        rows.append(measure(name, messages, directory))
    print(table(rows))
    worst = min(row["pricing"][p]["on"]["net_saved_percent"] for row in rows for p in PRICINGS)
    print(f"\nLowest net saving with the scheduler on, over every session and pricing: {worst:+.2f} %")
    return 0 if worst >= 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
