"""Token estimation for the host's {info, parts} messages: text chars/4, tool inputs chars/3.5, tool outputs chars/3."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, cast

from dcp_plugin.model.jsontext import CompactJson, compact_length
from dcp_plugin.model.messages import is_mapping

# Fitted on recorded sessions against the provider-reported prompt sizes (least squares over whole
# prompts, one intercept per uninterrupted stretch of history, leave-one-session-out checked; see
# README "Token estimates"): tool outputs 3.08 characters per token (2.95-3.19 leaving any one
# session out), user text 3.3 and the model's own text 3.5-4.5, tool inputs (the model's edits and
# commands, as JSON) 3.1-3.7. Rounded, and kept as exact fractions so every estimate stays an integer.
CHARS_PER_TOKEN_TEXT = 4
# Tool inputs, and any other structured value, as compact JSON: 3.5 characters per token (2/7).
JSON_TOKENS_PER_CHAR = (2, 7)
# Tool outputs (file contents, code, command output) as sent: 3 characters per token.
OUTPUT_TOKENS_PER_CHAR = (1, 3)
# How the fixed ratios read wherever a figure says it is an estimate.
RATIOS_NOTE = "text chars/4, tool inputs chars/3.5, tool outputs chars/3"
DEFAULT_IMAGE_TOKENS = 1600

# What OpenCode sends in place of a tool output it has compacted itself.
COMPACTED_OUTPUT_TEXT = "[Old tool result content cleared]"

# Encodes the characters json.dumps(ensure_ascii=False, separators=(",", ":"), default=str) does.
_COMPACT_JSON = CompactJson()

# File parts whose content the host already inlined as text parts (OpenCode does this
# for text files and directories), so the part itself adds nothing to the prompt.
_INLINED_FILE_MIMES = ("text/plain", "application/x-directory")

# The part kinds an estimate counts; any other (step marks, patches, snapshots) adds nothing.
_COUNTED_KINDS = ("tool", "text", "reasoning", "file")


class ContentEstimate(NamedTuple):
    """Fixed-ratio token estimates of some content, kept apart by kind.

    ``text`` (chars/4) and ``json`` (tool inputs chars/3.5, outputs chars/3) come from characters and can be
    rescaled by calibration; ``media`` is the fixed per-image/document estimate and
    is never rescaled.
    """

    text: int = 0
    json: int = 0
    media: int = 0

    @property
    def total(self) -> int:
        return self.text + self.json + self.media

    def plus(self, other: ContentEstimate) -> ContentEstimate:
        return ContentEstimate(self.text + other.text, self.json + other.json, self.media + other.media)

    def minus(self, other: ContentEstimate) -> ContentEstimate:
        return ContentEstimate(self.text - other.text, self.json - other.json, self.media - other.media)


ZERO = ContentEstimate()

# ``estimate_of((text, json, media))`` is ``ContentEstimate(text, json, media)``, the same object,
# built by tuple.__new__ directly: the named tuple's own __new__ is a Python function, a frame per
# estimate, and a first sight builds two for every message of its history.
estimate_of = cast(Callable[[tuple[int, int, int]], ContentEstimate], functools.partial(tuple.__new__, ContentEstimate))

# One message's estimate as (model side, incoming): see :func:`estimate_message_split`.
Split = tuple[ContentEstimate, ContentEstimate]


class ReportedUsage(NamedTuple):
    """Provider-reported usage of one assistant step.

    ``prompt`` is everything the provider read for that request (input + cache read
    + cache write); ``carried`` is what that step adds to the next prompt from the
    model's own side (output + reasoning tokens).
    """

    prompt: int
    output: int
    reasoning: int

    @property
    def carried(self) -> int:
        return self.output + self.reasoning


def estimate_text_tokens(text: str) -> int:
    """Tokens of prose: one per four characters, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN_TEXT)


def json_chars(value: Any) -> int:
    """Characters of a value as compact JSON; strings count their own length."""
    if isinstance(value, str):
        return len(value)
    try:
        return compact_length(value, _COMPACT_JSON)
    except (TypeError, ValueError):
        return len(str(value))


