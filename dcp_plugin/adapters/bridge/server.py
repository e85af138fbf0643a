"""The bridge server: answers the JS shim's JSON-lines requests with the plugin's patches."""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable
from typing import IO, Any

from dcp_plugin.adapters.bridge import protocol
from dcp_plugin.adapters.bridge.mirror import DEFAULT_IDLE_SECONDS, Mirror, Mirrors, Resync
from dcp_plugin.adapters.bridge.protocol import ProtocolError
from dcp_plugin.adapters.bridge.wire import to_wire
from dcp_plugin.commands.dispatch import Answer, answer
from dcp_plugin.host.hostspec import HostStartup
from dcp_plugin.host.persistence import USER_STORE
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.model.continuity import Continuity
from dcp_plugin.model.refs import model_ref

log = logging.getLogger("dcp_plugin.adapters.bridge")

Write = Callable[[str], None]
# A full resend of at least this many messages moves the heap out of the cyclic collector's
# sight (gc.freeze): the mirror holds JSON data without cycles, refcounting frees it, and
# otherwise every full collection rescans the whole history (tens of ms at 10,000 messages).
FREEZE_AFTER_MESSAGES = 1000


After = Callable[[], object]


TOKEN_DIGITS = 20  # digits of the largest 64-bit counter


def parse_token(token: Any) -> tuple[int, int] | None:
    """The (epoch, count) a client's patch token names; None for anything else."""
    if not isinstance(token, str):
        return None
    epoch, _, count = token.partition(":")
    # ASCII digits only (str.isdigit also takes "²", which int() refuses), and no more than a
    # counter ever has (int() refuses over 4,300 digits, and a token the bridge made has ~10).
    if not all(part.isascii() and part.isdigit() and len(part) <= TOKEN_DIGITS for part in (epoch, count)):
        return None
    return int(epoch), int(count)


