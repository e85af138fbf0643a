"""The rich console the CLI prints with: the terminal's width, or room enough when output goes to a file or pipe."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from rich.console import Console
from rich.progress import Progress, TaskID

# Not a terminal (`dcp replay > file`, a pipe): rich would assume 80 columns and cut numbers
# short (`105,4…`); a file has no width, so give every table the room it needs.
FILE_WIDTH = 240


def console(stderr: bool = False) -> Console:
    """A console for stdout (or stderr) that never cuts a figure when it writes to a file."""
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else FILE_WIDTH)


# A replay shorter than this shows no progress bar: it would only flicker.
PROGRESS_AFTER_SECONDS = 2.0


class ReplayProgress:
    """A transient rich progress bar on stderr that appears once a replay has run ``after`` seconds; never off a terminal.

    Called as the replay's progress callback with (requests done, requests in all). Use it as a
    context manager so the bar is taken down when the replay ends.
    """

    def __init__(
        self,
        label: str,
        err: Console | None = None,
        after: float = PROGRESS_AFTER_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.err = err if err is not None else console(stderr=True)
        self.after = after
        self.clock = clock
        self.started = clock()
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if not self.err.is_terminal or self.clock() - self.started < self.after:
                return
            self.bar = Progress(console=self.err, transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=total)
        if self.task is not None:
            self.bar.update(self.task, completed=done, total=total)

    def __enter__(self) -> ReplayProgress:
        return self

    def __exit__(self, *_: object) -> None:
        if self.bar is not None:
            self.bar.stop()
