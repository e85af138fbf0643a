"""The continuity verdict: how one request's message list follows the one seen before it.

Every request's list is judged once, where it arrives: the bridge's mirror reads it off the
shim's delta (:meth:`Continuity.of_resend` for a full resend), and the session's ledger checks
that claim against what it has read (:func:`judge`). Everything downstream (the session's walk,
the freshness of the patches a client keeps, the bridge's reset) reads the verdict instead of
deciding again. Four cases:

- ``same``: no message added, none resent. The newest message seen may still have gained parts
  (a host streaming them): the ledger always re-reads it.
- ``appended(start)``: the first ``start`` messages are those seen; the ones after are new.
- ``resent(start)``: the messages before ``start`` are unchanged; from ``start`` on, messages
  seen before were sent again, with the same ids (a tool part finished, a part was added, an
  output was cleared), then perhaps new ones.
- ``rewritten``: the list does not continue what was seen (an undo, a compaction, another
  content under the same ids): the session starts over on it.

A verdict may also carry the host's word on a prefix (``unchanged``): its first messages are, in
content, those of its previous request (a pluggy host's ``unchangedBefore``), so what was checked
of their tool states then still holds (``patches.plan`` does not read them again). Only the host
can say so: the ledger reads message ids, not every tool state. The word changes nothing else:
the verdict is judged as if the host said nothing, so a host's word never costs a re-read.

Two checks stay as safety nets after the verdict, for hosts that resend without saying so: a
call that finishes in a message an earlier request already carried, and a decided call that
moved (``patches.Desync``). Each turns the verdict into ``rewritten`` and the walk is redone.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from dcp_plugin.model.history import HistoryMark
from dcp_plugin.model.messages import message_id


class Change(enum.Enum):
    """What happened to the history between two requests."""

    SAME = "same"
    APPENDED = "appended"
    RESENT = "resent"
    REWRITTEN = "rewritten"


@dataclass(frozen=True, slots=True)
class Continuity:
    """One request's verdict: the change, and the first index it concerns (0 for a rewrite)."""

    change: Change
    start: int = 0
    unchanged: int = 0  # the host's word: its first so many messages are unchanged in content

    REWRITTEN: ClassVar[Continuity]

    @classmethod
    def same(cls, count: int) -> Continuity:
        """The ``count`` messages seen, nothing more."""
        return cls(Change.SAME, count)

    @classmethod
    def appended(cls, start: int) -> Continuity:
        """The ``start`` messages seen, then new ones."""
        return cls(Change.APPENDED, start)

    @classmethod
    def resent(cls, start: int) -> Continuity:
        """Messages seen before were sent again from ``start`` on (ids unchanged)."""
        return cls(Change.RESENT, start)

    @classmethod
    def unchanged_before(cls, count: int) -> Continuity:
        """A claim that is only the host's word: its first ``count`` messages are, in content, those of its previous request."""
        return cls(Change.APPENDED, 0, unchanged=max(0, count))

    @classmethod
    def grown(cls, held: int, count: int) -> Continuity:
        """``same`` or ``appended``: a list of ``count`` messages starting with the ``held`` seen."""
        return cls.same(held) if count == held else cls.appended(held)

    @classmethod
    def of_resend(cls, held: Sequence[object], messages: Sequence[object]) -> Continuity:
        """The verdict on a whole list ``messages`` sent again over the list ``held``.

        Ids first (a rewritten history fails there, cheaply), then content: the same ids with
        another content is a rewrite too. Comparing is far cheaper than replaying the history.
        """
        if len(messages) < len(held) or any(message_id(a) != message_id(b) for a, b in zip(held, messages, strict=False)):
            return cls.REWRITTEN
        if messages[: len(held)] != held:
            return cls.REWRITTEN
        return cls.grown(len(held), len(messages))

    @property
    def continues(self) -> bool:
        """Whether the list can be followed from what was seen (anything but a rewrite)."""
        return self.change is not Change.REWRITTEN

    @property
    def resent_from(self) -> int | None:
        """The first resent index; None unless the verdict is ``resent``."""
        return self.start if self.change is Change.RESENT else None

    def __str__(self) -> str:
        name: str = self.change.value
        if self.change is Change.REWRITTEN:
            return name
        return f"{name}({self.start}{f', unchanged before {self.unchanged}' if self.unchanged else ''})"


Continuity.REWRITTEN = Continuity(Change.REWRITTEN)


def judge(
    mark: HistoryMark,
    ids: Sequence[str | None],
    messages: Sequence[object],
    claim: Continuity | None = None,
    *,
    every_id: bool = False,
) -> Continuity:
    """The verdict on ``messages`` against the history read so far (its ``mark`` and message ``ids``).

    ``claim``: what the host says happened (the bridge's reading of a delta), None when it says
    nothing. A claimed rewrite is taken as it is; a claimed resend has the ids of the resent
    messages checked (``every_id``: all of them, for a state loaded from disk, whose host may
    have rewritten anything meanwhile). The verdict is relative to what was read, which may be
    less than the host holds (a session synced up to a tool call only). The host's word on an
    unchanged prefix is carried over to any verdict but a rewrite.
    """
    if claim is not None and not claim.continues:
        return Continuity.REWRITTEN
    if not mark.continues(messages):
        return Continuity.REWRITTEN
    count = mark.count
    resent = claim.resent_from if claim is not None else None
    check_from = 0 if every_id else resent
    if check_from is not None and check_from < count:
        if any(message_id(messages[i]) != ids[i] for i in range(max(0, check_from), count)):
            return Continuity.REWRITTEN
    if resent is not None and resent < count:
        verdict = Continuity.resent(max(0, resent))
    else:
        verdict = Continuity.grown(count, len(messages))
    return replace(verdict, unchanged=claim.unchanged) if claim is not None and claim.unchanged else verdict
