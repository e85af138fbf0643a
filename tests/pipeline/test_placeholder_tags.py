"""tag names a call without copying a text that starts as a placeholder: it tags exactly as the plain rule does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER, PLACEHOLDER_PREFIX, tag


def _tag_reference(text: str, ident: str | None) -> str:
    """tag as first written: the lead measured on every text, the named test on a slice."""
    lead = len(text) - len(text.lstrip("\n"))
    if ident is None or not text.startswith(PLACEHOLDER_PREFIX, lead):
        return text
    end = text.find("]", lead)
    if end < 0 or text[:end].endswith(f" (id {ident})"):
        return text
    return f"{text[:end]} (id {ident}){text[end:]}"


_pieces = st.sampled_from(["\n", "\n\n", PLACEHOLDER_PREFIX, "]", " (id ab12)", " (id ab12", "x", DUPLICATE_PLACEHOLDER, "[dcp"])
_texts = st.lists(_pieces | st.text(max_size=6), max_size=6).map("".join)


@settings(max_examples=500, deadline=None)
@given(_texts, st.sampled_from([None, "ab12", "zz9x", ""]))
def test_tag_names_the_call_as_the_plain_rule_does(text: str, ident: str | None) -> None:
    assert tag(text, ident) == _tag_reference(text, ident)
