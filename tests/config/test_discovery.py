"""Finding the project the way OpenCode does: the worktree root, the `.opencode` dirs up to it, near misses."""

from __future__ import annotations

from pathlib import Path

import pytest

from dcp_plugin.config.discovery import (
    find_worktree,
    layer_specs,
    opencode_config_dirs,
    project_config_dirs,
    project_file,
    project_root,
)
from dcp_plugin.config.misplaced import misplaced_files, misplaced_warnings
from dcp_plugin.config.source import ConfigSource
from dcp_plugin.pipeline.protection import PathProtector


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git project with a sub-directory; HOME and XDG_CONFIG_HOME beside it."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "sub" / "deeper").mkdir(parents=True)
    return root


def write(path: Path, text: str = "{}") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# the worktree root


def test_worktree_is_the_nearest_directory_holding_git(repo: Path) -> None:
    assert find_worktree(repo / "sub" / "deeper") == repo


def test_a_git_file_marks_a_linked_worktree_root(repo: Path) -> None:
    linked = repo / "sub"
    (linked / ".git").write_text("gitdir: /elsewhere/.git/worktrees/sub\n")
    assert find_worktree(linked / "deeper") == linked


def test_outside_git_there_is_no_worktree(tmp_path: Path) -> None:
    assert find_worktree(tmp_path) is None or (find_worktree(tmp_path) / ".git").exists()


def test_project_root_is_the_worktree_from_a_subdirectory(repo: Path) -> None:
    assert project_root(repo / "sub" / "deeper") == repo


def test_project_root_outside_git_is_the_directory_itself(tmp_path: Path) -> None:
    if find_worktree(tmp_path) is not None:
        pytest.skip("the temp directory is inside a git worktree")
    assert project_root(tmp_path / "x") == tmp_path / "x"


def test_the_hosts_worktree_wins_unless_it_is_the_file_system_root(repo: Path, tmp_path: Path) -> None:
    assert project_root(repo / "sub", worktree=str(tmp_path)) == tmp_path
    assert project_root(repo / "sub", worktree="/") == repo


# the .opencode directories


def test_project_config_dirs_run_from_the_worktree_root_down_to_the_directory(repo: Path) -> None:
    assert project_config_dirs(repo / "sub" / "deeper") == [
        repo / ".opencode",
        repo / "sub" / ".opencode",
        repo / "sub" / "deeper" / ".opencode",
    ]


def test_the_walk_stops_at_the_worktree_root(repo: Path) -> None:
    write(repo.parent / ".opencode" / "dcp.jsonc", '{"debug": true}')
    assert repo.parent / ".opencode" not in project_config_dirs(repo / "sub")


def test_outside_git_the_walk_goes_up_to_the_file_system_root(tmp_path: Path) -> None:
    if find_worktree(tmp_path) is not None:
        pytest.skip("the temp directory is inside a git worktree")
    dirs = project_config_dirs(tmp_path)
    assert dirs[0] == Path("/.opencode")
    assert dirs[-1] == tmp_path / ".opencode"


def test_opencode_config_dirs_are_in_opencodes_order(repo: Path, tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "OPENCODE_CONFIG_DIR": str(tmp_path / "ocd")}
    assert opencode_config_dirs(repo / "sub", env) == [
        tmp_path / "xdg" / "opencode",
        repo / "sub" / ".opencode",
        repo / ".opencode",
        tmp_path / "home" / ".opencode",
        tmp_path / "ocd",
    ]


