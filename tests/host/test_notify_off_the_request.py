"""R17: a pluggy host's notify never delays a request: routine news is delivered on a thread of its own, in order."""

from __future__ import annotations

import threading
from typing import Any

from dcp_plugin.host.hostspec import HostStartup
from dcp_plugin.host.runtime import Runtime, StaticConfig
from tests.support.helpers import PROJECT, call, hook_transform, make_config, user


def duplicate_reads() -> list[dict[str, Any]]:
    read = {"filePath": f"{PROJECT}/a.py"}
    return [user(), call("read", read), user(), call("read", read)]


def test_a_request_returns_while_the_hosts_notify_is_still_blocked() -> None:
    release = threading.Event()
    seen: list[str] = []

    def slow_notify(_session: str | None, text: str) -> None:
        release.wait(5)  # a toast service that hangs
        seen.append(text)

    runtime = Runtime(PROJECT, StaticConfig(make_config(pruneNotification="minimal")))
    runtime.startup(HostStartup.read({"directory": PROJECT, "notify": slow_notify}))
    messages = duplicate_reads()
    hook_transform(runtime, {}, {"messages": messages})  # returns although notify has not
    assert messages[1]["parts"][0]["state"]["output"].startswith("[dcp:")
    assert seen == []
    release.set()
    assert runtime.wait_for_notices()
    assert len(seen) == 1 and seen[0].startswith("dcp: pruned 1 tool call")


def test_news_reaches_the_host_in_the_order_it_was_made() -> None:
    seen: list[str] = []
    runtime = Runtime(PROJECT, StaticConfig(make_config(pruneNotification="minimal")))
    runtime.startup(HostStartup.read({"directory": PROJECT, "notify": lambda _s, text: seen.append(text)}))
    for n in range(5):
        runtime.notifier.news("s", f"news {n}")
    assert runtime.wait_for_notices()
    assert seen == [f"news {n}" for n in range(5)]


def test_a_warning_is_said_at_once_on_the_callers_thread() -> None:
    seen: list[tuple[str, str]] = []
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    runtime.startup(
        HostStartup.read({"directory": PROJECT, "notify": lambda _s, text: seen.append((threading.current_thread().name, text))})
    )
    runtime.notifier.warn("dcp: something is wrong")
    assert seen == [(threading.current_thread().name, "dcp: something is wrong")]


def test_news_the_host_fails_to_show_goes_to_stderr_and_the_next_still_arrives(capfd: Any) -> None:
    seen: list[str] = []

    def flaky(_session: str | None, text: str) -> None:
        if text == "first":
            raise OSError("toast service down")
        seen.append(text)

    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    runtime.startup(HostStartup.read({"directory": PROJECT, "notify": flaky}))
    runtime.notifier.news(None, "first")
    runtime.notifier.news(None, "second")
    assert runtime.wait_for_notices()
    assert seen == ["second"]
    assert "first" in capfd.readouterr().err

