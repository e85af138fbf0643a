"""One session the runtime holds: its pruning state, budget, model and lock."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from dcp_plugin.host.session_budget import SessionBudget
from dcp_plugin.model.refs import ModelRef
from dcp_plugin.pipeline.session import SessionState


@dataclass(eq=False)
class HeldSession:
    """A session of the runtime's registry; everything here is read and changed under its ``lock``."""

    state: SessionState
    budget: SessionBudget
    model: ModelRef | None = None
    # Held by everything that reads or changes this session. A session's first request replays
    # the history it implies (about 5 s at 20,000 messages): under one runtime-wide lock every
    # other session's request waited that long; under its own lock they do not wait at all.
    lock: threading.RLock = field(default_factory=threading.RLock)
    stored: bool = True  # False while the store could not be read: its pins and sweeps are fetched later
    checkpointed: tuple[int, int] = (0, 0)  # (epoch, messages read) of the latest checkpoint written or loaded
