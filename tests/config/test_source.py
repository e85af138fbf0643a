"""ConfigSource: layers applied in order, first-run file, live reload, one report per change, never raises."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import json5
import pytest

from dcp_plugin.config import source as source_mod
from dcp_plugin.config.loader import LayerResult
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.config.parse import MAX_FILE_BYTES
from dcp_plugin.config.problems import SUMMARY_LIMIT, UNUSABLE, Problem, summary
from dcp_plugin.config.schema import defaults
from dcp_plugin.config.source import ConfigSource
from dcp_plugin.config.validate import LEGACY_TEXT


@dataclass
class Env:
    home: Path
    xdg: Path
    project: Path
    messages: list[tuple[str | None, str]]

    @property
    def global_file(self) -> Path:
        return self.xdg / "opencode" / "dcp.jsonc"

    @property
    def project_file(self) -> Path:
        return self.project / ".opencode" / "dcp.jsonc"

    def notify(self, session: str | None, text: str) -> None:
        self.messages.append((session, text))

    def source(self, **kwargs: object) -> ConfigSource:
        return ConfigSource(self.project, self.notify, **kwargs)  # type: ignore[arg-type]

    def texts(self) -> list[str]:
        return [text for _, text in self.messages]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("OPENCODE_CONFIG_DIR", raising=False)
    project = tmp_path / "proj"
    (project / ".opencode").mkdir(parents=True)
    (project / ".git").mkdir()  # the project's root: the config walk stops here
    return Env(home, tmp_path / "xdg", project, [])


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    # a rewrite within the file system's timestamp granularity must still count as a change
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


# first run


def test_first_run_creates_the_global_file_with_the_defaults(env: Env) -> None:
    assert env.source().get() == DcpConfig()
    data = json5.loads(env.global_file.read_text())
    assert data.pop("$schema") == (env.xdg / "opencode" / "dcp.schema.json").as_uri()
    assert data == defaults()
    assert env.messages == []


def test_created_global_file_explains_every_key_in_comments(env: Env) -> None:
    env.source().get()
    text = env.global_file.read_text()
    assert "// Master switch." in text
    assert "// How many user turns a failed call must be old" in text
    assert text.count("//") >= 16


def test_existing_global_file_is_not_touched(env: Env) -> None:
    write(env.global_file, '{"debug": true}')
    assert env.source().get().debug is True
    assert env.global_file.read_text() == '{"debug": true}'


def test_legacy_dcp_json_is_used_and_no_jsonc_is_created(env: Env) -> None:
    write(env.global_file.with_name("dcp.json"), '{"debug": true}')
    assert env.source().get().debug is True
    assert not env.global_file.exists()


def test_jsonc_wins_over_json_in_the_global_dir(env: Env) -> None:
    write(env.global_file.with_name("dcp.json"), '{"debug": true}')
    write(env.global_file, '{"enabled": false}')
    config = env.source().get()
    assert (config.debug, config.enabled) == (False, False)


def test_global_file_that_cannot_be_created_is_reported_not_raised(env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(blocker / "sub"))
    source = env.source()
    assert source.get() == DcpConfig()
    source.get()
    (message,) = env.texts()
    assert "could not create the default config file" in message and "using the built-in defaults" in message


def test_creation_can_be_turned_off(env: Env) -> None:
    env.source(create_global=False).get()
    assert not env.global_file.exists()


# layering


def test_project_overrides_global_key_by_key(env: Env) -> None:
    write(env.global_file, '{"strategies": {"purgeErrors": {"turns": 8, "enabled": false}}, "debug": true}')
    write(env.project_file, '{"strategies": {"purgeErrors": {"turns": 2}}}')
    config = env.source().get()
    assert config.strategies.purge_errors.turns == 2
    assert config.strategies.purge_errors.enabled is False
    assert config.debug is True


def test_opencode_config_dir_sits_between_global_and_project(env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENCODE_CONFIG_DIR", str(tmp_path / "ocd"))
    write(env.global_file, '{"pruneNotification": "off", "debug": true, "enabled": false}')
    write(tmp_path / "ocd" / "dcp.jsonc", '{"pruneNotification": "detailed", "debug": false}')
    write(env.project_file, '{"debug": true}')
    source = env.source()
    config = source.get()
    assert (config.enabled, config.prune_notification, config.debug) == (False, "detailed", True)
    origins = source.origins()
    assert origins["enabled"] == str(env.global_file)
    assert origins["pruneNotification"] == str(tmp_path / "ocd" / "dcp.jsonc")
    assert origins["debug"] == str(env.project_file)


def test_project_list_replaces_global_list(env: Env) -> None:
    write(env.global_file, '{"protectedFilePatterns": ["a/**", "b/**"]}')
    write(env.project_file, '{"protectedFilePatterns": ["c/**"]}')
    assert env.source().get().protected_file_patterns == ("c/**",)


def test_origins_say_default_for_values_no_file_sets(env: Env) -> None:
    write(env.global_file, "{}")
    write(env.project_file, '{"turnProtection": {"enabled": true}}')
    origins = env.source().origins()
    assert origins["turnProtection.enabled"] == str(env.project_file)
    assert origins["turnProtection.turns"] == "default"


# bad input: the message and what is used instead


def test_bad_key_falls_back_to_the_layer_below_and_says_so(env: Env) -> None:
    write(env.global_file, '{"strategies": {"purgeErrors": {"turns": 6}}}')
    write(env.project_file, '{"strategies": {"purgeErrors": {"turns": 0, "enabled": false}}, "debug": true}')
    config = env.source().get()
    assert config.strategies.purge_errors.turns == 6
    assert (config.strategies.purge_errors.enabled, config.debug) == (False, True)
    assert env.texts() == [
        f"dcp: {env.project_file}: strategies.purgeErrors.turns: error: expected a whole number of at least 1, "
        f"got 0; using 6 (from {env.global_file})"
    ]


def test_bad_key_falls_back_to_the_default(env: Env) -> None:
    write(env.global_file, "{}")
    write(env.project_file, '{"pruneNotification": "loud", "enabled": false}')
    config = env.source().get()
    assert (config.prune_notification, config.enabled) == ("minimal", False)
    assert env.texts()[0].endswith('got "loud"; using "minimal" (the default)')


def test_unparseable_project_file_is_skipped_whole(env: Env) -> None:
    write(env.global_file, '{"debug": true}')
    write(env.project_file, '{"debug": false,\n "enabled": false\n "x": 1}')
    config = env.source().get()
    assert (config.debug, config.enabled) == (True, True)
    (message,) = env.texts()
    assert message.startswith(f"dcp: {env.project_file}:3:2: error: syntax error")
    assert UNUSABLE in message


def test_unknown_key_warns_with_suggestion_and_the_rest_applies(env: Env) -> None:
    write(env.project_file, '{"strategies": {"dedupliction": {"enabled": false}}, "debug": true}')
    config = env.source().get()
    assert config.debug is True and config.strategies.deduplication.enabled is True
    assert env.texts() == [
        f"dcp: {env.project_file}: strategies.dedupliction: warning: unknown key `dedupliction` is ignored; "
        "did you mean `strategies.deduplication`?"
    ]


@pytest.mark.parametrize("text", ["", "   \n", "// only a comment\n/* and another */"])
def test_empty_or_comment_only_file_warns_and_changes_nothing(env: Env, text: str) -> None:
    write(env.global_file, '{"debug": true}')
    write(env.project_file, text)
    assert env.source().get().debug is True
    (message,) = env.texts()
    assert message == (
        f"dcp: {env.project_file}: warning: is empty or holds only comments (a save in progress?); write `{{}}` in it "
        f"to set nothing on purpose; {UNUSABLE}"
    )


def test_byte_order_mark_is_accepted(env: Env) -> None:
    env.project_file.write_bytes(b'\xef\xbb\xbf{"debug": true}')
    assert env.source().get().debug is True
    assert env.messages == []


def test_non_object_top_level_is_skipped(env: Env) -> None:
    write(env.project_file, '["debug"]')
    assert env.source().get() == DcpConfig()
    assert "must hold an object { ... } at the top level, found a list" in env.texts()[0]


def test_invalid_glob_pattern_is_dropped_and_the_others_kept(env: Env) -> None:
    write(env.project_file, '{"protectedFilePatterns": ["src/**", "[z-a]", "*.lock"]}')
    assert env.source().get().protected_file_patterns == ("src/**", "*.lock")
    (message,) = env.texts()
    assert message.startswith(f'dcp: {env.project_file}: protectedFilePatterns: error: entry 2 ("[z-a]") is dropped')
    assert message.endswith(f'; using ["src/**", "*.lock"] (from {env.project_file})')


def test_invalid_utf8_is_reported_with_position_and_skipped(env: Env) -> None:
    env.project_file.write_bytes(b'{"debug": true,\n "x": "\xfe"}')
    assert env.source().get().debug is False
    assert env.texts()[0].startswith(f"dcp: {env.project_file}:2:8: error: is not valid UTF-8")


def test_directory_where_the_file_should_be_is_reported(env: Env) -> None:
    env.project_file.mkdir()
    assert env.source().get() == DcpConfig()
    assert env.texts() == [
        f"dcp: {env.project_file}: error: is a directory, not a file; {UNUSABLE}"
    ]


def test_huge_file_is_skipped_with_the_size_limit(env: Env) -> None:
    write(env.project_file, '{"debug": true}' + " " * MAX_FILE_BYTES)
    assert env.source().get().debug is False
    assert "more than the 1,048,576-byte (1 MiB) limit" in env.texts()[0]


def test_deeply_nested_junk_is_dropped_and_the_rest_applies(env: Env) -> None:
    junk = "[" * 500 + "]" * 500
    write(env.project_file, f'{{"debug": true, "enabled": {junk}, "junk": {junk}}}')
    config = env.source().get()
    assert (config.debug, config.enabled) == (True, True)
    [message] = env.texts()
    assert message.startswith(f"dcp: 2 config problems (1 error, 1 warning) in {env.project_file}:")


def test_nesting_too_deep_to_parse_skips_the_file(env: Env) -> None:
    write(env.project_file, '{"debug": true, "x": ' + "[" * 200_000 + "]" * 200_000 + "}")
    assert env.source().get().debug is False
    assert "is nested too deeply to read" in env.texts()[0]


def test_unreadable_file_is_reported_and_skipped(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    write(env.project_file, '{"debug": true}')

    def denied(*_args: object, **_kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("dcp_plugin.config.parse.open_file", denied)
    assert env.source(create_global=False).get().debug is False
    assert env.texts() == [
        f"dcp: {env.project_file}: error: cannot be read (Permission denied); {UNUSABLE}"
    ]


def test_legacy_threshold_key_is_ignored_with_one_warning(env: Env) -> None:
    write(env.project_file, '{"contextPercentageThreshold": 0.8, "contextBudget": {"contextPercentageThreshold": 0.7}, "debug": true}')
    assert env.source().get().debug is True
    (message,) = env.texts()
    assert "`contextPercentageThreshold` was removed; thresholds are now computed internally" in message
    assert LEGACY_TEXT in message


def test_messages_go_to_stderr_without_notify(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    write(env.project_file, '{"debug": 1}')
    ConfigSource(env.project).get()
    assert capsys.readouterr().err == f"dcp: {env.project_file}: debug: error: expected true or false, got 1; using false (from {env.global_file})\n"


def test_a_failing_notify_falls_back_to_stderr(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    write(env.project_file, '{"debug": 1}')

    def broken(_session: str | None, _text: str) -> None:
        raise RuntimeError("host went away")

    ConfigSource(env.project, broken).get()
    assert "debug: error: expected true or false" in capsys.readouterr().err


# live reload and reporting once


def test_each_problem_is_reported_once_not_per_request(env: Env) -> None:
    write(env.project_file, '{"debug": 1, "enabld": true}')
    source = env.source()
    for _ in range(5):
        source.get()
    [(_, message)] = env.messages
    assert "debug: error" in message and "enabld: warning" in message


def test_problems_are_reported_again_after_the_file_changes(env: Env) -> None:
    write(env.project_file, '{"debug": 1}')
    source = env.source()
    source.get()
    write(env.project_file, '{"debug": 2}')
    source.get()
    source.get()
    assert [t.split("got ")[1][0] for t in env.texts()] == ["1", "2"]


def test_changed_file_is_picked_up_on_the_next_get(env: Env) -> None:
    write(env.project_file, '{"strategies": {"purgeErrors": {"turns": 2}}}')
    source = env.source()
    assert source.get().strategies.purge_errors.turns == 2
    write(env.project_file, '{"strategies": {"purgeErrors": {"turns": 3}}}')  # same size
    assert source.get().strategies.purge_errors.turns == 3


def test_new_file_is_picked_up_and_removed_file_dropped(env: Env) -> None:
    source = env.source()
    assert source.get().debug is False
    write(env.project_file, '{"debug": true}')
    assert source.get().debug is True
    env.project_file.unlink()
    assert source.get().debug is False


def test_fixed_file_replaces_the_fallback(env: Env) -> None:
    write(env.project_file, '{"debug": true, oops}')
    source = env.source()
    assert source.get().debug is False
    write(env.project_file, '{"debug": true}')
    assert source.get().debug is True


def count_stats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """From now on, every path the config source stats, in order."""
    calls: list[str] = []
    real_stat = os.stat

    def counting(path: object, *args: object, **kwargs: object) -> os.stat_result:
        calls.append(str(path))
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(source_mod.os, "stat", counting)
    return calls


def test_unchanged_files_cost_one_stat_per_layer(env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENCODE_CONFIG_DIR", str(tmp_path / "ocd"))
    write(env.project_file, '{"debug": true}')
    source = env.source()
    source.get()
    calls = count_stats(monkeypatch)
    for _ in range(10):
        source.get()
    # global (dir + dcp.jsonc), ~/.opencode (absent dir), OPENCODE_CONFIG_DIR (absent dir), project (dir + dcp.jsonc)
    assert len(calls) == 10 * 6


def test_a_layer_whose_directory_is_absent_costs_one_stat(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    source = env.source(create_global=False)
    source.get()
    calls = count_stats(monkeypatch)
    source.get()
    assert calls.count(str(env.home / ".opencode")) == 1
    assert not any(c.startswith(str(env.home / ".opencode") + "/") for c in calls)


def test_unchanged_files_are_not_read_again(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    write(env.project_file, '{"debug": true}')
    source = env.source()
    source.get()
    loads: list[Path] = []
    real = source_mod.load_layer

    def counting(path: Path, st: os.stat_result | None = None) -> LayerResult:
        loads.append(path)
        return real(path, st)

    monkeypatch.setattr(source_mod, "load_layer", counting)
    source.get()
    source.get()
    assert loads == []


def test_unexpected_error_keeps_the_last_good_config_and_is_reported_once(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    write(env.project_file, '{"debug": true}')
    source = env.source()
    assert source.get().debug is True

    def explode(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(source_mod, "combine", explode)
    write(env.project_file, '{"debug": false}')
    assert source.get().debug is True
    assert source.get().debug is True
    assert env.texts() == ["dcp: unexpected error while reading the config (RuntimeError: boom); keeping the last good settings"]


def test_messages_carry_no_session(env: Env) -> None:
    write(env.project_file, '{"debug": 1}')
    env.source().get()
    assert [session for session, _ in env.messages] == [None]


# all problems of a read in one message (one toast: several at once leave only the last visible)

THREE_PROBLEMS = '{"debug": 1, "enabld": true, "pruneNotification": "loud"}'


def test_three_problems_in_one_file_are_one_message(env: Env) -> None:
    write(env.project_file, THREE_PROBLEMS)
    env.source().get()
    [message] = env.texts()
    assert message.splitlines()[0] == f"dcp: 3 config problems (2 errors, 1 warning) in {env.project_file}:"
    assert len(message.splitlines()) == 4


def test_the_summary_lists_errors_before_warnings(env: Env) -> None:
    write(env.project_file, '{"enabld": true, "debug": 1, "pruneNotification": "loud"}')
    env.source().get()
    levels = [line.split(": ")[1] for line in env.texts()[0].splitlines()[1:]]
    assert levels == ["error", "error", "warning"]


def test_a_summary_over_one_file_names_it_once(env: Env) -> None:
    write(env.project_file, THREE_PROBLEMS)
    env.source().get()
    assert env.texts()[0].count(str(env.project_file)) == 1


def test_a_summary_over_two_files_names_each_problems_file(env: Env) -> None:
    write(env.global_file, '{"debug": 1}')
    write(env.project_file, '{"enabld": true}')
    env.source(create_global=False).get()
    [message] = env.texts()
    head, *lines = message.splitlines()
    assert head.endswith(f"in {env.global_file}, {env.project_file}:")
    assert lines[0].startswith(f"- {env.global_file}: debug: error") and lines[1].startswith(f"- {env.project_file}: enabld: warning")


def test_a_summary_of_many_problems_says_how_many_more_and_where_to_see_them() -> None:
    problems = [Problem("warning", "/p/dcp.jsonc", f"problem {i}", key=f"k{i}") for i in range(SUMMARY_LIMIT + 3)]
    lines = (summary(problems) or "").splitlines()
    assert len(lines) == 1 + SUMMARY_LIMIT + 1
    assert lines[-1] == "- and 3 more problems: `dcp config validate` lists them all"


def test_one_problem_is_its_own_message(env: Env) -> None:
    write(env.project_file, '{"debug": 1}')
    env.source().get()
    [message] = env.texts()
    assert message.startswith(f"dcp: {env.project_file}: debug: error:") and "\n" not in message


def test_an_unusable_file_is_described_in_the_same_words_by_the_host_and_the_cli(
    env: Env, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dcp_plugin.cli.main import main

    write(env.project_file, '{"debug": true,,}')
    env.source(create_global=False).get()
    [host_message] = env.texts()
    monkeypatch.chdir(env.project)
    main(["config", "validate", str(env.project_file)])
    cli_lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("dcp: ")]
    assert cli_lines == [host_message]
    assert UNUSABLE in host_message and "skipped" not in host_message


def test_a_file_broken_after_a_good_read_is_described_in_the_same_words(env: Env) -> None:
    write(env.project_file, '{"debug": true}')
    source = env.source(create_global=False)
    source.get()
    write(env.project_file, '{"debug": true,,}')
    source.get()
    [message] = env.texts()
    assert UNUSABLE in message and source.get().debug is True
