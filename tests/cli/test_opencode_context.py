"""`dcp opencode context`: an OpenCode session's /dcp context, read through a fake `opencode` on PATH."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from dcp_plugin.cli.main import main
from dcp_plugin.commands.context import build_breakdown
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.replay.simulate import generate_session

# Answers `session list --format json` from $FAKE_OPENCODE/sessions.json and `export ID` from
# $FAKE_OPENCODE/<ID>.json (with the status line the real one prints first), logging each call.
# Like OpenCode 1.18 it cuts stdout short when stdout is a pipe (here after PIPE_LIMIT bytes).
PIPE_LIMIT = 4096
FAKE_OPENCODE = f"""#!{sys.executable}
import json, os, stat, sys
base = os.environ["FAKE_OPENCODE"]
if stat.S_ISFIFO(os.fstat(1).st_mode):
    _write = sys.stdout.write
    _left = [{PIPE_LIMIT}]
    def _cut(text):
        kept = text[: _left[0]]
        _left[0] -= len(kept)
        return _write(kept)
    sys.stdout.write = _cut
with open(os.path.join(base, "calls.jsonl"), "a") as log:
    log.write(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd()}}) + "\\n")
args = [a for a in sys.argv[1:] if a != "--pure"]
if args[:2] == ["session", "list"]:
    path = os.path.join(base, "sessions.json")
    if os.path.exists(path):
        print(open(path).read())
    sys.exit(0)
if args[:1] == ["export"]:
    path = os.path.join(base, args[1] + ".json")
    if not os.path.exists(path):
        print("Exporting session: " + args[1], file=sys.stderr)
        print("\\x1b[91m\\x1b[1mError: \\x1b[0mSession not found: " + args[1], file=sys.stderr)
        sys.exit(1)
    print("Exporting session: " + args[1], file=sys.stderr)
    print(open(path).read())
    sys.exit(0)
sys.exit(3)
"""


class Fake:
    """The fake binary's data directory and what it was asked."""

    def __init__(self, base: Path) -> None:
        self.base = base

    def add_session(self, session_id: str, directory: Path, updated: int, size: int = 80) -> dict[str, Any]:
        session = generate_session(size, seed=updated)
        session["info"] = {**session["info"], "id": session_id, "directory": str(directory), "title": f"title {session_id}"}
        for message in session["messages"]:
            message["info"]["sessionID"] = session_id
            for part in message["parts"]:
                part["sessionID"] = session_id
        (self.base / f"{session_id}.json").write_text(json.dumps(session))
        listing_path = self.base / "sessions.json"
        listing = json.loads(listing_path.read_text()) if listing_path.exists() else []
        listing.append({"id": session_id, "title": f"title {session_id}", "updated": updated, "created": updated,
                        "projectId": "global", "directory": str(directory)})
        listing_path.write_text(json.dumps(listing, indent=2))
        return session

    def calls(self) -> list[dict[str, Any]]:
        path = self.base / "calls.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fake:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    binary = bindir / "opencode"
    binary.write_text(FAKE_OPENCODE)
    binary.chmod(0o755)
    data = tmp_path / "fake-data"
    data.mkdir()
    monkeypatch.setenv("FAKE_OPENCODE", str(data))
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("OPENCODE_BIN", raising=False)
    return Fake(data)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["opencode", "context", *argv, "--json"]) == 0, capsys.readouterr().err
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


SAME = ("tool_calls", "pruned_calls", "tokens_saved", "saved_by_strategy", "largest_savings", "provider_reported_prompt")


def from_scratch(session: dict[str, Any]) -> dict[str, Any]:
    """What /dcp context shows at the end of the session: the final request's placeholders over every message."""
    last = max(i for i, m in enumerate(session["messages"]) if i > 0 and m["info"]["role"] == "assistant")
    messages = session["messages"][:last]
    directory = session["info"]["directory"]
    runtime = Runtime(directory, StaticConfig(DcpConfig()))
    sid = session["info"]["id"]
    assert runtime.prepare(sid, messages) is not None
    view = runtime.view(sid)
    assert view is not None
    return build_breakdown(sid, session["messages"], view.in_force, directory=directory).to_dict()


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    """The numbers that do not depend on the budget snapshot."""
    return {
        **{key: data[key] for key in SAME},
        **data["estimates"],
    }


