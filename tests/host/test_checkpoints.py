"""Checkpoints: a restarted host resumes a long session where the last process left it, or replays it when it must."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin import store as store_mod
from dcp_plugin.adapters.bridge.mirror import DEFAULT_IDLE_SECONDS
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host import checkpoint_policy as policy_mod
from dcp_plugin.host import checkpoints as checkpoints_mod
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.replay.engine import replay
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session
from dcp_plugin.store import SessionBatch, Store
from tests.support.paths import ROOT

SESSION = "ses_checkpoint"

EVERY = 40  # messages between checkpoints here (the real interval makes tests slow, not different)

Sent = list[tuple[str, str, Any]]


@pytest.fixture(autouse=True)
def _small_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy_mod, "EVERY_MESSAGES", EVERY)
    monkeypatch.setattr(checkpoints_mod, "GRACE_SECONDS", 0.0)


@pytest.fixture(scope="module")
def session() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = generate_session(260, seed=7, busy=True)["messages"]
    return messages


def points(messages: list[dict[str, Any]]) -> list[int]:
    """The requests a live host makes: one before each assistant message, holding every message before it."""
    return [i for i, m in enumerate(messages) if i and m["info"]["role"] == "assistant"]


def runtime(tmp_path: Path | None, config: DcpConfig | None = None) -> Runtime:
    store = Store(tmp_path / "dcp.sqlite3") if tmp_path is not None else None
    return Runtime(DEFAULT_DIRECTORY, config or DcpConfig(), store=store)


def send(rt: Runtime, messages: list[dict[str, Any]], count: int) -> Sent:
    """One request of the first ``count`` messages: what the plugin writes over which field of which call."""
    sent = messages[:count]
    outgoing = rt.prepare(SESSION, sent)
    assert outgoing is not None
    rt.finish(outgoing, sent)
    return sorted((d.call_id, d.field, repr(d.value)) for d, _ in outgoing.patches)


def run(rt: Runtime, messages: list[dict[str, Any]], counts: list[int]) -> list[Sent]:
    return [send(rt, messages, count) for count in counts]


def checkpoint_files(tmp_path: Path) -> list[Path]:
    folder = tmp_path / checkpoints_mod.FOLDER
    return sorted(folder.glob(f"*{checkpoints_mod.SUFFIX}")) if folder.is_dir() else []


def walked(rt: Runtime) -> int:
    """The messages the session's latest update read: a resumed session reads only those after its checkpoint."""
    held = rt._registry.find(SESSION)
    assert held is not None
    timeline = held.state.timeline
    return timeline.read - timeline.walked_from


def stopped_after(tmp_path: Path, messages: list[dict[str, Any]], counts: list[int], **kw: Any) -> None:
    """A host process that made these requests and exited, its checkpoints written."""
    first = runtime(tmp_path, **kw)
    run(first, messages, counts)
    first.wait_for_checkpoints()


def test_a_restarted_host_reads_only_the_messages_after_the_checkpoint(
    tmp_path: Path, session: list[dict[str, Any]]
) -> None:
    counts = points(session)
    stopped_after(tmp_path, session, counts)
    restarted = runtime(tmp_path)
    send(restarted, session, len(session))
    assert 0 < walked(restarted) <= EVERY


def test_a_session_shorter_than_the_interval_gets_no_checkpoint(tmp_path: Path, session: list[dict[str, Any]]) -> None:
    stopped_after(tmp_path, session, [c for c in points(session) if c < EVERY])
    assert checkpoint_files(tmp_path) == []


def test_checkpoints_false_writes_none(tmp_path: Path, session: list[dict[str, Any]]) -> None:
    stopped_after(tmp_path, session, points(session), config=DcpConfig.model_validate({"checkpoints": False}))
    assert checkpoint_files(tmp_path) == []


def test_checkpoints_false_reads_none(tmp_path: Path, session: list[dict[str, Any]]) -> None:
    stopped_after(tmp_path, session, points(session))
    restarted = runtime(tmp_path, DcpConfig.model_validate({"checkpoints": False}))
    send(restarted, session, len(session))
    assert walked(restarted) == len(session)


