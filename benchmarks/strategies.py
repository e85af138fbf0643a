"""What each strategy buys, and how much maskOldOutputs keeps: replays of generated and recorded sessions.

    python -m benchmarks.strategies [--pricing anthropic] [--keep] [FILE ...]

Per session: the tokens sent and the net prompt-cache cost saved with the default config, and
each strategy's contribution (the session replayed with that strategy alone turned off, as
`dcp replay --by-strategy` does), as a share of what the session costs without the plugin.
``--keep`` sweeps maskOldOutputs' keepTokens and keepTurns over the generated sessions and
reports, besides the savings, how often a masked output's file or command was used again
after its placeholder was written (the model came back to it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.model.messages import info_of
from dcp_plugin.pipeline.labels import key_argument
from dcp_plugin.replay.contributions import contributions, enabled_strategies, tokens_saved
from dcp_plugin.replay.engine import ReplayReport, plugin_host, replay, request_points, with_pricing
from dcp_plugin.replay.sessionfile import example_session_path, load_session
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session

Session = tuple[str, list[dict[str, Any]], str]
KEEP_TOKENS = (5_000, 10_000, 20_000, 40_000, 80_000)
KEEP_TURNS = (0, 1, 2)


def sessions(files: list[Path]) -> list[Session]:
    """The shipped example, generated sessions of each shape, and the recorded sessions given."""
    out: list[Session] = []
    info, messages = load_session(example_session_path())
    out.append(("shipped example (400)", messages, str(info.get("directory") or DEFAULT_DIRECTORY)))
    for label, kwargs in (
        ("generated 2,000", {}),
        ("generated 2,000, lsp", {"lsp": True}),
        ("busy 2,000", {"busy": True}),
    ):
        for seed in (1, 2):
            out.append((f"{label} #{seed}", generate_session(2000, seed=seed, **kwargs)["messages"], DEFAULT_DIRECTORY))
    for path in files:
        info, messages = load_session(path)
        out.append((f"{path.name} ({len(messages)})", messages, str(info.get("directory") or DEFAULT_DIRECTORY)))
    return out


def percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:+.1f} %" if whole else "-"


def measure(session: Session, pricing: str) -> dict[str, Any]:
    """Whole savings and each strategy's contribution, as shares of the session without the plugin."""
    name, messages, directory = session
    config = DcpConfig()

    def run(with_config: DcpConfig, _label: str) -> ReplayReport:
        return replay(messages, directory, with_config, pricing=pricing)

    full = run(config, "")
    shares = contributions(full, config, run)
    base_tokens, base_cost = full.total_without, full.costs.cost_without
    return {
        "session": name,
        "tokens": percent(tokens_saved(full), base_tokens),
        "cost": percent(full.costs.saved, base_cost),
        "by_strategy": {
            c.strategy: (percent(c.tokens_saved, base_tokens), percent(c.net_saved, base_cost)) for c in shares
        },
    }


def reused_after_masking(
    messages: list[dict[str, Any]], directory: str, config: DcpConfig, pricing: str
) -> dict[str, Any]:
    """One replay: savings, masked outputs, and the share of them whose file or command was used again later."""
    host = plugin_host(directory, with_pricing(config, pricing))
    report = replay(messages, directory, host=host)
    view = host[1].view(info_of(messages[0]).get("sessionID") or "default")
    points = request_points(messages)
    masked = [d for d in (view.in_force if view is not None else ()) if d.strategy == "maskOldOutputs"]
    calls = [
        (index, key_argument(p["state"].get("input"), directory))
        for index, m in enumerate(messages)
        for p in m["parts"]
        if p.get("type") == "tool" and isinstance(p.get("state"), dict)
    ]
    again = 0
    for decision in masked:
        written_at = points[decision.applied_at - 1] if decision.applied_at else len(messages)
        state = messages[decision.message_index]["parts"][decision.part_index]["state"]
        key = key_argument(state.get("input"), directory)
        again += any(index >= written_at and other == key for index, other in calls if key)
    return {
        "tokens": percent(tokens_saved(report), report.total_without),
        "cost": percent(report.costs.saved, report.costs.cost_without),
        "masked": len(masked),
        "again": f"{100 * again / len(masked):.0f} %" if masked else "-",
    }


def keep_sweep(pricing: str) -> str:
    generated = [s for s in sessions([]) if s[0].startswith(("generated", "busy")) and s[0].endswith("#1")]
    lines = [
        "| keepTokens | keepTurns | tokens saved | net cost saved | outputs masked | used again after masking |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for keep_tokens in KEEP_TOKENS:
        for keep_turns in KEEP_TURNS:
            config = DcpConfig.model_validate(
                {"strategies": {"maskOldOutputs": {"keepTokens": keep_tokens, "keepTurns": keep_turns}}}
            )
            rows = [reused_after_masking(m, d, config, pricing) for _, m, d in generated]
            print(f"keep {keep_tokens} / {keep_turns} done", file=sys.stderr)
            each = " / ".join
            lines.append(
                f"| {keep_tokens:,} | {keep_turns} | {each(r['tokens'] for r in rows)} | {each(r['cost'] for r in rows)} "
                f"| {each(str(r['masked']) for r in rows)} | {each(r['again'] for r in rows)} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.strategies", description=__doc__)
    parser.add_argument("--pricing", default="anthropic", help="cache.pricing to assume (default anthropic)")
    parser.add_argument("--keep", action="store_true", help="sweep maskOldOutputs keepTokens and keepTurns instead")
    parser.add_argument("files", nargs="*", type=Path, help="recorded sessions to measure too")
    args = parser.parse_args(argv)
    if args.keep:
        print(keep_sweep(args.pricing))
        return 0
    rows = []
    for session in sessions(args.files):
        print(f"replaying {session[0]}", file=sys.stderr)
        rows.append(measure(session, args.pricing))
    names = enabled_strategies(DcpConfig())
    print("| session | all (tokens / net cost) | " + " | ".join(names) + " |")
    print("|:---|---:|" + "---:|" * len(names))
    for row in rows:
        cells = [" / ".join(row["by_strategy"].get(n, ("off", "off"))) for n in names]
        print(f"| {row['session']} | {row['tokens']} / {row['cost']} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
