"""N17: Windows extended-length paths (`\\\\?\\C:\\...`, `\\\\?\\UNC\\...`) are matched by protected patterns."""

from __future__ import annotations

import copy

import pluggy
import pytest

import dcp_plugin
import dcp_plugin.host.hostspec
from dcp_plugin.host.runtime import Runtime, StaticConfig
from tests.support.helpers import call, make_config, user

BIG = "key material line that is long enough to be worth pruning\n" * 30


def older_read_pruned(path: str, directory: str = "C:\\proj", patterns: tuple[str, ...] = ("secrets/**",)) -> bool:
    pm = pluggy.PluginManager(dcp_plugin.PROJECT_NAME)
    pm.add_hookspecs(dcp_plugin.host.hostspec)
    config = make_config(protectedFilePatterns=list(patterns))
    pm.register(dcp_plugin.DcpPlugin(Runtime(directory, StaticConfig(config))), name="dcp")
    messages = [user(), call("read", {"filePath": path}, output=BIG), call("read", {"filePath": path}, output=BIG)]
    sent = copy.deepcopy(messages)
    pm.hook.chat_messages_transform(input={}, output={"messages": sent})
    return bool(sent[1]["parts"][0]["state"]["output"] != BIG)


@pytest.mark.parametrize("path", ["\\\\?\\C:\\proj\\secrets\\key.pem", "\\\\?\\c:\\proj\\secrets\\key.pem", "//?/C:/proj/secrets/key.pem",
                                  "\\\\.\\C:\\proj\\secrets\\key.pem"])
def test_an_extended_length_path_inside_the_project_is_protected(path: str) -> None:
    assert not older_read_pruned(path)


def test_an_extended_length_unc_path_is_matched_as_the_unc_path_it_names() -> None:
    # `\\server\share\...` is matched as `/server/share/...`: the extended form must be too.
    assert not older_read_pruned("\\\\?\\UNC\\server\\share\\secrets\\key.pem", patterns=("/server/share/**",))


def test_an_extended_length_path_outside_the_protected_patterns_is_pruned() -> None:
    assert older_read_pruned("\\\\?\\C:\\proj\\src\\a.py")
