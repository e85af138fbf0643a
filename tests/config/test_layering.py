"""Finding the layers and merging them: order, env vars, deep merge, lists replace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.config import schema as schema_mod
from dcp_plugin.config.discovery import global_dir, layer_specs
from dcp_plugin.config.layering import deep_merge, effective_origins, merge_layers


def test_global_dir_follows_xdg_config_home(tmp_path: Path) -> None:
    assert global_dir({"XDG_CONFIG_HOME": str(tmp_path), "HOME": "/nowhere"}) == tmp_path / "opencode"


def test_global_dir_defaults_to_home_dot_config() -> None:
    assert global_dir({"HOME": "/home/u"}) == Path("/home/u/.config/opencode")


def test_relative_xdg_config_home_is_ignored() -> None:
    assert global_dir({"XDG_CONFIG_HOME": "rel/dir", "HOME": "/home/u"}) == Path("/home/u/.config/opencode")


def git_project(root: Path) -> Path:
    """A project directory that is a git worktree root (the config walk stops there)."""
    (root / ".git").mkdir(parents=True)
    return root


def test_layers_are_global_home_config_dir_then_project(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home"), "OPENCODE_CONFIG_DIR": str(tmp_path / "ocd")}
    specs = layer_specs(git_project(tmp_path / "proj"), env)
    assert [s.label for s in specs] == ["global", "home", "OPENCODE_CONFIG_DIR", "project"]
    assert [s.primary for s in specs] == [
        tmp_path / "xdg" / "opencode" / "dcp.jsonc",
        tmp_path / "home" / ".opencode" / "dcp.jsonc",
        tmp_path / "ocd" / "dcp.jsonc",
        tmp_path / "proj" / ".opencode" / "dcp.jsonc",
    ]


def test_every_layer_accepts_dcp_json_after_dcp_jsonc(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path), "HOME": str(tmp_path / "home"), "OPENCODE_CONFIG_DIR": str(tmp_path / "ocd")}
    for spec in layer_specs(git_project(tmp_path / "proj"), env):
        assert [p.name for p in spec.candidates] == ["dcp.jsonc", "dcp.json"]


def test_without_opencode_config_dir_there_is_no_such_layer(tmp_path: Path) -> None:
    labels = [s.label for s in layer_specs(git_project(tmp_path / "proj"), {"HOME": str(tmp_path / "home")})]
    assert labels == ["global", "home", "project"]


def test_same_file_in_two_layers_is_read_once(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home"), "OPENCODE_CONFIG_DIR": str(tmp_path / "proj" / ".opencode")}
    assert [s.label for s in layer_specs(git_project(tmp_path / "proj"), env)] == ["global", "home", "OPENCODE_CONFIG_DIR"]


def test_deep_merge_overrides_key_by_key() -> None:
    base = {"strategies": {"purgeErrors": {"enabled": True, "turns": 4}}, "debug": False}
    override = {"strategies": {"purgeErrors": {"turns": 2}}}
    assert deep_merge(base, override) == {"strategies": {"purgeErrors": {"enabled": True, "turns": 2}}, "debug": False}


def test_lists_replace_instead_of_appending() -> None:
    assert deep_merge({"protectedFilePatterns": ["a", "b"]}, {"protectedFilePatterns": ["c"]}) == {
        "protectedFilePatterns": ["c"]
    }


def test_deep_merge_leaves_its_inputs_unchanged() -> None:
    base = {"a": {"b": 1}}
    deep_merge(base, {"a": {"c": 2}})
    assert base == {"a": {"b": 1}}


def test_later_layer_wins_and_origins_name_its_file() -> None:
    merged, origins = merge_layers(
        [
            ("g", {"$schema": "x", "debug": True, "turnProtection": {"enabled": True, "turns": 8}}),
            ("p", {"turnProtection": {"turns": 2}}),
        ]
    )
    assert merged == {"debug": True, "turnProtection": {"enabled": True, "turns": 2}}
    assert origins == {"debug": "g", "turnProtection.enabled": "g", "turnProtection.turns": "p"}


def test_effective_origins_cover_every_key_with_default_for_unset_ones() -> None:
    origins = effective_origins({"debug": "g"})
    assert origins["debug"] == "g"
    assert origins["strategies.purgeErrors.turns"] == "default"
    assert len(origins) == len(schema_mod.leaf_paths())


# Like validated layers, a key always holds the same kind of value: "a"/"b" values, "s"/"t" sections.
values = st.integers() | st.lists(st.integers(), max_size=2)
nested: Any = st.recursive(
    st.fixed_dictionaries({}, optional={"a": values, "b": values}),
    lambda sections: st.fixed_dictionaries({}, optional={"a": values, "b": values, "s": sections, "t": sections}),
    max_leaves=10,
)


@given(nested, nested, nested)
def test_deep_merge_is_associative(a: dict[str, Any], b: dict[str, Any], c: dict[str, Any]) -> None:
    assert deep_merge(deep_merge(a, b), c) == deep_merge(a, deep_merge(b, c))


@given(nested, nested)
def test_merging_a_layer_twice_changes_nothing(a: dict[str, Any], b: dict[str, Any]) -> None:
    once = deep_merge(a, b)
    assert deep_merge(once, b) == once
