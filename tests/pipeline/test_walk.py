"""One request's walk: the session takes the list as an argument, judges it once, and keeps none of it."""

from __future__ import annotations

import copy
import gc
import weakref
from typing import Any

from dcp_plugin.model.continuity import Continuity
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.pipeline.strategies import Progress
from tests.support.helpers import PROJECT, SESSION, call, make_config, user


class _List(list[Any]):
    """A list a weak reference can follow."""


def _session() -> list[dict[str, Any]]:
    read = {"filePath": f"{PROJECT}/a.py"}
    return [user(), call("read", read), user(), call("read", read), user()]


def _state() -> SessionState:
    return SessionState(SESSION, make_config(), PROJECT)


def test_an_update_returns_appended_for_new_messages() -> None:
    state = _state()
    messages = _session()
    state.update(messages[:3])
    assert state.update(messages) == Continuity.appended(3)


def test_an_update_returns_same_for_the_list_read_before() -> None:
    state = _state()
    messages = _session()
    state.update(messages)
    assert state.update(copy.deepcopy(messages)) == Continuity.same(len(messages))


def test_an_undo_is_rewritten_and_starts_a_new_epoch() -> None:
    state = _state()
    messages = _session()
    state.update(messages)
    epoch = state.epoch
    assert (state.update(messages[:3]), state.epoch != epoch) == (Continuity.REWRITTEN, True)


def test_a_claimed_resend_is_walked_from_its_index() -> None:
    state = _state()
    messages = _session()
    state.update(messages)
    assert state.update(messages, Continuity.resent(3)) == Continuity.resent(3)


def test_a_claimed_rewrite_starts_over_even_on_the_same_list() -> None:
    state = _state()
    messages = _session()
    state.update(messages)
    before = [d.call_id for d in state.in_force()]
    assert (state.update(messages, Continuity.REWRITTEN), [d.call_id for d in state.in_force()]) == (
        Continuity.REWRITTEN,
        before,
    )


def test_an_idle_session_keeps_no_request_list_alive() -> None:
    state = _state()
    messages = _List(_session())
    state.update(messages)
    gone = weakref.ref(messages)
    del messages
    gc.collect()
    assert gone() is None


def test_a_progress_looks_calls_up_in_the_list_it_was_given_whenever_asked() -> None:
    state = _state()
    messages = _session()
    state.update(messages)
    record = state.ledger.records[0]
    progress = Progress(state.ledger.turn, False, messages=messages)
    assert progress.state_of(record) is messages[1]["parts"][0]["state"]
