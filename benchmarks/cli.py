"""`python -m benchmarks`: measure the hot path, print tables, write JSON (and Markdown on request)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console

from benchmarks.report import markdown, print_tables
from benchmarks.runner import DEFAULT_BUSY_SIZES, DEFAULT_REPEAT, DEFAULT_SIZES, run
from dcp_plugin import compiled
from dcp_plugin.replay.file_error import SessionFileError

HERE = Path(__file__).resolve().parent
DEFAULT_JSON = HERE / "results" / "latest.json"
DEFAULT_MARKDOWN = HERE / "RESULTS.md"


def sizes_arg(text: str) -> list[int]:
    """A comma-separated list of message counts, e.g. ``100,1000``; empty for none."""
    try:
        sizes = [int(s.replace("_", "")) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers like 100,1000, got {text!r}") from None
    if any(s < 2 for s in sizes):
        raise argparse.ArgumentTypeError("every size must be at least 2 messages")
    return sizes


def build_parser() -> argparse.ArgumentParser:
    """The argument parser."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=(
            "Measure the plugin's per-request cost through a pluggy host: cold and warm requests, "
            "json.dumps of the same request as a yardstick, memory per session, tokens saved."
        ),
    )
    parser.add_argument("files", nargs="*", type=Path, metavar="FILE",
                        help="recorded sessions (`opencode export` JSON or a bare messages array) to measure too")
    parser.add_argument("--sizes", type=sizes_arg, default=list(DEFAULT_SIZES),
                        help="generated session sizes in messages (default: %(default)s); '' for none")
    parser.add_argument("--busy-sizes", type=sizes_arg, default=list(DEFAULT_BUSY_SIZES),
                        help="sizes of the busier generated shape, ~1.2 tool calls per message with long outputs "
                        "(default: %(default)s); '' for none")
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT,
                        help="samples of each timing (default: %(default)s)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, metavar="OUT",
                        help="where to write the JSON results (default: benchmarks/results/latest.json)")
    parser.add_argument("--markdown", type=Path, nargs="?", const=DEFAULT_MARKDOWN, metavar="OUT",
                        help="also write the tables as Markdown (default OUT: benchmarks/RESULTS.md)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; 0 on success, 1 on unusable input."""
    args = build_parser().parse_args(argv)
    if args.repeat < 1:
        print("python -m benchmarks: --repeat must be at least 1", file=sys.stderr)
        return 1
    if not args.sizes and not args.files and not args.busy_sizes:
        print("python -m benchmarks: nothing to measure (no --sizes and no FILE)", file=sys.stderr)
        return 1
    err = Console(stderr=True)
    err.print(f"Measuring {compiled.describe()}")
    try:
        with err.status("starting") as status:
            data = run(args.sizes, args.files, args.repeat, progress=lambda text: status.update(text),
                       busy_sizes=args.busy_sizes)
    except (SessionFileError, ValueError) as exc:
        print(f"python -m benchmarks: {exc}", file=sys.stderr)
        return 1
    out = Console()
    print_tables(data, out if out.is_terminal else Console(width=200))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    err.print(f"JSON written to {args.json}")
    if args.markdown is not None:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(markdown(data), encoding="utf-8")
        err.print(f"Markdown written to {args.markdown}")
    return 0
