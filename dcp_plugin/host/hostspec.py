"""The host contract: pluggy hookspecs an opencode-style agent host calls.

A host adopts every plugin of this kind with a handful of lines::

    pm = pluggy.PluginManager("agent_host")
    pm.add_hookspecs(dcp_plugin.host.hostspec)
    pm.load_setuptools_entrypoints("agent_host")
    pm.hook.host_startup(context={"directory": project_dir})
    pm.hook.chat_messages_transform(input={}, output={"messages": outgoing})

A host that lets plugins give the model tools also calls :func:`tool_definitions` once,
:func:`tool_execute` for each call of those tools and :func:`system_prompt_transform` before
every request; a host that never calls them keeps working as before.

Every hook takes keyword arguments only (pluggy's rule) and must never raise into the
host: a plugin that fails leaves the outgoing data exactly as it was.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pluggy

from dcp_plugin.host.notifier import Notify
from dcp_plugin.model.messages import Message
from dcp_plugin.model.refs import ModelRef, model_ref

PROJECT_NAME = "agent_host"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

Summarize = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True, slots=True)
class HostStartup:
    """What :func:`host_startup`'s ``context`` says, as plain values; a key of the wrong type counts as absent."""

    directory: str | None = None
    worktree: str | None = None
    notify: Notify | None = None
    summarize: Summarize | None = None
    model: ModelRef | None = None
    persist: bool = True

    @classmethod
    def read(cls, context: Mapping[str, Any]) -> HostStartup:
        """The values of a ``host_startup`` context (the bridge's startup request carries the same keys)."""
        directory = context.get("directory")
        worktree = context.get("worktree")
        notify = context.get("notify")
        summarize = context.get("summarize")
        return cls(
            str(directory) if isinstance(directory, (str, os.PathLike)) and str(directory) else None,
            worktree if isinstance(worktree, str) else None,
            notify if callable(notify) else None,
            summarize if callable(summarize) else None,
            model_ref(context.get("model")),
            context.get("persist") is not False,
        )


@hookspec
def host_startup(context: dict[str, Any]) -> None:
    """Called once when the host starts, before any request.

    ``context`` keys (all optional but ``directory``):

    - ``directory`` (str): the project directory. Relative tool paths are resolved
      against it and project config (``.opencode/dcp.jsonc``) is read from it.
      A host that never calls this hook gets the process's working directory.
    - ``notify`` (callable ``(session_id: str | None, text: str) -> None``): shows a
      short message to the user. Without it, plugin messages go to stderr. Routine news (what
      a request pruned, a context budget tier reached) is handed to it on a thread of the
      plugin's own, in order, so a slow notify never delays a request; warnings (a config or
      database problem, rare) are said at once, on the thread of the hook that met them.
    - ``summarize`` (callable ``(request: dict) -> dict``): a side query to the model,
      used by the context budget's compaction controller. ``request`` carries
      ``messages`` (the history in ``{info, parts}`` shape), ``system`` (str),
      ``max_output_tokens`` (int) and ``thinking`` (bool, always False); the host
      answers ``{"text": str, "finish_reason": "stop" | "length" | ...,
      "usage": {...}}``.
    - ``model`` (dict, OpenCode's shape ``{"id": ..., "providerID": ..., "limit":
      {"context": int}}``): the default model, whose context limit wins over the
      plugin's own table.
    - ``persist`` (bool, default True): False for a host that replays or demonstrates
      sessions; nothing is then saved (no decisions, sweeps or statistics).
    """


@hookspec
def chat_messages_transform(input: dict[str, Any], output: dict[str, Any]) -> None:
    """Called right before every model request with the conversation about to be sent.

    ``output["messages"]`` is the list of ``{"info": ..., "parts": [...]}`` messages,
    oldest first, in OpenCode's shape. Plugins mutate it *in place*; the host sends
    what is there afterwards and must hand a fresh copy built from its storage on
    the next request (the stored history is never the object mutated here).

    ``input`` may carry ``sessionID`` (else it is read from the messages'
    ``info.sessionID``), ``model`` (``{"id": ..., "providerID": ..., "limit":
    {"context": int}}``, the model this request goes to) and ``unchangedBefore``: an
    int ``n``, the host's word that its first ``n`` messages are, in content, those of
    its previous request of this session (new objects are fine; a cleared, compacted or
    edited tool state is a change). Placeholders there are then not checked again
    against their tool states, which makes a request of a long session about twice as
    fast; without it every placeholder is checked on every request.

    Messages should carry ``info.id`` and tool parts ``callID`` (OpenCode's do): the
    plugin recognizes a rewritten history (an undo, a compaction) by them and then
    recomputes everything; without ids, only a list that got shorter (or whose last
    message lost parts) is recognized as rewritten.
    """


