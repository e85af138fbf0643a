// notices.mjs: telling the user that the Python bridge cannot start, so pruning is off: logged at
// once, and shown once per OpenCode process as a toast at the first request (before one, the TUI
// may not listen yet).

export function unavailableText(failure) {
  return (
    `dcp: context pruning is off: its Python bridge could not start (${failure.reason}). ` +
    "Requests go to the model unpruned. Reinstall the plugin from the environment that has dcp_plugin: " +
    "`dcp opencode install --python /path/to/that/python` (add --global if it was installed globally). " +
    `Command that failed: ${failure.command}`
  );
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
