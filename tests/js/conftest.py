"""Collects the JS shim's node tests (``*.test.mjs``): one pytest item per node test, named after it.

A file's tests run in one ``node --test`` process (the tests selected in it, when pytest deselected
some), the first time one of its items runs; each item then reports its own test's result.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# A top-level `test("name", ...)` call; names are plain string literals in these files.
_TEST_CALL = re.compile(r"^test\(")
_NAME = re.compile(r"""^test\(\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")
_REGEX_SPECIAL = re.compile(r"[\\^$.*+?()[\]{}|/]")
RUN_TIMEOUT_S = 600


def test_names(path: Path) -> list[str]:
    """The names of the top-level tests of a node test file, in order."""
    names = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not _TEST_CALL.match(line):
            continue
        found = _NAME.match(line)
        if found is None:
            raise ValueError(f"{path}:{number}: the test's name is not a string literal on the test( line")
        # JS string escapes (\\ \" \' \n \uXXXX) read the same in a Python literal.
        names.append(ast.literal_eval(found.group(1)))
    return names


@dataclass(frozen=True)
class Outcome:
    """One node test's result: passed, or why not."""

    passed: bool
    detail: str = ""


def parse_junit(text: str) -> dict[str, Outcome]:
    """Each reported test's outcome by name; a skipped test counts as not passed (nothing may skip)."""
    outcomes: dict[str, Outcome] = {}
    for case in ET.fromstring(text).iter("testcase"):
        name = case.get("name", "")
        failure, skipped = case.find("failure"), case.find("skipped")
        if failure is not None:
            outcomes[name] = Outcome(False, (failure.text or failure.get("message") or "").strip())
        elif skipped is not None:
            outcomes[name] = Outcome(False, f"the node test skipped: {skipped.get('message', '')}")
        else:
            outcomes[name] = Outcome(True)
    return outcomes


def _pattern(name: str) -> str:
    return "^" + _REGEX_SPECIAL.sub(lambda m: "\\" + m.group(0), name) + "$"


class NodeTestFile(pytest.File):
    """A ``*.test.mjs`` file: its tests as items, run together by node once."""

    outcomes: dict[str, Outcome] | None = None
    run_output = ""

    def collect(self) -> Iterator[NodeTest]:
        names = test_names(self.path)
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"{self.path}: tests named alike cannot be told apart: {twice}")
        for name in names:
            item = NodeTest.from_parent(self, name=name)
            item.add_marker(pytest.mark.slow)  # node and the bridge processes it starts
            yield item

    def run_selected(self) -> None:
        """Runs this file's selected tests in one node process and keeps each test's outcome."""
        mine = [item.name for item in self.session.items if item.parent is self]
        every = test_names(self.path)
        patterns = [] if sorted(mine) == sorted(every) else [f"--test-name-pattern={_pattern(n)}" for n in mine]
        # real_bridge.test.mjs runs `python -m dcp_plugin.adapters.bridge` with this interpreter (this checkout's code).
        env = {**os.environ, "DCP_TEST_PYTHON": sys.executable}
        with tempfile.TemporaryDirectory(prefix="dcp-node-") as tmp:
            report = Path(tmp) / "junit.xml"
            command = ["node", "--test", "--test-reporter=junit", f"--test-reporter-destination={report}", *patterns]
            done = subprocess.run(
                [*command, str(self.path)], capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=env, check=False
            )
            text = report.read_text(encoding="utf-8") if report.exists() else ""
        self.run_output = (done.stdout[-3000:] + done.stderr[-3000:]).strip()
        self.outcomes = parse_junit(text) if text.strip() else {}
        unknown = sorted(set(self.outcomes) - set(every))
        if unknown:
            # A test the collector did not see (a name it cannot read): fail every item rather than miss it.
            detail = f"node ran tests this collector did not find: {unknown}"
            self.outcomes = {name: Outcome(False, detail) for name in every}


class NodeTestFailed(Exception):
    """A node test failed, skipped or was not reported."""


class NodeTest(pytest.Item):
    """One node test; its file's node process runs when the first of its items runs."""

    parent: NodeTestFile

    def runtest(self) -> None:
        if shutil.which("node") is None:
            pytest.skip("node is not installed: the JS shim cannot be tested here")
        if self.parent.outcomes is None:
            self.parent.run_selected()
        assert self.parent.outcomes is not None
        outcome = self.parent.outcomes.get(self.name)
        if outcome is None:
            raise NodeTestFailed(f"node did not report this test; its output:\n{self.parent.run_output}")
        if not outcome.passed:
            raise NodeTestFailed(outcome.detail)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, NodeTestFailed):
            return f"{self.path.name}: {self.name}\n{excinfo.value}"
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.path.name}::{self.name}"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> NodeTestFile | None:
    if file_path.name.endswith(".test.mjs"):
        return NodeTestFile.from_parent(parent, path=file_path)
    return None
