"""The implied request history: where a message list's requests were made, when, and what each message sends.

A message list implies its own request history: the request before each assistant message
held every message before it, sent at the newest timestamp among them, and the request being
made now holds them all. The timeline reads the messages once each, in order, and says where
those requests are; the session syncs and schedules at each of them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from mypy_extensions import mypyc_attr

from dcp_plugin.budget.calibration import ReadMessage
from dcp_plugin.budget.meter import ContextMeter
from dcp_plugin.model.messages import Info, Message, info_of, info_time
from dcp_plugin.model.refs import ModelRef, model_fields
from dcp_plugin.model.tokens import estimate_message_split, info_usage, split_prompt_tokens
from dcp_plugin.pipeline.scheduler import Scheduler


@mypyc_attr(allow_interpreted_subclasses=True)
class Timeline:
    """The messages read so far as requests: how many, their newest time and model, and the requests scheduled.

    One per epoch: a start-over builds a new one.
    """

    def __init__(self, scheduler: Scheduler, image_tokens: int, meter: ContextMeter) -> None:
        self.scheduler = scheduler  # told each message's tokens as it is read
        self.meter = meter  # told them too: the context now reads the history as stored
        self.image_tokens = image_tokens
        self.read = 0  # messages read for request points, times and models
        self.time_ms = 0  # newest timestamp among them
        self.model: ModelRef | None = None  # newest model they name
        self.points = 0  # requests of the implied history scheduled in this epoch
        self.scheduled_end = 0  # messages held by the latest scheduled request
        self.open_end = -1  # messages of the latest update's own request, not known to be answered yet
        # The estimates and model ids of the messages read in the current walk (from ``walked_from``
        # on), so the meter need not read them again; valid only while that list is walked (see end_walk).
        self.walked: list[ReadMessage] = []
        self.walked_from = 0
        # Per message of the current walk (from ``walked_from`` on): its time, whether it is the assistant's.
        self._times: list[int] = []
        self._answers: list[bool] = []

    def requests(self, messages: Sequence[Message]) -> Iterator[tuple[int, bool]]:
        """The requests the unread messages show were made and answered, as (messages held, not scheduled yet).

        A request not scheduled yet is one the plugin never saw (a restart, a first sight); the
        other kind is the request the latest update ended with, now answered. Each message is read
        after the requests before it are yielded, so a request sees the time and model of its own
        messages only.
        """
        start = self.walked_from = self.read
        self.walked = []
        # Each unread message's info, role and time read once, up front: next_time answers from them
        # without reading the messages ahead of the walk again.
        infos = list(map(info_of, messages[start:]))
        times = self._times = list(map(info_time, infos))
        answers = self._answers = [info.get("role") == "assistant" for info in infos]
        for offset, info in enumerate(infos):
            index = start + offset
            assistant = answers[offset]
            if assistant:
                if index > self.scheduled_end:
                    yield index, True
                elif index == self.open_end:
                    yield index, False
            self._read(messages[index], index, info, assistant, times[offset])
            self.read = index + 1

    def _read(self, message: Message, index: int, info: Info, assistant: bool, time_ms: int) -> None:
        """Take a message in (``info``: its :func:`info_of`, ``time_ms``: its :func:`info_time`): its tokens, its
        time, its model, the overhead it reports."""
        scheduler = self.scheduler
        named = model_fields(info)
        model_id = named[1] if named is not None else None
        if index == scheduler.messages:
            usage = info_usage(info) if assistant else None
            if scheduler.overhead == 0 and usage is not None:
                scheduler.overhead = max(0, usage.prompt - scheduler.sent_prefix(index))
            # Its role told when its info was read (info_of gives {} for a message it cannot read).
            split = estimate_message_split(message, self.image_tokens, assistant if info else None)
            # Counted as the replay prices it: a step at least at the output it reported.
            stored = split_prompt_tokens(split, usage)
            scheduler.add_message(stored)
            self.meter.add_message(stored)
            if index == self.walked_from + len(self.walked):
                self.walked.append((split, model_id, usage))
        if time_ms > self.time_ms:
            self.time_ms = time_ms
        if named is not None and model_id is not None:
            # Compared as fields, a ModelRef built only for a new model (see model_fields).
            model = self.model
            if model is None or named != (model.provider_id, model.model_id, model.context_limit):
                # kept while the messages name the same model: the session's answers for it stay
                self.model = ModelRef(*named)

    def next_time(self, messages: Sequence[Message], end: int) -> int:
        """When the request after the one holding the first ``end`` messages is sent: the newest time up to it.

        That request holds every message up to the next assistant message after ``end`` (the
        answer at ``end`` included). A live update's list ends where that request does, and a
        longer list is read only that far, so every run finds the same time.
        """
        offset = end - self.walked_from
        answers = self._answers
        if not 0 <= offset < len(answers):
            return self.read_ahead_time(messages, end)
        # Within the walk: its messages' roles and times were read when it began.
        try:
            stop = answers.index(True, offset + 1)
        except ValueError:
            stop = len(answers)
        newest = max(self._times[offset:stop])
        return newest if newest > self.time_ms else self.time_ms

    def read_ahead_time(self, messages: Sequence[Message], end: int) -> int:
        """:meth:`next_time` read from the messages themselves (where no walk read them)."""
        newest = self.time_ms
        for index in range(end, len(messages)):
            info = info_of(messages[index])
            if index > end and info.get("role") == "assistant":
                break
            time_ms = info_time(info)
            if time_ms > newest:
                newest = time_ms
        return newest

    def end_walk(self) -> None:
        """The walked list is let go: its messages may change before the next walk (a tool finishing)."""
        self.walked = []
        self._times, self._answers = [], []

    def schedule(self, count: int) -> int:
        """Count the request holding the first ``count`` messages as scheduled; its number in this epoch."""
        self.points += 1
        self.scheduled_end = count
        return self.points
