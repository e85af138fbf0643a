"""The rich console the CLI prints with: the terminal's width, or room enough when output goes to a file or pipe."""

from __future__ import annotations

import sys

from rich.console import Console

# Not a terminal (`dcp replay > file`, a pipe): rich would assume 80 columns and cut numbers
# short (`105,4…`); a file has no width, so give every table the room it needs.
FILE_WIDTH = 240


def console(stderr: bool = False) -> Console:
    """A console for stdout (or stderr) that never cuts a figure when it writes to a file."""
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else FILE_WIDTH)
