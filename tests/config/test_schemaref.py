"""The `$schema` of dcp.jsonc: a copy beside the global file that survives reinstalls, and dangling references."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import json5
import pytest

from dcp_plugin.cli.config import add_parser
from dcp_plugin.config import schemaref
from dcp_plugin.config.discovery import global_dir
from dcp_plugin.config.schema import schema_resource, schema_uri
from dcp_plugin.config.source import ConfigSource


def copy_path() -> Path:
    return global_dir() / "dcp.schema.json"


def installed() -> str:
    text: str = schema_resource().read_text(encoding="utf-8")
    return text


def validate(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="dcp")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["config", "validate", *argv])
    result: int = args.func(args)
    return result


# the stable copy


def test_first_run_points_schema_at_a_copy_beside_the_global_file(git_project: Path) -> None:
    ConfigSource(git_project).get()
    data = json5.loads((global_dir() / "dcp.jsonc").read_text())
    assert data["$schema"] == copy_path().as_uri()
    assert copy_path().read_text() == installed()


def test_a_stale_copy_is_refreshed_on_start(git_project: Path) -> None:
    copy_path().parent.mkdir(parents=True)
    copy_path().write_text('{"old": true}')
    ConfigSource(git_project).get()
    assert copy_path().read_text() == installed()


def test_an_up_to_date_copy_is_left_alone(git_project: Path) -> None:
    ConfigSource(git_project).get()
    os.utime(copy_path(), ns=(1_000_000_000, 1_000_000_000))
    ConfigSource(git_project).get()
    assert copy_path().stat().st_mtime_ns == 1_000_000_000


def test_the_copy_is_refreshed_when_the_global_file_already_exists(git_project: Path) -> None:
    global_dir().mkdir(parents=True)
    (global_dir() / "dcp.jsonc").write_text("{}")
    ConfigSource(git_project).get()
    assert copy_path().read_text() == installed()
    assert (global_dir() / "dcp.jsonc").read_text() == "{}"


def test_a_source_that_may_not_create_the_global_file_writes_no_copy_either(git_project: Path) -> None:
    ConfigSource(git_project, create_global=False).get()
    assert not global_dir().exists()


def test_a_copy_that_cannot_be_written_falls_back_to_the_installed_schema(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert schemaref.stable_schema_uri(blocker / "opencode") == schema_uri()


def test_config_init_points_schema_at_the_copy(git_project: Path) -> None:
    parser = argparse.ArgumentParser(prog="dcp")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["config", "init", "--project"])
    assert args.func(args) == 0
    text = (git_project / ".opencode" / "dcp.jsonc").read_text()
    assert f'"$schema": {json.dumps(copy_path().as_uri())}' in text


# dangling references


def test_validate_warns_when_schema_points_at_a_missing_file(git_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gone = tmp_path / "old-venv" / "dcp_plugin" / "schema" / "dcp.schema.json"
    config = git_project / ".opencode" / "dcp.jsonc"
    config.parent.mkdir()
    config.write_text(json.dumps({"$schema": gone.as_uri(), "debug": True}))
    assert validate() == 0
    out = capsys.readouterr().out
    assert f"dcp: {config}: $schema: warning: `$schema` points at {gone}, which does not exist" in out
    assert "the settings still apply" in out
    assert out.splitlines()[-1].startswith("0 errors, 1 warning in 1 file")


def test_the_warning_suggests_the_copy_when_there_is_one(git_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ConfigSource(git_project).get()  # a real host's first start writes the copy
    config = tmp_path / "c.jsonc"
    config.write_text(json.dumps({"$schema": (tmp_path / "gone.json").as_uri()}))
    validate(str(config))
    assert f'set it to "{copy_path().as_uri()}"' in capsys.readouterr().out


def test_a_relative_schema_path_is_resolved_beside_the_file(git_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "dcp.schema.json").write_text("{}")
    config = tmp_path / "c.jsonc"
    config.write_text('{"$schema": "./dcp.schema.json"}')
    assert validate(str(config)) == 0
    assert "$schema" not in capsys.readouterr().out
    config.write_text('{"$schema": "./missing.schema.json"}')
    validate(str(config))
    assert f"points at {tmp_path / 'missing.schema.json'}" in capsys.readouterr().out


def test_a_web_schema_url_is_not_checked(git_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.jsonc"
    config.write_text('{"$schema": "https://example.invalid/dcp.schema.json"}')
    assert validate(str(config)) == 0
    assert capsys.readouterr().out.startswith("ok: 1 file valid")


def test_the_host_is_told_about_a_dangling_schema_too(git_project: Path, tmp_path: Path) -> None:
    config = git_project / ".opencode" / "dcp.jsonc"
    config.parent.mkdir()
    config.write_text(json.dumps({"$schema": (tmp_path / "gone.json").as_uri()}))
    said: list[str] = []
    ConfigSource(git_project, lambda _session, text: said.append(text), create_global=False).get()
    assert any("`$schema` points at" in text for text in said)
