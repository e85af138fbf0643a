"""A deliberately naive, from-scratch implementation of the strategy semantics, for comparison.

It re-derives every rule from the whole history at each request of the implied request
history (one before each assistant message, then the final one), with no incremental index:
who claims a field first follows the conversation (the call whose arrival made another one
obsolete), strategies in registry order for the same arrival; a cut gives way to a whole
replacement and later cuts join earlier ones; calls younger than turn protection allows wait
for it; `maskOldOutputs` acts at answered requests whose context, as the request sent it,
reached its trigger. Without the cache scheduler every decision so far was sent; with it, which
placeholders a request carried is the scheduler's choice, which this reference does not
re-implement: the caller passes what the runtime wrote (:func:`written_by`).
"""

from __future__ import annotations

import bisect
import heapq
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from dcp_plugin.budget.limits import resolve_context_limit
from dcp_plugin.budget.thresholds import compute_thresholds
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.config.protected import HARDCODED_PROTECTED_TOOLS
from dcp_plugin.cost.prices import pricing_for
from dcp_plugin.model.messages import message_time
from dcp_plugin.model.refs import model_ref, request_model
from dcp_plugin.model.tokens import message_prompt_tokens, reported_usage, tokens_removed
from dcp_plugin.pipeline.commandpaths import command_paths
from dcp_plugin.pipeline.decisions import Decision
from dcp_plugin.pipeline.ids import SHORT, short_id
from dcp_plugin.pipeline.labels import call_label, relative
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER, FAILED_INPUT_PLACEHOLDER, SUPERSEDED_PLACEHOLDER
from dcp_plugin.pipeline.protection import (
    PATH_KEYS,
    PathProtector,
    absolute_path,
    extract_paths,
)
from dcp_plugin.pipeline.strategies import mask_old_outputs, stale_diagnostics, superseded_reads, superseded_todos
from dcp_plugin.pipeline.strategies.file_views import edits_file, runs_check, shows_file

ORDER = (
    "deduplication",
    "supersedeWrites",
    "purgeErrors",
    "staleDiagnostics",
    "supersededReads",
    "supersededTodos",
    "maskOldOutputs",
)


def _shrunk(value: Any, placeholder: str, keep: tuple[str, ...] = (), top: bool = True) -> Any:
    if isinstance(value, str):
        return placeholder if len(value) > len(placeholder) else value
    if isinstance(value, dict):
        return {k: v if (top and k in keep) else _shrunk(v, placeholder, (), False) for k, v in value.items()}
    if isinstance(value, list):
        return [_shrunk(v, placeholder, (), False) for v in value]
    return value


def _named(placeholder: str, ident: str) -> str:
    """The placeholder as written for the call with this id: the id before its first closing bracket."""
    end = placeholder.index("]")
    return placeholder[:end] + f" (id {ident})" + placeholder[end:]


