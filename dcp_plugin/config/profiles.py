"""Presets on the frontier: one `profile` key that sets how much maskOldOutputs may hide, keys a user sets still win.

Each profile is a point measured on recorded sessions (README, "Against other tools' rules"):
``balanced``, the default, is the field defaults themselves; ``safe`` keeps every output that
shows a file, so no edit needs a re-read; ``aggressive`` clears almost every
older output once the context is past its trigger, for the largest saving.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

Profile = Literal["safe", "balanced", "aggressive"]
DEFAULT_PROFILE: Profile = "balanced"

_MASK = "maskOldOutputs"
EVERY_CYCLE = 1_000_000  # a keepTurns no session reaches: every cycle's file views are kept
PROFILES: dict[str, dict[str, Any]] = {
    "balanced": {},
    # Every file view stays (what an edit copies its text from), at any request: only command
    # output, searches and listings past the trigger go, so no edit anchor is hidden.
    "safe": {"strategies": {_MASK: {"keepTurns": EVERY_CYCLE, "editedWhenCold": False}}},
    "aggressive": {
        "strategies": {_MASK: {"keepTurns": 0, "turnsEndAtChecks": False, "keepCalls": 2, "trigger": 20000, "mode": "window"}}
    },
}


def with_profile(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with its profile's values under it: every key the files set wins, whatever its value.

    Values an earlier version's global dcp.jsonc wrote as defaults are not set keys: the loader
    leaves them out before this runs (config/earlier.py).
    """
    name = data.get("profile", DEFAULT_PROFILE)
    preset = PROFILES.get(name) if isinstance(name, str) else None
    return _under(dict(data), preset) if preset else dict(data)


def _under(data: dict[str, Any], preset: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in preset.items():
        given = data.get(key)
        if isinstance(value, Mapping) and isinstance(given, Mapping):
            data[key] = _under(dict(given), value)
        elif key not in data:
            data[key] = value
    return data
