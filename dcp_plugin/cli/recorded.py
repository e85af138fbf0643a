"""What a live OpenCode session recorded, for the CLI: the user's sweeps and pins and the host's window."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import json5

from dcp_plugin.store import NotAStore, SessionBatch, Stats, StoredSession, read_session, read_stats

# Where OpenCode reads its config, in the order later files override earlier ones.
CONFIG_NAMES = ("opencode.json", "opencode.jsonc", "config.json")


class RecordedStore:
    """The user's state database as a store that only reads: a replay restores what the live session saved
    (its sweeps, pins and snapshot) and writes nothing back."""

    available = True

    def __init__(self, path: Path) -> None:
        self.path = path

    def load_session(self, session_id: str) -> StoredSession:
        try:
            return read_session(self.path, session_id)
        except NotAStore:
            return StoredSession()  # nothing recorded (or not readable): the replay starts fresh

    def save(self, batches: Iterable[SessionBatch], now: float | None = None) -> bool:
        return True  # a what-if never adds to the user's statistics

    def stats(self, session_id: str | None = None) -> Stats | None:
        try:
            return read_stats(self.path, session_id)
        except NotAStore:
            return None


def _read(path: Path) -> Mapping[str, Any]:
    try:
        data = json5.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, Mapping) else {}


def config_files(directory: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """OpenCode's config files that apply in ``directory``: the global ones, then the project's (nearest last)."""
    env = os.environ if env is None else env
    home = Path(env.get("XDG_CONFIG_HOME") or Path(env.get("HOME") or Path.home()) / ".config") / "opencode"
    found = [home / name for name in CONFIG_NAMES]
    if env.get("OPENCODE_CONFIG"):
        found.append(Path(env["OPENCODE_CONFIG"]))
    chain = [directory, *directory.parents]
    for folder in reversed(chain):
        found += [folder / name for name in CONFIG_NAMES[:2]]
    return [p for p in found if p.is_file()]


def configured_window(directory: Path, provider_id: str | None, model_id: str | None) -> int | None:
    """The context window OpenCode's config gives a model (`provider.<id>.models.<id>.limit.context`), if any."""
    if not provider_id or not model_id:
        return None
    window = None
    for path in config_files(directory):
        provider = (_read(path).get("provider") or {}).get(provider_id)
        models = provider.get("models") if isinstance(provider, Mapping) else None
        model = models.get(model_id) if isinstance(models, Mapping) else None
        limit = model.get("limit") if isinstance(model, Mapping) else None
        context = limit.get("context") if isinstance(limit, Mapping) else None
        if isinstance(context, int) and not isinstance(context, bool) and context > 0:
            window = context
    return window


def recorded_window(stored: StoredSession) -> int | None:
    """The window the live session's last snapshot used, when the host gave it."""
    snapshot = stored.snapshot or {}
    limit = snapshot.get("context_limit")
    if snapshot.get("limit_source") == "host" and isinstance(limit, int) and limit > 0:
        return limit
    return None
