"""holds answers what ``in`` answers, however often the markers' first character occurs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.pipeline.strategies.reads import CUT_SHORT_MARKERS
from dcp_plugin.pipeline.strategies.scan import SCAN_LIMIT, holds
from dcp_plugin.pipeline.strategies.stale_diagnostics import BLOCK_START

_pieces = st.sampled_from(["<", "(", "x", "\n", "<diag", "(Output", "(line truncated", BLOCK_START, *CUT_SHORT_MARKERS])
_texts = st.lists(_pieces, max_size=3 * SCAN_LIMIT).map("".join)


@settings(max_examples=500, deadline=None)
@given(_texts, st.sampled_from([BLOCK_START, CUT_SHORT_MARKERS, (BLOCK_START,)]))
def test_holds_is_in(text: str, markers: str | tuple[str, ...]) -> None:
    expected = markers in text if isinstance(markers, str) else any(marker in text for marker in markers)
    assert holds(text, markers) == expected


def test_a_marker_after_many_first_characters_is_found() -> None:
    crowded = "<" * (SCAN_LIMIT * 3) + BLOCK_START
    assert holds(crowded, BLOCK_START)
    assert not holds(crowded[:-1], BLOCK_START)
    assert holds("(" * (SCAN_LIMIT + 1) + CUT_SHORT_MARKERS[1], CUT_SHORT_MARKERS)