class BridgeServer:
    """Serves many sessions over one line stream; every request gets exactly one reply line.

    Only the runtime's public API is used. A transform is answered first and its bookkeeping
    (notifications, the context snapshot, statistics) runs after the reply is written, so a
    slow disk never costs a request its pruning.
    """

    def __init__(
        self,
        write: Write,
        runtime: Runtime | None = None,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        *,
        commands: Answer = answer,
    ) -> None:
        self._write = write
        self.commands = commands  # the command layer `/dcp` is answered by (on top of the runtime)
        self._lock = threading.RLock()  # notify events and log events may come from other threads
        self.runtime = runtime if runtime is not None else Runtime(store=USER_STORE, create_global_config=True)
        # The bridge's notify writes one line to the JS side (a transform's news after its reply):
        # it cannot block a request, so the news keeps its place among the lines, on this thread.
        self.runtime.notifier.background = False
        self.mirrors = Mirrors(idle_seconds)
        self.freeze = False  # main() turns it on: only a process of its own may freeze its heap

    # -- output ------------------------------------------------------------------------------
    def emit(self, line: str) -> None:
        with self._lock:
            self._write(line + "\n")

    def notify(self, session_id: str | None, text: str) -> None:
        """The runtime's notify: a toast on the JS side."""
        self.emit(protocol.event_line("notify", sessionID=session_id, text=str(text)))

    # -- dispatch ----------------------------------------------------------------------------
    def handle_line(self, line: bytes | str) -> None:
        """Answer one request line, then run its follow-up work; never raises."""
        if not line.strip():
            return
        rid: int | str | None = None
        after: After | None = None
        try:
            request = protocol.parse_line(line)
            rid = protocol.request_id(request)
            op = protocol.op_of(request)
            reply, after = getattr(self, f"_op_{op}")(rid, request)
        except ProtocolError as exc:
            log.warning("dcp bridge: bad request (id %s): %s", rid, exc)
            reply = protocol.error_line(rid, str(exc))
        except Exception as exc:  # noqa: BLE001 - the server must outlive any request
            log.exception("dcp bridge: request %s failed", rid)
            reply = protocol.error_line(rid, f"internal error: {type(exc).__name__}: {exc}")
        self.emit(reply)
        if after is not None:
            try:
                after()
            except Exception:  # noqa: BLE001 - follow-up work must not take the server down
                log.exception("dcp bridge: follow-up of request %s failed", rid)
        for sid in self.mirrors.drop_idle():
            self.runtime.drop(sid)
            log.info("dcp bridge: dropped the idle session %s", sid)

    def serve(self, lines: Iterable[bytes | str]) -> None:
        """Answer every line until the input ends (OpenCode closes our stdin when it exits)."""
        for line in lines:
            self.handle_line(line)

    # -- ops ---------------------------------------------------------------------------------
    def _op_ping(self, rid: int | str | None, request: dict[str, Any]) -> tuple[str, After | None]:
        return protocol.ok_line(rid, sessions=len(self.mirrors.sessions)), None

    def _op_startup(self, rid: int | str | None, request: dict[str, Any]) -> tuple[str, After | None]:
        context = request.get("context") or {}
        if not isinstance(context, dict):
            raise ProtocolError(f'"context" must be an object, got {type(context).__name__}')
        self.runtime.startup(HostStartup.read({**context, "notify": self.notify}))
        return protocol.ok_line(rid), None

    def _op_close(self, rid: int | str | None, request: dict[str, Any]) -> tuple[str, After | None]:
        session_id = protocol.session_of(request)
        self.mirrors.drop(session_id)
        self.runtime.drop(session_id)
        return protocol.ok_line(rid), None

    def _sync(self, session_id: str, request: dict[str, Any], *, passed_on: bool = False) -> tuple[Mirror, Continuity]:
        """The session's mirror after applying the request's delta, and the continuity verdict the delta makes.

        The JS side resends in full when the history was rewritten (or it lost track of what we
        hold): a rewrite starts the session over, so the result equals a from-scratch run on the
        new list. ``passed_on``: the caller hands the verdict to the runtime, which starts over
        itself; otherwise (and when the delta fails after saying so) the session is reset here.
        """
        delta = protocol.delta_of(request)
        mirror = self.mirrors.get_or_create(session_id)
        try:
            verdict = mirror.apply(delta)
        except Resync as exc:
            log.info("dcp bridge: session %s needs a resync: %s", session_id, exc)
            if exc.verdict is not None and not exc.verdict.continues:
                self.runtime.reset(session_id)
            raise
        if not (passed_on or verdict.continues):
            self.runtime.reset(session_id)
        if self.freeze and len(delta.messages) >= FREEZE_AFTER_MESSAGES:
            gc.freeze()
        return mirror, verdict

    def _op_transform(self, rid: int | str | None, request: dict[str, Any]) -> tuple[str, After | None]:
        session_id = protocol.session_of(request)
        try:
            mirror, verdict = self._sync(session_id, request, passed_on=True)
        except Resync:
            return protocol.error_line(rid, protocol.RESYNC), None
        since = None if request.get("reset") else parse_token(request.get("patchToken"))
        messages = mirror.messages
        try:
            outgoing = self.runtime.prepare(
                session_id, messages, model=model_ref(request.get("model")), continuity=verdict, since=since
            )
        except Exception:  # noqa: BLE001 - fail open: the request goes out unpruned
            log.exception("dcp bridge: pruning failed for session %s; the request is sent unpruned", session_id)
            return protocol.patches_line(rid, []), None
        if outgoing is None:
            return protocol.patches_line(rid, []), None
        fragments = [protocol.patch_fragment(p) for p in to_wire(messages, outgoing.patches.decisions)]
        token = f"{outgoing.token[0]}:{outgoing.token[1]}"
        reply = protocol.patches_line(rid, fragments, incremental=outgoing.incremental, token=token)
        return reply, lambda: self.runtime.finish(outgoing, messages)

    def _held(self, session_id: str, request: dict[str, Any]) -> Mirror | None:
        """The session's mirror, synced with the request's delta when it carries one; None: ask for a resync."""
        if protocol.has_delta(request):
            try:
                mirror, _ = self._sync(session_id, request)
            except Resync:
                return None
            return mirror
        found = self.mirrors.get(session_id)
        if found is not None:
            found.touch()
        # None: dropped while idle (or never synced), and the JS side resends the session.
        return found

    def _op_tools(self, rid: int | str | None, request: dict[str, Any]) -> tuple[str, After | None]:
        tools = self.runtime.tool_definitions()
        return protocol.ok_line(rid, tools=tools, system=self.runtime.system_text() if tools else None), None

    def _op_tool(self, rid: int | str | None, request: dict[str, Any]) -> tuple[str, After | None]:
        session_id = protocol.session_of(request)
        name = request.get("name")
        call_id = request.get("callID")
        if not isinstance(name, str) or not (call_id is None or isinstance(call_id, str)):
            raise ProtocolError('"name" must be a string and "callID" a string or null')
        mirror = self._held(session_id, request)
        if mirror is None:
            return protocol.error_line(rid, protocol.RESYNC), None
        result = self.runtime.execute_tool(
            session_id, name, request.get("arguments"), mirror.messages, call_id=call_id, model=model_ref(request.get("model"))
        )
        if result is None:
            return protocol.error_line(rid, f'"{name}" is not a tool of this plugin'), None
        return protocol.ok_line(rid, **result.to_dict()), None

    def _op_command(self, rid: int | str | None, request: dict[str, Any]) -> tuple[str, After | None]:
        session_id = protocol.session_of(request)
        command = request.get("command")
        arguments = request.get("arguments", "")
        if not isinstance(command, str) or not isinstance(arguments, str):
            raise ProtocolError('"command" and "arguments" must be strings')
        mirror = self._held(session_id, request)
        if mirror is None:
            return protocol.error_line(rid, protocol.RESYNC), None
        try:
            # A new list: a command may reorder or extend what it is given, never our mirror.
            text = self.commands(
                self.runtime, command, arguments, session_id, list(mirror.messages), model_ref(request.get("model"))
            )
        except Exception as exc:  # noqa: BLE001 - answer the user instead of sending /dcp to the model
            log.exception("dcp bridge: /%s %s failed", command, arguments)
            text = f"dcp: /{command} {arguments} failed: {exc}".rstrip()
            return protocol.ok_line(rid, handled=True, text=text), None
        return protocol.ok_line(rid, handled=text is not None, text=text or ""), None


