"""Forced re-reads: a recorded session's requests in order, with a re-read put before each edit whose anchor was hidden.

A lost edit anchor is not free: the agent cannot copy text it no longer sees, so before that edit
it reads the file again. The model here, the same for the plugin and for every peer rule:

- at the request the agent answered with the edit, when a replaced text's anchor is lost, the
  agent answers with a call instead, repeating the newest earlier call whose recorded output holds
  that text (nearly always the newest read of the edited file; a read tool, an editor's view or a
  shell command that prints a file before any other call). One call per distinct call repeated,
  all in one assistant message;
- that call's recorded output comes back and stays in the history like any output (a policy may
  prune it later, and the older read it repeats may now be a duplicate);
- one more request is made, at the same moment (the cache is as warm as for the edit's request),
  with that message at its end; the agent answers it with the recorded edit;
- an anchor no earlier output holds (it sat only in a hidden tool input or text) cannot be
  recovered this way: it stays lost and is counted apart. A re-read is made once per edit.

Assistant text, reasoning and output tokens of the extra step are not modelled (input only, as
every cost here), and the provider usage recorded after it is read as recorded.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from dcp_plugin.model.messages import info_of, parts_of
from dcp_plugin.model.tokens import message_prompt_tokens
from dcp_plugin.pipeline.strategies.file_views import shows_file
from dcp_plugin.replay.anchors import AnchorIndex, AnchorTotals, Location, LostAnchor
from dcp_plugin.replay.pricing import PatchKey, ReplayTotals
from dcp_plugin.replay.requests import ImpliedRequest, implied_requests

REREAD_PREFIX = "dcp-reread-"
# Info keys of the edit's message the re-read step takes over (who answered, with which model).
_INFO_KEPT = ("sessionID", "parentID", "providerID", "modelID", "model", "mode", "agent", "path")


class Inserted(Protocol):
    """What keeps per-message sums of a replayed session (a cache accountant): told of each inserted message."""

    def insert(self, index: int, tokens: int) -> None: ...


@dataclass(frozen=True, slots=True)
class Reread:
    """One forced re-read: which recorded call was repeated, for which edit, and its size."""

    request: int  # the request the re-read answered (the extra one follows it)
    edit_message: int  # the edit's message, in the recorded session's numbering
    repeated: tuple[int, int]  # (message, part) of the recorded call repeated, in the recorded session's numbering
    tool: str
    tokens: int  # the estimate of the re-read message, as it enters the history

    def to_dict(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "edit_message": self.edit_message,
            "repeated_message": self.repeated[0],
            "repeated_part": self.repeated[1],
            "tool": self.tool,
            "tokens": self.tokens,
        }


@dataclass
class RecoveryTotals:
    """The forced re-reads of one replay or several, and the anchors no re-read could bring back."""

    rereads: list[Reread] = field(default_factory=list)
    unrecovered: int = 0  # lost anchors held by no earlier output
    extra_requests: int = 0

    @property
    def count(self) -> int:
        return len(self.rereads)

    @property
    def tokens(self) -> int:
        return sum(r.tokens for r in self.rereads)

    def add(self, other: RecoveryTotals) -> None:
        self.rereads += other.rereads
        self.unrecovered += other.unrecovered
        self.extra_requests += other.extra_requests

    def labels(self) -> dict[int, str]:
        """Edit message (recorded numbering) -> what was read again before it: `read (message 12)`."""
        out: dict[int, list[str]] = {}
        for reread in self.rereads:
            out.setdefault(reread.edit_message, []).append(f"{reread.tool} (message {reread.repeated[0]})")
        return {edit: ", ".join(calls) for edit, calls in out.items()}

    def sentence(self, net: float | None, after: float | None) -> str:
        """`Forced re-reads: 3 (...); net cost saved after them +18.2 % (+19.0 % before).`, from the two replays' nets."""
        text = (
            f"Forced re-reads: {self.count:,} (before an edit whose text a placeholder hid, the agent reads it again: "
            f"{self.tokens:,} tokens, {_count(self.extra_requests, 'more request')}"
        )
        if self.unrecovered:
            text += f"; {_count(self.unrecovered, 'hidden text')} no earlier output held"
        text += ")"
        if after is not None:
            text += f"; net cost saved after them {after:+.1f} %"
            if net is not None:
                text += f" ({net:+.1f} % before)"
        return text + "."

    def to_dict(self, details: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "forced_rereads": self.count,
            "reread_tokens": self.tokens,
            "extra_requests": self.extra_requests,
            "unrecovered_anchors": self.unrecovered,
        }
        if details:
            data["rereads"] = [r.to_dict() for r in self.rereads]
        return data


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


