"""The `dcp` command as a whole: groups, usage on errors, help everywhere, stdin, and no files created."""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from pathlib import Path

import pytest

from dcp_plugin import compiled
from dcp_plugin.cli.main import build_parser, main
from dcp_plugin.config.discovery import global_dir
from dcp_plugin.replay.simulate import generate_session


@pytest.fixture
def session_text() -> str:
    return json.dumps(generate_session(60, seed=3))


def feed_stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


def walk(parser: argparse.ArgumentParser, name: str = "dcp") -> list[tuple[str, argparse.ArgumentParser]]:
    """Every parser of the command tree, with its command line."""
    found = [(name, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                found += walk(sub, f"{name} {sub_name}")
    return found


# groups and usage


@pytest.mark.parametrize("argv", [[], ["config"], ["opencode"]])
def test_a_command_group_alone_prints_its_help_and_succeeds(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("usage: " + " ".join(["dcp", *argv]))


@pytest.mark.parametrize(
    "argv",
    [["replay", "--bogus"], ["config", "validate", "--bogus"], ["opencode", "install", "--bogus"], ["stats", "--bogus"]],
)
def test_an_unknown_option_is_reported_with_the_subcommands_usage(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    command = "dcp " + " ".join(a for a in argv if not a.startswith("-"))
    assert err.startswith(f"usage: {command} ")
    assert f"{command}: error: unrecognized arguments: --bogus" in err


def test_every_command_and_argument_has_help() -> None:
    missing = []
    for command, parser in walk(build_parser()):
        if not parser.description:
            missing.append(f"{command}: no description")
        for action in parser._actions:
            if not isinstance(action, argparse._SubParsersAction) and not action.help:
                missing.append(f"{command}: {action.dest} has no help")
            if isinstance(action, argparse._SubParsersAction):
                helped = {a.dest for a in action._choices_actions if a.help}
                missing += [f"{command} {name}: no help line" for name in action.choices if name not in helped]
    assert missing == []


# replay and context


@pytest.mark.parametrize("rows", ["0", "-3"])
def test_rows_below_one_are_rejected_with_a_clear_message(rows: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["replay", "--rows", rows])
    assert f"argument --rows: expected a whole number of at least 1, got {int(rows)}" in capsys.readouterr().err


def test_replay_dash_reads_the_session_from_stdin(
    session_text: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    feed_stdin(monkeypatch, session_text)
    assert main(["replay", "-", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["messages"] == 60


def test_context_dash_reads_the_session_from_stdin(
    session_text: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    feed_stdin(monkeypatch, session_text)
    assert main(["context", "-", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tool_calls"] > 0


def test_bad_json_on_stdin_names_stdin_and_the_position(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    feed_stdin(monkeypatch, "{oops")
    assert main(["replay", "-"]) == 1
    assert "dcp replay: standard input:1:2: not valid JSON" in capsys.readouterr().err


def test_a_session_cut_short_on_stdin_says_to_export_to_a_file(
    session_text: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    feed_stdin(monkeypatch, session_text[: len(session_text) // 2])
    assert main(["replay", "-"]) == 1
    err = capsys.readouterr().err
    assert "ends mid-document" in err
    assert "opencode export SESSION_ID > session.json" in err


def test_bad_json_inside_a_whole_document_on_stdin_gets_no_cut_short_advice(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    feed_stdin(monkeypatch, '{"messages": [oops]}')
    assert main(["replay", "-"]) == 1
    assert "ends mid-document" not in capsys.readouterr().err


def test_empty_stdin_says_what_was_expected(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    feed_stdin(monkeypatch, "")
    assert main(["replay", "-"]) == 1
    assert "standard input: empty; expected a session JSON document" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["replay", "--json"], ["context", "SESSION", "--json"]])
def test_cli_replays_never_create_the_global_config_file(
    argv: list[str], session_text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "session.json"
    path.write_text(session_text)
    assert main([str(path) if a == "SESSION" else a for a in argv]) == 0
    capsys.readouterr()
    assert not (global_dir() / "dcp.jsonc").exists()
    assert not global_dir().exists()


def test_cli_replays_still_read_the_global_config_file(session_text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    global_dir().mkdir(parents=True)
    (global_dir() / "dcp.jsonc").write_text('{"strategies": {"deduplication": {"enabled": false}}}')
    path = tmp_path / "session.json"
    path.write_text(session_text)
    assert main(["replay", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pruned_calls"]["deduplication"] == 0


# opencode install


def test_a_file_given_as_project_is_not_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("")
    assert main(["opencode", "install", "--project", str(file)]) == 1
    assert capsys.readouterr().err == f"dcp: {file} is not a directory; --project takes the project's directory\n"


def test_a_missing_project_does_not_exist(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["opencode", "uninstall", "--project", str(tmp_path / "nope")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_replay_into_a_file_keeps_every_figure_whole(capsys: pytest.CaptureFixture[str]) -> None:
    # Under pytest stdout is not a terminal, as with `dcp replay > file`.
    assert main(["replay"]) == 0
    out = capsys.readouterr().out
    assert "…" not in out
    assert re.search(r" \d{3},\d{3} ", out), out[:2000]


def test_dcp_help_says_what_to_run_instead_of_opencode_run_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "`dcp opencode context [SESSION_ID]`" in text and "Unexpected server error" in text


def test_version_says_whether_the_compiled_core_runs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    printed = capsys.readouterr().out
    assert compiled.describe() in printed
    assert ("compiled core" in printed) == compiled.IN_USE
