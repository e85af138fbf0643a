"""The continuity verdict: each case, read off a bridge delta and checked by the ledger's mark."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.adapters.bridge.mirror import Mirror
from dcp_plugin.adapters.bridge.protocol import Delta
from dcp_plugin.model.continuity import Change, Continuity, judge
from dcp_plugin.model.history import HistoryMark
from dcp_plugin.model.messages import message_id


def _message(ident: str, text: str = "") -> dict[str, Any]:
    return {"info": {"id": ident, "role": "user"}, "parts": [{"type": "text", "text": text or ident}]}


def _history(count: int) -> list[dict[str, Any]]:
    return [_message(f"m{i}") for i in range(count)]


def _read(messages: list[dict[str, Any]]) -> tuple[HistoryMark, list[str | None]]:
    """The mark and message ids a ledger keeps after reading ``messages``."""
    mark = HistoryMark()
    mark.advance(messages)
    return mark, [message_id(m) for m in messages]


def _delta(messages: list[dict[str, Any]], base: int, *, reset: bool = False) -> Delta:
    prefix = messages[:base]
    first = message_id(prefix[0]) if prefix and not reset else None
    last = message_id(prefix[-1]) if prefix and not reset else None
    return Delta(reset, 0 if reset else base, messages if reset else messages[base:], first, last, len(messages))


def _mirror(held: list[dict[str, Any]]) -> Mirror:
    mirror = Mirror()
    mirror.apply(_delta(copy.deepcopy(held), 0, reset=True))
    return mirror


# -- each case ---------------------------------------------------------------------------------
def test_the_same_list_again_is_same() -> None:
    held = _history(4)
    assert judge(*_read(held), copy.deepcopy(held)) == Continuity.same(4)


def test_new_messages_after_the_ones_read_are_appended_from_the_first_new_index() -> None:
    held = _history(4)
    assert judge(*_read(held), _history(6)) == Continuity.appended(4)


def test_a_claimed_resend_with_the_ids_unchanged_is_resent_from_its_index() -> None:
    held = _history(4)
    assert judge(*_read(held), _history(5), Continuity.resent(2)) == Continuity.resent(2)


def test_a_claimed_resend_past_what_was_read_is_appended() -> None:
    held = _history(4)
    assert judge(*_read(held), _history(6), Continuity.resent(5)) == Continuity.appended(4)


def test_a_hosts_word_on_an_unchanged_prefix_is_carried_on_the_verdict_judged_as_if_it_said_nothing() -> None:
    held = _history(4)
    verdict = judge(*_read(held), _history(5), Continuity.unchanged_before(2))
    assert verdict == Continuity(Change.APPENDED, 4, unchanged=2)


def test_a_hosts_word_past_what_was_read_is_carried_as_it_is() -> None:
    held = _history(4)
    verdict = judge(*_read(held), _history(6), Continuity.unchanged_before(6))
    assert verdict == Continuity(Change.APPENDED, 4, unchanged=6)


def test_a_hosts_word_is_not_carried_on_a_rewrite() -> None:
    held = _history(4)
    verdict = judge(*_read(held), _history(3), Continuity.unchanged_before(3))
    assert verdict == Continuity.REWRITTEN and not verdict.unchanged


def test_a_verdict_the_host_gave_no_word_on_carries_none() -> None:
    held = _history(4)
    assert not judge(*_read(held), _history(6)).unchanged


def test_a_resent_message_under_another_id_is_a_rewrite() -> None:
    held = _history(4)
    later = _history(4)
    later[2] = _message("other")
    assert judge(*_read(held), later, Continuity.resent(2)) == Continuity.REWRITTEN


def test_a_shorter_list_is_a_rewrite() -> None:
    held = _history(4)
    assert judge(*_read(held), held[:3]) == Continuity.REWRITTEN


def test_another_first_message_is_a_rewrite() -> None:
    held = _history(4)
    assert judge(*_read(held), [_message("summary"), *held[1:]]) == Continuity.REWRITTEN


def test_a_claimed_rewrite_is_taken_as_it_is() -> None:
    held = _history(4)
    assert judge(*_read(held), copy.deepcopy(held), Continuity.REWRITTEN) == Continuity.REWRITTEN


def test_a_state_loaded_from_disk_checks_every_id() -> None:
    held = _history(4)
    later = _history(4)
    later[1] = _message("other")
    assert judge(*_read(held), later, every_id=True) == Continuity.REWRITTEN


def test_a_full_resend_of_what_is_held_is_same_not_a_rewrite() -> None:
    held = _history(3)
    assert Continuity.of_resend(held, copy.deepcopy(held)) == Continuity.same(3)


def test_a_full_resend_with_another_content_under_the_same_ids_is_a_rewrite() -> None:
    held = _history(3)
    later = copy.deepcopy(held)
    later[1]["parts"][0]["text"] = "changed"
    assert Continuity.of_resend(held, later) == Continuity.REWRITTEN


def test_only_a_resend_names_a_resent_index() -> None:
    assert [v.resent_from for v in (Continuity.same(3), Continuity.appended(3), Continuity.resent(1), Continuity.REWRITTEN)] == [
        None,
        None,
        1,
        None,
    ]


def test_a_mirror_reads_a_delta_from_an_earlier_index_as_a_resend() -> None:
    held = _history(4)
    assert _mirror(held).apply(_delta(_history(5), 2)) == Continuity.resent(2)


def test_a_mirror_reads_a_delta_from_its_end_as_appended() -> None:
    held = _history(4)
    assert _mirror(held).apply(_delta(_history(6), 4)) == Continuity.appended(4)


def test_a_mirror_reads_an_empty_delta_from_its_end_as_same() -> None:
    held = _history(4)
    assert _mirror(held).apply(_delta(_history(4), 4)) == Continuity.same(4)


def test_an_empty_mirror_reads_a_full_resend_as_all_new() -> None:
    assert Mirror().apply(_delta(_history(3), 0, reset=True)) == Continuity.appended(0)


# -- the property ------------------------------------------------------------------------------
EDITS = ("append", "resend same", "change in place", "truncate")


@st.composite
def _edited(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Delta, str, int]:
    """A history, one edit of it, the delta the shim sends for that edit, the edit's name and index."""
    size = draw(st.integers(1, 12))
    held = [_message(f"m{i}", draw(st.text(max_size=3))) for i in range(size)]
    edit = draw(st.sampled_from(EDITS))
    later = copy.deepcopy(held)
    if edit == "append":
        later += [_message(f"n{i}") for i in range(draw(st.integers(1, 4)))]
        return held, later, _delta(later, size), edit, size
    if edit == "resend same":
        return held, later, _delta(later, 0, reset=True), edit, size
    if edit == "change in place":
        index = draw(st.integers(0, size - 1))
        later[index]["parts"].append({"type": "text", "text": "more"})
        later += [_message(f"n{i}") for i in range(draw(st.integers(0, 2)))]
        return held, later, _delta(later, index), edit, index
    cut = draw(st.integers(0, size - 1))
    return held, later[:cut], _delta(later[:cut], 0, reset=True), edit, cut


EXPECTED = {"append": Change.APPENDED, "resend same": Change.SAME, "change in place": Change.RESENT, "truncate": Change.REWRITTEN}


@given(_edited())
def test_the_verdict_names_the_edit_the_mirror_read_and_the_ledger_confirms(
    case: tuple[list[dict[str, Any]], list[dict[str, Any]], Delta, str, int],
) -> None:
    held, later, delta, edit, index = case
    claim = _mirror(held).apply(delta)
    verdict = judge(*_read(held), later, claim)
    expected = Continuity.REWRITTEN if edit == "truncate" else Continuity(EXPECTED[edit], index)
    assert (claim, verdict) == (expected, expected)