class EventLogHandler(logging.Handler):
    """Forwards warnings and errors to the JS side as log events (they land in OpenCode's log)."""

    def __init__(self, server: BridgeServer) -> None:
        super().__init__(logging.WARNING)
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                message += f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
            self.server.emit(protocol.event_line("log", level=record.levelname.lower(), message=message))
        except Exception:  # noqa: BLE001 - logging must never break a request
            self.handleError(record)


def protocol_stdout() -> IO[bytes]:
    """Take fd 1 for the protocol and point everything else that writes to stdout at stderr.

    A stray print, a C extension or a child process writing to fd 1 would corrupt the stream;
    after this they all land on stderr, and only the returned file writes protocol lines.
    """
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(protocol_fd, "wb")


def main(argv: list[str] | None = None) -> int:
    """`python -m dcp_plugin.adapters.bridge`: serve stdin until it closes."""
    level = os.environ.get("DCP_BRIDGE_LOG", "WARNING").upper()
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level, logging.WARNING),
        format="dcp-bridge %(levelname)s %(name)s: %(message)s",
    )
    out = protocol_stdout()

    def write(text: str) -> None:
        out.write(text.encode("utf-8"))
        out.flush()

    try:
        idle = float(os.environ.get("DCP_BRIDGE_IDLE_SECONDS", DEFAULT_IDLE_SECONDS))
    except ValueError:
        idle = DEFAULT_IDLE_SECONDS
    server = BridgeServer(write, idle_seconds=idle)
    server.freeze = True
    logging.getLogger("dcp_plugin").addHandler(EventLogHandler(server))
    try:
        server.serve(sys.stdin.buffer)
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    finally:
        try:
            out.close()
        except OSError:
            pass
    return 0
