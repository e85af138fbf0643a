"""ConfigSource behind the runtime: a partly bad config still prunes by its valid keys, live."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from dcp_plugin.config.source import ConfigSource
from dcp_plugin.host.runtime import Runtime
from tests.support.helpers import call, hook_transform, tool_parts, user


def two_identical_reads() -> list[dict[str, Any]]:
    return [user(), call("read", {"filePath": "/p/a.py"}), user(), call("read", {"filePath": "/p/a.py"})]


def outputs_after_transform(runtime: Runtime, messages: list[dict[str, Any]]) -> list[str]:
    out = copy.deepcopy(messages)
    hook_transform(runtime, {}, {"messages": out})
    return [part["state"]["output"] for part in tool_parts(out)]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


def test_valid_keys_apply_while_a_bad_key_is_reported(tmp_path: Path) -> None:
    config_file = tmp_path / ".opencode" / "dcp.jsonc"
    write(
        config_file,
        '{"strategies": {"deduplication": {"enabled": false}, "supersededReads": {"enabled": false},'
        ' "purgeErrors": {"turns": 0}}}',
    )
    messages: list[str] = []
    runtime = Runtime(tmp_path, ConfigSource(tmp_path, lambda _s, text: messages.append(text)))
    original = [p["state"]["output"] for p in tool_parts(two_identical_reads())]
    assert outputs_after_transform(runtime, two_identical_reads()) == original
    assert [m for m in messages if "strategies.purgeErrors.turns" in m] != []


def test_config_change_takes_effect_on_the_next_request(tmp_path: Path) -> None:
    config_file = tmp_path / ".opencode" / "dcp.jsonc"
    # Both strategies that prune an older identical read are off, then deduplication comes back.
    write(
        config_file,
        '{"strategies": {"deduplication": {"enabled": false}, "supersededReads": {"enabled": false}},'
        ' "cache": {"scheduler": false}}',
    )
    runtime = Runtime(tmp_path, ConfigSource(tmp_path, lambda _s, _t: None))
    session = two_identical_reads()
    original = [p["state"]["output"] for p in tool_parts(session)]
    assert outputs_after_transform(runtime, session) == original
    write(config_file, '{"strategies": {"supersededReads": {"enabled": false}}, "cache": {"scheduler": false}}')
    first, last = outputs_after_transform(runtime, session)
    assert first != original[0] and last == original[1]


def test_unparseable_config_leaves_the_layers_below_pruning(tmp_path: Path, isolated_home: Path) -> None:
    write(isolated_home / ".config" / "opencode" / "dcp.jsonc", '{"cache": {"scheduler": false}}')
    write(tmp_path / ".opencode" / "dcp.jsonc", '{"enabled": false,,}')
    runtime = Runtime(tmp_path, ConfigSource(tmp_path, lambda _s, _t: None))
    session = two_identical_reads()
    first, _ = outputs_after_transform(runtime, session)
    assert first != tool_parts(session)[0]["state"]["output"]
