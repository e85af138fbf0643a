"""`dcp opencode context` against the real OpenCode binary: the latest session by default, or one by id."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.e2e.opencode_harness import REPO_ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def dcp_opencode_context(sc, *args: str, command: str = "context") -> subprocess.CompletedProcess[str]:
    """`dcp opencode context ARGS` (or another ``command``) run in the project, with the project's isolated HOME and XDG dirs."""
    return subprocess.run(
        [sys.executable, "-m", "dcp_plugin.cli.main", "opencode", command, "--opencode", str(sc.opencode.binary), *args],
        cwd=sc.opencode.project,
        env={**sc.opencode.env(), "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def two_sessions(module_scenario_factory) -> dict[str, Any]:
    """Two sessions of the standard script in one project (no dcp plugin installed: export alone is read)."""
    sc = module_scenario_factory("opencode-context")
    # What the breakdown counts, not when the cache scheduler would write it: every prune at once.
    config = sc.opencode.project / ".opencode" / "dcp.jsonc"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('{"cache": {"scheduler": false}}')
    first = sc.opencode.run(["read", "hello.txt", "twice"])
    second = sc.opencode.run(["once", "more"])
    # Each path once: by id (as JSON), the latest without an id (as the table).
    by_id = dcp_opencode_context(sc, first.session_id, "--json")
    latest = dcp_opencode_context(sc)
    report = dcp_opencode_context(sc, first.session_id, command="report")
    return {"sc": sc, "first": first, "second": second, "by_id": by_id, "latest": latest, "report": report}


def breakdown(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_both_scripted_sessions_ran(two_sessions):
    assert two_sessions["first"].returncode == 0, two_sessions["first"].stderr
    assert two_sessions["second"].returncode == 0, two_sessions["second"].stderr
    assert two_sessions["first"].session_id != two_sessions["second"].session_id


def test_without_an_id_the_latest_session_is_shown(two_sessions):
    done = two_sessions["latest"]
    assert done.returncode == 0, done.stderr
    assert f"session {two_sessions['second'].session_id}" in done.stdout
    assert two_sessions["first"].session_id not in done.stdout


def test_a_given_id_is_shown(two_sessions):
    assert breakdown(two_sessions["by_id"])["session"] == two_sessions["first"].session_id


def test_the_breakdown_counts_the_scripts_calls_and_the_duplicate_read(two_sessions):
    data = breakdown(two_sessions["by_id"])
    assert data["tool_calls"] == 5
    assert data["saved_by_strategy"]["deduplication"]["calls"] == 1
    assert data["saved_by_strategy"]["deduplication"]["tokens"] > 0


def test_the_provider_reported_usage_is_used(two_sessions):
    data = breakdown(two_sessions["by_id"])
    assert data["provider_reported_prompt"] is not None
    assert data["categories"]["system"]["tokens"] is not None


def test_the_table_shows_the_budget(two_sessions):
    done = two_sessions["latest"]
    assert done.returncode == 0, done.stderr
    assert "Context budget" in done.stdout


def test_an_unknown_id_fails_with_opencodes_reason(two_sessions):
    done = dcp_opencode_context(two_sessions["sc"], "ses_doesnotexist")
    assert done.returncode == 1
    assert "Session not found: ses_doesnotexist" in done.stderr


def test_report_writes_the_html_page_of_a_real_session(two_sessions):
    done = two_sessions["report"]
    assert done.returncode == 0, done.stderr
    session_id = two_sessions["first"].session_id
    html = (two_sessions["sc"].opencode.project / f"dcp-report-{session_id}.html").read_text(encoding="utf-8")
    assert f"session {session_id}" in html
    assert 'data-chart="tokens"' in html and 'data-series="with"' in html


@pytest.fixture(scope="module")
def large_session(module_scenario_factory) -> dict[str, Any]:
    """A session whose export is about 400 KB (eight reads of a large file, then an answer), read ten times."""
    from tests.e2e.fake_provider import Text, ToolCall

    sc = module_scenario_factory("opencode-context-large", [])
    path = sc.opencode.project / "big.txt"
    path.write_text("\n".join(f"line {i:06d} of a large generated file, long enough to fill the export" for i in range(8000)))
    # OpenCode's read stops at about 50 KB, some 600 of these lines: eight reads of different parts.
    reads = [ToolCall("read", {"filePath": str(path), "offset": 1 + 600 * i, "limit": 600}) for i in range(8)]
    sc.provider.script = [*reads, Text("Read big.txt.")]
    run = sc.opencode.run(["read", "big.txt"], timeout=180)
    # Piped, OpenCode 1.18.33 cut this export short in about one run of three: read it ten times,
    # as the newcomer walk did (each read runs `opencode export`, about 2 s).
    contexts = [dcp_opencode_context(sc, str(run.session_id), "--json") for _ in range(10)]
    return {"sc": sc, "run": run, "reads": contexts}


def test_a_large_export_is_read_whole_every_time(large_session):
    assert large_session["run"].returncode == 0, large_session["run"].stderr
    exported = json.dumps(large_session["sc"].opencode.export(str(large_session["run"].session_id)))
    assert len(exported) > 128 * 1024  # larger than what a pipe got when OpenCode cut it short
    for done in large_session["reads"]:
        data = breakdown(done)
        assert data["tool_calls"] == 8
