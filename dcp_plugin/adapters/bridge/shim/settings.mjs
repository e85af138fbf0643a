// settings.mjs: the plugin's settings, first found wins: plugin options, environment, defaults.
//
//   options.command / DCP_BRIDGE_COMMAND (JSON array): the whole command line of the child.
//   options.python  / DCP_PYTHON: interpreter for `-m dcp_plugin.adapters.bridge`; default the installed one.
//   options.timeoutMs / DCP_BRIDGE_TIMEOUT_MS: per transform request (default 5000).
//   options.commandTimeoutMs: per /dcp command and per call of the plugin's tools (default 15000).
//   options.toolsWaitMs: how long loading waits for the tool definitions (default 5000); a slower
//     bridge still registers them if its answer comes before OpenCode first lists its tools.
//   options.backoffMs (500), options.maxBackoffMs (30000), options.maxTimeouts (3).
//   options.env: extra environment variables for the child.
//   DCP_BRIDGE_DEBUG=1: also print the shim's log lines to stderr.

function envNumber(env, name) {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

export function resolveSettings(options, env, installedPython) {
  const opts = options && typeof options === "object" ? options : {};
  let command = Array.isArray(opts.command) ? opts.command.map(String) : undefined;
  if (!command && env.DCP_BRIDGE_COMMAND) {
    try {
      const parsed = JSON.parse(env.DCP_BRIDGE_COMMAND);
      if (Array.isArray(parsed) && parsed.length > 0) command = parsed.map(String);
    } catch {
      // A malformed override falls back to the default command; the log says so.
      command = undefined;
    }
  }
  const python = opts.python || env.DCP_PYTHON || installedPython;
  // Where the command came from: what the user must change when it cannot start.
  let source = "installed";
  if (command) source = Array.isArray(opts.command) ? "option command" : "DCP_BRIDGE_COMMAND";
  else if (opts.python) source = "option python";
  else if (env.DCP_PYTHON) source = "DCP_PYTHON";
  return {
    command: command || [python, "-m", "dcp_plugin.adapters.bridge"],
    source,
    timeoutMs: opts.timeoutMs || envNumber(env, "DCP_BRIDGE_TIMEOUT_MS") || 5000,
    commandTimeoutMs: opts.commandTimeoutMs || 15000,
    startupTimeoutMs: opts.startupTimeoutMs || 15000,
    toolsWaitMs: opts.toolsWaitMs || 5000,
    backoffMs: opts.backoffMs || 500,
    maxBackoffMs: opts.maxBackoffMs || 30000,
    maxTimeouts: opts.maxTimeouts || 3,
    env: opts.env && typeof opts.env === "object" ? opts.env : {},
    debug: Boolean(opts.debug || env.DCP_BRIDGE_DEBUG),
  };
}
