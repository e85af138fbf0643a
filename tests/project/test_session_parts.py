"""The runtime and the commands read a session through its own methods, never its parts."""

from __future__ import annotations

import re

from tests.support.paths import ROOT

# A session's parts, reached through its state (named `state` wherever the runtime's rooms hold one).
_PARTS = re.compile(r"\bstate\.(ledger|scheduler|tools|arbiter|timeline)\b")


def test_host_and_commands_never_name_a_sessions_parts() -> None:
    rooms = [ROOT / "dcp_plugin" / "host", ROOT / "dcp_plugin" / "commands"]
    named = [
        f"{path.relative_to(ROOT)}:{number}"
        for room in rooms
        for path in sorted(room.glob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _PARTS.search(line)
    ]
    assert named == []
