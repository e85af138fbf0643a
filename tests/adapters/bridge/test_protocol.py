"""The bridge server in-process: deltas, resyncs, malformed requests, many sessions, commands, fail-open."""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin.adapters.bridge.mirror import Mirrors
from dcp_plugin.adapters.bridge.server import EventLogHandler
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER, FAILED_INPUT_PLACEHOLDER
from dcp_plugin.replay.simulate import generate_session
from tests.support.bridge_helpers import Harness, patched_parts, reference_patches, transform_request
from tests.support.helpers import PROJECT, assistant, call, make_config, named, tool_part, user

READ_A = {"filePath": f"{PROJECT}/a.txt"}


def read_a(session: str) -> dict[str, Any]:
    return assistant(tool_part("read", dict(READ_A)), session=session)


def dup_session(session: str = "ses_a") -> list[dict[str, Any]]:
    """A user message and two identical reads: the first read's output is obsolete."""
    return [user(session=session), read_a(session), read_a(session)]


def part_id(message: dict[str, Any]) -> str:
    return message["parts"][0]["id"]


# -- transform round trips ------------------------------------------------------------------


def test_startup_is_acknowledged():
    h = Harness()
    assert h.send({"id": 1, "op": "startup", "context": {"directory": PROJECT}}) == {"id": 1, "ok": True}


def test_a_duplicate_read_gets_an_output_patch_addressed_by_position_and_ids():
    messages = dup_session()
    reply = Harness().transform("ses_a", messages)
    [patch] = reply["patches"]
    assert patch == {
        "messageIndex": 1,
        "partIndex": 0,
        "messageID": messages[1]["info"]["id"],
        "partID": part_id(messages[1]),
        "callID": messages[1]["parts"][0]["callID"],
        "field": "output",
        "value": named(DUPLICATE_PLACEHOLDER, messages[1]),
        "expect": {"length": 400, "head": "x" * 32, "tail": "x" * 32},  # the output it replaces (PROTOCOL.md)
    }


def test_a_whole_output_patch_names_the_output_it_was_made_for_in_utf16_units():
    messages = dup_session()
    for message in messages[1:]:
        message["parts"][0]["state"]["output"] = "😀" + "é" * 300 + "end"
    [patch] = Harness().transform("ses_a", messages)["patches"]
    assert patch["expect"] == {"length": 2 + 300 + 3, "head": "😀" + "é" * 31, "tail": "é" * 29 + "end"}


def test_the_reply_echoes_the_request_id():
    h = Harness()
    assert h.send(transform_request(41, "ses_a", dup_session()))["id"] == 41


def test_a_delta_extends_what_the_server_holds():
    messages = dup_session()
    h = Harness()
    h.transform("ses_a", messages[:2])
    reply = h.transform("ses_a", messages, base=2)
    assert patched_parts(reply) == {(part_id(messages[1]), "output"): named(DUPLICATE_PLACEHOLDER, messages[1])}


def test_an_empty_delta_answers_the_same_patches_again():
    messages = dup_session()
    h = Harness()
    first = h.transform("ses_a", messages)
    again = h.transform("ses_a", messages, base=3)
    assert again["patches"] == first["patches"]


def test_a_delta_from_a_shorter_base_replaces_the_tail():
    # After a timed-out reply the shim still believes the server holds the older, shorter prefix.
    messages = dup_session()
    h = Harness()
    h.transform("ses_a", messages[:2])
    h.transform("ses_a", messages, base=2)
    reply = h.transform("ses_a", messages, base=2)
    assert patched_parts(reply) == reference_patches(messages)


def test_the_mirror_keeps_the_original_content():
    messages = dup_session()
    h = Harness()
    h.transform("ses_a", messages)
    held = h.server.mirrors.get("ses_a").messages
    assert held[1]["parts"][0]["state"]["output"] == messages[1]["parts"][0]["state"]["output"]


def test_a_failed_call_old_enough_gets_an_input_patch():
    command = "python -c 'print(1)' " + "--verbose " * 20
    failed = call("bash", {"command": command}, status="error", error="exit status 1")
    messages = [user(), failed, user(), user(), user(), user()]
    [patch] = Harness().transform("ses_test", messages)["patches"]
    assert (patch["field"], patch["value"]) == ("input", {"command": named(FAILED_INPUT_PLACEHOLDER, failed)})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(min_value=1, max_value=119), max_size=8))
