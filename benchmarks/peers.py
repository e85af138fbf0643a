"""The plugin against the rules other tools prune by, on the same sessions with the same prices and yardsticks.

    python -m benchmarks.peers [--corpus DIR] [--config FILE ...] [--json OUT] [--readme README.md] [--jobs N] [FILE ...]

Every session is replayed with the plugin's defaults (and each ``--config`` given) through a real
pluggy host, and with each peer rule of :mod:`dcp_plugin.replay.peer_rules`; each replay is priced by
the same accounting as ``dcp replay`` (Anthropic and OpenAI prompt-cache prices, the cache's
lifetime from the recorded timestamps) and checked for edit anchors lost
(:mod:`dcp_plugin.replay.anchors`). Sessions: the recorded ones given, and the development corpus
when it is there (``../shared/corpus/dev`` from the project root, or ``--corpus``); without either,
generated sessions. The corpus is split into long and short sessions (see :func:`group_of`).
Exits with 1 when a session costs the plugin's defaults more than 0.5 % above no plugin, and with
``--readme README.md`` also replays the configs README's tables name and exits with 1 when a
figure there is not the one measured (:mod:`benchmarks.readme_tables`).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks import readme_tables
from dcp_plugin.cli.replay import PRICING_CHOICES
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.replay.anchors import AnchorTotals
from dcp_plugin.replay.peer_replay import Outcome, Session, replay_ours, replay_rule
from dcp_plugin.replay.peer_rules import rule_makers
from dcp_plugin.replay.recovery import RecoveryTotals
from dcp_plugin.replay.sessionfile import load_session
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "dev"
PRICINGS = ("anthropic", "openai")
OURS = "dcp_plugin defaults"
# A session is long when its prompt outgrows what every peer leaves alone: Anthropic's and
# LangChain's trigger (100K tokens). Below it only masking rules act at all.
LONG_PROMPT_TOKENS = 100_000
# No session may cost our defaults more than this (net saving in percent) under either price.
WORST_ALLOWED = -0.5
# A session whose net saving stays within this (percent, either way) under every price is one the policy leaves idle.
IDLE_BELOW = 0.5


def measure(session: Session, configs: Sequence[tuple[str, DcpConfig]], pricings: Sequence[str]) -> list[Outcome]:
    """Every policy on one session under every pricing (a config named twice, say as the default, replayed once)."""
    priced_rules = [replay_rule(session, rule, pricings) for rule in rule_makers()]
    out = []
    for index, pricing in enumerate(pricings):
        replayed: list[tuple[DcpConfig, Outcome]] = []
        for label, config in configs:
            same = next((outcome for seen, outcome in replayed if seen == config), None)
            if same is None:
                same = replay_ours(session, config, label, pricing)
                replayed.append((config, same))
            out.append(replace(same, policy=label))
        out += [outcomes[index] for outcomes in priced_rules]
    return out


def group_of(session: Session) -> str:
    """``long`` when the session's prompt ever exceeds LONG_PROMPT_TOKENS, else ``short``."""
    return "long" if session.peak_prompt > LONG_PROMPT_TOKENS else "short"


