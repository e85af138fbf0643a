"""README's tables of the peers benchmark, checked against a run: every figure they show must be the measured one.

In README's section :data:`SECTION`, a table whose first column is ``policy`` lists policies by
the names the benchmark gives them; a table whose first columns are config keys
(:data:`CONFIG_KEYS`) describes one config per row, which the benchmark replays. Every other
column named like a column of the benchmark's table (``net, Anthropic``, ``edit anchors lost``...)
must show exactly what the run measured, for the long sessions, or the short ones when the first
header says ``short sessions``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.config.profiles import PROFILES

SECTION = "### Against other tools' rules"
MASK = ("strategies", "maskOldOutputs")
# A column of a config table -> where its value goes in dcp.jsonc.
CONFIG_KEYS: dict[str, tuple[str, ...]] = {
    "profile": ("profile",),
    "keepTurns": (*MASK, "keepTurns"),
    "turnsEndAtChecks": (*MASK, "turnsEndAtChecks"),
    "keepTokensOf": (*MASK, "keepTokensOf"),
    "keepTokens": (*MASK, "keepTokens"),
    "keepCalls": (*MASK, "keepCalls"),
    "trigger": (*MASK, "trigger"),
    "mode": (*MASK, "mode"),
    "editedWhenCold": (*MASK, "editedWhenCold"),
    "overdraft": ("cache", "overdraft"),
}
PREFIX = "dcp_plugin "


@dataclass(frozen=True)
class MarkdownTable:
    headers: list[str]
    rows: list[list[str]]

    @property
    def group(self) -> str:
        return "short" if "short sessions" in self.headers[0] else "long"

    @property
    def config_columns(self) -> list[int]:
        return [i for i, header in enumerate(self.headers) if header in CONFIG_KEYS]


def plain(cell: str) -> str:
    """A cell as text: no bold, no code marks, an ASCII minus."""
    return cell.replace("**", "").replace("`", "").replace("\u2212", "-").strip()


def section(readme: str) -> str:
    """The text of :data:`SECTION`, up to the next heading of its level or above."""
    start = readme.index(SECTION)
    ends = [at for mark in ("\n## ", "\n### ") if (at := readme.find(mark, start + len(SECTION))) != -1]
    return readme[start : min(ends, default=len(readme))]


def tables(text: str) -> list[MarkdownTable]:
    """Every Markdown table in ``text``, cells as plain text."""
    found: list[MarkdownTable] = []
    block: list[list[str]] = []
    for line in [*text.split("\n"), ""]:
        if line.startswith("|"):
            block.append([plain(cell) for cell in line.strip().strip("|").split("|")])
            continue
        if len(block) >= 2:
            found.append(MarkdownTable(block[0], block[2:]))
        block = []
    return found


def _value(cell: str) -> Any:
    if cell in ("true", "false"):
        return cell == "true"
    if cell.endswith("%"):
        return float(cell.rstrip(" %")) / 100
    digits = cell.replace(",", "")
    return int(digits) if digits.isdigit() else cell


def label(table: MarkdownTable, row: list[str]) -> str:
    """The policy name a config row is replayed under: its config cells."""
    return PREFIX + ", ".join(f"{table.headers[i]} {row[i]}" for i in table.config_columns)


def configs(readme: str) -> list[tuple[str, DcpConfig]]:
    """The config of every row of the section's config tables, labelled as :func:`label` says, and of
    every policy row that names a profile (`dcp_plugin safe`)."""
    out: dict[str, DcpConfig] = {}
    for table in tables(section(readme)):
        for row in () if table.config_columns else table.rows:
            name = row[0].removeprefix(PREFIX)
            if row[0].startswith(PREFIX) and name in PROFILES:
                out[row[0]] = DcpConfig.model_validate({"profile": name})
        for row in table.rows if table.config_columns else ():
            settings: dict[str, Any] = {}
            for i in table.config_columns:
                *parents, key = CONFIG_KEYS[table.headers[i]]
                node = settings
                for parent in parents:
                    node = node.setdefault(parent, {})
                node[key] = _value(row[i])
            out[label(table, row)] = DcpConfig.model_validate(settings)
    return list(out.items())


def mismatches(
    readme: str, measured: Mapping[str, Sequence[Any]], cells: Callable[[Any], dict[str, str]]
) -> list[str]:
    """Every README cell that differs from the run: ``measured`` rows by group, ``cells`` a row's figures by column."""
    problems: list[str] = []
    for table in tables(section(readme)):
        by_policy = {cells(row)["policy"]: cells(row) for row in measured.get(table.group, ())}
        for row in table.rows:
            name = label(table, row) if table.config_columns else row[0]
            shown = by_policy.get(name)
            if shown is None:
                problems.append(f"{table.group} sessions: {name!r} was not measured")
                continue
            for header, cell in zip(table.headers, row, strict=False):
                column = header.lower()
                if column != "policy" and column in shown and shown[column] != cell:
                    where = f"{table.group} sessions, {name}, {header}"
                    problems.append(f"{where}: README {cell!r}, measured {shown[column]!r}")
    return problems
