"""Argparse helpers shared by the `dcp` subcommands: command groups, counts, and the parser in charge."""

from __future__ import annotations

import argparse
from typing import Any


def add_group(subparsers: Any, name: str, *, help: str, description: str) -> Any:
    """A command group (`dcp config`, `dcp opencode`): alone it prints its help and succeeds, like `dcp` alone."""
    group: argparse.ArgumentParser = subparsers.add_parser(name, help=help, description=description)
    actions = group.add_subparsers(dest=f"{name}_command", metavar="COMMAND", title="commands")

    def show_help(_args: argparse.Namespace) -> int:
        group.print_help()
        return 0

    group.set_defaults(func=show_help)
    return actions


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1, with a message that says so."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {value}")
    return value


def chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The deepest subcommand parser ``args`` went through, so its usage goes with its errors."""
    current = parser
    while True:
        # argparse has no public accessor for a parser's subcommands.
        action = next((a for a in current._actions if isinstance(a, argparse._SubParsersAction)), None)
        chosen = getattr(args, action.dest, None) if action is not None and action.dest else None
        if action is None or not isinstance(chosen, str) or chosen not in action.choices:
            return current
        current = action.choices[chosen]
