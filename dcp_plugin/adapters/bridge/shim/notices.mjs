// notices.mjs: telling the user that the Python bridge cannot start, so pruning is off: logged at
// once, and shown once per OpenCode process as a toast at the first request (before one, the TUI
// may not listen yet); and that a started bridge crashed during a request.

// What to change so the bridge starts, by where its command came from.
const FIXES = {
  installed:
    "Reinstall the plugin from the environment that has dcp_plugin: " +
    "`dcp opencode install --python /path/to/that/python` (add --global if it was installed globally).",
  DCP_PYTHON:
    "The interpreter comes from DCP_PYTHON: point it at a Python that has dcp_plugin, or unset it to use " +
    "the one `dcp opencode install` recorded.",
  DCP_BRIDGE_COMMAND: "The command comes from DCP_BRIDGE_COMMAND: fix it, or unset it to use the installed one.",
  "option python": "The interpreter comes from the plugin's `python` option in opencode.json: fix or remove it.",
  "option command": "The command comes from the plugin's `command` option in opencode.json: fix or remove it.",
};

export function unavailableText(failure) {
  return (
    `dcp: context pruning is off: its Python bridge could not start (${failure.reason}). ` +
    `Requests go to the model unpruned. ${FIXES[failure.source] ?? FIXES.installed} ` +
    `Command that failed: ${failure.command}`
  );
}

export function crashText(crash) {
  return (
    `dcp: the Python bridge of context pruning stopped during a request (${crash.reason}); that request went ` +
    "to the model unpruned. It restarts on a later request; if this repeats, OpenCode's log has the details."
  );
}

// A crash during a request is logged each time and shown once per OpenCode process (like a failed start).
export function crashNotice(registry, log, toast) {
  return (crash) => {
    log("error", crashText(crash));
    if (registry.crashShown) return;
    registry.crashShown = true;
    toast(crashText(crash), "warning");
  };
}

export class StartFailureNotice {
  // `registry`: the copies' shared registry (copies.mjs), which says whether the toast was shown.
  constructor(registry, log, toast) {
    this.registry = registry;
    this.log = log;
    this.toast = toast;
    this.failure = null;
    this.requestSeen = false; // a request hook ran: a toast now reaches the user
  }

  // The bridge process could not start: `failure` is {command, reason}.
  failed(failure) {
    this.failure = failure;
    this.log("error", unavailableText(failure));
    this.announce();
  }

  // This copy served a request hook.
  request() {
    this.requestSeen = true;
    this.announce();
  }

  announce() {
    if (!this.failure || !this.requestSeen || this.registry.unavailableShown) return;
    this.registry.unavailableShown = true;
    this.toast(unavailableText(this.failure), "error");
  }
}
