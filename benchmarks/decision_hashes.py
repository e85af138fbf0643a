"""Digests of what the plugin decides and writes, request by request, on generated and recorded sessions.

Behaviour checks for changes meant to be pure refactors or speed-ups: run this on the code before
and after the change and compare the digests (``python -m benchmarks.decision_hashes [FILE...]``
prints one JSON object, session name -> digest). Each session is replayed in two ways:

- as a pluggy host does: a fresh copy of the history up to each request point, pruned in place
  through the hook; the digest covers every patch written (call, position, field, value);
- as the bridge does: one list kept and extended (the mirror), ``prepare`` with the client's patch
  token and the resend index, the wire form of the patches sent.

The ``compacting`` variants clear old outputs as OpenCode's compaction does, more of them as the
session goes on, so that decisions made on outputs the host later cleared are exercised (they
must be left out, the field going out as the host sent it). Each digest ends with the decisions
in force after the last request and after a from-scratch run over the whole history.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.equivalence import decision_map, from_scratch
from benchmarks.harness import working_copy
from dcp_plugin.adapters.bridge.wire import to_wire
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.model.continuity import Continuity
from dcp_plugin.replay.engine import plugin_host, request_points
from dcp_plugin.replay.sessionfile import load_session
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session

CLEARED = "[Old tool result content cleared]"
CONFIG = DcpConfig.model_validate({"strategies": {"supersedeWrites": {"enabled": True}}})


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


def compacted(messages: list[dict[str, Any]], upto: int) -> list[dict[str, Any]]:
    """A copy of ``messages`` whose completed tool outputs before index ``upto`` are cleared, every third one."""
    out = working_copy(messages)
    seen = 0
    for message in out[:upto]:
        for part in message["parts"]:
            state = part.get("state")
            if part.get("type") == "tool" and isinstance(state, dict) and state.get("status") == "completed":
                seen += 1
                if seen % 3 == 0:
                    state["output"] = CLEARED
                    state["time"] = {**(state.get("time") or {}), "compacted": 1}
    return out


def _points(messages: list[dict[str, Any]]) -> list[int]:
    return sorted({*request_points(messages), len(messages)})


def _host_copy(messages: list[dict[str, Any]], count: int, compacting: bool) -> list[dict[str, Any]]:
    if not compacting:
        return working_copy(messages[:count])
    return compacted(messages[:count], count // 2)


def pluggy_digest(messages: list[dict[str, Any]], directory: str, compacting: bool) -> str:
    """Every patch each request writes, through the hook on a fresh copy per request."""
    digest = hashlib.sha256()
    pm, runtime = plugin_host(directory, CONFIG)
    session_id = "hashes"
    for count in _points(messages):
        outgoing = _host_copy(messages, count, compacting)
        pm.hook.chat_messages_transform(input={"sessionID": session_id}, output={"messages": outgoing})
        sent = runtime.last_sent(session_id)
        if sent is None:
            digest.update(f"{count}:none\n".encode())
            continue
        rows = [
            (d.call_id, d.record.message_index, d.record.part_index, d.field, state.get(d.field))
            for d, state in sent.located(outgoing)
        ]
        # The written values must be where the patches say they are.
        for (_, mi, pi, field, value) in rows:
            assert outgoing[mi]["parts"][pi]["state"].get(field) == value
        digest.update(f"{count}:{sent.saved_tokens}:{sent.in_force}:{_json(rows)}\n".encode())
    view = runtime.view(session_id)
    final = decision_map(view.in_force) if view is not None else {}
    digest.update(_json(sorted(final.items())).encode())
    return digest.hexdigest()


def bridge_digest(messages: list[dict[str, Any]], directory: str, compacting: bool) -> str:
    """The wire patches of each request through ``prepare`` on one kept list, with the client's token."""
    digest = hashlib.sha256()
    _, runtime = plugin_host(directory, CONFIG)
    session_id = "hashes-bridge"
    mirror: list[dict[str, Any]] = []
    token: tuple[int, int] | None = None
    for count in _points(messages):
        changed_from: int | None = len(mirror) - 1 if mirror else None
        if compacting and count // 2 > 0:
            fresh = compacted(messages[:count], count // 2)
            first = next((i for i, (a, b) in enumerate(zip(mirror, fresh, strict=False)) if a != b), None)
            if first is not None:
                mirror[first:] = fresh[first:len(mirror)]
                changed_from = first if changed_from is None else min(first, changed_from)
            mirror.extend(fresh[len(mirror):])
        else:
            mirror.extend(working_copy(messages[len(mirror):count]))
        continuity = Continuity.resent(changed_from) if changed_from is not None else None
        outgoing = runtime.prepare(session_id, mirror, continuity=continuity, since=token)
        if outgoing is None:
            digest.update(f"{count}:none\n".encode())
            continue
        runtime.finish(outgoing, mirror)
        wire = to_wire(mirror, outgoing.patches.decisions)
        token = outgoing.token
        digest.update(f"{count}:{outgoing.incremental}:{outgoing.saved_tokens}:{_json(wire)}\n".encode())
    return digest.hexdigest()


def scratch_digest(messages: list[dict[str, Any]], directory: str) -> str:
    """The decisions in force after one request carrying the whole history to a fresh session."""
    state = from_scratch(messages, directory, CONFIG)
    return hashlib.sha256(_json(sorted(decision_map(state.in_force()).items())).encode()).hexdigest()


def sessions(files: list[Path]) -> Iterator[tuple[str, list[dict[str, Any]], str]]:
    """(name, messages, directory) of each session the digests cover: generated shapes, then the files given."""
    shapes = (("generated 1500", 1500, 1, False, False), ("busy 1500", 1500, 2, True, False), ("lsp 800", 800, 3, False, True))
    for name, size, seed, busy, lsp in shapes:
        yield name, generate_session(size, seed=seed, busy=busy, lsp=lsp)["messages"], DEFAULT_DIRECTORY
    for path in files:
        info, messages = load_session(path)
        directory = info.get("directory")
        yield path.name, messages, directory if isinstance(directory, str) and directory else DEFAULT_DIRECTORY


def digests(files: list[Path]) -> dict[str, str]:
    """Session/variant name -> digest."""
    out: dict[str, str] = {}
    for name, messages, directory in sessions(files):
        out[f"{name} scratch"] = scratch_digest(messages, directory)
        for compacting in (False, True):
            variant = " compacting" if compacting else ""
            out[f"{name} pluggy{variant}"] = pluggy_digest(messages, directory, compacting)
            out[f"{name} bridge{variant}"] = bridge_digest(messages, directory, compacting)
        print(name, file=sys.stderr, flush=True)
    return out


if __name__ == "__main__":
    print(json.dumps(digests([Path(a) for a in sys.argv[1:]]), indent=1, sort_keys=True))