def test_deltas_of_any_size_give_the_from_scratch_answer(cuts):
    messages = generate_session(120, seed=3)["messages"]
    h = Harness()
    base = 0
    for cut in sorted(set(cuts)) + [len(messages)]:
        reply = h.transform("ses_sim", messages[:cut], base=base)
        assert patched_parts(reply) == reference_patches(messages[:cut])
        base = cut


# -- rewritten history and resync -----------------------------------------------------------


def test_a_base_past_what_the_server_holds_asks_for_a_resync():
    messages = dup_session()
    h = Harness()
    h.transform("ses_a", messages[:1])
    assert h.transform("ses_a", messages, base=2) == {"id": h._next_id, "ok": False, "error": "resync"}


def test_a_delta_for_an_unknown_session_asks_for_a_resync():
    assert Harness().transform("ses_a", dup_session(), base=2)["error"] == "resync"


def test_a_changed_first_message_asks_for_a_resync():
    messages = dup_session()
    h = Harness()
    h.transform("ses_a", messages[:2])
    compacted = [user(session="ses_a"), *messages[1:]]
    assert h.transform("ses_a", compacted, base=2)["error"] == "resync"


def test_a_changed_last_message_of_the_prefix_asks_for_a_resync():
    messages = dup_session()
    h = Harness()
    h.transform("ses_a", messages[:2])
    replaced = [messages[0], read_a("ses_a"), messages[2]]
    assert h.transform("ses_a", replaced, base=2)["error"] == "resync"


def test_a_wrong_total_asks_for_a_resync():
    request = transform_request(7, "ses_a", dup_session())
    request["total"] = 5
    assert Harness().send(request)["error"] == "resync"


def test_a_full_resend_after_a_resync_is_answered():
    messages = dup_session()
    h = Harness()
    h.transform("ses_a", messages, base=2)
    assert patched_parts(h.transform("ses_a", messages)) == reference_patches(messages)


def test_an_undone_duplicate_brings_the_older_read_back():
    messages = dup_session()
    h = Harness()
    h.transform("ses_a", messages)
    assert h.transform("ses_a", messages[:2], reset=True)["patches"] == []


def test_a_rewritten_middle_gives_the_from_scratch_answer():
    # Same ids and length, but the middle read now targets another file: only a reset can tell.
    messages = dup_session()
    h = Harness()
    h.transform("ses_a", messages)
    rewritten = copy.deepcopy(messages)
    rewritten[2]["parts"][0]["state"]["input"] = {"filePath": f"{PROJECT}/b.txt"}
    assert patched_parts(h.transform("ses_a", rewritten, reset=True)) == reference_patches(rewritten) == {}


# -- malformed requests ---------------------------------------------------------------------


def test_bad_json_gets_an_error_without_an_id():
    reply = Harness().send_raw("{not json")
    assert (reply["id"], reply["ok"], reply["error"].startswith("request is not valid JSON")) == (None, False, True)


def test_a_json_value_that_is_not_an_object_gets_an_error():
    assert Harness().send_raw("[1, 2]")["error"] == "request must be a JSON object, got list"


def test_bytes_that_are_not_utf8_get_an_error():
    assert Harness().send_raw(b'{"id": 1, "op": "ping", "x": "\xff"}')["error"].startswith("request is not UTF-8")


def test_an_unknown_op_gets_an_error_with_the_id():
    reply = Harness().send({"id": 9, "op": "explode"})
    assert (reply["id"], reply["ok"], reply["error"].startswith('unknown op "explode"')) == (9, False, True)


def test_a_missing_op_gets_an_error_with_the_id():
    assert Harness().send({"id": 9}) == {"id": 9, "ok": False, "error": 'request has no "op" string'}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("messages", "nope", '"messages" must be a list, got str'),
        ("messages", [{"parts": 3}], '"messages"[0] must be an object {info, parts} with a "parts" list'),
        ("base", -1, '"base" must be a non-negative integer, got -1'),
        ("base", "2", "\"base\" must be a non-negative integer, got '2'"),
        ("reset", "yes", "\"reset\" must be true or false, got 'yes'"),
        ("sessionID", 5, '"sessionID" must be a non-empty string'),
        ("fingerprint", [], '"fingerprint" must be an object, got list'),
        ("total", None, '"total" must be a non-negative integer, got None'),
    ],
)
def test_a_field_of_the_wrong_type_gets_an_error_naming_it(field, value, message):
    request = transform_request(3, "ses_a", dup_session(), base=0, reset=False)
    request[field] = value
    assert Harness().send(request) == {"id": 3, "ok": False, "error": message}


