"""Global files earlier versions wrote with every default active: their defaults are not pinned, edits stay in force."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin.config import upgrade as upgrade_mod
from dcp_plugin.config.earlier import MARKER, earlier_defaults, sort_values
from dcp_plugin.config.earlier import nest as nested
from dcp_plugin.config.layering import leaves
from dcp_plugin.config.loader import combine, load_layer, plain
from dcp_plugin.config.misplaced import misplaced_files
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.config.parse import parse_text
from dcp_plugin.config.profiles import PROFILES
from dcp_plugin.config.schema import KeyPath, leaf_paths
from dcp_plugin.config.source import ConfigSource
from dcp_plugin.config.template import render

# The header every earlier version wrote above its active defaults (its first line is the marker).
EARLIER_HEADER = f"""{MARKER}
// Change a value to override it; delete a key to get its default back. Files read after this
// one override it key by key: $OPENCODE_CONFIG_DIR/dcp.jsonc, then a project's
// .opencode/dcp.jsonc. Check the file with `dcp config validate`.
"""
SETS = earlier_defaults()
OLDEST_WITH_TRIGGER = next(i for i, s in enumerate(SETS) if s.get(("strategies", "maskOldOutputs", "trigger")) == 100000)
NEWEST = len(SETS) - 1
TRIGGER = ("strategies", "maskOldOutputs", "trigger")
Host = tuple[ConfigSource, list[str]]




def earlier_file(index: int, edits: dict[KeyPath, Any] | None = None, *, header: str = EARLIER_HEADER) -> str:
    """The file version ``index`` wrote (its values; the descriptions between them do not matter), edited."""
    values = {**SETS[index], **(edits or {})}
    return header + json.dumps(nested(values), indent=2) + "\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load(text: str, tmp_path: Path) -> DcpConfig:
    return combine([load_layer(write(tmp_path / "dcp.jsonc", text))]).config


@pytest.fixture
def global_file(isolated_home: Path) -> Path:
    return isolated_home / ".config" / "opencode" / "dcp.jsonc"


@pytest.fixture
def host(git_project: Path) -> Iterator[Host]:
    messages: list[str] = []
    yield ConfigSource(git_project, lambda _session, text: messages.append(text)), messages


def mask(config: DcpConfig) -> Any:
    return config.strategies.mask_old_outputs


# -- what the loader makes of them


@pytest.mark.parametrize("index", range(len(SETS)))
def test_every_earlier_file_unedited_loads_as_the_current_defaults(index: int, tmp_path: Path) -> None:
    assert load(earlier_file(index), tmp_path) == DcpConfig()


def test_the_old_trigger_is_not_pinned(tmp_path: Path) -> None:
    assert mask(load(earlier_file(OLDEST_WITH_TRIGGER), tmp_path)).trigger == DcpConfig().strategies.mask_old_outputs.trigger


def test_a_value_the_user_changed_stays_in_force(tmp_path: Path) -> None:
    assert mask(load(earlier_file(OLDEST_WITH_TRIGGER, {TRIGGER: 150000}), tmp_path)).trigger == 150000


def test_the_values_around_an_edit_follow_the_current_defaults(tmp_path: Path) -> None:
    config = load(earlier_file(OLDEST_WITH_TRIGGER, {TRIGGER: 150000}), tmp_path)
    assert mask(config).keep_tokens == DcpConfig().strategies.mask_old_outputs.keep_tokens


def test_a_key_the_user_added_stays_in_force(tmp_path: Path) -> None:
    assert load(earlier_file(0, {("debug",): True, ("checkpoints",): False}), tmp_path).checkpoints is False


def test_a_profile_chosen_in_an_earlier_file_is_not_overridden_by_its_defaults(tmp_path: Path) -> None:
    # The newest earlier file spelled out keepTurns 3, the balanced value; "safe" sets 6.
    config = load(earlier_file(NEWEST, {("profile",): "safe"}), tmp_path)
    assert mask(config).keep_turns == PROFILES["safe"]["strategies"]["maskOldOutputs"]["keepTurns"]


def test_a_file_without_the_marker_keeps_every_value(tmp_path: Path) -> None:
    assert mask(load(earlier_file(OLDEST_WITH_TRIGGER, header="// my settings\n"), tmp_path)).trigger == 100000


def test_the_marker_after_a_byte_order_mark_still_counts(tmp_path: Path) -> None:
    assert mask(load("\ufeff" + earlier_file(OLDEST_WITH_TRIGGER), tmp_path)).trigger != 100000


def sorted_values(text: str) -> Any:
    data = parse_text(text, "dcp.jsonc").data
    assert data is not None
    return sort_values(text, data)


def test_a_value_of_another_json_type_is_the_users() -> None:
    assert sorted_values(earlier_file(0, {("debug",): 0})).own["debug"] == 0


def test_an_unedited_file_is_unmodified() -> None:
    assert sorted_values(earlier_file(3)).unmodified


def test_an_edited_file_is_not_unmodified() -> None:
    assert not sorted_values(earlier_file(3, {("debug",): True})).unmodified


def test_a_file_missing_a_key_its_version_wrote_is_not_unmodified() -> None:
    assert not sorted_values(earlier_file(3).replace('"debug": false,', "")).unmodified


_EDITABLE = [
    (index, path)
    for index, values in enumerate(SETS)
    for path, value in values.items()
    if path in set(leaf_paths()) and isinstance(value, (bool, int, float)) and path != ("enabled",)
]


def _changed(value: bool | int | float) -> bool | int | float:
    if isinstance(value, bool):
        return not value
    return value + 1 if isinstance(value, int) else round(value + 0.001, 6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=st.integers(0, NEWEST), data=st.data())
def test_any_edits_stay_in_force_and_nothing_else_is_pinned(index: int, data: st.DataObject, tmp_path: Path) -> None:
    paths = [path for i, path in _EDITABLE if i == index]
    chosen = data.draw(st.lists(st.sampled_from(paths), unique=True, max_size=5)) if paths else []
    edits = {path: _changed(SETS[index][path]) for path in chosen}
    got = dict(leaves(plain(load(earlier_file(index, edits), tmp_path))))
    for path, value in dict(leaves(plain(DcpConfig()))).items():
        assert got[path] == edits.get(path, value), path


# -- what the host does with them


def test_the_host_rewrites_an_unedited_earlier_file_as_the_current_template(global_file: Path, host: Host) -> None:
    write(global_file, earlier_file(OLDEST_WITH_TRIGGER))
    source, _ = host
    assert source.get() == DcpConfig()
    assert global_file.read_text(encoding="utf-8") == render((global_file.parent / "dcp.schema.json").as_uri())


def test_the_rewrite_keeps_the_old_file_as_a_backup(global_file: Path, host: Host) -> None:
    old = write(global_file, earlier_file(OLDEST_WITH_TRIGGER)).read_text(encoding="utf-8")
    host[0].get()
    assert upgrade_mod.backup_of(global_file).read_text(encoding="utf-8") == old


def test_the_rewrite_is_told_once_naming_the_backup(global_file: Path, host: Host) -> None:
    write(global_file, earlier_file(OLDEST_WITH_TRIGGER))
    source, messages = host
    source.get()
    source.get()
    assert [m for m in messages if "earlier version" in m] == [
        f"dcp: {global_file} held an earlier version's defaults, unchanged; it now lists every setting commented "
        f"out, so the current defaults apply (the old file is kept as {upgrade_mod.backup_of(global_file)})"
    ]


def test_an_edited_earlier_file_is_left_as_it_is(global_file: Path, host: Host) -> None:
    text = write(global_file, earlier_file(OLDEST_WITH_TRIGGER, {TRIGGER: 150000})).read_text(encoding="utf-8")
    assert mask(host[0].get()).trigger == 150000
    assert global_file.read_text(encoding="utf-8") == text and not upgrade_mod.backup_of(global_file).exists()


def test_a_symlinked_earlier_file_is_not_rewritten_but_its_defaults_are_ignored(global_file: Path, host: Host, tmp_path: Path) -> None:
    target = write(tmp_path / "dotfiles" / "dcp.jsonc", earlier_file(OLDEST_WITH_TRIGGER))
    global_file.parent.mkdir(parents=True)
    global_file.symlink_to(target)
    assert host[0].get() == DcpConfig()
    assert global_file.is_symlink() and "created with the defaults" in target.read_text(encoding="utf-8")


def test_a_backup_of_someone_elses_is_never_overwritten(global_file: Path, host: Host) -> None:
    write(global_file, earlier_file(OLDEST_WITH_TRIGGER))
    backup = write(upgrade_mod.backup_of(global_file), '{"debug": true}')
    assert host[0].get() == DcpConfig()
    assert backup.read_text(encoding="utf-8") == '{"debug": true}'
    assert "created with the defaults" in global_file.read_text(encoding="utf-8")


def test_a_file_edited_while_the_rewrite_runs_keeps_the_edit(global_file: Path, host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    write(global_file, earlier_file(OLDEST_WITH_TRIGGER))
    edited = earlier_file(OLDEST_WITH_TRIGGER, {TRIGGER: 150000})
    real = upgrade_mod.write_atomically

    def backup_then_user_saves(path: Path, text: str, *, exclusive: bool) -> bool:
        done = real(path, text, exclusive=exclusive)
        if path == upgrade_mod.backup_of(global_file):
            global_file.write_text(edited, encoding="utf-8")
        return done

    monkeypatch.setattr(upgrade_mod, "write_atomically", backup_then_user_saves)
    assert mask(host[0].get()).trigger == 150000
    assert global_file.read_text(encoding="utf-8") == edited


def test_a_file_that_cannot_be_rewritten_is_left_and_its_defaults_ignored(global_file: Path, host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    text = write(global_file, earlier_file(OLDEST_WITH_TRIGGER)).read_text(encoding="utf-8")

    def read_only(path: Path, text: str, *, exclusive: bool) -> bool:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(upgrade_mod, "write_atomically", read_only)
    assert host[0].get() == DcpConfig()
    assert global_file.read_text(encoding="utf-8") == text


def test_the_backup_is_not_named_as_a_misplaced_file(global_file: Path, host: Host, git_project: Path) -> None:
    write(global_file, earlier_file(OLDEST_WITH_TRIGGER))
    host[0].get()
    assert [p.file for p in misplaced_files(git_project)] == []


def test_the_rewritten_file_is_not_rewritten_again(global_file: Path, git_project: Path) -> None:
    write(global_file, earlier_file(OLDEST_WITH_TRIGGER))
    ConfigSource(git_project).get()
    first = global_file.read_text(encoding="utf-8")
    upgrade_mod.backup_of(global_file).unlink()
    ConfigSource(git_project).get()
    assert global_file.read_text(encoding="utf-8") == first and not upgrade_mod.backup_of(global_file).exists()


def test_show_names_the_file_for_an_edit_and_default_for_the_earlier_values(global_file: Path, git_project: Path) -> None:
    write(global_file, earlier_file(OLDEST_WITH_TRIGGER, {TRIGGER: 150000}))
    origins = ConfigSource(git_project, create_global=False).origins()
    assert origins["strategies.maskOldOutputs.trigger"] == str(global_file)
    assert origins["strategies.maskOldOutputs.keepTokens"] == "default"


IGNORE_FIELDS = ("strategies", "deduplication", "ignoreFields")


def test_an_object_value_emptied_by_the_user_stays_in_force(tmp_path: Path) -> None:
    config = load(earlier_file(NEWEST, {IGNORE_FIELDS: {}}), tmp_path)
    assert dict(config.strategies.deduplication.ignore_fields) == {}


def test_an_object_value_the_user_extended_stays_whole(tmp_path: Path) -> None:
    extended = {"bash": ["description"], "grep": ["path"]}
    got = plain(load(earlier_file(NEWEST, {IGNORE_FIELDS: extended}), tmp_path))
    assert got["strategies"]["deduplication"]["ignoreFields"] == extended
