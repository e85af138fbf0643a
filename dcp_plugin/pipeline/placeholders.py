"""Placeholder texts: what the model reads in place of what was pruned, each naming the call it stands in for."""

from __future__ import annotations

from dcp_plugin.pipeline.ids import short_id

# Every placeholder starts so. An output that already is one (a list pruned before, handed in
# again) is never replaced by another one, nor read as content by a rule.
PLACEHOLDER_PREFIX = "[dcp:"
# Stable strings: the same text every time keeps the provider's prompt cache warm. Every one is
# written with the id of the call it stands in for (see `tag`), so the model can name it.
DUPLICATE_PLACEHOLDER = "[dcp: output removed - the same call was made again later; see the newer result]"
SUPERSEDED_PLACEHOLDER = "[dcp: content removed - this file was read back later]"
FAILED_INPUT_PLACEHOLDER = "[dcp: input removed - call failed turns ago]"
SWEPT_PLACEHOLDER = "[dcp: removed by /dcp sweep]"
# The model's own prunes (the discard and extract tools), one text per reason.
DISCARDED_PREFIX = "[dcp: output discarded by the model"
DISCARDED_PLACEHOLDERS: dict[str, str] = {
    "noise": f"{DISCARDED_PREFIX} as noise]",
    "done": f"{DISCARDED_PREFIX}: the task that needed it is done]",
}
# The head of what `extract` leaves in place of an output; the model's distillation follows it.
SUMMARY_HEADER = "[dcp: summary - the model kept these facts of a pruned output]"

def tag(text: str, ident: str | None) -> str:
    """A placeholder naming the call it stands in for: ``[dcp: ... (id 3kq7)]``.

    The id goes before the first ``]``, so a placeholder keeps the prefix its kind is
    recognized by (``formats.kinds``); texts that are not the plugin's (``[dcp:...]``) stay.
    """
    if ident is None:
        return text
    if text.startswith(PLACEHOLDER_PREFIX):
        lead = 0  # the common case: no copy of the text stripped of what it does not start with
    else:
        # A cut's text may start with the blank line it keeps before the placeholder.
        lead = len(text) - len(text.lstrip("\n"))
        if not text.startswith(PLACEHOLDER_PREFIX, lead):
            return text
    end = text.find("]", lead)
    named = f" (id {ident})"
    if end < 0 or text.endswith(named, 0, end):  # no end, or named already (a cut carried over)
        return text
    return f"{text[:end]}{named}{text[end:]}"


def placeholder_for(text: str, call_id: str) -> str:
    """``text`` as written for the call ``call_id`` of a session where no other call shares its short id.

    What tests compare against: ``placeholder_for(DUPLICATE_PLACEHOLDER, "call_1")``.
    """
    return tag(text, short_id(call_id))


def is_placeholder(value: object) -> bool:
    """Whether a value is a whole placeholder the plugin wrote."""
    return isinstance(value, str) and value.startswith(PLACEHOLDER_PREFIX)