def test_without_an_id_it_shows_the_latest_session_of_this_project(
    fake: Fake, git_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.add_session("ses_old", git_project, updated=100)
    fake.add_session("ses_new", git_project / "src", updated=300)
    fake.add_session("ses_elsewhere", tmp_path / "other", updated=900)
    assert run_json(capsys)["session"] == "ses_new"


def test_a_given_id_is_exported(fake: Fake, git_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake.add_session("ses_a", git_project, updated=100)
    fake.add_session("ses_b", git_project, updated=200)
    assert run_json(capsys, "ses_a")["session"] == "ses_a"
    assert [call["argv"] for call in fake.calls()] == [["export", "ses_a", "--pure"]]


def test_opencode_is_asked_without_plugins(fake: Fake, git_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake.add_session("ses_a", git_project, updated=100)
    run_json(capsys)
    assert [call["argv"] for call in fake.calls()] == [
        ["session", "list", "--format", "json", "--pure"],
        ["export", "ses_a", "--pure"],
    ]
    assert {call["cwd"] for call in fake.calls()} == {str(git_project)}


def test_the_breakdown_is_what_dcp_context_shows_at_the_end_of_the_session(
    fake: Fake, git_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = fake.add_session("ses_a", git_project, updated=100, size=200)
    data = run_json(capsys, "ses_a")
    assert comparable(data) == comparable(from_scratch(session))
    rows = sum(data["categories"][name]["tokens"] or 0 for name in ("system", "user", "assistant", "tools"))
    # One total: the budget's (anchored on the provider's count); the rows are its parts.
    assert data["total_now"] == data["snapshot"]["estimated_input_tokens"] == rows


def test_the_table_names_the_session_and_its_title(fake: Fake, git_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake.add_session("ses_a", git_project, updated=100)
    assert main(["opencode", "context"]) == 0
    out = capsys.readouterr().out
    assert "session ses_a (title ses_a)" in out and "Context budget" in out


def test_no_session_in_this_project_says_how_to_get_one(fake: Fake, git_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake.add_session("ses_elsewhere", tmp_path / "other", updated=900)
    assert main(["opencode", "context"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"dcp opencode context: no OpenCode session found for {git_project}")
    assert "`opencode session list`" in err


def test_no_session_at_all_is_the_same_clear_error(fake: Fake, git_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["opencode", "context"]) == 1
    assert "no OpenCode session found" in capsys.readouterr().err


def test_an_unknown_id_reports_opencodes_error(fake: Fake, git_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["opencode", "context", "ses_nope"]) == 1
    assert capsys.readouterr().err == (
        "dcp opencode context: `opencode export ses_nope` failed (exit 1): Error: Session not found: ses_nope\n"
    )


def test_without_opencode_on_path_it_says_what_to_do(git_project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", str(git_project))
    monkeypatch.delenv("OPENCODE_BIN", raising=False)
    assert main(["opencode", "context"]) == 1
    err = capsys.readouterr().err
    assert "`opencode` is not on PATH; pass --opencode PATH" in err and "dcp context session.json" in err


def test_an_explicit_binary_that_is_not_executable_is_named(git_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["opencode", "context", "--opencode", str(git_project / "nope")]) == 1
    assert f"{git_project / 'nope'} is not an executable file" in capsys.readouterr().err


def test_reading_a_session_never_creates_the_global_config_file(fake: Fake, git_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dcp_plugin.config.discovery import global_dir

    fake.add_session("ses_a", git_project, updated=100)
    run_json(capsys)
    assert not global_dir().exists()


def test_a_session_without_a_model_request_says_so(fake: Fake, git_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = fake.add_session("ses_a", git_project, updated=100)
    session["messages"] = session["messages"][:1]
    (fake.base / "ses_a.json").write_text(json.dumps(session))
    assert main(["opencode", "context", "ses_a"]) == 1
    assert capsys.readouterr().err == (
        "dcp opencode context: session ses_a: the session has no model request (no assistant message after the first)\n"
    )


def test_the_window_is_the_one_opencode_json_gives_the_sessions_model(
    fake: Fake, git_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.add_session("ses_a", git_project, updated=100, size=200)
    config = {"provider": {"sim": {"models": {"sim-coder": {"limit": {"context": 32_000, "output": 4_096}}}}}}
    (git_project / "opencode.json").write_text(json.dumps(config))
    snapshot = run_json(capsys, "ses_a")["snapshot"]
    assert (snapshot["context_limit"], snapshot["limit_source"]) == (32_000, "host")


def test_the_users_sweeps_and_pins_of_the_live_session_are_shown_and_kept(
    fake: Fake, git_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from dcp_plugin.store import SessionBatch, Store, default_path

    session = fake.add_session("ses_a", git_project, updated=100, size=200)
    calls = [p["callID"] for m in session["messages"] for p in m["parts"] if p.get("type") == "tool"]
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    path = default_path()
    path.parent.mkdir(parents=True)
    store = Store(path)
    assert store.save([SessionBatch("ses_a", manual={calls[-1]: "sweep"}, pins={calls[0]: True})])
    store.close()
    before = path.read_bytes()
    data = run_json(capsys, "ses_a")
    assert data["saved_by_strategy"]["sweep"]["calls"] == 1
    assert path.read_bytes() == before  # read, never written


def test_without_an_id_an_empty_newest_session_is_passed_over(
    fake: Fake, git_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.add_session("ses_a", git_project, updated=100)
    empty = fake.add_session("ses_empty", git_project, updated=900)
    # What `opencode run --command dcp ...` leaves behind: a session with the command's message only.
    empty["messages"] = empty["messages"][:1]
    (fake.base / "ses_empty.json").write_text(json.dumps(empty))
    assert run_json(capsys)["session"] == "ses_a"


def test_the_fake_cuts_its_output_short_on_a_pipe(fake: Fake, git_project: Path) -> None:
    # The premise of the next test: piped, the export is truncated as OpenCode 1.18's is.
    import subprocess

    fake.add_session("ses_big", git_project, updated=7, size=200)
    whole = (fake.base / "ses_big.json").read_text()
    assert len(whole) > 10 * PIPE_LIMIT
    piped = subprocess.run(["opencode", "export", "ses_big"], capture_output=True, text=True, check=True).stdout
    assert len(piped) == PIPE_LIMIT


def test_a_large_export_is_read_whole_although_opencode_cuts_pipes_short(
    fake: Fake, git_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = fake.add_session("ses_big", git_project, updated=7, size=200)
    data = run_json(capsys, "ses_big")
    assert data["tool_calls"] == from_scratch(session)["tool_calls"]


def test_report_writes_the_html_page_of_the_latest_session(
    fake: Fake, git_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.add_session("ses_old", git_project, updated=100)
    session = fake.add_session("ses_new", git_project, updated=300, size=120)
    assert main(["opencode", "report"]) == 0, capsys.readouterr().err
    page = git_project / "dcp-report-ses_new.html"
    html = page.read_text(encoding="utf-8")
    assert "session ses_new (title ses_new)" in html
    requests = sum(1 for i, m in enumerate(session["messages"]) if i > 0 and m["info"]["role"] == "assistant")
    assert f'data-points="{requests}"' in html
    assert f"wrote {page.name}" in capsys.readouterr().out


def test_report_of_a_given_session_goes_where_html_says(
    fake: Fake, git_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.add_session("ses_a", git_project, updated=100)
    out = tmp_path / "a.html"
    assert main(["opencode", "report", "ses_a", "--html", str(out)]) == 0, capsys.readouterr().err
    assert "session ses_a" in out.read_text(encoding="utf-8")


def test_report_of_an_unknown_session_reports_opencodes_error(
    fake: Fake, git_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["opencode", "report", "ses_nope"]) == 1
    assert "dcp opencode report: `opencode export ses_nope` failed" in capsys.readouterr().err
