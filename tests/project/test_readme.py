"""The README shows what the plugin really writes."""

from __future__ import annotations

import re

from dcp_plugin.pipeline import placeholders
from dcp_plugin.pipeline.strategies import mask_old_outputs, stale_diagnostics, superseded_reads, superseded_todos
from tests.support.paths import ROOT

README = ROOT / "README.md"


def test_every_placeholder_in_the_readme_table_is_one_the_plugin_writes() -> None:
    text = README.read_text()
    table = text[: text.index("## Quick start")]
    shown = re.findall(r"`(\[dcp: [^`]*\])`", table)
    written = {
        placeholders.tag(t, "3kq7")
        for t in (
            placeholders.DUPLICATE_PLACEHOLDER,
            placeholders.SUPERSEDED_PLACEHOLDER,
            placeholders.FAILED_INPUT_PLACEHOLDER,
            placeholders.SWEPT_PLACEHOLDER,
            *placeholders.DISCARDED_PLACEHOLDERS.values(),
            superseded_reads.placeholder("read src/app.py"),
            stale_diagnostics.placeholder("src/app.py"),
            superseded_todos.placeholder(),
            mask_old_outputs.placeholder("read src/app.py", 1840),
        )
    }
    assert len(shown) >= 9
    assert [s for s in shown if s not in written] == []


def test_no_install_line_asks_the_package_index_for_dcp_plugin() -> None:
    # dcp-plugin is installed from a clone; `pip install dcp-plugin...` fails for a reader.
    assert not re.search(r"pip install '?dcp-plugin", README.read_text())
