"""`dcp config init|validate|show|schema`: write, check and explain dcp.jsonc files."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from dcp_plugin.cli.groups import add_group
from dcp_plugin.config.discovery import (
    LEGACY_FILE_NAME,
    LayerSpec,
    file_in_use,
    global_dir,
    global_file,
    layer_specs,
    project_file,
)
from dcp_plugin.config.loader import LayerResult, combine, load_layer
from dcp_plugin.config.misplaced import misplaced_files
from dcp_plugin.config.problems import Problem
from dcp_plugin.config.schema import schema_path
from dcp_plugin.config.schemaref import stable_schema_uri
from dcp_plugin.config.source import ConfigSource
from dcp_plugin.config.template import render, write_atomically
from dcp_plugin.host.prune_notice import plural


def add_parser(subparsers: Any) -> None:
    """Register `config` and its subcommands on an argparse subparsers object."""
    sub = add_group(
        subparsers,
        "config",
        help="create, check and show dcp.jsonc settings",
        description="Create, check and show the dcp.jsonc settings files.",
    )

    init = sub.add_parser("init", help="write a commented default dcp.jsonc", description=(
        "Write a commented dcp.jsonc: the global one or, with --project, .opencode/dcp.jsonc at the "
        "project's root (the git worktree around the current directory, else the current directory). Every "
        "key is listed with its description and its default, commented out, so the file sets nothing until "
        "you uncomment a line."
    ))
    init.add_argument("--project", action="store_true", help="write the project's .opencode/dcp.jsonc instead of the global file")
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    init.set_defaults(func=cmd_init)

    validate = sub.add_parser("validate", help="check config files and list every problem", description=(
        "Check config files against the schema and print every problem. Without FILE, lists every place "
        "a config file is looked for from the current directory (global, ~/.opencode, $OPENCODE_CONFIG_DIR, "
        "then each .opencode directory from the project root down), checks those that exist, and names "
        "files that look like settings but are not read. Exit status 1 if any error (warnings alone: 0)."
    ))
    validate.add_argument("files", nargs="*", metavar="FILE", type=Path, help="files to check (default: every config layer)")
    validate.set_defaults(func=cmd_validate)

    show = sub.add_parser("show", help="print the effective config and where each value comes from", description=(
        "Print the effective config for the current directory and, for each value, the file it comes "
        "from (or `default`), then every config file looked for, found or not. Problems go to stderr."
    ))
    show.add_argument("--json", action="store_true", help="print pure JSON on stdout")
    show.set_defaults(func=cmd_show)

    schema = sub.add_parser("schema", help="print the path of the installed JSON schema", description=(
        "Print the path of the JSON schema installed with the package. Files dcp writes point their "
        "`$schema` at a copy beside the global dcp.jsonc instead, which OpenCode refreshes on start, so "
        "it survives reinstalls."
    ))
    schema.set_defaults(func=cmd_schema)


def _error(text: str) -> None:
    print(f"dcp config: {text}", file=sys.stderr)


def cmd_init(args: argparse.Namespace) -> int:
    """Write the commented default file; refuse to overwrite without --force."""
    target = project_file(Path.cwd()) if args.project else global_file()
    legacy = target.with_name(LEGACY_FILE_NAME)
    if not args.force:
        if target.exists() or target.is_symlink():
            _error(f"{target} already exists; not overwriting it (use --force to replace it)")
            return 1
        if not args.project and legacy.exists():
            _error(f"{legacy} exists; a new {target.name} would take its place (use --force to write it anyway)")
            return 1
    try:
        if target.is_dir():
            _error(f"{target} is a directory; remove it first")
            return 1
        write_atomically(target, render(stable_schema_uri(global_dir()), project=args.project), exclusive=False)
    except OSError as exc:
        _error(f"cannot write {target}: {exc.strerror or exc}")
        return 1
    print(f"wrote {target}")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    """Print every problem of the given files (or of every existing layer); 1 if any is an error."""
    files: list[Path] = list(args.files)
    extra: list[Problem] = []
    if not files:
        checked = checked_layers(Path.cwd())
        print_checked(checked)
        files = [path for _, path in checked if path is not None]
        extra = misplaced_files(Path.cwd())
        if not files:
            for problem in extra:
                print(problem.render())
            print(f"no config file found{_warned(len(extra))}; the defaults apply")
            return 0
    results: list[LayerResult | None] = []
    for path in files:
        if not os.path.lexists(path):
            print(f"dcp: {path}: error: no such file")
            results.append(None)
            continue
        results.append(load_layer(path))
    effective = combine([r for r in results if r is not None])
    errors = sum(1 for r in results if r is None)
    warnings = 0
    # Files with a problem: the missing ones and those a problem names.
    flawed = {str(path) for path, result in zip(files, results, strict=False) if result is None}
    found = [p for r in results if r is not None for p in r.problems] + extra
    for problem in sorted(found, key=lambda p: p.level != "error"):  # errors first, as the host's summary lists them
        print(problem.render(effective.values, effective.origins))
        errors += problem.level == "error"
        warnings += problem.level == "warning"
        flawed.add(problem.file)
    read = [str(path) for path, result in zip(files, results, strict=False) if result is not None]
    where = f"; read {', '.join(read)}" if read else ""
    if errors or warnings:
        scope = plural(len(flawed), "file") if len(flawed) == len(files) else f"{len(flawed)} of {plural(len(files), 'file')}"
        print(f"{plural(errors, 'error')}, {plural(warnings, 'warning')} in {scope}{where}")
    else:
        print(f"ok: {plural(len(files), 'file')} valid{where}")
    return 1 if errors else 0


def _warned(count: int) -> str:
    return f" ({count} warning(s) above)" if count else ""


def checked_layers(directory: Path) -> list[tuple[LayerSpec, Path | None]]:
    """Every layer for ``directory``, lowest precedence first, with the file it reads (None: not found)."""
    return [(spec, file_in_use(spec)) for spec in layer_specs(directory)]


def print_checked(checked: list[tuple[LayerSpec, Path | None]], stream: TextIO | None = None) -> None:
    """The files looked for, found or not, lowest precedence first."""
    out = stream or sys.stdout
    print("config files checked (later ones override earlier ones):", file=out)
    width = max(len(spec.label) for spec, _ in checked)
    for spec, path in checked:
        if path is not None:
            print(f"  {spec.label:<{width}}  read       {path}", file=out)
        else:
            others = " or ".join(p.name for p in spec.candidates[1:])
            print(f"  {spec.label:<{width}}  not found  {spec.primary}" + (f" (or {others})" if others else ""), file=out)


def cmd_show(args: argparse.Namespace) -> int:
    """Print the effective config with the origin of every value, and the files checked."""
    directory = Path.cwd()
    source = ConfigSource(directory, notify=lambda _session, text: print(text, file=sys.stderr), create_global=False)
    values = source.values()
    origins = source.origins()
    checked = checked_layers(directory)
    for problem in misplaced_files(directory):
        print(problem.render(), file=sys.stderr)
    if args.json:
        listing = [
            {"layer": spec.label, "path": str(path or spec.primary), "found": path is not None} for spec, path in checked
        ]
        document = {"config": values, "origins": origins, "files": [str(p) for p in source.files()], "checked": listing}
        json.dump(document, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    rows = [(key, json.dumps(_lookup(values, key)), origin) for key, origin in origins.items()]
    key_width = max(len(r[0]) for r in rows)
    value_width = max(len(r[1]) for r in rows)
    for key, value, origin in rows:
        print(f"{key:<{key_width}}  {value:<{value_width}}  {origin}")
    print()
    print_checked(checked)
    return 0


def _lookup(values: dict[str, Any], dotted_key: str) -> Any:
    node: Any = values
    for part in dotted_key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the path of the schema file shipped with the package."""
    path = schema_path()
    if path is None:
        _error("the schema is packed inside an archive and has no file path")
        return 1
    print(path)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run `config` subcommands on their own (the `dcp` command adds the same parser)."""
    from dcp_plugin.cli.main import main as dcp_main

    return dcp_main(argv)


if __name__ == "__main__":
    sys.exit(main())
