"""What the runtime's public methods answer: frozen values, never a session's live parts."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from dcp_plugin.budget.snapshot import ContextSnapshot
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.cost.overhead import PluginText
from dcp_plugin.host.rows import CallRow, PruneRow, SkipRow, call_row, call_rows, prune_rows, skip_rows
from dcp_plugin.model.messages import locate
from dcp_plugin.model.refs import ModelRef
from dcp_plugin.pipeline.decisions import CallRecord, Decision
from dcp_plugin.pipeline.modeltools import Tally
from dcp_plugin.pipeline.modeltools.judge import restorable
from dcp_plugin.pipeline.patches import Patches
from dcp_plugin.pipeline.sweep import SweepPlan


@dataclass(frozen=True, slots=True)
class Outgoing:
    """What one request writes, and what :meth:`~dcp_plugin.host.runtime.Runtime.finish` needs afterwards.

    ``patches`` hold the session's decisions in force (all of them, or with ``incremental``
    only those applied since the caller's token) paired with their tool states in the
    messages given to :meth:`~dcp_plugin.host.runtime.Runtime.prepare`. ``token`` names what
    the caller holds after applying them: hand it back as ``since`` next time.
    """

    session_id: str
    epoch: int
    patches: Patches
    incremental: bool
    token: tuple[int, int]
    model: ModelRef | None
    saved_tokens: int  # tokens every decision in force removes from this request
    in_force: int  # how many calls those decisions prune
    # The context now, taken before the patches were written (prepare's ``write``); None: finish reads it.
    context: ContextSnapshot | None = None


@dataclass(frozen=True, slots=True)
class Sent:
    """What a session's latest request wrote: its decisions, not the host's objects it wrote them into.

    Kept until the next request. Keeping the tool states too would keep the host's list alive
    that long: a host that builds its list anew for every request lets go of the previous one
    once it is sent, and the next request would free its tool states instead (measured on the
    busy 20,000-message session: about a third of a warm request on a fresh copy).
    """

    session_id: str
    decisions: Sequence[Decision]  # in force on that request (only those since the caller's token, if it gave one)
    saved_tokens: int
    in_force: int

    def located(self, messages: Sequence[object]) -> Patches:
        """The (decision, tool state) pairs of this request in ``messages``, the list it wrote into."""
        states = []
        for decision in self.decisions:
            state = locate(messages, decision.record)
            if state is None:
                raise ValueError(f"call {decision.call_id} is not where this request wrote it")
            states.append(state)
        return Patches(self.decisions, states)


@dataclass(frozen=True, slots=True)
class SessionView:
    """A read-only picture of one session for the commands: the config, and frozen rows of its calls and decisions."""

    session_id: str
    config: DcpConfig
    directory: str
    in_force: tuple[PruneRow, ...]
    waiting: tuple[PruneRow, ...]
    records: tuple[CallRow, ...]
    saved_by_strategy: Mapping[str, tuple[int, int]]
    restarts: int
    costs: Mapping[str, Any]
    model_tools: Mapping[str, Tally] = field(default_factory=dict)  # per tool: the model's calls of it
    pinned: frozenset[str] = frozenset()  # call ids the user pinned
    plugin_text: PluginText = PluginText()  # what the plugin's own text adds to every request


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a call of one of the plugin's tools answers: the text for the model, and whether it was refused."""

    output: str
    error: bool
    title: str

    def to_dict(self) -> dict[str, Any]:
        return {"output": self.output, "error": self.error, "title": self.title}


@dataclass(frozen=True, slots=True)
class SweepOutcome:
    """What a sweep pruned, the calls it chose and those it skipped with why, in frozen rows.

    ``count`` is the scope: the last ``count`` calls, or (None) every call since the last user
    message. ``inputs`` holds each call's input as the messages carried it, to name the call.
    """

    count: int | None
    swept: tuple[PruneRow, ...]
    eligible: tuple[CallRow, ...]
    skipped: tuple[SkipRow, ...]
    inputs: Mapping[str, Any]
    directory: str  # the session's project directory: paths are named relative to it

    @classmethod
    def of(cls, selection: SweepPlan, swept: Iterable[Decision], directory: str) -> SweepOutcome:
        """The frozen answer of a sweep that chose ``selection`` and wrote ``swept``."""
        return cls(
            selection.count,
            prune_rows(swept),
            call_rows(selection.eligible),
            skip_rows(selection.skipped),
            MappingProxyType(dict(selection.inputs)),
            directory,
        )


@dataclass(frozen=True, slots=True)
class PinOutcome:
    """What a pin (or unpin) did: the calls it changed, those already so, and the ids that name no call.

    ``pruned`` are the changed calls that carried a placeholder: pinned, they come back whole.
    """

    pinned: bool
    changed: tuple[CallRow, ...]
    unchanged: tuple[CallRow, ...]
    unknown: tuple[str, ...]
    pruned: tuple[CallRow, ...] = ()

    @classmethod
    def of(cls, pinned: bool, found: Iterable[CallRecord], changed: Collection[str], unknown: Iterable[str]) -> PinOutcome:
        """The frozen answer of a pin of ``found`` that changed the calls ``changed`` names."""
        records = list(found)
        # A placeholder is written for these now: pinned, they come back whole.
        pruned = {r.call_id for r in records if restorable(r)}
        rows = [call_row(r) for r in records]
        return cls(
            pinned,
            tuple(r for r in rows if r.call_id in changed),
            tuple(r for r in rows if r.call_id not in changed),
            tuple(unknown),
            tuple(r for r in rows if r.call_id in changed and r.call_id in pruned),
        )
