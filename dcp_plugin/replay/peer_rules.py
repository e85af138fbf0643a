"""The rules other tools prune by, as what each would send in place of a recorded session's tool results.

Each rule answers, for one request of a replayed session, which tool results it replaces and by
what: a mapping of (message, part, field) to (value sent instead, tokens that saves), the same
shape the replay's cache accountant and edit-anchor check read for the plugin's own placeholders.

- **LangChain** ``ContextEditingMiddleware()`` with its defaults: its own ``ClearToolUsesEdit`` and
  token counter run on LangChain message objects built from the session; like the middleware,
  every request edits a fresh copy of the whole history.
- **Anthropic** ``clear_tool_uses_20250919`` with its documented defaults: once the prompt exceeds
  100,000 input tokens, every tool result but the newest 3 is cleared, on every request, from the
  unedited history (the API keeps no state between requests).
- **OpenCode** ``SessionCompaction.prune`` (packages/opencode/src/session/compaction.ts): when the
  agent finishes answering a user message, walk back from the newest tool output, skipping the last
  two user turns, stopping at a summary or an output already cleared; past the first 40,000 tokens
  of outputs (chars/4) every completed output is marked cleared, provided the marked ones add up to
  more than 20,000 tokens. Marks persist; a cleared output is sent as OpenCode's fixed text.
- **Last-N observation masking** (SWE-agent; "The Complexity Trap", N = 5): every request sends only
  the newest N tool results whole, the older ones as a one-line note.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, Protocol

from dcp_plugin.model.messages import info_of
from dcp_plugin.model.tokens import COMPACTED_OUTPUT_TEXT, tokens_removed
from dcp_plugin.replay.engine import ImpliedRequest
from dcp_plugin.replay.pricing import PatchKey

Patches = dict[PatchKey, tuple[Any, int]]
Result = tuple[int, int, str]  # (message, part, field) of a tool result: "output", or "error" for a failed call

CLEAR_TRIGGER = 100_000  # Anthropic's clear_tool_uses: input tokens that start clearing
CLEAR_KEEP = 3  # ... and the tool uses kept
ANTHROPIC_PLACEHOLDER = "[tool result cleared]"
OPENCODE_PROTECT = 40_000  # PRUNE_PROTECT: newest output tokens never pruned
OPENCODE_MINIMUM = 20_000  # PRUNE_MINIMUM: prune only when more than this can go at once
OPENCODE_PROTECTED_TOOLS = frozenset({"skill"})
OPENCODE_TURNS = 2  # the last user turns left alone
LAST_N = 5


class Rule(Protocol):
    """A peer's pruning rule, replayed request by request over one session."""

    name: str

    def at(self, request: ImpliedRequest, prompt_tokens: int) -> Patches:
        """The replacements in force in this request (``prompt_tokens``: its prompt without any)."""
        ...


def tool_results(messages: Sequence[Mapping[str, Any]], begin: int, end: int) -> list[Result]:
    """Every finished tool call's result in ``messages[begin:end]``, oldest first."""
    found: list[Result] = []
    for m in range(begin, end):
        found += _results_of(messages[m], m)
    return found


def _results_of(message: Mapping[str, Any], m: int) -> list[Result]:
    found: list[Result] = []
    for p, part in enumerate(message.get("parts") or ()):
        state = part.get("state") if part.get("type") == "tool" else None
        if not isinstance(state, Mapping):
            continue
        if state.get("status") == "completed" and state.get("output"):
            found.append((m, p, "output"))
        elif state.get("status") == "error" and state.get("error"):
            found.append((m, p, "error"))
    return found