@dataclass
class Row:
    """One policy over a group of sessions."""

    policy: str
    cost_without: dict[str, float] = field(default_factory=dict)
    cost_with: dict[str, float] = field(default_factory=dict)
    tokens_without: int = 0
    tokens_with: int = 0
    prefix_breaks: int = 0
    worst: float = 0.0
    worst_session: str = ""
    anchors: AnchorTotals = field(default_factory=AnchorTotals)
    saves_nothing: dict[str, bool] = field(default_factory=dict)  # session -> idle under every pricing so far
    cost_recovered: dict[str, float] = field(default_factory=dict)  # cost with the policy, with forced re-reads
    recovery: RecoveryTotals = field(default_factory=RecoveryTotals)

    @property
    def idle(self) -> int:
        """Sessions the policy changes next to nothing on: within IDLE_BELOW percent under every pricing."""
        return sum(self.saves_nothing.values())

    def net(self, pricing: str) -> float:
        without = self.cost_without.get(pricing, 0.0)
        return 100 * (without - self.cost_with.get(pricing, 0.0)) / without if without else 0.0

    def net_after_recovery(self, pricing: str) -> float:
        """Net saving when each lost anchor costs the agent a re-read (see :mod:`dcp_plugin.replay.recovery`)."""
        without = self.cost_without.get(pricing, 0.0)
        return 100 * (without - self.cost_recovered.get(pricing, 0.0)) / without if without else 0.0

    def add(self, outcome: Outcome) -> None:
        pricing = outcome.pricing
        self.cost_without[pricing] = self.cost_without.get(pricing, 0.0) + outcome.costs.cost_without
        self.cost_with[pricing] = self.cost_with.get(pricing, 0.0) + outcome.costs.cost_with
        recovered = outcome.recovered if outcome.recovered is not None else outcome.costs
        self.cost_recovered[pricing] = self.cost_recovered.get(pricing, 0.0) + recovered.cost_with
        nothing = abs(outcome.net_percent) < IDLE_BELOW
        self.saves_nothing[outcome.session] = self.saves_nothing.get(outcome.session, True) and nothing
        if outcome.net_percent < self.worst or not self.worst_session:
            self.worst, self.worst_session = outcome.net_percent, f"{outcome.session} ({pricing})"
        if pricing == PRICINGS[0]:  # tokens, breaks and anchors once per session
            self.tokens_without += outcome.tokens_without
            self.tokens_with += outcome.tokens_with
            self.prefix_breaks += outcome.costs.prefix_breaks
            self.anchors.add(outcome.anchors)
            self.recovery.add(outcome.recovery)

    def to_dict(self) -> dict[str, Any]:
        saved = self.tokens_without - self.tokens_with
        return {
            "policy": self.policy,
            **{f"net_saved_percent_{p}": round(self.net(p), 2) for p in self.cost_without},
            **{f"net_saved_percent_after_recovery_{p}": round(self.net_after_recovery(p), 2) for p in self.cost_without},
            "forced_rereads": self.recovery.count,
            "tokens_saved_percent": round(100 * saved / self.tokens_without, 2) if self.tokens_without else 0.0,
            "prefix_breaks": self.prefix_breaks,
            "worst_session_percent": round(self.worst, 2),
            "worst_session": self.worst_session,
            "idle_sessions": self.idle,
            "anchors": self.anchors.to_dict(),
        }


def summarize(outcomes: Sequence[Outcome]) -> list[Row]:
    """Per policy, in the order first seen: totals over the outcomes' sessions."""
    rows: dict[str, Row] = {}
    for outcome in outcomes:
        rows.setdefault(outcome.policy, Row(outcome.policy)).add(outcome)
    return list(rows.values())


COLUMNS = ("policy", *(f"net, {p}" for p in PRICINGS), *(f"after re-reads, {p}" for p in PRICINGS), "tokens saved",
           "prefix breaks", "worst session", "idle sessions", "edit anchors lost", "forced re-reads")


def cells(row: Row) -> dict[str, str]:
    """A row's figures as the table shows them (and README's tables must), by column."""
    anchors = row.anchors
    return {
        "policy": row.policy,
        **{f"net, {p}": f"{row.net(p):+.1f} %" for p in PRICINGS},
        **{f"after re-reads, {p}": f"{row.net_after_recovery(p):+.1f} %" for p in PRICINGS},
        "tokens saved": f"{row.to_dict()['tokens_saved_percent']:.1f} %",
        "prefix breaks": f"{row.prefix_breaks:,}",
        "worst session": f"{row.worst:+.1f} %",
        "idle sessions": f"{row.idle}",
        "edit anchors lost": f"{anchors.lost} / {anchors.sourced} ({anchors.lost_percent:.1f} %)",
        "forced re-reads": f"{row.recovery.count:,}",
    }


def table(title: str, rows: Sequence[Row], sessions: int) -> Table:
    """The rich table of one group."""
    out = Table(title=f"{title} ({sessions} sessions)", title_justify="left")
    for column in COLUMNS:
        out.add_column(column, justify="left" if column == "policy" else "right")
    for row in rows:
        out.add_row(*cells(row).values())
    return out