def _idents(call_ids: list[str]) -> list[str]:
    """Each call's id: the shortest prefix of its digest no earlier call of the session took."""
    taken: set[str] = set()
    out = []
    for call_id in call_ids:
        length = SHORT
        while short_id(call_id, length) in taken:
            length += 1
        taken.add(short_id(call_id, length))
        out.append(short_id(call_id, length))
    return out


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in sorted(value.items()) if v is not None}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def _chars(value: Any) -> int:
    return len(value) if isinstance(value, str) else len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _output_tokens(value: Any) -> int:
    """A tool output's tokens: a string at 3 characters per token, anything else as JSON (3.5), rounded up."""
    return -(-_chars(value) // 3) if isinstance(value, str) else -(-_chars(value) * 2 // 7)


def _number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _lines_asked(tool_input: Any) -> tuple[int, int] | None:
    """OpenCode's read: offset is the 1-based first line (missing or 0: line 1), limit defaults to 2,000."""
    if not isinstance(tool_input, dict):
        return None
    offset = 1 if tool_input.get("offset") is None else _number(tool_input.get("offset"))
    limit = 2000 if tool_input.get("limit") is None else _number(tool_input.get("limit"))
    if offset is None or limit is None or offset < 0 or limit < 1:
        return None
    first = max(1, offset)
    return first, first + limit - 1


def _lines_shown(call: dict[str, Any]) -> tuple[int, int] | None:
    output = call["output"]
    if isinstance(output, str) and (
        output.startswith("[dcp:") or "(Output capped at " in output or "(line truncated to " in output
    ):
        return None
    return _lines_asked(call["input"])


_BLOCK = re.compile(
    r'(\n\nLSP errors detected in [^\n]*:\n)?<diagnostics file="([^"\n]*)">\n(?:.*?\n)?</diagnostics>', re.DOTALL
)


@dataclass
class Owner:
    strategy: str
    cuts: frozenset[tuple[int, int, str]] | None
    saved: int


@dataclass
class Run:
    """The from-scratch walk: calls, who owns each field, and the claims waiting for turn protection."""

    messages: list[dict[str, Any]]
    config: DcpConfig
    directory: str
    calls: list[dict[str, Any]] = field(default_factory=list)
    owners: dict[tuple[str, str], Owner] = field(default_factory=dict)
    young: list[tuple[int, int, int, str, str, str, Any]] = field(default_factory=list)
    pushed: int = 0
    turn: int = 0


def _collect(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    seen: set[str] = set()
    turn = 0
    for mi, message in enumerate(messages):
        if message["info"].get("role") == "user":
            turn += 1
        for pi, part in enumerate(message["parts"]):
            if part.get("type") != "tool":
                continue
            call_id = part.get("callID") or part.get("id") or f"{message['info'].get('id') or mi}#{pi}"
            if call_id in seen:
                continue
            seen.add(call_id)
            state = part["state"]
            when = state.get("time")
            calls.append(
                {
                    "id": call_id,
                    "tool": part["tool"],
                    "status": state.get("status"),
                    "input": state.get("input"),
                    "output": state.get("output"),
                    "state": state,
                    "compacted": bool(when.get("compacted")) if isinstance(when, dict) else False,
                    "turn": turn,
                    "message": mi,
                    "seq": len(calls),
                }
            )
    for call, ident in zip(calls, _idents([c["id"] for c in calls]), strict=False):
        call["ident"] = ident
    return calls


Written = Callable[[int, int], int]


def written_by(in_force: Iterable[Decision]) -> Written:
    """(messages, request number) -> tokens the placeholders that request carried removed from those messages.

    From the decisions in force at the end of a run: each one counts from the request it was
    first written in; before that, the one it replaced (if that was written) counts.
    """
    forced = list(in_force)

    def removed(end: int, number: int) -> int:
        total = 0
        for decision in forced:
            if decision.record.message_index >= end:
                continue
            current: Decision | None = decision
            while current is not None and (current.applied_at is None or current.applied_at > number):
                current = current.replaces
            total += current.tokens_saved if current is not None else 0
        return total

    return removed


def reference_decisions(
    messages: list[dict[str, Any]], config: DcpConfig, directory: str, written: Written | None = None
) -> dict[tuple[str, str], str]:
    """(call id, field) -> strategy, computed by looking at the history from scratch at every request.

    A field is listed only when its placeholder removes at least one estimated token.
    ``written``: what the placeholders of each request removed (see :func:`written_by`), needed
    with the cache scheduler on; without it every decision made so far counts as sent.
    """
    run = Run(messages, config, directory, _collect(messages))
    # The prompt outside the messages (system prompt, tools): what the first reported usage holds
    # beyond the messages before it. Modelled only where no call came before it.
    overhead = 0
    for index, message in enumerate(messages):
        usage = reported_usage(message)
        if usage is not None:
            if any(c["message"] < index for c in run.calls):
                raise NotImplementedError("the reference models usage reported before any tool call only")
            overhead = max(0, usage.prompt - sum(message_prompt_tokens(m) for m in messages[:index]))
            break
    protector = PathProtector(config.protected_file_patterns, directory)
    s = config.strategies
    by_id = {c["id"]: c for c in run.calls}

    def path_protected(call: dict[str, Any]) -> bool:
        # What the shell command prints is protected like a path argument (README, Protected files).
        return protector.is_protected([*extract_paths(call["tool"], call["input"]), *command_paths(call["input"])])

    def path_of(call: dict[str, Any]) -> str | None:
        paths = extract_paths(call["tool"], call["input"])
        return absolute_path(paths[0], directory) if paths else None

    def completed(call: dict[str, Any]) -> bool:
        return call["status"] == "completed"

    # What a call's output says never changes: each call's blocks are found once (they were the
    # bulk of this reference's time, re-found for every earlier call at every new one).
    found_blocks: dict[str, list[tuple[str, tuple[int, int, str]]]] = {}

    def blocks(call: dict[str, Any]) -> list[tuple[str, tuple[int, int, str]]]:
        if call["id"] not in found_blocks:
            found_blocks[call["id"]] = find_blocks(call)
        return found_blocks[call["id"]]

    def find_blocks(call: dict[str, Any]) -> list[tuple[str, tuple[int, int, str]]]:
        output = call["output"]
        if not completed(call) or not isinstance(output, str):
            return []
        found = []
        for m in _BLOCK.finditer(output):
            if not m.group(2):
                continue
            named = _named(stale_diagnostics.placeholder(relative(m.group(2), directory)), call["ident"])
            text = ("\n\n" if m.group(1) else "") + named
            if len(text) < m.end() - m.start():
                found.append((absolute_path(m.group(2), directory), (m.start(), m.end(), text)))
        return found

    # -- ownership: the one rule for two claims on one field -------------------------------
    def decide(call_id: str, strategy: str, kind: str, arg: Any) -> None:
        call = by_id[call_id]
        state = call["state"]
        key = (call_id, "input" if kind == "shrink" else "output")
        current = run.owners.get(key)
        cuts: frozenset[tuple[int, int, str]] | None = None
        if kind == "shrink":
            arg = (_named(arg[0], call["ident"]), arg[1])
        elif kind == "replace":
            arg = _named(arg, call["ident"])
        if current is not None:
            if current.cuts is None:
                return
            if kind == "cut":
                arg = current.cuts | arg
        if kind == "shrink":
            value = _shrunk(call["input"], *arg) if isinstance(call["input"], dict) else call["input"]
            if not isinstance(call["input"], dict) or value == call["input"]:
                return
        elif kind == "replace":
            output = call["output"]
            if (
                not completed(call)
                or "output" not in state
                or call["compacted"]
                or output is None
                or _chars(output) <= len(arg)
                or (isinstance(output, str) and output.startswith("[dcp:"))
            ):
                return
            value = arg
        else:
            output = call["output"]
            if not completed(call) or not isinstance(output, str) or call["compacted"]:
                return
            cuts = frozenset(arg)
            value, position = "", 0
            for start, end, text in sorted(cuts):
                value += output[position:start] + text
                position = end
            value += output[position:]
            if len(value) >= len(output):
                return
        saved = tokens_removed(state, key[1], value)
        if saved <= 0 or (current is not None and cuts == current.cuts):
            return
        run.owners[key] = Owner(strategy, cuts, saved)

    def gate(call_id: str, strategy: str, kind: str, arg: Any) -> None:
        tp = config.turn_protection
        call = by_id[call_id]
        if tp.enabled and run.turn - call["turn"] < tp.turns:
            heapq.heappush(run.young, (call["turn"], call["seq"], run.pushed, call_id, strategy, kind, arg))
            run.pushed += 1
        else:
            decide(call_id, strategy, kind, arg)

    def release() -> None:
        limit = run.turn - config.turn_protection.turns
        while run.young and run.young[0][0] <= limit:
            _, _, _, call_id, strategy, kind, arg = heapq.heappop(run.young)
            decide(call_id, strategy, kind, arg)

    # -- what each strategy says when a call arrives, looking at everything before it --------
    def claims(new: dict[str, Any], earlier: list[dict[str, Any]]) -> list[tuple[str, str, str, Any]]:
        out: list[tuple[str, str, str, Any]] = []
        if not completed(new):
            return out
        path = path_of(new)
        if s.deduplication.enabled:
            protected = HARDCODED_PROTECTED_TOOLS | set(s.deduplication.protected_tools)
            ignored = set(s.deduplication.ignore_fields.get(new["tool"], ()))

            def signature(c: dict[str, Any]) -> str:
                inp = c["input"]
                if isinstance(inp, dict) and ignored:
                    inp = {k: v for k, v in inp.items() if k not in ignored}
                return json.dumps([c["tool"], _canonical(inp)], sort_keys=True)

            if new["tool"] not in protected and not path_protected(new):
                same = [c for c in earlier if completed(c) and not path_protected(c) and signature(c) == signature(new)]
                if same:
                    out.append((same[-1]["id"], "deduplication", "replace", DUPLICATE_PLACEHOLDER))
        if s.supersede_writes.enabled and new["tool"] == "read" and path is not None:
            shown = _lines_shown(new)
            for c in earlier:
                content = c["input"].get("content") if isinstance(c["input"], dict) else None
                lines = (
                    max(1, content.count("\n") + (0 if content.endswith("\n") or not content else 1))
                    if isinstance(content, str)
                    else 1
                )
                if (
                    completed(c)
                    and c["tool"] == "write"
                    and path_of(c) == path
                    and not path_protected(c)
                    and shown is not None
                    and shown[0] == 1
                    and shown[1] >= lines
                ):
                    out.append((c["id"], "supersedeWrites", "shrink", (SUPERSEDED_PLACEHOLDER, PATH_KEYS)))
        if s.stale_diagnostics.enabled:
            files = {f for f, _ in blocks(new)}
            if new["tool"] in stale_diagnostics.WRITE_TOOLS:
                files |= {absolute_path(p, directory) for p in extract_paths(new["tool"], new["input"])}
            for c in earlier:
                stale = [cut for f, cut in blocks(c) if f in files]
                if stale and not path_protected(c):
                    out.append((c["id"], "staleDiagnostics", "cut", frozenset(stale)))
        if s.superseded_reads.enabled and path is not None and new["tool"] in ("read", "write"):
            shown = _lines_shown(new) if new["tool"] == "read" else (0, 0)
            for c in earlier:
                asked = _lines_asked(c["input"])
                if not (completed(c) and c["tool"] == "read" and path_of(c) == path and asked is not None):
                    continue
                if path_protected(c):
                    continue
                if new["tool"] == "write" or (shown is not None and shown[0] <= asked[0] and shown[1] >= asked[1]):
                    label = call_label("read", {"filePath": path}, directory)
                    out.append((c["id"], "supersededReads", "replace", superseded_reads.placeholder(label)))
        if s.superseded_todos.enabled and new["tool"] == "todowrite":
            for c in earlier:
                if completed(c) and c["tool"] in ("todowrite", "todoread"):
                    out.append((c["id"], "supersededTodos", "replace", superseded_todos.placeholder()))
        return out

    def working_set(seen: list[dict[str, Any]], candidates: list[dict[str, Any]], size: dict[str, int]) -> set[str]:
        """The newest reads of the files touched last, oldest touch dropped first, within keepFileTokens."""
        newest: dict[str, dict[str, Any] | None] = {}
        for c in seen:  # in the order observed: a dict keeps the order of first insertion, so move to the end
            path = path_of(c)
            if path is None:
                continue
            read = c if c["tool"].lower() == "read" and completed(c) else newest.get(path)
            newest.pop(path, None)
            newest[path] = read
        maskable = {c["id"] for c in candidates}
        held: set[str] = set()
        budget = mask.keep_file_tokens
        for read in reversed(list(newest.values())):
            if read is None or read["id"] not in maskable:
                continue
            if size[read["id"]] > budget:
                break
            budget -= size[read["id"]]
            held.add(read["id"])
        return held

    def edited_if_cold(end: int, seen: list[dict[str, Any]]) -> set[str | None]:
        """editedWhenCold: the paths edited so far when the request after ``end`` messages finds the cache cold."""
        if not mask.edited_when_cold:
            return set()
        named = None
        for m in messages[:end]:
            ref = model_ref(m["info"])
            if ref is not None and ref.model_id is not None:
                named = ref
        pricing = pricing_for(request_model(named, None), config.cache)
        now = max((message_time(m) for m in messages[:end]), default=0)
        after = now  # the next request holds the messages up to the next assistant one after `end`
        for j in range(end, len(messages)):
            if j > end and messages[j]["info"].get("role") == "assistant":
                break
            after = max(after, message_time(messages[j]))
        if pricing.caches and after - now <= pricing.ttl_seconds * 1000:
            return set()
        return {path_of(k) for k in seen if completed(k) and edits_file(k["tool"], k["input"]) and path_of(k) is not None}

    # -- the walk ------------------------------------------------------------------------
    mask = s.mask_old_outputs
    mask_protected = HARDCODED_PROTECTED_TOOLS | set(mask.protected_tools)
    purged: set[str] = set()
    masked: set[str] = set()
    started = False
    points = [i for i, m in enumerate(messages) if i > 0 and m["info"].get("role") == "assistant"]
    message_tokens = [message_prompt_tokens(m) for m in messages]
    previous = 0
    seen: list[dict[str, Any]] = []
    model: dict[str, Any] = {}
    for number, (end, point) in enumerate([*((p, True) for p in points), (len(messages), False)], 1):
        run.turn = sum(1 for m in messages[:end] if m["info"].get("role") == "user")
        for m in messages[:end]:
            ref = m["info"].get("modelID") or (m["info"].get("model") or {}).get("modelID")
            if ref:
                model = {"id": ref}
        arrived = [c for c in run.calls if previous <= c["message"] < end and c["status"] in ("completed", "error")]
        for new in arrived:
            for call_id, strategy, kind, arg in sorted(claims(new, seen), key=lambda c: ORDER.index(c[1])):
                gate(call_id, strategy, kind, arg)
            seen.append(new)
        release()
        if s.purge_errors.enabled:
            protected = HARDCODED_PROTECTED_TOOLS | set(s.purge_errors.protected_tools)
            for c in seen:
                if (
                    c["status"] == "error"
                    and c["tool"] not in protected
                    and not path_protected(c)
                    and run.turn - c["turn"] >= s.purge_errors.turns
                    and c["id"] not in purged
                ):
                    purged.add(c["id"])  # proposed once, like the incremental index
                    gate(c["id"], "purgeErrors", "shrink", (FAILED_INPUT_PLACEHOLDER, ()))
        if mask.enabled and point:
            window = resolve_context_limit(model.get("id"), None)[0]
            thresholds = compute_thresholds(window)
            trigger = mask.trigger
            limit = (
                getattr(thresholds, trigger)
                if isinstance(trigger, str)
                else int(trigger * thresholds.window)
                if isinstance(trigger, float)
                else min(trigger, thresholds.hard)  # a count past the hard tier is the hard tier
            )
            stored = sum(message_tokens[:end])
            # Measured as the request sent it: after it was scheduled, so what it wrote counts.
            removed = sum(o.saved for o in run.owners.values()) if written is None else written(end, number)
            context = overhead + stored - removed
            candidates = [
                c
                for c in seen
                if completed(c)
                and c["tool"] not in mask_protected
                and not path_protected(c)
                and c["output"] not in (None, "")
                and not c["compacted"]
                and c["id"] not in masked
            ]
            size = {c["id"]: _output_tokens(c["output"]) for c in candidates}
            held = working_set(seen, candidates, size) if mask.keep_file_tokens else set()
            windowed = {
                c["id"] for c in candidates if mask.keep_tokens_of == "all" or shows_file(c["tool"], c["input"])
            }
            total = sum(tokens for call_id, tokens in size.items() if call_id not in held and call_id in windowed)
            latest = max((c["seq"] for c in seen), default=-1)
            # once reached, a window masks for good; a batch masks only where the context reached it
            started = started or (context >= limit and mask.mode == "window")
            if started or context >= limit:
                # A cycle of work begins at each user message and, with turnsEndAtChecks, after each check.
                checks = sorted(k["seq"] for k in seen if completed(k) and runs_check(k["tool"], k["input"]))
                checks = checks if mask.turns_end_at_checks else []
                current = run.turn + len(checks)
                edited = edited_if_cold(end, seen)
                for c in candidates:
                    tokens = size[c["id"]]
                    recent = current - (c["turn"] + bisect.bisect_left(checks, c["seq"])) < mask.keep_turns
                    if recent and shows_file(c["tool"], c["input"]) and path_of(c) in edited:
                        recent = False  # editedWhenCold: the next request's cache is cold
                    if latest - c["seq"] < mask.keep_calls or (recent and mask.keep_turns_of == "all"):
                        break
                    if c["id"] in held or (recent and shows_file(c["tool"], c["input"])):
                        continue
                    if c["id"] in windowed:
                        # at least keepTokens of these stay: one whose masking would leave less is passed over
                        if total - tokens < mask.keep_tokens:
                            continue
                        total -= tokens
                    masked.add(c["id"])
                    label = call_label(c["tool"], c["input"], directory)
                    gate(c["id"], "maskOldOutputs", "replace", mask_old_outputs.placeholder(label, tokens))
        release()
        previous = end
    return {key: owner.strategy for key, owner in run.owners.items()}
