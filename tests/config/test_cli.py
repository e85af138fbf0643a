"""`dcp config init|validate|show|schema`: output, files written and exit status."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import json5
import pytest

from dcp_plugin.cli.config import add_parser
from dcp_plugin.config import schema as schema_mod
from dcp_plugin.config.schema import defaults, schema_path


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("OPENCODE_CONFIG_DIR", raising=False)
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)  # a git project: the config walk stops at its root
    monkeypatch.chdir(project)
    return tmp_path


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="dcp")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["config", *argv])
    result: int = args.func(args)
    return result


def global_file(workdir: Path) -> Path:
    return workdir / "xdg" / "opencode" / "dcp.jsonc"


def project_file(workdir: Path) -> Path:
    return workdir / "proj" / ".opencode" / "dcp.jsonc"


# init


def test_init_writes_the_global_file_with_defaults(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("init") == 0
    data = json5.loads(global_file(workdir).read_text())
    assert data.pop("$schema").startswith("file://")
    assert data == defaults()
    assert capsys.readouterr().out == f"wrote {global_file(workdir)}\n"


def test_init_project_writes_a_file_that_overrides_nothing(workdir: Path) -> None:
    assert run("init", "--project") == 0
    text = project_file(workdir).read_text()
    assert '// "enabled": true,' in text
    assert list(json5.loads(text)) == ["$schema"]


def test_init_refuses_to_overwrite(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = global_file(workdir)
    path.parent.mkdir(parents=True)
    path.write_text('{"debug": true}')
    assert run("init") == 1
    assert path.read_text() == '{"debug": true}'
    assert capsys.readouterr().err == f"dcp config: {path} already exists; not overwriting it (use --force to replace it)\n"


def test_init_force_overwrites(workdir: Path) -> None:
    path = project_file(workdir)
    path.parent.mkdir(parents=True)
    path.write_text('{"debug": true}')
    assert run("init", "--project", "--force") == 0
    assert "debug" not in json5.loads(path.read_text())


def test_init_refuses_when_a_legacy_dcp_json_exists(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    legacy = global_file(workdir).with_name("dcp.json")
    legacy.parent.mkdir(parents=True)
    legacy.write_text("{}")
    assert run("init") == 1
    assert "dcp.json exists" in capsys.readouterr().err
    assert not global_file(workdir).exists()


def test_init_reports_an_unwritable_place(workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = workdir / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(blocker))
    assert run("init") == 1
    assert capsys.readouterr().err.startswith(f"dcp config: cannot write {blocker}/opencode/dcp.jsonc")


# validate


def test_validate_reports_every_error_and_exits_1(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = workdir / "bad.jsonc"
    path.write_text('{"debug": 1, "pruneNotification": "x", "strategies": {"purgeErrors": {"turns": 0}}}')
    assert run("validate", str(path)) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"dcp: {path}: debug: error: expected true or false, got 1; using false (the default)",
        f'dcp: {path}: pruneNotification: error: expected one of "off", "minimal", "detailed", got "x"; using "minimal" (the default)',
        f"dcp: {path}: strategies.purgeErrors.turns: error: expected a whole number of at least 1, got 0; using 4 (the default)",
        f"3 errors, 0 warnings in 1 file; read {path}",
    ]


def test_validate_lists_errors_before_warnings_as_the_host_does(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    warned, broken = workdir / "a.jsonc", workdir / "b.jsonc"
    warned.write_text('{"enabld": true}')
    broken.write_text('{"debug": 1}')
    assert run("validate", str(warned), str(broken)) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("dcp: ")]
    assert lines[0].startswith(f"dcp: {broken}: debug: error") and lines[1].startswith(f"dcp: {warned}: enabld: warning")


def test_validate_with_only_warnings_exits_0(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = workdir / "warn.jsonc"
    path.write_text('{"debugg": true}')
    assert run("validate", str(path)) == 0
    assert "did you mean `debug`?" in capsys.readouterr().out


def test_validate_syntax_error_names_line_and_column(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = workdir / "syntax.jsonc"
    path.write_text('{\n  "debug": tru\n}')
    assert run("validate", str(path)) == 1
    assert capsys.readouterr().out.startswith(f"dcp: {path}:2:")


def test_validate_missing_file_is_an_error(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("validate", str(workdir / "nope.jsonc")) == 1
    assert "no such file" in capsys.readouterr().out


def test_validate_valid_file_says_ok(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run("init")
    capsys.readouterr()
    assert run("validate", str(global_file(workdir))) == 0
    assert capsys.readouterr().out == f"ok: 1 file valid; read {global_file(workdir)}\n"


def test_validate_without_files_checks_every_existing_layer(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run("init")
    project = project_file(workdir)
    project.parent.mkdir(parents=True)
    project.write_text('{"turnProtection": {"turns": 0}}')
    capsys.readouterr()
    assert run("validate") == 1
    out = capsys.readouterr().out.splitlines()
    assert (
        f"dcp: {project}: turnProtection.turns: error: expected a whole number of at least 1, got 0; "
        f"using 4 (from {global_file(workdir)})"
    ) in out
    assert out[-1] == f"1 error, 0 warnings in 1 of 2 files; read {global_file(workdir)}, {project}"


def test_validate_lists_every_file_checked_found_or_not(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run("init")
    capsys.readouterr()
    assert run("validate") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "config files checked (later ones override earlier ones):"
    assert out[1].split() == ["global", "read", str(global_file(workdir))]
    assert out[2].split() == ["home", "not", "found", str(workdir / "home" / ".opencode" / "dcp.jsonc"), "(or", "dcp.json)"]
    assert out[3].split() == ["project", "not", "found", str(project_file(workdir)), "(or", "dcp.json)"]


def test_validate_from_a_subdirectory_reads_the_project_roots_file(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = project_file(workdir)
    project.parent.mkdir(parents=True)
    project.write_text('{"enabled": false}')
    (workdir / "proj" / "src").mkdir()
    monkeypatch.chdir(workdir / "proj" / "src")
    assert run("validate") == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"ok: 1 file valid; read {project}"


def test_validate_names_a_misplaced_file_as_a_warning(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stray = workdir / "proj" / "dcp.jsonc"
    stray.write_text('{"enabled": false}')
    assert run("validate") == 0
    out = capsys.readouterr().out.splitlines()
    assert f"dcp: {stray}: warning: not read: project settings belong in {project_file(workdir)}; move the file there" in out
    assert out[-1] == "no config file found (1 warning(s) above); the defaults apply"


def test_validate_without_any_file_says_defaults_apply(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("validate") == 0
    assert "no config file found" in capsys.readouterr().out


# show


def test_show_json_is_pure_json_with_origins(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = project_file(workdir)
    project.parent.mkdir(parents=True)
    project.write_text('{"debug": true, "enabeld": false}')
    assert run("show", "--json") == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["config"]["debug"] is True
    assert result["origins"]["debug"] == str(project)
    assert result["origins"]["enabled"] == "default"
    assert result["files"] == [str(project)]
    assert "did you mean `enabled`?" in captured.err


def test_show_does_not_create_the_global_file(workdir: Path) -> None:
    run("show", "--json")
    assert not global_file(workdir).exists()


def test_show_lists_each_key_with_value_and_origin(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = project_file(workdir)
    project.parent.mkdir(parents=True)
    project.write_text('{"strategies": {"purgeErrors": {"turns": 7}}}')
    assert run("show") == 0
    table = capsys.readouterr().out.split("\n\n")[0]
    lines = {line.split()[0]: line.split()[1:] for line in table.splitlines()}
    assert lines["strategies.purgeErrors.turns"] == ["7", str(project)]
    assert lines["pruneNotification"] == ['"minimal"', "default"]
    assert len(lines) == len(schema_mod.leaf_paths())


def test_show_lists_the_files_checked_after_the_values(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = project_file(workdir)
    project.parent.mkdir(parents=True)
    project.write_text("{}")
    assert run("show") == 0
    checked = capsys.readouterr().out.split("\n\n")[1].splitlines()
    assert checked[0] == "config files checked (later ones override earlier ones):"
    assert [line.split()[:2] for line in checked[1:]] == [["global", "not"], ["home", "not"], ["project", "read"]]


def test_show_json_lists_the_files_checked(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("show", "--json") == 0
    checked = json.loads(capsys.readouterr().out)["checked"]
    assert checked[-1] == {"layer": "project", "path": str(project_file(workdir)), "found": False}


def test_show_warns_about_a_misplaced_file_on_stderr(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stray = workdir / "proj" / ".opencode" / "dcp.jsonc.bak"
    stray.parent.mkdir()
    stray.write_text("{}")
    assert run("show", "--json") == 0
    captured = capsys.readouterr()
    assert f"dcp: {stray}: warning: not read" in captured.err
    json.loads(captured.out)


# schema


def test_schema_prints_the_installed_schema_path(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("schema") == 0
    assert capsys.readouterr().out == f"{schema_path()}\n"


def test_module_runs_as_a_command(workdir: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dcp_plugin.cli.config", "config", "schema"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        check=False,
    )
    assert result.returncode == 0
    assert Path(result.stdout.strip()).is_file()