def test_the_server_keeps_answering_after_malformed_requests():
    h = Harness()
    for junk in ("{", "null", '{"id":1,"op":1}', '{"id":2,"op":"transform"}'):
        h.send_raw(junk)
    assert patched_parts(h.transform("ses_a", dup_session())) != {}


def test_warnings_are_forwarded_as_log_events():
    h = Harness()
    logger = logging.getLogger("dcp_plugin.test_bridge_forwarding")
    handler = EventLogHandler(h.server)
    logger.addHandler(handler)
    try:
        logger.warning("dcp: look at %s", "this")
        logger.info("not forwarded")
    finally:
        logger.removeHandler(handler)
    assert h.events() == [{"event": "log", "level": "warning", "message": "dcp: look at this"}]


def test_blank_lines_are_ignored():
    h = Harness()
    h.server.handle_line("   \n")
    assert h.lines == []


# -- many sessions --------------------------------------------------------------------------


def test_interleaved_sessions_are_kept_apart():
    a, b = dup_session("ses_a"), dup_session("ses_b")
    h = Harness()
    h.transform("ses_a", a[:2])
    h.transform("ses_b", b[:1])
    reply_b = h.transform("ses_b", b, base=1)
    reply_a = h.transform("ses_a", a, base=2)
    assert (patched_parts(reply_a), patched_parts(reply_b)) == (reference_patches(a), reference_patches(b))


def test_a_resync_in_one_session_leaves_the_others_alone():
    a, b = dup_session("ses_a"), dup_session("ses_b")
    h = Harness()
    h.transform("ses_a", a)
    h.transform("ses_b", b[:2])
    stale = transform_request(h.rid(), "ses_a", a, base=3)
    stale["base"] = 7
    assert h.send(stale)["error"] == "resync"
    assert patched_parts(h.transform("ses_b", b, base=2)) == reference_patches(b)


def test_a_hundred_sessions_each_get_their_own_patches():
    h = Harness()
    sessions = {f"ses_{i}": dup_session(f"ses_{i}") for i in range(100)}
    replies = {sid: h.transform(sid, messages) for sid, messages in sessions.items()}
    assert all(patched_parts(replies[sid]) == reference_patches(m) for sid, m in sessions.items())


def test_close_drops_the_session_copy():
    messages = dup_session()
    h = Harness()
    h.transform("ses_a", messages)
    assert h.send({"id": 5, "op": "close", "sessionID": "ses_a"}) == {"id": 5, "ok": True}
    assert h.transform("ses_a", messages, base=3)["error"] == "resync"


def test_idle_sessions_are_dropped():
    mirrors = Mirrors(idle_seconds=10)
    mirrors.get_or_create("old").last_used = 0.0
    mirrors.get_or_create("new").last_used = 95.0
    assert (mirrors.drop_idle(now=100.0), list(mirrors.sessions)) == (["old"], ["new"])


def test_a_session_idle_past_the_limit_must_be_resent_in_full():
    messages = dup_session()
    h = Harness(idle_seconds=0)
    h.transform("ses_a", messages)
    assert h.transform("ses_a", messages, base=3)["error"] == "resync"


def test_ping_counts_the_sessions_held():
    h = Harness()
    h.transform("ses_a", dup_session())
    assert h.send({"id": 2, "op": "ping"}) == {"id": 2, "ok": True, "sessions": 1}


# -- commands -------------------------------------------------------------------------------


