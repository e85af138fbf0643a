"""Profiles: one key picks a point on the frontier; a key the user sets wins, whatever its value."""

from __future__ import annotations

import pytest

from dcp_plugin.config import schema as schema_mod
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.config.profiles import EVERY_CYCLE, PROFILES
from dcp_plugin.config.validate import validate_layer


def mask(settings: dict) -> object:
    return DcpConfig.model_validate(settings).strategies.mask_old_outputs


def test_balanced_is_the_defaults():
    assert DcpConfig.model_validate({"profile": "balanced"}) == DcpConfig().model_copy(update={"profile": "balanced"})


@pytest.mark.parametrize("name", ["safe", "aggressive"])
def test_a_profile_sets_each_of_its_keys(name: str):
    got = DcpConfig.model_validate({"profile": name}).model_dump(mode="json", by_alias=True)
    for key, value in PROFILES[name]["strategies"]["maskOldOutputs"].items():
        assert got["strategies"]["maskOldOutputs"][key] == value


def test_a_key_the_user_sets_wins_over_the_profile():
    assert mask({"profile": "aggressive", "strategies": {"maskOldOutputs": {"keepCalls": 7}}}).keep_calls == 7


def test_a_key_set_to_its_balanced_default_wins_over_the_profile():
    balanced = DcpConfig().strategies.mask_old_outputs.keep_turns
    assert mask({"profile": "safe", "strategies": {"maskOldOutputs": {"keepTurns": balanced}}}).keep_turns == balanced


def test_keys_the_profile_leaves_alone_keep_the_users_values():
    config = mask({"profile": "safe", "strategies": {"maskOldOutputs": {"trigger": 50000}}})
    assert (config.trigger, config.keep_turns) == (50000, EVERY_CYCLE)


def test_the_schema_names_every_profile_and_refuses_others():
    assert sorted(schema_mod.schema()["properties"]["profile"]["enum"]) == sorted(PROFILES)
    kept, problems = validate_layer({"profile": "reckless"}, "dcp.jsonc")
    assert "profile" not in kept and any("profile" in f"{p.key} {p.text}" for p in problems)