class RecordedWalk:
    """The implied requests of a session, one at a time; with ``recover``, a re-read goes in where an anchor is lost.

    ``messages`` is changed in place, only ever at the point the walk has reached (what no request
    has sent yet), so whatever reads it lazily (a peer rule, the plugin's runtime) stays consistent.
    Each request is followed by :meth:`check` with what it sent.
    """

    def __init__(self, messages: list[dict[str, Any]], recover: bool, keepers: Sequence[Inserted] = ()) -> None:
        self.messages = messages
        self.recover = recover
        self.keepers = list(keepers)
        self.anchors = AnchorIndex(messages)
        self.recovery = RecoveryTotals()
        self._requests = list(implied_requests(messages))
        self._next = 0
        self._inserted: list[int] = []  # current indexes of the messages this walk put in, ascending
        self._recovered: set[int] = set()  # current index of each edit message already given a re-read

    def __len__(self) -> int:
        """The requests the walk knows of now (a re-read adds one)."""
        return len(self._requests)

    def __iter__(self) -> Iterator[ImpliedRequest]:
        while self._next < len(self._requests):
            request = self._requests[self._next]
            self._next += 1
            yield request

    def recorded_index(self, index: int) -> int:
        """A current message index in the recorded session's numbering (a re-read counts as the edit it precedes)."""
        return index - sum(1 for at in self._inserted if at < index)

    def check(self, request: ImpliedRequest, patches: Mapping[PatchKey, tuple[Any, int]],
              owners: Mapping[PatchKey, str]) -> AnchorTotals:
        """The edit anchors of the request's answer against what it sent; a re-read put in when some are lost."""
        begin, end = request.begin, request.end
        result = self.anchors.evaluate(begin, end, patches, owners)
        if not result.lost or not self.recover or end in self._recovered:
            self.recovery.unrecovered += result.lost if end in self._recovered else 0
            self.anchors.totals.add(result)
            return result
        calls = _calls_to_repeat(self.messages, self.anchors, begin, end, result.lost_anchors)
        if not calls:
            # Nothing earlier shows the text again: the edit goes on without it.
            self.recovery.unrecovered += result.lost
            self.anchors.totals.add(result)
            return result
        # This request's anchors are counted at the edit's own request, which follows the re-read.
        message = reread_message(self.messages, end, request.time_ms, list(calls), len(self.recovery.rereads))
        tokens = message_prompt_tokens(message)
        edit = self.recorded_index(end)
        for location, part in zip(calls, message["parts"], strict=True):
            self.recovery.rereads.append(
                Reread(request.number, edit, (self.recorded_index(location[0]), location[1]), str(part.get("tool")),
                       message_prompt_tokens({"info": message["info"], "parts": [part]}))
            )
        self.recovery.extra_requests += 1
        self._insert(end, message, tokens)
        return result

    def _insert(self, index: int, message: dict[str, Any], tokens: int) -> None:
        self.messages.insert(index, message)
        self._inserted = [at + (at >= index) for at in self._inserted] + [index]
        self._inserted.sort()
        self._recovered = {at + (at >= index) for at in self._recovered} | {index + 1}
        self.anchors.reindex()
        for keeper in self.keepers:
            keeper.insert(index, tokens)
        done = self._next
        self._requests = list(implied_requests(self.messages))
        self._next = done  # the request just made keeps its number; the edit's request follows it


def _calls_to_repeat(
    messages: Sequence[Mapping[str, Any]], anchors: AnchorIndex, begin: int, end: int, lost: Sequence[LostAnchor]
) -> dict[Location, list[str]]:
    """For each lost anchor, the newest earlier call whose recorded output holds it (a file view first)."""
    calls: dict[Location, list[str]] = {}
    for anchor in lost:
        outputs = [where for where in anchors.sources(anchor.anchor, begin, end) if where[2] == "output"]
        views = [where for where in outputs if _shows_file(messages[where[0]]["parts"][where[1]])]
        chosen = views or outputs
        if chosen:
            calls.setdefault(chosen[-1], []).append(anchor.anchor)
    return calls


def _shows_file(part: Mapping[str, Any]) -> bool:
    state = part.get("state")
    return isinstance(state, Mapping) and shows_file(str(part.get("tool") or ""), state.get("input"))


def reread_message(
    messages: Sequence[Mapping[str, Any]], edit: int, time_ms: int, calls: Sequence[Location], number: int
) -> dict[str, Any]:
    """The assistant step that repeats ``calls`` (their recorded input and output) just before ``messages[edit]``."""
    info: Mapping[str, Any] = info_of(messages[edit]) if edit < len(messages) else {}
    message_id = f"{REREAD_PREFIX}{number}"
    new_info: dict[str, Any] = {key: info[key] for key in _INFO_KEPT if key in info}
    new_info.update({"id": message_id, "role": "assistant", "time": {"created": time_ms, "completed": time_ms}})
    parts: list[dict[str, Any]] = []
    for k, (m, p, _) in enumerate(calls):
        recorded = cast(Mapping[str, Any], parts_of(messages[m])[p])  # a tool part: an anchor's source
        state = dict(recorded["state"])
        state["time"] = {"start": time_ms, "end": time_ms}
        parts.append({
            **{key: recorded[key] for key in ("type", "tool") if key in recorded},
            "id": f"{message_id}-{k}",
            "messageID": message_id,
            "callID": f"{message_id}-{k}",
            "state": state,
            **({"sessionID": new_info["sessionID"]} if "sessionID" in new_info else {}),
        })
    return {"info": new_info, "parts": parts}


def net_after_recovery(costs: ReplayTotals, recovered: ReplayTotals | None) -> float | None:
    """Net cost saved, in percent, when the plugin's cost is the one with forced re-reads (None without that replay).

    Both against the same cost without the plugin: the recorded session, which needed no re-read.
    """
    if recovered is None or not costs.cost_without:
        return None
    return 100 * (costs.cost_without - recovered.cost_with) / costs.cost_without