class FakeCommands:
    """A command layer whose /dcp answers how many messages it was given (the bridge's part only)."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.seen: list[list[dict[str, Any]]] = []

    def __call__(self, runtime: Runtime, command: str, arguments: str, session_id: str, messages: Any, model: Any) -> str | None:
        self.seen.append(messages)
        if self.fail:
            raise ValueError("boom")
        if arguments == "pass":
            return None
        return f"{arguments}: {len(messages)} messages"


def command_request(rid: int, session: str, arguments: str, messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {"id": rid, "op": "command", "sessionID": session, "command": "dcp", "arguments": arguments}
    if messages is not None:
        request.update({k: v for k, v in transform_request(rid, session, messages).items() if k not in ("id", "op", "model")})
    return request


def test_a_command_uses_the_messages_held_for_the_session():
    h = Harness(commands=FakeCommands())
    h.transform("ses_a", dup_session())
    assert h.send(command_request(8, "ses_a", "context")) == {"id": 8, "ok": True, "handled": True, "text": "context: 3 messages"}


def test_a_command_with_messages_syncs_the_session_first():
    h = Harness(commands=FakeCommands())
    assert h.send(command_request(8, "ses_a", "stats", dup_session()))["text"] == "stats: 3 messages"


def test_a_command_for_a_session_not_held_asks_for_a_resync():
    h = Harness(commands=FakeCommands())
    assert h.send(command_request(8, "ses_a", "context")) == {"id": 8, "ok": False, "error": "resync"}


def test_a_command_the_plugin_does_not_handle_says_so():
    h = Harness(commands=FakeCommands())
    assert h.send(command_request(8, "ses_a", "pass", dup_session())) == {"id": 8, "ok": True, "handled": False, "text": ""}


def test_a_failing_command_is_answered_with_the_error_not_sent_to_the_model():
    h = Harness(commands=FakeCommands(fail=True))
    reply = h.send(command_request(8, "ses_a", "context", dup_session()))
    assert (reply["handled"], reply["text"]) == (True, "dcp: /dcp context failed: boom")


def test_a_command_cannot_change_the_messages_held():
    commands = FakeCommands()
    h = Harness(commands=commands)
    h.transform("ses_a", dup_session())
    h.send(command_request(8, "ses_a", "context"))
    commands.seen[0].clear()
    assert len(h.server.mirrors.get("ses_a").messages) == 3


def test_a_command_with_arguments_of_the_wrong_type_gets_an_error():
    request = command_request(8, "ses_a", "context")
    request["arguments"] = ["context"]
    assert Harness().send(request) == {"id": 8, "ok": False, "error": '"command" and "arguments" must be strings'}


# -- notify and fail-open -------------------------------------------------------------------


def test_a_notification_becomes_a_notify_event():
    h = Harness()
    h.send({"id": 1, "op": "startup", "context": {"directory": PROJECT}})
    h.runtime.notifier("ses_a", "dcp: something to say")
    assert h.events() == [{"event": "notify", "sessionID": "ses_a", "text": "dcp: something to say"}]


class BrokenRuntime(Runtime):
    def __init__(self) -> None:
        super().__init__(PROJECT, StaticConfig(make_config()))
        self.broken = True

    def prepare(self, *args: Any, **kwargs: Any) -> Any:
        if self.broken:
            raise RuntimeError("plugin bug")
        return super().prepare(*args, **kwargs)


def test_a_plugin_exception_answers_no_patches():
    h = Harness(runtime=BrokenRuntime())
    assert h.transform("ses_a", dup_session()) == {"id": h._next_id, "ok": True, "patches": []}


def test_pruning_resumes_after_a_plugin_exception():
    runtime = BrokenRuntime()
    h = Harness(runtime=runtime)
    messages = dup_session()
    h.transform("ses_a", messages[:2])
    runtime.broken = False
    assert patched_parts(h.transform("ses_a", messages, base=2)) == reference_patches(messages)


def test_a_disabled_plugin_answers_no_patches():
    assert Harness(config=make_config(enabled=False)).transform("ses_a", dup_session())["patches"] == []


def test_replies_are_single_lines_of_json():
    h = Harness()
    h.transform("ses_a", dup_session())
    h.send_raw("{")
    assert all("\n" not in line[:-1] and json.loads(line) for line in h.lines)


# -- incremental patches (patch tokens) -----------------------------------------------------


def with_token(request: dict[str, Any], token: str | None) -> dict[str, Any]:
    return {**request, "patchToken": token}


def test_a_reply_carries_a_patch_token_and_the_full_set():
    reply = Harness().transform("ses_a", dup_session())
    assert (len(reply["patches"]), "incremental" in reply, isinstance(reply["patchToken"], str)) == (1, False, True)


def test_a_request_with_the_last_token_gets_only_new_patches():
    messages = [*dup_session(), read_a("ses_a")]
    h = Harness()
    first = h.transform("ses_a", messages[:3])
    reply = h.send(with_token(transform_request(h.rid(), "ses_a", messages, base=3), first["patchToken"]))
    assert (reply["incremental"], [p["partID"] for p in reply["patches"]]) == (True, [part_id(messages[2])])


def test_nothing_new_answers_an_empty_incremental_reply():
    messages = dup_session()
    h = Harness()
    first = h.transform("ses_a", messages)
    reply = h.send(with_token(transform_request(h.rid(), "ses_a", messages, base=3), first["patchToken"]))
    assert (reply["incremental"], reply["patches"], reply["patchToken"]) == (True, [], first["patchToken"])


def test_an_unknown_token_gets_the_full_set():
    messages = dup_session()
    h = Harness()
    h.transform("ses_a", messages)
    reply = h.send(with_token(transform_request(h.rid(), "ses_a", messages, base=3), "999999:0"))
    assert ("incremental" in reply, len(reply["patches"])) == (False, 1)


def test_a_reset_ignores_the_token():
    messages = dup_session()
    h = Harness()
    first = h.transform("ses_a", messages)
    reply = h.send(with_token(transform_request(h.rid(), "ses_a", messages), first["patchToken"]))
    assert ("incremental" in reply, len(reply["patches"])) == (False, 1)


def test_a_token_from_before_a_lost_reply_gets_what_that_reply_carried():
    messages = [*dup_session(), read_a("ses_a")]
    h = Harness()
    kept = h.transform("ses_a", messages[:2])  # no patches yet
    h.send(with_token(transform_request(h.rid(), "ses_a", messages[:3], base=2), kept["patchToken"]))  # lost
    reply = h.send(with_token(transform_request(h.rid(), "ses_a", messages, base=2), kept["patchToken"]))
    assert [p["partID"] for p in reply["patches"]] == [part_id(messages[1]), part_id(messages[2])]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.integers(min_value=1, max_value=15), st.booleans()), min_size=1, max_size=12))
def test_a_client_keeping_patches_by_token_always_holds_the_from_scratch_set(steps):
    # Each step adds messages; a lost reply (a timeout) is never committed, as in the shim.
    messages = generate_session(150, seed=5)["messages"]
    h = Harness()
    kept: list[dict[str, Any]] = []
    token, base, total = None, 0, 0
    for grow, lost in steps:
        total = min(len(messages), total + grow)
        reply = h.send(with_token(transform_request(h.rid(), "ses_sim", messages[:total], base=base), token))
        if lost:
            continue
        kept = kept + reply["patches"] if reply.get("incremental") else reply["patches"]
        token, base = reply.get("patchToken"), total
        assert {(p["partID"], p["field"]): p["value"] for p in kept} == reference_patches(messages[:total])
        assert len(kept) == len({(p["partID"], p["field"]) for p in kept})


# -- the context budget reaches the OpenCode user -----------------------------------------------------


def test_crossing_a_budget_threshold_becomes_one_toast_after_the_reply() -> None:
    h = Harness()
    h.send({"id": 1, "op": "startup", "context": {"directory": PROJECT}})
    small_window = {"providerID": "p", "modelID": "m", "limit": {"context": 300}}
    messages = dup_session()
    request = transform_request(2, "ses_a", messages)
    request["model"] = small_window
    h.send(request)
    toasts = [e for e in h.events() if e["event"] == "notify" and "Context" in e["text"]]
    assert len(toasts) == 1 and "of 300 tokens" in toasts[0]["text"]
    # The reply line comes first: bookkeeping (and so the toast) runs after it.
    kinds = ["event" if "event" in json.loads(line) else "reply" for line in h.lines]
    assert kinds.index("reply", 1) < kinds.index("event")
    again = transform_request(3, "ses_a", messages, base=len(messages))
    again["model"] = small_window
    h.send(again)
    assert len([e for e in h.events() if e["event"] == "notify" and "Context" in e["text"]]) == 1


def test_a_full_resend_of_what_the_bridge_already_holds_does_not_start_over() -> None:
    # The shim resends in full after a request timed out; the bridge had finished that work.
    h = Harness()
    messages = dup_session()
    h.transform("ses_a", messages)
    h.transform("ses_a", messages, reset=True)
    assert h.runtime.view("ses_a").restarts == 0  # type: ignore[union-attr]


def test_a_full_resend_of_a_rewritten_history_starts_over() -> None:
    h = Harness()
    h.transform("ses_a", dup_session())
    h.transform("ses_a", dup_session(), reset=True)  # new ids: an undo, a compaction
    assert h.runtime.view("ses_a").restarts == 1  # type: ignore[union-attr]
