"""The applied decisions of one epoch, and where those in force write, compiled into flat columns."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from mypy_extensions import mypyc_attr

from dcp_plugin.pipeline.decisions import Decision, Value

# What the last check of a row found (see Rows.fits).
MISSED, FIT, UNCHECKED = 0, 1, 2


class Writes(NamedTuple):
    """What ``patches.apply`` stores, one entry per patch: the field, the value, and where a value is a dict to copy."""

    fields: Sequence[str]
    values: Sequence[Value]
    copies: Sequence[int]


@mypyc_attr(allow_interpreted_subclasses=True)
class Rows:
    """The compiled rows of an :class:`Applied` list, as columns: one entry per decision in force.

    Columns rather than a tuple per row: planning zips them, and when every row fits (the usual
    warm request) the patches reuse the decision, field and value columns as they are.
    """

    __slots__ = ("decisions", "messages", "parts", "calls", "lengths", "fields", "values", "copies", "fits", "_frozen")

    def __init__(self) -> None:
        self.decisions: list[Decision] = []
        self.messages: list[int] = []  # message index
        self.parts: list[int] = []  # part index
        self.calls: list[str] = []  # the call id the part must carry
        self.lengths: list[int] = []  # the length of a whole output placeholder, or -1
        self.fields: list[str] = []  # the field each row writes
        self.values: list[Value] = []  # the value it writes there
        self.copies: list[int] = []  # the rows whose value is a dict, stored as a copy
        # Whether each row's value fitted the tool state of the last request planned (FIT or
        # MISSED), or UNCHECKED since it was compiled: what a host vouching for an unchanged
        # message lets the next request take as it is.
        self.fits = bytearray()
        self._frozen: tuple[tuple[Decision, ...], Writes] | None = None

    def add(self, decision: Decision) -> None:
        """Compile one decision in force."""
        self._frozen = None
        record, value = decision.record, decision.value
        whole = decision.cuts is None and decision.field == "output" and type(value) is str
        if type(value) is dict:
            self.copies.append(len(self.decisions))
        self.decisions.append(decision)
        self.messages.append(record.message_index)
        self.parts.append(record.part_index)
        self.calls.append(record.call_id)
        self.lengths.append(len(value) if whole else -1)
        self.fields.append(decision.field)
        self.values.append(value)
        self.fits.append(UNCHECKED)

    def remove(self, decision: Decision) -> None:
        """Take a decision's row out, if it has one (it was superseded)."""
        try:
            index = self.decisions.index(decision)  # decisions compare by identity
        except ValueError:
            return
        self._frozen = None
        for column in (self.decisions, self.messages, self.parts, self.calls, self.lengths, self.fields, self.values):
            del column[index]
        del self.fits[index]
        self.copies[:] = [i if i < index else i - 1 for i in self.copies if i != index]

    def frozen(self) -> tuple[tuple[Decision, ...], Writes]:
        """The decision column and the writes as tuples, made again only when the rows change.

        Frozen, so that later compiling leaves patches already handed out as they were; kept until
        the rows change, because a new copy per request would be thousands of fresh references
        that the cyclic collector's next young pass walks one by one (each a miss in memory).
        """
        frozen = self._frozen
        if frozen is None:
            writes = Writes(tuple(self.fields), tuple(self.values), tuple(self.copies))
            frozen = self._frozen = (tuple(self.decisions), writes)
        return frozen


# A subclass of a builtin type: mypyc compiles it as a regular Python class.
@mypyc_attr(native_class=False)
class Applied(list[Decision]):
    """The decisions of one epoch in the order applied, with where those in force write (see ``patches.plan``).

    A prefix never changes within an epoch, so each decision's target (message and part index,
    call id, the length of a whole placeholder) is compiled once into flat rows: a warm request
    then reads thousands of rows instead of thousands of decision and record objects spread over
    the heap. Only positions, lengths and what the last check found are kept, never the host's
    content, so an idle session holds nothing of a request's list; a checkpoint pickles the
    decisions alone.
    """

    __slots__ = ("_rows", "_compiled")

    def __init__(self, decisions: Iterable[Decision] = ()) -> None:
        super().__init__(decisions)
        self._rows = Rows()
        self._compiled = 0  # how many decisions of the list the rows cover

    def __reduce__(self) -> tuple[type[Applied], tuple[list[Decision]]]:
        return Applied, (list(self),)

    def rows(self) -> Rows:
        """A row per decision in force (not superseded, not a withdrawal), in the order applied.

        An applied decision is superseded only when the one taking its field over (or the
        withdrawal of a list) is applied, which appends to this list: so only the decisions
        appended since the last call are read, and only the rows those replace are taken out.
        """
        if self._compiled != len(self):
            rows, fresh = self._rows, self[self._compiled :]
            for decision in fresh:
                for taken in (decision.replaces, decision.withdraws):
                    if taken is not None and taken.superseded:
                        rows.remove(taken)
            for decision in fresh:
                if decision.superseded or decision.withdraws is not None:
                    continue  # a withdrawal is only sent after a client's token, never in a whole set
                rows.add(decision)
            self._compiled = len(self)
        return self._rows