def corpus_sessions(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.json")) if directory.is_dir() else []


def load(paths: Sequence[Path]) -> list[Session]:
    sessions = []
    for path in paths:
        info, messages = load_session(path)
        directory = info.get("directory")
        sessions.append(Session(path.stem, messages, directory if isinstance(directory, str) else DEFAULT_DIRECTORY))
    return sessions


def generated() -> list[Session]:
    """Stand-ins when no recorded session is at hand: generated sessions of both shapes."""
    return [
        Session(f"generated {size} #{seed}{' busy' if busy else ''}",
                generate_session(size, seed=seed, busy=busy)["messages"], DEFAULT_DIRECTORY)
        for size, busy in ((600, False), (600, True)) for seed in (1, 2)
    ]


def configs_of(paths: Sequence[Path]) -> list[tuple[str, DcpConfig]]:
    """Our defaults, then each config file given (labelled by its name)."""
    from dcp_plugin.cli.session_config import load_config_option

    return [(OURS, DcpConfig())] + [(f"dcp_plugin {path.stem}", load_config_option(path)) for path in paths]


def run(sessions: Sequence[Session], configs: Sequence[tuple[str, DcpConfig]],
        progress: Callable[[str], None] = lambda _: None, jobs: int = 1) -> dict[str, Any]:
    """Every policy on every session (``jobs`` sessions at a time); the per-session outcomes and the per-group rows."""
    outcomes: list[Outcome] = []
    groups: dict[str, list[str]] = {"long": [], "short": []}
    for session in sessions:
        groups[group_of(session)].append(session.name)
    if jobs > 1 and len(sessions) > 1:
        # Fresh interpreters: a forked copy of a host process may inherit a lock another thread held.
        with ProcessPoolExecutor(min(jobs, len(sessions)), mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(measure, session, configs, PRICINGS) for session in sessions]
            for index, (session, future) in enumerate(zip(sessions, futures, strict=True), 1):
                outcomes += future.result()
                progress(f"[{index}/{len(sessions)}] {session.name}")
    else:
        for index, session in enumerate(sessions, 1):
            progress(f"[{index}/{len(sessions)}] {session.name}")
            outcomes += measure(session, configs, PRICINGS)
    data: dict[str, Any] = {"sessions": [o.to_dict() for o in outcomes], "groups": {}}
    for group, names in [("all", [s.name for s in sessions]), *groups.items()]:
        rows = summarize([o for o in outcomes if o.session in names])
        data["groups"][group] = {"sessions": names, "rows": [r.to_dict() for r in rows]}
    data["_rows"] = {group: summarize([o for o in outcomes if o.session in g["sessions"]])
                     for group, g in data["groups"].items()}
    return data


def use_pricings(pricings: tuple[str, ...]) -> None:
    """Price this run's replays, and show its tables' columns, under ``pricings`` (the first one counts tokens)."""
    global PRICINGS, COLUMNS
    PRICINGS = pricings
    COLUMNS = ("policy", *(f"net, {p}" for p in PRICINGS), *(f"after re-reads, {p}" for p in PRICINGS),
               *COLUMNS[COLUMNS.index("tokens saved"):])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path, help="recorded sessions to replay")
    parser.add_argument("--corpus", type=Path, default=CORPUS,
                        help="folder of recorded sessions (default: ../shared/corpus/dev from the project root)")
    parser.add_argument("--config", type=Path, action="append", default=[],
                        help="also replay the plugin with this dcp.jsonc (repeatable)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write every outcome and row as JSON here")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                        help="sessions replayed at once, each in a process of its own (default: one per CPU)")
    parser.add_argument("--pricing", action="append", choices=PRICING_CHOICES[1:], metavar="P",
                        help="price under these instead of Anthropic's and OpenAI's (repeatable; one of "
                             f"{', '.join(PRICING_CHOICES[1:])}), e.g. anthropic-1h for a 1-hour cache")
    parser.add_argument("--readme", type=Path, metavar="README",
                        help="also replay the configs README's tables name; exit 1 when a figure there is not "
                             "the one measured")
    args = parser.parse_args(argv)
    if args.pricing and args.readme is not None:
        parser.error("--readme checks README's figures, which are priced the default way: leave out --pricing")
    if args.pricing:
        use_pricings(tuple(dict.fromkeys(args.pricing)))
    err = Console(stderr=True)
    paths = list(args.files) + corpus_sessions(args.corpus)
    if not corpus_sessions(args.corpus):
        err.print(f"development corpus not found at {args.corpus}", highlight=False)
    sessions = load(paths) if paths else generated()
    if not paths:
        err.print("no recorded sessions: replaying generated ones", highlight=False)
    readme = args.readme.read_text(encoding="utf-8") if args.readme is not None else None
    configs = configs_of(args.config) + (readme_tables.configs(readme) if readme is not None else [])
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    data = run(sessions, configs, lambda text: err.print(text, highlight=False), args.jobs)
    rows = data.pop("_rows")
    console = Console(width=200) if not Console().is_terminal else Console()
    for group, found in data["groups"].items():
        if found["sessions"]:
            console.print(table(f"{group} sessions", rows[group], len(found["sessions"])))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        err.print(f"JSON written to {args.json}", highlight=False)
    worse = [o for o in data["sessions"] if o["policy"] == OURS and o["net_saved_percent"] < WORST_ALLOWED]
    for o in worse:
        err.print(f"{o['session']} ({o['pricing']}): {o['net_saved_percent']:+.2f} % with our defaults", highlight=False)
    stale = readme_tables.mismatches(readme, rows, cells) if readme is not None else []
    for text in stale:
        err.print(f"{args.readme}: {text}", highlight=False)
    return 1 if worse or stale else 0


if __name__ == "__main__":
    sys.exit(main())