def test_project_layers_follow_the_global_ones_nearest_last(repo: Path, tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    specs = layer_specs(repo / "sub", env)
    assert [(s.label, s.primary) for s in specs[2:]] == [
        ("project", repo / ".opencode" / "dcp.jsonc"),
        ("project", repo / "sub" / ".opencode" / "dcp.jsonc"),
    ]


def test_project_file_is_at_the_project_root(repo: Path) -> None:
    assert project_file(repo / "sub" / "deeper") == repo / ".opencode" / "dcp.jsonc"


# what the config source makes of it


def test_a_subdirectory_reads_the_roots_settings(repo: Path) -> None:
    write(repo / ".opencode" / "dcp.jsonc", '{"enabled": false}')
    assert ConfigSource(repo / "sub" / "deeper", create_global=False).get().enabled is False


def test_a_nearer_opencode_dir_overrides_the_roots(repo: Path) -> None:
    write(repo / ".opencode" / "dcp.jsonc", '{"debug": true, "enabled": false}')
    nearer = write(repo / "sub" / ".opencode" / "dcp.jsonc", '{"enabled": true}')
    source = ConfigSource(repo / "sub" / "deeper", create_global=False)
    config = source.get()
    assert (config.enabled, config.debug) == (True, True)
    assert source.origins()["enabled"] == str(nearer)


def test_a_project_dcp_json_is_read_when_there_is_no_jsonc(repo: Path) -> None:
    write(repo / ".opencode" / "dcp.json", '{"debug": true}')
    assert ConfigSource(repo, create_global=False).get().debug is True


# protected patterns are relative to the project root


def test_a_relative_pattern_matches_from_the_project_root_in_a_subdirectory() -> None:
    protector = PathProtector(["src/**"], "/p/sub", root="/p")
    assert protector.is_protected(["/p/src/a.py"])


def test_a_relative_pattern_does_not_match_the_subdirectorys_namesake() -> None:
    protector = PathProtector(["src/**"], "/p/sub", root="/p")
    assert not protector.is_protected(["/p/sub/src/a.py"])


def test_relative_tool_paths_are_resolved_against_the_directory_not_the_root() -> None:
    protector = PathProtector(["sub/src/**"], "/p/sub", root="/p")
    assert protector.is_protected(["./src/a.py"])


def test_without_a_root_the_directory_is_the_root() -> None:
    assert PathProtector(["src/**"], "/p/sub").is_protected(["/p/sub/src/a.py"])


# near misses


def messages(directory: Path) -> dict[str, str]:
    return {problem.file: problem.text for problem in misplaced_files(directory)}


def test_a_dcp_jsonc_at_the_project_root_is_named(repo: Path) -> None:
    stray = write(repo / "dcp.jsonc")
    found = messages(repo / "sub")
    assert found[str(stray)] == f"not read: project settings belong in {repo / '.opencode' / 'dcp.jsonc'}; move the file there"


def test_an_opencode_dir_without_the_dot_is_named(repo: Path) -> None:
    stray = write(repo / "opencode" / "dcp.jsonc")
    assert "note the dot" in messages(repo)[str(stray)]


def test_a_backup_copy_is_named(repo: Path) -> None:
    write(repo / ".opencode" / "dcp.jsonc")
    backup = write(repo / ".opencode" / "dcp.jsonc.bak")
    assert messages(repo)[str(backup)] == f"not read: only dcp.jsonc (or dcp.json) is read in {repo / '.opencode'}"


def test_a_wrongly_cased_name_is_named(repo: Path) -> None:
    upper = write(repo / ".opencode" / "DCP.jsonc")
    if (repo / ".opencode" / "dcp.jsonc").exists():
        pytest.skip("case-insensitive file system: the file is read")
    assert messages(repo)[str(upper)] == "not read: the name must be dcp.jsonc, in lower case"


def test_a_wrongly_cased_opencode_dir_is_named(repo: Path) -> None:
    write(repo / ".OpenCode" / "dcp.jsonc")
    if (repo / ".opencode").exists():
        pytest.skip("case-insensitive file system: the directory is read")
    assert "in lower case" in messages(repo)[str(repo / ".OpenCode")]


def test_a_dcp_json_beside_a_dcp_jsonc_is_named_as_shadowed(repo: Path) -> None:
    write(repo / ".opencode" / "dcp.jsonc")
    legacy = write(repo / ".opencode" / "dcp.json")
    assert messages(repo)[str(legacy)] == f"not read: {repo / '.opencode' / 'dcp.jsonc'} next to it is read instead"


def test_settings_in_the_plugins_dir_are_named(repo: Path) -> None:
    stray = write(repo / ".opencode" / "plugins" / "dcp.jsonc")
    assert str(stray) in messages(repo)


def test_a_global_file_one_level_too_high_is_named(repo: Path, tmp_path: Path) -> None:
    stray = write(tmp_path / "xdg" / "dcp.jsonc")
    assert messages(repo)[str(stray)].endswith(f"belong in {tmp_path / 'xdg' / 'opencode' / 'dcp.jsonc'}; move the file there")


def test_files_that_are_read_are_never_named(repo: Path, tmp_path: Path) -> None:
    write(repo / ".opencode" / "dcp.jsonc")
    write(repo / "sub" / ".opencode" / "dcp.json")
    write(tmp_path / "xdg" / "opencode" / "dcp.jsonc")
    assert misplaced_files(repo / "sub") == []


def test_unrelated_files_are_not_named(repo: Path) -> None:
    write(repo / "dcp.js", "")
    write(repo / ".opencode" / "plugins" / "dcp.js", "")
    write(repo / ".opencode" / "opencode.json")
    assert misplaced_files(repo) == []


def test_misplaced_warnings_are_rendered_lines(repo: Path) -> None:
    stray = write(repo / "dcp.json")
    assert misplaced_warnings(repo) == [f"dcp: {stray}: warning: " + messages(repo)[str(stray)]]


def test_misplaced_warnings_never_raise(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dcp_plugin.config.misplaced as misplaced

    def explode(*_args: object, **_kwargs: object) -> list[object]:
        raise RuntimeError("boom")

    monkeypatch.setattr(misplaced, "layer_specs", explode)
    assert misplaced_warnings(repo) == []
