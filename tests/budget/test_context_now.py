"""What the context now takes off a prediction: the tokens pruned since the request the provider counted."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.budget.context_now import SentPrunes, pruned_since_report


def _plain_rule(anchor_index: int | None, count: int, pruned: list[int], sent: SentPrunes) -> int:
    """Pruned beyond what was pruned then before the anchor, plus everything pruned from the anchor on."""
    total = pruned[count]
    if anchor_index is None:
        return total
    before = pruned[anchor_index]
    then = sent.at(anchor_index)
    return (before - then if then is not None else 0) + total - before


@given(
    st.lists(st.integers(-500, 5000), min_size=1, max_size=30),
    st.data(),
)
def test_what_was_pruned_since_the_report_is_the_plain_rule(pruned: list[int], data: st.DataObject) -> None:
    count = data.draw(st.integers(0, len(pruned) - 1))
    anchor = data.draw(st.none() | st.integers(0, count))
    sent = SentPrunes()
    for sent_count, removed in data.draw(st.lists(st.tuples(st.integers(0, count), st.integers(-500, 5000)), max_size=6)):
        sent.sent(sent_count, removed)
    assert pruned_since_report(anchor, count, pruned.__getitem__, sent) == _plain_rule(anchor, count, pruned, sent)


def test_a_remembered_request_is_not_asked_what_is_pruned_before_it_now() -> None:
    sent = SentPrunes()
    sent.sent(3, 40)
    asked: list[int] = []

    def pruned_before(n: int) -> int:
        asked.append(n)
        return 10 * n

    assert pruned_since_report(3, 5, pruned_before, sent) == 50 - 40
    assert asked == [5]
