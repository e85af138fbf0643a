"""The kinds of context: recognizing the plugin's own texts, markers, and the "kinds are kept" check."""

from __future__ import annotations

import pytest

from dcp_plugin.adapters.formats.kinds import (
    REPLACES,
    Kind,
    Typed,
    input_kind,
    kind_changes,
    media_marker,
    placeholder_kind,
)
from dcp_plugin.pipeline.placeholders import (
    DUPLICATE_PLACEHOLDER,
    FAILED_INPUT_PLACEHOLDER,
    SUPERSEDED_PLACEHOLDER,
    SWEPT_PLACEHOLDER,
)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (DUPLICATE_PLACEHOLDER, Kind.PLACEHOLDER_DUPLICATE),
        (SUPERSEDED_PLACEHOLDER, Kind.PLACEHOLDER_SUPERSEDED),
        (FAILED_INPUT_PLACEHOLDER, Kind.PLACEHOLDER_FAILED_INPUT),
        (SWEPT_PLACEHOLDER, Kind.PLACEHOLDER_SWEPT),
    ],
)
def test_each_placeholder_has_its_own_kind(text: str, kind: Kind) -> None:
    assert placeholder_kind(text) is kind


def test_a_placeholder_that_grows_an_id_keeps_its_kind() -> None:
    assert placeholder_kind(DUPLICATE_PLACEHOLDER[:-1] + "; id 7]") is Kind.PLACEHOLDER_DUPLICATE


def test_an_unlisted_dcp_placeholder_is_a_generic_placeholder_not_unknown() -> None:
    assert placeholder_kind("[dcp: diagnostics removed - newer ones below]") is Kind.PLACEHOLDER


def test_ordinary_text_is_not_the_plugins() -> None:
    assert placeholder_kind("[image] of a cat") is None
    assert placeholder_kind(42) is None


@pytest.mark.parametrize(("kind", "marker_kind"), [(Kind.IMAGE, Kind.IMAGE_REMOVED), (Kind.FILE, Kind.FILE_REMOVED)])
def test_a_media_marker_reads_back_as_its_removed_kind(kind: Kind, marker_kind: Kind) -> None:
    marker = media_marker(kind, "image/png shot.png")
    assert marker.startswith(("[image removed: image/png", "[file removed: image/png"))
    assert placeholder_kind(marker) is marker_kind


def test_a_marker_detail_cannot_close_the_marker_early() -> None:
    marker = media_marker(Kind.IMAGE, "a]b\nc")
    assert marker == "[image removed: a)b c]"
    assert placeholder_kind(marker) is Kind.IMAGE_REMOVED


def test_an_input_with_a_placeholder_string_takes_the_placeholders_kind() -> None:
    assert input_kind({"filePath": "/a", "content": SUPERSEDED_PLACEHOLDER}) is Kind.PLACEHOLDER_SUPERSEDED
    assert input_kind({"edits": [{"old": FAILED_INPUT_PLACEHOLDER}]}) is Kind.PLACEHOLDER_FAILED_INPUT
    assert input_kind({"filePath": "/a"}) is Kind.TOOL_CALL


def test_every_plugin_kind_names_what_it_replaces() -> None:
    plugin_kinds = {k for k in Kind if k.value.startswith("dcp.") and k is not Kind.INSTRUCTIONS}
    assert plugin_kinds == set(REPLACES)


def test_replacing_a_result_by_its_placeholder_keeps_kinds() -> None:
    before = [Typed((3, 0, 0), Kind.TOOL_RESULT), Typed((3, 0, 1), Kind.IMAGE)]
    after = [Typed((3, 0, 0), Kind.PLACEHOLDER_DUPLICATE), Typed((3, 0, 1), Kind.IMAGE_REMOVED)]
    assert kind_changes(before, after) == []


def test_a_kind_from_nowhere_is_reported() -> None:
    before = [Typed((1, 0), Kind.USER_TEXT)]
    after = [Typed((1, 0), Kind.PLACEHOLDER_DUPLICATE)]
    assert kind_changes(before, after) != []


def test_an_image_removed_without_a_marker_is_reported() -> None:
    before = [Typed((3, 0, 0), Kind.TOOL_RESULT), Typed((3, 0, 1), Kind.IMAGE)]
    after = [Typed((3, 0, 0), Kind.PLACEHOLDER_DUPLICATE)]
    assert any("without a marker" in p for p in kind_changes(before, after))


def test_an_item_that_vanished_is_reported() -> None:
    assert kind_changes([Typed((2, 0), Kind.UNKNOWN)], []) != []


def test_opencode_parts_are_typed_by_role_type_and_signature() -> None:
    from dcp_plugin.adapters.formats import opencode

    messages = [
        {"info": {"role": "user"}, "parts": [{"type": "text", "text": "hi"}, {"type": "file", "mime": "image/png"}]},
        {"info": {"role": "assistant"}, "parts": [
            {"type": "reasoning", "text": "t", "metadata": {"anthropic": {"signature": "sig"}}},
            {"type": "step-start"},
            {"type": "tool", "tool": "read", "callID": "c", "state": {"status": "error", "input": {"filePath": "/a"}, "error": "no"}},
        ]},
        {"info": {"role": "assistant", "summary": True}, "parts": [{"type": "text", "text": "summary"}]},
    ]
    assert [t.kind for t in opencode.classify(messages)] == [
        Kind.USER_TEXT, Kind.IMAGE, Kind.REASONING_SIGNED, Kind.UNKNOWN, Kind.TOOL_CALL, Kind.TOOL_ERROR,
        Kind.COMPACTION_SUMMARY,
    ]
