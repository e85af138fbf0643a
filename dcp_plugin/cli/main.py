"""The `dcp` command: wiring of the subcommands each feature module registers."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from dcp_plugin import __version__, compiled
from dcp_plugin.cli.groups import chosen_parser

# Each feature module contributes `add_parser(subparsers)`; names are imported lazily so that a
# broken optional feature cannot take the whole command down.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "dcp_plugin.cli.replay",
    "dcp_plugin.cli.config",
    "dcp_plugin.cli.report",
    "dcp_plugin.cli.opencode",
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser."""
    parser = argparse.ArgumentParser(
        prog="dcp",
        description="Dynamic Context Pruning for AI coding agents: see what the plugin prunes and tune it.",
        epilog=(
            "In OpenCode, type /dcp context (or stats, sweep, pin) in the session. From a shell, run "
            "`dcp opencode context [SESSION_ID]` for the same breakdown: `opencode run --command dcp ...` "
            "prints the reply on stderr but ends with OpenCode's 'Unexpected server error' (how the plugin "
            "keeps the command from the model) and exit status 1."
        ),
    )
    parser.add_argument("--version", action="version", version=f"dcp {__version__}, {compiled.describe()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    import importlib

    for name in SUBCOMMAND_MODULES:
        module = importlib.import_module(name)
        module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `dcp` console script."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        # Reported by the subcommand that was given them, with its usage (exits 2).
        chosen_parser(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    func: Callable[[Any], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 0
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        print("dcp: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