def test_a_checkpoint_file_is_private_to_its_user(tmp_path: Path, session: list[dict[str, Any]]) -> None:
    stopped_after(tmp_path, session, points(session))
    [path] = checkpoint_files(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_checkpoint_holds_no_tool_output_or_message_text(tmp_path: Path, session: list[dict[str, Any]]) -> None:
    stopped_after(tmp_path, session, points(session))
    [path] = checkpoint_files(tmp_path)
    payload = checkpoints_mod.zlib.decompress(path.read_bytes().split(b"\n", 2)[2])
    texts = [
        value
        for message in session
        for part in message["parts"]
        for value in (part.get("text"), (part.get("state") or {}).get("output"))
        if isinstance(value, str) and len(value) > 40
    ]
    assert texts and not [text for text in texts if text[:40].encode() in payload]


def test_a_checkpoint_written_under_another_config_is_not_used(
    tmp_path: Path, session: list[dict[str, Any]]
) -> None:
    stopped_after(tmp_path, session, points(session))
    other = DcpConfig.model_validate({"strategies": {"supersedeWrites": {"enabled": True}}})
    restarted = runtime(tmp_path, other)
    resumed = send(restarted, session, len(session))
    assert walked(restarted) == len(session)
    # From scratch with what the store knows (the plugin pruned this session live), without checkpoints.
    scratch = DcpConfig.model_validate({"strategies": {"supersedeWrites": {"enabled": True}}, "checkpoints": False})
    assert resumed == send(runtime(tmp_path, scratch), session, len(session))


def test_a_pin_made_after_the_checkpoint_makes_the_session_replay(
    tmp_path: Path, session: list[dict[str, Any]]
) -> None:
    stopped_after(tmp_path, session, points(session))
    first_call = next(p["callID"] for m in session for p in m["parts"] if p.get("type") == "tool")
    Store(tmp_path / "dcp.sqlite3").save([SessionBatch(SESSION, pins={first_call: True})])
    restarted = runtime(tmp_path)
    send(restarted, session, len(session))
    assert walked(restarted) == len(session)


def test_a_history_rewritten_while_no_host_ran_is_replayed(tmp_path: Path, session: list[dict[str, Any]]) -> None:
    counts = points(session)
    stopped_after(tmp_path, session, counts)
    # Same length, same first and last messages: only a middle message has another id now.
    rewritten = [dict(m) for m in session]
    middle = len(rewritten) // 2
    rewritten[middle] = {**rewritten[middle], "info": {**rewritten[middle]["info"], "id": "msg_rewritten"}}
    assert send(runtime(tmp_path), rewritten, len(rewritten)) == send(runtime(None), rewritten, len(rewritten))


def damage(path: Path) -> str:
    """Cut the checkpoint's payload in half; the key its header names."""
    magic, header, payload = path.read_bytes().split(b"\n", 2)
    path.write_bytes(b"\n".join((magic, header, payload[: len(payload) // 2])))
    key: str = checkpoints_mod.json.loads(header)["key"]
    return key


def test_a_damaged_checkpoint_is_removed(tmp_path: Path, session: list[dict[str, Any]]) -> None:
    stopped_after(tmp_path, session, points(session))
    [path] = checkpoint_files(tmp_path)
    key = damage(path)
    assert checkpoints_mod.Checkpoints(path.parent).load(SESSION, key) is None
    assert not path.exists()


def test_a_session_whose_checkpoint_is_damaged_is_replayed_with_a_warning(
    tmp_path: Path, session: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    stopped_after(tmp_path, session, points(session))
    [path] = checkpoint_files(tmp_path)
    damage(path)
    with caplog.at_level(logging.WARNING, logger="dcp_plugin"):
        restarted = runtime(tmp_path)
        resumed = send(restarted, session, len(session))
    assert walked(restarted) == len(session)
    assert resumed == send(runtime(None), session, len(session))
    assert "checkpoint" in caplog.text and "unreadable" in caplog.text


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="file ownership is a POSIX notion")
def test_a_checkpoint_others_may_write_is_not_loaded(
    tmp_path: Path, session: list[dict[str, Any]]
) -> None:
    stopped_after(tmp_path, session, points(session))
    [path] = checkpoint_files(tmp_path)
    path.chmod(0o666)
    restarted = runtime(tmp_path)
    send(restarted, session, len(session))
    assert walked(restarted) == len(session)


def test_dropping_a_long_session_checkpoints_its_newest_messages(
    tmp_path: Path, session: list[dict[str, Any]]
) -> None:
    counts = points(session)
    first = runtime(tmp_path)
    run(first, session, counts)
    first.drop(SESSION)
    first.wait_for_checkpoints()
    restarted = runtime(tmp_path)
    send(restarted, session, len(session))
    assert walked(restarted) == 1  # the newest message only: it may have grown since


def test_only_the_newest_checkpoints_are_kept(
    tmp_path: Path, session: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoints_mod, "MAX_FILES", 2)
    rt = runtime(tmp_path)
    for name in ("ses_a", "ses_b", "ses_c"):
        messages = [{**m, "info": {**m["info"], "sessionID": name}} for m in session]
        outgoing = rt.prepare(name, messages)
        assert outgoing is not None
        rt.finish(outgoing, messages)
        rt.wait_for_checkpoints()
    assert len(checkpoint_files(tmp_path)) == 2


def test_a_replay_writes_no_checkpoint_into_the_users_folder(session: list[dict[str, Any]]) -> None:
    data = store_mod.data_dir()
    data.mkdir(parents=True)  # the folder a host made: a pluggy host in this process would use it
    replay(session, DEFAULT_DIRECTORY, DcpConfig())
    assert not (data / checkpoints_mod.FOLDER).exists()


def last_checkpoint(counts: list[int]) -> int:
    """The request after which the latest checkpoint was taken (one every EVERY messages read)."""
    last = taken = 0
    for count in counts:
        if count - last >= EVERY:
            last = taken = count
    return taken


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(1, 10_000), busy=st.booleans(), cut=st.floats(0.35, 0.9), every_strategy=st.booleans())
def test_a_resumed_session_sends_what_the_process_that_wrote_the_checkpoint_would(
    seed: int, busy: bool, cut: float, every_strategy: bool, tmp_path_factory: Any
) -> None:
    tmp_path = tmp_path_factory.mktemp("ckpt")
    # Every strategy on: each one's state (the compiled classes among it) goes through the checkpoint.
    config = DcpConfig.model_validate({"strategies": {"supersedeWrites": {"enabled": every_strategy}}})
    messages: list[dict[str, Any]] = generate_session(140, seed=seed, busy=busy)["messages"]
    counts = points(messages)
    split = max(1, int(len(counts) * cut))
    first = runtime(tmp_path, config)
    for count in counts[:split]:
        send(first, messages, count)
        first.wait_for_checkpoints()  # each checkpoint holds the state right after its request
    taken = counts.index(last_checkpoint(counts[:split])) + 1
    # The writer, had it lived on past its checkpoint and seen the same requests as the resumed host:
    lived_on = run(runtime(None, config), messages, counts[:taken] + counts[split:])[taken:]
    assert run(runtime(tmp_path, config), messages, counts[split:]) == lived_on


def test_the_readme_states_the_interval_the_bound_and_the_idle_drop() -> None:
    text = (ROOT / "README.md").read_text()
    assert f"read {checkpoints_mod.EVERY_MESSAGES:,} messages since its last checkpoint" in text
    assert f"The newest {checkpoints_mod.MAX_FILES} are kept" in text
    assert DEFAULT_IDLE_SECONDS == 2 * 3600 and "dropped it after two hours idle" in text


def test_a_package_installed_without_sources_keeps_no_checkpoints(
    tmp_path: Path, session: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing would tell one installed version from the next: a checkpoint could outlive its code.
    monkeypatch.setattr(checkpoints_mod, "code_fingerprint", lambda: None)
    stopped_after(tmp_path, session, points(session))
    assert checkpoint_files(tmp_path) == []
