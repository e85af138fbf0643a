"""One request's walk: the message list, the host's model and the continuity verdict, handed to the session's parts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from mypy_extensions import mypyc_attr

from dcp_plugin.model.continuity import Continuity
from dcp_plugin.model.messages import Message
from dcp_plugin.model.refs import ModelRef


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(frozen=True, slots=True)
class Walk:
    """What one update reads, passed as an argument: the session keeps no field holding a request's list.

    ``messages``: the host's list (never changed while it is walked); ``model``: the host's model
    for the request (its context limit decides the tiers); ``continuity``: the verdict on how the
    list follows the one the session read before.
    """

    messages: Sequence[Message]
    model: ModelRef | None
    continuity: Continuity

    def rewritten(self) -> Walk:
        """The same walk over a history to read again from scratch."""
        return replace(self, continuity=Continuity.REWRITTEN)