# The ratios unpacked once: the two estimates below run for every tool call of a history and
# every decision on one, and a helper taking the ratio cost a call and an unpacking each time.
_JSON_NUM, _JSON_DEN = JSON_TOKENS_PER_CHAR
_OUTPUT_NUM, _OUTPUT_DEN = OUTPUT_TOKENS_PER_CHAR


def estimate_json_tokens(value: Any) -> int:
    """Tokens of structured data (tool inputs, non-string outputs): chars/3.5, rounded up."""
    return -(-json_chars(value) * _JSON_NUM // _JSON_DEN)


def estimate_output_tokens(value: Any) -> int:
    """Tokens of a tool's output or error: a string at chars/3, anything else as JSON (chars/3.5)."""
    if not isinstance(value, str):
        return -(-json_chars(value) * _JSON_NUM // _JSON_DEN)
    return -(-len(value) * _OUTPUT_NUM // _OUTPUT_DEN)


def _tool_output(state: Mapping[str, Any]) -> Any:
    status = state.get("status")
    if status == "completed":
        when = state.get("time")
        # is_mapping inlined: read for every finished call of a history and every decision on one.
        if (type(when) is dict or isinstance(when, Mapping)) and when.get("compacted"):
            return COMPACTED_OUTPUT_TEXT
        return state.get("output") or ""
    if status == "error":
        return state.get("error") or ""
    return ""


def _tool_split(state: Mapping[str, Any]) -> tuple[ContentEstimate, ContentEstimate]:
    model = ContentEstimate(json=estimate_json_tokens(state.get("input") or {}))
    output = _tool_output(state)
    incoming = ContentEstimate(json=estimate_output_tokens(output)) if output != "" else ZERO
    return model, incoming


def tool_state_tokens(state: Mapping[str, Any]) -> int:
    """Tokens one tool call adds to a prompt: its input and what the host sends as its result."""
    model, incoming = _tool_split(state)
    return model.total + incoming.total


def output_tokens(state: Mapping[str, Any]) -> int:
    """Tokens a call's output (or error) takes in a request, as the host sends it."""
    return _field_tokens(state, "output")


def tokens_removed(state: Mapping[str, Any], field: str, value: Any) -> int:
    """Tokens that replacing ``state[field]`` by ``value`` removes from a request.

    The one definition every report uses (notifications, statistics, the store, replay and
    ``/dcp context``): it counts what the host really sends, so an output the host already
    cleared itself (OpenCode's compacted outputs) saves nothing.
    """
    # Only the replaced field's share changes; estimating it alone skips encoding the rest.
    return max(0, _field_tokens(state, field) - _field_tokens({**state, field: value}, field))


def _field_tokens(state: Mapping[str, Any], field: str) -> int:
    if field == "input":
        return estimate_json_tokens(state.get("input") or {})
    output = _tool_output(state)
    return estimate_output_tokens(output) if output != "" else 0


def _file_estimate(part: Mapping[str, Any], image_tokens: int) -> ContentEstimate:
    text = part.get("text")
    if isinstance(text, str):
        return ContentEstimate(text=estimate_text_tokens(text))
    mime = str(part.get("mime") or "")
    if mime in _INLINED_FILE_MIMES:
        return ZERO
    if mime.startswith("text/"):
        return ContentEstimate(text=estimate_text_tokens(str(part.get("url") or "")))
    return ContentEstimate(media=image_tokens)


def estimate_part_split(
    part: Mapping[str, Any], image_tokens: int = DEFAULT_IMAGE_TOKENS
) -> tuple[ContentEstimate, ContentEstimate]:
    """One part's estimate as ``(model_side, incoming)``.

    The model side is what the model itself wrote (text, reasoning, tool-call
    inputs); incoming is what reached the conversation from elsewhere (tool outputs
    and errors, files, images). The caller decides whether text belongs to the
    model (assistant messages) or the user.
    """
    kind = part.get("type")
    if part.get("ignored") is True:
        return ZERO, ZERO
    if kind in ("text", "reasoning"):
        text = part.get("text")
        return (ContentEstimate(text=estimate_text_tokens(text)) if isinstance(text, str) else ZERO), ZERO
    if kind == "tool":
        state = part.get("state")
        if not is_mapping(state):
            return ZERO, ZERO
        return _tool_split(state)
    if kind == "file":
        return ZERO, _file_estimate(part, image_tokens)
    return ZERO, ZERO


def estimate_message_split(
    message: Mapping[str, Any], image_tokens: int = DEFAULT_IMAGE_TOKENS, assistant: bool | None = None
) -> Split:
    """One message's estimate as ``(model_side, incoming)``; user messages are all incoming.

    ``assistant``: whether the message's role is the assistant's, when the caller has read it (None: read here).
    """
    # Plain int sums rather than ContentEstimate.plus per part, and the common kinds (tool calls,
    # text, reasoning) estimated here rather than by estimate_part_split: the same totals without
    # two tuples and a few calls per part (every message of a long session is estimated on a cold
    # request). A kind that counts nothing (step marks) is passed over first; a file goes through
    # estimate_part_split.
    model_text = model_json = model_media = text = json_ = media = 0
    parts = message.get("parts") if type(message) is dict or is_mapping(message) else None
    for part in parts if isinstance(parts, list) else ():
        if type(part) is not dict and not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind not in _COUNTED_KINDS or part.get("ignored") is True:
            continue
        if kind == "tool":
            state = part.get("state")
            if type(state) is dict or isinstance(state, Mapping):
                model_json += -(-json_chars(state.get("input") or {}) * _JSON_NUM // _JSON_DEN)
                output = _tool_output(state)
                if type(output) is str:  # estimate_output_tokens of text, the common case
                    json_ += -(-len(output) * _OUTPUT_NUM // _OUTPUT_DEN)
                elif output != "":
                    json_ += estimate_output_tokens(output)
        elif kind == "file":
            m, i = estimate_part_split(part, image_tokens)
            model_text += m.text
            model_json += m.json
            model_media += m.media
            text += i.text
            json_ += i.json
            media += i.media
        else:  # text or reasoning
            value = part.get("text")
            if isinstance(value, str):
                model_text += -(-len(value) // CHARS_PER_TOKEN_TEXT)
    if not (assistant if assistant is not None else _role(message) == "assistant"):
        return ZERO, estimate_of((model_text + text, model_json + json_, model_media + media))
    return estimate_of((model_text, model_json, model_media)), estimate_of((text, json_, media))


def estimate_part_tokens(part: Mapping[str, Any], image_tokens: int = DEFAULT_IMAGE_TOKENS) -> int:
    """Estimated tokens a single message part adds to a prompt."""
    model, incoming = estimate_part_split(part, image_tokens)
    return model.total + incoming.total


def estimate_message_tokens(message: Mapping[str, Any], image_tokens: int = DEFAULT_IMAGE_TOKENS) -> int:
    """Estimated tokens of one {info, parts} message."""
    model, incoming = estimate_message_split(message, image_tokens)
    return model.total + incoming.total


def message_prompt_tokens(message: Mapping[str, Any], image_tokens: int = DEFAULT_IMAGE_TOKENS) -> int:
    """Tokens one message adds to every later prompt, for the replay's accounting.

    The fixed-ratio estimate, except that a step which reported its own usage counts at least
    the output and reasoning tokens it reported for what it wrote: on recorded sessions a step
    added to the next prompts about 300 tokens its stored parts do not show (thinking the
    host does not keep, tool-call framing), so characters alone fell 15-20 % short of the
    reported prompts.
    """
    return split_prompt_tokens(estimate_message_split(message, image_tokens), reported_usage(message))


def split_prompt_tokens(split: Split, usage: ReportedUsage | None) -> int:
    """:func:`message_prompt_tokens` of a message already estimated (``split``) with its reported usage."""
    model, incoming = split
    # The totals summed here, not by their properties: once per message of a history.
    carried = usage.output + usage.reasoning if usage is not None else 0
    return max(model.text + model.json + model.media, carried) + incoming.text + incoming.json + incoming.media


def estimate_content_tokens(messages: Iterable[dict[str, Any]], image_tokens: int = DEFAULT_IMAGE_TOKENS) -> int:
    """Estimated tokens of a list of {info, parts} messages."""
    return sum(estimate_message_tokens(m, image_tokens) for m in messages)


def next_prompt_tokens(reported_prompt: int, carried: int, new_tokens: int) -> int:
    """The one formula for the next prompt after a reported one.

    What the provider read last time, plus what the model added to the conversation in
    that step (its output and reasoning), plus the estimate of what is new since.
    """
    return reported_prompt + carried + new_tokens


def estimate_prompt_tokens(
    history: Iterable[dict[str, Any]],
    new_message: dict[str, Any] | Iterable[dict[str, Any]] | None,
    last_prompt_tokens: int | None,
    image_tokens: int = DEFAULT_IMAGE_TOKENS,
) -> int:
    """Expected size of the next prompt, for threshold checks before it is sent.

    Main path: the provider-reported size of the last prompt plus the estimate of
    what is new. First-request path (nothing reported yet: a restored session, a
    sub-agent that inherits history): the estimate of the whole history plus the new
    message. ``new_message`` may be one message, several, or None.
    """
    if new_message is None:
        new: list[dict[str, Any]] = []
    elif isinstance(new_message, Mapping):
        new = [new_message]  # type: ignore[list-item]
    else:
        new = list(new_message)
    if last_prompt_tokens is not None and last_prompt_tokens > 0:
        return next_prompt_tokens(last_prompt_tokens, 0, estimate_content_tokens(new, image_tokens))
    return estimate_content_tokens([*history, *new], image_tokens)


def _role(message: Mapping[str, Any]) -> str | None:
    if not is_mapping(message):
        return None  # a malformed entry in the list: skipped like every malformed field
    info = message.get("info")
    return info.get("role") if is_mapping(info) else None


def _int(value: Any) -> int:
    # A plain int decided first: five counts are read per assistant message of a history.
    if type(value) is int:
        return value if value > 0 else 0
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def reported_usage(message: Mapping[str, Any]) -> ReportedUsage | None:
    """The provider-reported usage of an assistant step, or None when there is none to trust.

    A host's own summary message (``info.summary``) reports the usage of the
    summarizing request, not of the conversation it replaced, so it is skipped.
    """
    return info_usage(message.get("info"))


def info_usage(info: object) -> ReportedUsage | None:
    """:func:`reported_usage` of a message whose info the caller holds already."""
    # is_mapping inlined (a dict decided first): read for every assistant message of a history.
    if not (type(info) is dict or isinstance(info, Mapping)) or info.get("role") != "assistant" or info.get("summary"):
        return None
    tokens = info.get("tokens")
    if not (type(tokens) is dict or isinstance(tokens, Mapping)):
        return None
    cache = tokens.get("cache")
    if not (type(cache) is dict or isinstance(cache, Mapping)):
        cache = {}
    # _int decided here for plain ints (the common case): five counts per assistant message of a history.
    read, write, given = cache.get("read"), cache.get("write"), tokens.get("input")
    prompt = (
        ((given if given > 0 else 0) if type(given) is int else _int(given))
        + ((read if read > 0 else 0) if type(read) is int else _int(read))
        + ((write if write > 0 else 0) if type(write) is int else _int(write))
    )
    if prompt <= 0:
        return None
    output, reasoning = tokens.get("output"), tokens.get("reasoning")
    return ReportedUsage(
        prompt,
        (output if output > 0 else 0) if type(output) is int else _int(output),
        (reasoning if reasoning > 0 else 0) if type(reasoning) is int else _int(reasoning),
    )


def last_reported_prompt_tokens(messages: list[dict[str, Any]]) -> int | None:
    """Prompt size (input + cache read + cache write) of the newest step that reported usage."""
    for index in range(len(messages) - 1, -1, -1):  # not reversed(): mypyc 2.4 fails on it here
        usage = reported_usage(messages[index])
        if usage is not None:
            return usage.prompt
    return None