@hookspec
def command_execute_before(input: dict[str, Any], output: dict[str, Any]) -> None:
    """Called when the user runs a slash command, before it reaches the model.

    ``input``: ``{"command": "dcp", "arguments": "<sub> <args>", "sessionID": str,
    "messages": [...], "model": {...}}`` where ``messages`` is the session's current
    history in the same shape as for :func:`chat_messages_transform` and ``model``
    (optional) the session's model as for that hook.

    A plugin that handles the command sets ``output["handled"] = True`` and appends
    its reply to ``output["parts"]`` as ``{"type": "text", "text": ...}`` parts; the
    host then shows the reply and does not send the command to the model. Commands
    that are not for a plugin are left untouched.

    The dcp plugin answers ``command == "dcp"`` (``arguments``: ``context``, ``stats``,
    ``sweep [N]``, ``help``; anything else gets the help with the unknown name). It
    syncs the session from ``input["messages"]`` first, so the replies are current even
    before the first request of a restored session; it never mutates those messages
    (``/dcp sweep`` takes effect from the next request). With ``commands.enabled: false``
    in dcp.jsonc it leaves every command to the host.
    """


@hookspec(firstresult=True)
def context_snapshot(session_id: str) -> dict[str, Any] | None:
    """How full a session's context window is, as of its latest request.

    Returns None when the plugin has not seen the session (or is disabled), else a dict:
    ``estimated_input_tokens``, ``provider_reported_tokens`` (or None), ``context_limit``,
    ``ratio`` (0-1+), ``severity`` (``normal`` | ``info`` | ``warning`` | ``danger`` |
    ``critical``), ``tier`` (``below-warn`` | ``warn`` | ``auto`` | ``hard``),
    ``thresholds`` (``warn``, ``auto``, ``hard``, ``effective_window``, ``window``),
    ``tip`` (``context-warn`` | ``context-high`` | ``context-critical`` or None) and
    ``tip_text`` (one sentence to show, or None). A host calls it whenever it wants to
    show the budget; it is cheap and never raises. A ``session_id`` that is not a non-empty
    string names no session: None (and a warning in the log).
    """


@hookspec(firstresult=True)
def compaction_advice(session_id: str, messages: list[Message]) -> dict[str, Any] | None:
    """Whether to compact a session before its next request, called by hosts that compact.

    ``messages`` is the history about to be sent. When the latest snapshot reached the
    ``auto`` threshold and ``contextBudget.compaction.enabled`` is true, the plugin runs the
    host's ``summarize`` side query (see :func:`host_startup`) and answers
    ``{"status": "compacted" | "forced", "summary": str, "forced": bool, ...}``: the host
    replaces the history before the summary point with ``summary``. Every other
    ``status`` (``none``, ``disabled``, ``skipped-breaker-open``, ``unsupported``,
    ``failed``, ``discarded-truncated``) means "send the request as it is". Returns None
    when the plugin knows nothing of the session (or ``session_id`` is not a non-empty string).
    Never raises.
    """


@hookspec
def tool_definitions() -> list[dict[str, Any]]:  # type: ignore[empty-body]
    """The tools a plugin offers the model; a host that calls this gives them to the model.

    Returns a list of ``{"name": str, "description": str, "parameters": dict}``, where
    ``parameters`` is a JSON Schema object (``{"type": "object", "properties": ..., "required":
    [...]}``), as the providers' tool definitions take it. Every plugin answers; the host joins
    the lists. Call it once (at startup) and offer the same definitions on every request: tool
    definitions come first in a request, so changing them makes the provider process the whole
    prompt again.

    The dcp plugin offers ``discard``, ``extract`` and ``restore`` (those ``tools`` in dcp.jsonc
    turns on); once asked, it also appends the list of prunable outputs to a tool result now and
    then, and treats calls of these tools found in a history as its own.
    """


@hookspec(firstresult=True)
def tool_execute(
    name: str, arguments: dict[str, Any], session_id: str, messages: list[Message], call_id: str | None
) -> dict[str, Any] | None:
    """Run a call of a tool a plugin offered; the first plugin that knows ``name`` answers.

    ``arguments`` is what the model passed (parsed JSON), ``session_id`` the session the call
    belongs to, ``messages`` the session's history *as stored* (never the pruned copy) in the
    shape of :func:`chat_messages_transform`, up to the request the model answered with this
    call (it may also hold the message with the call itself), and ``call_id`` the call's id
    (``callID`` of its tool part) or None.

    Returns ``{"output": str, "error": bool, "title": str}``: ``output`` is the call's result for
    the model; ``error`` true means the call was refused (nothing changed) and the host should
    record it as a failed call where it can (OpenCode: an error state; Anthropic: ``is_error``),
    else send the text as it is; ``title`` is a short label for the user. None when ``name`` is
    not this plugin's tool. Never raises.

    The dcp plugin's ``discard`` and ``extract`` prune the outputs named by id from the next
    request on (when writing the placeholder pays for the prompt cache); ``restore`` answers
    with the original content of pruned outputs. The host stores the call and its result in the
    history like any other tool call: that stored call is what makes the prune, so a restart or
    a replay of the history makes the same ones.
    """


@hookspec
def system_prompt_transform(input: dict[str, Any], output: dict[str, Any]) -> None:
    """Called before every model request with the system prompt about to be sent.

    ``input``: ``{"sessionID": str, "model": {...}}`` (either may be missing); ``output``:
    ``{"system": [str, ...]}``, the system prompt's parts, which plugins may append to in place.

    The dcp plugin appends one text while it offers tools (after :func:`tool_definitions`):
    what the tools are for, and that text in ``[dcp: ...]`` brackets is the plugin's, never
    the user's. The text is the same on every request, so the cached prompt stays valid.
    """