class ToolResults:
    """:func:`tool_results` of a replayed session, each message read once (requests only ever grow)."""

    def __init__(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self.messages = messages
        self.found: list[Result] = []
        self.start: list[int] = [0]  # index in ``found`` of message m's first result

    def between(self, begin: int, end: int) -> list[Result]:
        for m in range(len(self.start) - 1, end):
            self.found += _results_of(self.messages[m], m)
            self.start.append(len(self.found))
        return self.found[self.start[begin]:self.start[end]]


class _Replacer:
    """What replacing one tool result saves, computed once per result and placeholder."""

    def __init__(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self.messages = messages
        self._memo: dict[tuple[PatchKey, str], int] = {}
        self._notes: dict[PatchKey, str] = {}

    def state(self, key: PatchKey) -> Mapping[str, Any]:
        m, p, _ = key
        state: Mapping[str, Any] = self.messages[m]["parts"][p]["state"]
        return state

    def patch(self, keys: Sequence[PatchKey], text: str | None = None) -> Patches:
        out: Patches = {}
        for key in keys:
            value = self.note(key) if text is None else text
            saved = self._memo.get((key, value))
            if saved is None:
                saved = self._memo[(key, value)] = tokens_removed(self.state(key), key[2], value)
            if saved > 0:
                out[key] = (value, saved)
        return out

    def note(self, key: PatchKey) -> str:
        """SWE-agent's note for an elided observation."""
        note = self._notes.get(key)
        if note is None:
            text = str(self.state(key).get(key[2]) or "")
            note = self._notes[key] = f"Old environment output: ({text.count(chr(10)) + 1} lines omitted)"
        return note


class LastN:
    """Last-N observation masking: the newest N tool results whole, older ones a note."""

    def __init__(
        self, messages: Sequence[Mapping[str, Any]], keep: int = LAST_N, results: ToolResults | None = None
    ) -> None:
        self.name = f"last-{keep} masking"
        self.keep = keep
        self.results = results or ToolResults(messages)
        self.replacer = _Replacer(messages)

    def at(self, request: ImpliedRequest, prompt_tokens: int) -> Patches:
        results = self.results.between(request.begin, request.end)
        return self.replacer.patch(results[: max(0, len(results) - self.keep)])


class ClearToolUses:
    """Anthropic's clear_tool_uses defaults, from the unedited prompt of every request."""

    def __init__(
        self,
        messages: Sequence[Mapping[str, Any]],
        trigger: int = CLEAR_TRIGGER,
        keep: int = CLEAR_KEEP,
        results: ToolResults | None = None,
    ) -> None:
        self.name = "Anthropic clear_tool_uses"
        self.trigger = trigger
        self.keep = keep
        self.results = results or ToolResults(messages)
        self.replacer = _Replacer(messages)

    def at(self, request: ImpliedRequest, prompt_tokens: int) -> Patches:
        if prompt_tokens <= self.trigger:
            return {}
        results = self.results.between(request.begin, request.end)
        return self.replacer.patch(results[: max(0, len(results) - self.keep)], ANTHROPIC_PLACEHOLDER)


class OpenCodePrune:
    """OpenCode's prune, run each time the agent finished answering a user message; marks persist."""

    def __init__(self, messages: Sequence[Mapping[str, Any]], results: ToolResults | None = None) -> None:
        self.name = "OpenCode prune"
        self.messages = messages
        self.results = results or ToolResults(messages)
        self.replacer = _Replacer(messages)
        self.cleared: set[PatchKey] = set()
        self._seen = 0

    def at(self, request: ImpliedRequest, prompt_tokens: int) -> Patches:
        for index in range(max(self._seen, request.begin + 1), request.end):
            if info_of(self.messages[index]).get("role") == "user":
                self.prune(request.begin, index)  # the answer to the previous user message ended here
        self._seen = request.end
        keys = [key for key in self.results.between(request.begin, request.end) if key in self.cleared]
        return self.replacer.patch(keys, COMPACTED_OUTPUT_TEXT)

    def prune(self, begin: int, end: int) -> None:
        """One run of the rule over ``messages[begin:end]``."""
        total = pruned = 0
        marked: list[PatchKey] = []
        for key, output in self._outputs_back(begin, end):
            estimate = round(len(output) / 4)
            total += estimate
            if total <= OPENCODE_PROTECT:
                continue
            pruned += estimate
            marked.append(key)
        if pruned > OPENCODE_MINIMUM:
            self.cleared.update(marked)

    def _outputs_back(self, begin: int, end: int) -> Iterator[tuple[PatchKey, str]]:
        """Completed outputs newest first, before the last two user turns, down to a summary or a cleared one."""
        turns = 0
        for m in range(end - 1, begin - 1, -1):
            info = info_of(self.messages[m])
            turns += info.get("role") == "user"
            if turns < OPENCODE_TURNS:
                continue
            if info.get("role") == "assistant" and info.get("summary"):
                return
            parts = self.messages[m].get("parts") or []
            for p in range(len(parts) - 1, -1, -1):
                part = parts[p]
                state = part.get("state")
                if part.get("type") != "tool" or not isinstance(state, Mapping) or state.get("status") != "completed":
                    continue
                if part.get("tool") in OPENCODE_PROTECTED_TOOLS:
                    continue
                if (m, p, "output") in self.cleared:
                    return
                yield (m, p, "output"), str(state.get("output") or "")


class CountedOnce:
    """LangChain's approximate count of a message list, each message object counted once.

    The middleware counts the whole history at every request, which made replaying a long
    session quadratic. Its counter rounds up per message so that counts add up (it says so), and
    the edits replace list items without mutating them: a list's count is the sum of its
    messages' counts, kept by identity.
    """

    def __init__(self, count: Callable[[Sequence[Any]], int]) -> None:
        self.count = count
        self.memo: dict[int, tuple[Any, int]] = {}  # id -> (the message, held so its id stays its own; count)

    def __call__(self, messages: Sequence[Any]) -> int:
        total, memo = 0, self.memo
        for message in messages:
            kept = memo.get(id(message))
            if kept is None:
                kept = memo[id(message)] = (message, self.count([message]))
            total += kept[1]
        return total

    def forget(self, messages: Iterable[Any]) -> None:
        """Drop what was kept for ``messages`` (copies that live for one request)."""
        for message in messages:
            self.memo.pop(id(message), None)


class LangChainContextEditing:
    """LangChain's ``ContextEditingMiddleware()`` defaults, run by LangChain itself on its message objects."""

    def __init__(
        self,
        messages: Sequence[Mapping[str, Any]],
        results: ToolResults | None = None,
        count: Callable[[Sequence[Any]], int] | None = None,
    ) -> None:
        """``count``: the token counter the edits get (default: LangChain's own, each message counted once)."""
        from langchain.agents.middleware import ContextEditingMiddleware
        from langchain_core.messages.utils import count_tokens_approximately

        middleware = ContextEditingMiddleware()
        if middleware.token_count_method != "approximate":
            raise RuntimeError("LangChain's ContextEditingMiddleware no longer counts tokens approximately by default")
        self.name = "LangChain ContextEditingMiddleware"
        self.edits = middleware.edits
        self.count = count or CountedOnce(count_tokens_approximately)
        self.messages = messages
        self.tool_results = results or ToolResults(messages)
        self.replacer = _Replacer(messages)
        self.converted: list[Any] = []  # LangChain messages of the session so far
        self.results: dict[int, Result] = {}  # index in ``converted`` -> the tool result it carries
        self.first: list[int] = []  # index in ``converted`` of each session message's first one

    def _convert(self, end: int) -> None:
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        for m in range(len(self.first), end):
            self.first.append(len(self.converted))
            message = self.messages[m]
            parts = message.get("parts") or []
            text = "\n".join(str(p.get("text")) for p in parts if p.get("type") == "text" and p.get("text"))
            if info_of(message).get("role") != "assistant":
                self.converted.append(HumanMessage(content=text))
                continue
            tools = [(p, part) for p, part in enumerate(parts) if part.get("type") == "tool"]
            calls = [
                {"id": str(part.get("callID")), "name": str(part.get("tool")), "args": _args(part)} for _, part in tools
            ]
            self.converted.append(AIMessage(content=text, tool_calls=calls))
            results = {key[1]: key for key in self.tool_results.between(m, m + 1)}
            for p, part in tools:
                key = results.get(p)
                if key is None:
                    continue
                state = part["state"]
                self.results[len(self.converted)] = key
                self.converted.append(
                    ToolMessage(
                        content=str(state.get(key[2])),
                        tool_call_id=str(part.get("callID")),
                        status="success" if key[2] == "output" else "error",
                    )
                )

    def at(self, request: ImpliedRequest, prompt_tokens: int) -> Patches:
        self._convert(request.end)
        low = self.first[request.begin] if request.begin < len(self.first) else len(self.converted)
        high = self.first[request.end] if request.end < len(self.first) else len(self.converted)
        original = self.converted[low:high]
        edited = list(original)  # the middleware edits a copy; the edit replaces list items, never mutates them
        for edit in self.edits:
            edit.apply(edited, count_tokens=self.count)
        changed = [i for i, (a, b) in enumerate(zip(original, edited, strict=True)) if a is not b]
        if isinstance(self.count, CountedOnce):
            self.count.forget(edited[i] for i in changed)  # copies made for this request alone
        cleared = [(self.results[low + i], str(edited[i].content)) for i in changed if low + i in self.results]
        return self.replacer.patch([key for key, _ in cleared], cleared[0][1]) if cleared else {}


def _args(part: Mapping[str, Any]) -> dict[str, Any]:
    state = part.get("state")
    value = state.get("input") if isinstance(state, Mapping) else None
    return dict(value) if isinstance(value, Mapping) else {}


def rules(messages: Sequence[Mapping[str, Any]]) -> list[Rule]:
    """Every peer rule, fresh for one session (sharing one index of its tool results)."""
    results = ToolResults(messages)
    return [make(messages, results) for make in _MAKERS]


_MAKERS: tuple[Callable[[Sequence[Mapping[str, Any]], ToolResults], Rule], ...] = (
    lambda messages, results: LangChainContextEditing(messages, results),
    lambda messages, results: ClearToolUses(messages, results=results),
    lambda messages, results: OpenCodePrune(messages, results),
    lambda messages, results: LastN(messages, results=results),
)


def rule_makers() -> list[Callable[[Sequence[Mapping[str, Any]]], Rule]]:
    """For each peer rule, how to make it fresh over a message list (one that may still grow at its end)."""
    return [partial(_fresh, make) for make in _MAKERS]


def _fresh(make: Callable[[Sequence[Mapping[str, Any]], ToolResults], Rule], messages: Sequence[Mapping[str, Any]]) -> Rule:
    return make(messages, ToolResults(messages))
