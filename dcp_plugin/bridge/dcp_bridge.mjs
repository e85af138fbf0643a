// dcp_bridge.mjs: the OpenCode plugin that forwards OpenCode's hooks to the Python dcp bridge.
//
// Dependency-free ES module. OpenCode loads it from `.opencode/plugins/` (or a "plugin" entry in
// opencode.json) and calls the default export `async (ctx, options) => hooks`. Every export of
// this module must be a plugin function (OpenCode rejects any other export), so nothing else is
// exported; tests reach the internals through the non-enumerable `hooks[BRIDGE_HANDLE]`.
//
// ---------------------------------------------------------------------------------------------
// Protocol: newline-delimited JSON over the child's stdin/stdout, one object per line.
// The child is `<python> -m dcp_plugin.bridge`, started once and kept for the whole OpenCode
// process. Every request has an integer `id` (per child process, increasing); every reply
// echoes it. The child must write nothing but protocol lines to stdout.
//
// Requests (JS -> Python)
//   {"id":n,"op":"startup","context":{"directory":str,"worktree":str|null,"projectID":str|null}}
//       First line after every spawn. Reply {"id":n,"ok":true}.
//   {"id":n,"op":"transform","sessionID":str,"reset":bool,"base":int,"messages":[...],
//    "fingerprint":{"count":int,"firstID":str|null,"lastID":str|null},
//    "total":int,"model":{"providerID","modelID","limit"?:{"context","output"}}|null,
//    "patchToken":str|null}
//       One per model request. `messages` are OpenCode's `{info, parts}` objects from index
//       `base` to the end, so the full list is `known[:base] + messages` (`total` long).
//       `reset: true` (always with base 0) means: forget this session's messages, here is all.
//       `fingerprint` describes the prefix the child must already hold: `count` == base,
//       `firstID`/`lastID` the info.id of messages[0] and messages[base-1] (null if base == 0).
//       If the child's copy does not match, it answers {"id":n,"ok":false,"error":"resync"}
//       and the JS side resends everything with reset: true.
//       Reply {"id":n,"ok":true,"patches":[{"messageID","partID","field":"output"|"input",
//       "value"}], "incremental"?: bool, "patchToken"?: str}: each patch sets
//       `part.state[field] = value` on the tool part `partID` of message `messageID`. The
//       patches of a reply replace the set kept for the session, unless `incremental` is true:
//       then they are added to it. The kept set is re-applied on every request (OpenCode
//       rebuilds the list from storage each time) and dropped whenever a reset is sent.
//       `patchToken` names the kept set; the next non-reset request sends it back (null when
//       none), so the child can answer with only the patches the kept set lacks. A reply that
//       was lost (timeout) is never committed, so the token always describes what is kept.
//   {"id":n,"op":"command","sessionID":str,"command":"dcp","arguments":str,
//    ...optionally the same "reset","base","messages","fingerprint","total" as transform}
//       A `/dcp ...` slash command. The message fields are present only when this session has
//       not been synced by a transform yet (the JS side then fetches the stored messages).
//       Reply {"id":n,"ok":true,"handled":bool,"text":str}. A child that no longer holds the
//       session (it drops sessions idle for hours) answers "resync" to a command without
//       messages; the JS side then fetches and sends them in full.
//   {"id":n,"op":"ping"} and {"id":n,"op":"close","sessionID":str} (drop the session's copy)
//       are understood by the Python bridge; this shim does not send them.
// Errors: {"id":n,"ok":false,"error":str} for any request.
// Events (Python -> JS, no id): {"event":"notify","sessionID":str,"text":str} shows `text` to
//   the user (a toast in the TUI); {"event":"log","level":str,"message":str} goes to OpenCode's log.
//
// Failure policy (fail open): if the child is missing, crashed, answers an error or is slower
// than the timeout, the request goes out unpruned. A dead child is restarted on a later request,
// after a backoff that doubles on each failure (reset by any successful reply); a child that
// times out `maxTimeouts` times in a row is killed and restarted the same way.
//
// Settings, first found wins: plugin options (second argument), environment, defaults.
//   options.command / DCP_BRIDGE_COMMAND (JSON array): the whole command line of the child.
//   options.python  / DCP_PYTHON: interpreter for `-m dcp_plugin.bridge`; default INSTALLED_PYTHON.
//   options.timeoutMs / DCP_BRIDGE_TIMEOUT_MS: per transform request (default 5000).
//   options.commandTimeoutMs: per /dcp command (default 15000).
//   options.backoffMs (500), options.maxBackoffMs (30000), options.maxTimeouts (3).
//   options.env: extra environment variables for the child.
//   DCP_BRIDGE_DEBUG=1: also print the shim's log lines to stderr.
// ---------------------------------------------------------------------------------------------

import { spawn } from "node:child_process";

// `dcp opencode install` rewrites this line to the interpreter that installed the package.
const INSTALLED_PYTHON = "python3";

const COMMAND_NAME = "dcp";
const BRIDGE_HANDLE = "__dcpBridge";
const PATCH_FIELDS = new Set(["output", "input"]);
const STDERR_LINES_KEPT = 20;
// Thrown from command.execute.before: OpenCode 1.18 has no "handled" flag, so throwing is the
// only way to keep a handled command from being sent to the model (see tests/e2e/FINDINGS.md).
const HANDLED_MESSAGE = "dcp: /dcp was answered by the dcp plugin (not an error; this stops OpenCode from sending it to the model)";

function envNumber(env, name) {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

function resolveSettings(options, env) {
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
  const python = opts.python || env.DCP_PYTHON || INSTALLED_PYTHON;
  return {
    command: command || [python, "-m", "dcp_plugin.bridge"],
    timeoutMs: opts.timeoutMs || envNumber(env, "DCP_BRIDGE_TIMEOUT_MS") || 5000,
    commandTimeoutMs: opts.commandTimeoutMs || 15000,
    startupTimeoutMs: opts.startupTimeoutMs || 15000,
    backoffMs: opts.backoffMs || 500,
    maxBackoffMs: opts.maxBackoffMs || 30000,
    maxTimeouts: opts.maxTimeouts || 3,
    env: opts.env && typeof opts.env === "object" ? opts.env : {},
    debug: Boolean(opts.debug || env.DCP_BRIDGE_DEBUG),
  };
}

// Identity of one message for change detection: id, part count, and each tool part's status,
// so a part that finished or was added after we sent the message counts as a rewrite.
function messageKey(message) {
  const parts = Array.isArray(message?.parts) ? message.parts : [];
  let key = `${message?.info?.id ?? "?"}:${parts.length}`;
  for (const part of parts) {
    if (part && part.type === "tool") key += part.state?.status?.[0] ?? "-";
  }
  return key;
}

function sessionOf(messages) {
  for (const m of messages) {
    const sid = m?.info?.sessionID;
    if (sid) return sid;
  }
  return undefined;
}

function modelOf(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const info = messages[i]?.info;
    if (info?.role === "user" && info.model?.providerID) {
      return { providerID: info.model.providerID, modelID: info.model.modelID };
    }
  }
  return null;
}

function prefixFingerprint(messages, base) {
  return {
    count: base,
    firstID: base > 0 ? messages[0]?.info?.id ?? null : null,
    lastID: base > 0 ? messages[base - 1]?.info?.id ?? null : null,
  };
}

// Sets part.state[field] = value for every patch whose message and tool part exist; returns
// how many were applied. Matches by id, so stale patches are skipped, never misapplied.
function applyPatches(messages, patches) {
  if (!patches || patches.length === 0) return 0;
  const byMessage = new Map(); // messageID -> patches: one pass over the history, not one per patch
  for (const patch of patches) {
    if (!patch || !PATCH_FIELDS.has(patch.field)) continue;
    const list = byMessage.get(patch.messageID);
    if (list) list.push(patch);
    else byMessage.set(patch.messageID, [patch]);
  }
  let applied = 0;
  let remaining = byMessage.size;
  for (let i = messages.length - 1; i >= 0 && remaining > 0; i--) {
    const message = messages[i];
    const list = byMessage.get(message?.info?.id);
    if (!list || !Array.isArray(message.parts)) continue;
    remaining--;
    for (const patch of list) {
      const part = message.parts.find((p) => p && p.id === patch.partID);
      if (!part || !part.state || typeof part.state !== "object") continue;
      part.state[patch.field] = patch.value;
      applied++;
    }
  }
  return applied;
}

// Signals a child only if it really started: after a failed spawn (e.g. ENOENT) Node can keep a
// handle whose pid is 0 for a moment, and kill(0) would signal our whole process group, host
// included.
function killChild(child, signal) {
  if (!child || !Number.isInteger(child.pid) || child.pid <= 0) return;
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    child.kill(signal);
  } catch {
    // already gone
  }
}

class BridgeError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind; // "down" | "timeout" | "remote" | "crash"
  }
}

// One long-lived child process speaking the protocol, restarted with backoff when it dies.
class BridgeProcess {
  constructor(settings, context, log, onEvent) {
    this.settings = settings;
    this.context = context;
    this.log = log;
    this.onEvent = onEvent;
    this.child = null;
    this.generation = 0; // bumps on each spawn: session state from an older child is void
    this.nextId = 1;
    this.pending = new Map();
    this.buffer = "";
    this.stderrTail = [];
    this.backoffMs = settings.backoffMs;
    this.nextStartAt = 0;
    this.consecutiveTimeouts = 0;
    this.stopped = false;
    this.stats = { spawns: 0, crashes: 0, timeouts: 0, requests: 0 };
  }

  get alive() {
    return this.child !== null;
  }

  // Spawns the child unless it runs, is backing off, or was stopped; returns whether it runs.
  ensureStarted() {
    if (this.child) return true;
    if (this.stopped || Date.now() < this.nextStartAt) return false;
    const [cmd, ...args] = this.settings.command;
    let child;
    try {
      child = spawn(cmd, args, {
        cwd: this.context.directory || undefined,
        env: { ...process.env, ...this.settings.env, PYTHONUNBUFFERED: "1" },
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (err) {
      this.markDead(`could not start ${cmd}: ${err?.message ?? err}`);
      return false;
    }
    this.child = child;
    this.generation++;
    this.nextId = 1;
    this.buffer = "";
    this.stderrTail = [];
    this.stats.spawns++;
    const generation = this.generation;
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => this.onStdout(chunk));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      for (const line of chunk.split("\n")) {
        if (!line) continue;
        this.stderrTail.push(line);
        if (this.stderrTail.length > STDERR_LINES_KEPT) this.stderrTail.shift();
      }
    });
    child.stdin.on("error", () => {}); // EPIPE after a crash is reported by "exit" instead
    child.on("error", (err) => {
      if (this.generation === generation) this.markDead(`bridge process error: ${err?.message ?? err}`);
    });
    child.on("exit", (code, signal) => {
      if (this.generation === generation && this.child === child) {
        const tail = this.stderrTail.length ? `; last stderr: ${this.stderrTail.join(" | ")}` : "";
        this.markDead(`bridge exited (code ${code}, signal ${signal})${tail}`);
      }
    });
    // An idle child must not keep OpenCode (or a test runner) alive; it sees stdin close on
    // exit. While requests are pending it is referenced again (see holdLoop).
    this.holdLoop(false);
    this.log("info", `started bridge: ${this.settings.command.join(" ")}`);
    const startup = { directory: this.context.directory ?? null, worktree: this.context.worktree ?? null, projectID: this.context.projectID ?? null };
    this.request({ op: "startup", context: startup }, this.settings.startupTimeoutMs).catch((err) => {
      this.log("warn", `bridge startup failed: ${err.message}`);
    });
    return true;
  }

  holdLoop(hold) {
    const child = this.child;
    if (!child) return;
    const method = hold ? "ref" : "unref";
    child[method]?.();
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.[method]?.();
  }

  settle(id) {
    const entry = this.pending.get(id);
    if (!entry) return undefined;
    this.pending.delete(id);
    clearTimeout(entry.timer);
    if (this.pending.size === 0) this.holdLoop(false);
    return entry;
  }

  markDead(reason) {
    const child = this.child;
    this.child = null;
    this.stats.crashes++;
    this.nextStartAt = Date.now() + this.backoffMs;
    this.log("warn", `${reason}; retrying in ${this.backoffMs} ms`);
    this.backoffMs = Math.min(this.backoffMs * 2, this.settings.maxBackoffMs);
    for (const [, entry] of this.pending) {
      clearTimeout(entry.timer);
      entry.reject(new BridgeError("crash", reason));
    }
    this.pending.clear();
    killChild(child, "SIGKILL");
  }

  onStdout(chunk) {
    this.buffer += chunk;
    let newline;
    while ((newline = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, newline).trim();
      this.buffer = this.buffer.slice(newline + 1);
      if (line) this.onLine(line);
    }
  }

  onLine(line) {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      this.log("warn", `ignored a non-JSON line from the bridge: ${line.slice(0, 200)}`);
      return;
    }
    if (!msg || typeof msg !== "object") return;
    if (msg.event) {
      this.onEvent(msg);
      return;
    }
    const entry = this.settle(msg.id);
    if (!entry) return; // a reply after its timeout: the request already went out unpruned
    this.consecutiveTimeouts = 0;
    this.backoffMs = this.settings.backoffMs;
    if (msg.ok === false) entry.reject(new BridgeError("remote", String(msg.error ?? "unknown error")));
    else entry.resolve(msg);
  }

  // Sends one request; resolves with the reply, rejects with a BridgeError (never hangs).
  request(body, timeoutMs) {
    if (!this.child) return Promise.reject(new BridgeError("down", "bridge is not running"));
    const id = this.nextId++;
    const child = this.child;
    this.stats.requests++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.settle(id)) return;
        this.stats.timeouts++;
        this.consecutiveTimeouts++;
        reject(new BridgeError("timeout", `bridge did not answer ${body.op} within ${timeoutMs} ms`));
        if (this.consecutiveTimeouts >= this.settings.maxTimeouts && this.child === child) {
          this.consecutiveTimeouts = 0;
          this.markDead(`bridge timed out ${this.settings.maxTimeouts} times in a row`);
        }
      }, timeoutMs);
      if (this.pending.size === 0) this.holdLoop(true);
      this.pending.set(id, { resolve, reject, timer });
      try {
        child.stdin.write(JSON.stringify({ id, ...body }) + "\n");
      } catch (err) {
        this.settle(id);
        reject(new BridgeError("down", `could not write to the bridge: ${err?.message ?? err}`));
      }
    });
  }

  stop() {
    this.stopped = true;
    const child = this.child;
    this.child = null;
    for (const [, entry] of this.pending) {
      clearTimeout(entry.timer);
      entry.reject(new BridgeError("down", "bridge stopped"));
    }
    this.pending.clear();
    if (child) {
      try {
        child.stdin.end();
      } catch {
        // already closed
      }
      killChild(child, "SIGTERM");
    }
  }
}

// Per-session sync state: what the current child holds, so only new messages are sent.
class SessionSync {
  constructor() {
    this.sessions = new Map(); // sessionID -> { generation, keys: string[], patches: [] }
    this.queues = new Map(); // sessionID -> tail promise, so one session's requests run in order
  }

  // The delta to send for `messages`, given what the child `generation` already holds.
  plan(sessionID, messages, generation) {
    const keys = messages.map(messageKey);
    const known = this.sessions.get(sessionID);
    const full = { reset: true, base: 0, keys, token: null };
    if (!known || known.generation !== generation) return full;
    const sent = known.keys;
    if (sent.length > keys.length) return full;
    for (let i = 0; i < sent.length; i++) {
      if (sent[i] !== keys[i]) return full;
    }
    return { reset: false, base: sent.length, keys, token: known.token ?? null };
  }

  commit(sessionID, generation, keys, reply, reset) {
    const previous = this.sessions.get(sessionID);
    const keep = previous && !reset && previous.generation === generation ? previous.patches : [];
    const patches = Array.isArray(reply.patches) ? reply.patches : [];
    const merged = reply.incremental ? keep.concat(patches) : patches;
    const token = typeof reply.patchToken === "string" ? reply.patchToken : null;
    this.sessions.set(sessionID, { generation, keys, patches: merged, token });
    return merged;
  }

  patchesOf(sessionID, generation) {
    const known = this.sessions.get(sessionID);
    return known && known.generation === generation ? known.patches : [];
  }

  forget(sessionID) {
    this.sessions.delete(sessionID);
  }

  // Runs `task` after the session's previous task settles.
  serialize(sessionID, task) {
    const previous = this.queues.get(sessionID) || Promise.resolve();
    const next = previous.then(task, task);
    const tail = next.catch(() => {});
    this.queues.set(sessionID, tail);
    tail.then(() => {
      if (this.queues.get(sessionID) === tail) this.queues.delete(sessionID);
    });
    return next;
  }
}

function makeLogger(client, debug) {
  return (level, message) => {
    if (debug) process.stderr.write(`[dcp-bridge] ${level}: ${message}\n`);
    try {
      const result = client?.app?.log?.({ body: { service: "dcp", level, message } });
      if (result && typeof result.catch === "function") result.catch(() => {});
    } catch {
      // logging must never break the host
    }
  };
}

async function fetchSessionMessages(client, sessionID) {
  const result = await client.session.messages({ path: { id: sessionID } });
  const data = result && typeof result === "object" && "data" in result ? result.data : result;
  return Array.isArray(data) ? data : [];
}

export default async function DcpBridgePlugin(ctx, options) {
  const settings = resolveSettings(options, process.env);
  const client = ctx?.client;
  const log = makeLogger(client, settings.debug);
  const sync = new SessionSync();
  const models = new Map(); // sessionID -> model seen in chat.params (has the context limit)

  const onEvent = (event) => {
    if (event.event === "notify" && typeof event.text === "string") {
      try {
        const shown = client?.tui?.showToast?.({ body: { message: event.text, variant: "info" } });
        if (shown && typeof shown.catch === "function") shown.catch(() => {});
      } catch {
        // a host without a TUI just logs it
      }
      log("info", event.text);
    } else if (event.event === "log") {
      log(String(event.level || "info"), String(event.message ?? ""));
    }
  };

  const context = { directory: ctx?.directory, worktree: ctx?.worktree, projectID: ctx?.project?.id };
  const bridge = new BridgeProcess(settings, context, log, onEvent);
  bridge.ensureStarted();

  // Sends the session's messages (delta or full) with `extra` fields; retries once in full when
  // the child asks for a resync. Returns the reply and the patches to apply.
  async function syncAndSend(op, sessionID, messages, extra, timeoutMs) {
    if (!bridge.ensureStarted()) throw new BridgeError("down", "bridge is down (waiting to restart)");
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 0; attempt < 2; attempt++) {
      const generation = bridge.generation;
      const plan = attempt === 0 ? sync.plan(sessionID, messages, generation) : { reset: true, base: 0, keys: messages.map(messageKey), token: null };
      const body = {
        op,
        sessionID,
        ...extra,
        reset: plan.reset,
        base: plan.base,
        messages: plan.base === 0 ? messages : messages.slice(plan.base),
        fingerprint: prefixFingerprint(messages, plan.base),
        total: messages.length,
        patchToken: plan.token,
      };
      try {
        const reply = await bridge.request(body, Math.max(1, deadline - Date.now()));
        const patches = sync.commit(sessionID, generation, plan.keys, reply, plan.reset);
        return { reply, patches };
      } catch (err) {
        if (err instanceof BridgeError && err.kind === "remote" && err.message === "resync" && attempt === 0) {
          sync.forget(sessionID);
          continue;
        }
        // Unknown child state for this session: the next request starts it over in full.
        if (!(err instanceof BridgeError) || err.kind !== "timeout") sync.forget(sessionID);
        throw err;
      }
    }
    throw new BridgeError("remote", "bridge asked for a resync twice");
  }

  const hooks = {
    // Registers /dcp unless the user defined their own command with that name.
    config: async (config) => {
      try {
        if (!config || typeof config !== "object") return;
        config.command = config.command || {};
        if (!config.command[COMMAND_NAME]) {
          config.command[COMMAND_NAME] = {
            template: "/dcp $ARGUMENTS",
            description: "Dynamic context pruning: context, stats, sweep (answered by the dcp plugin)",
          };
        }
      } catch (err) {
        log("warn", `could not register /${COMMAND_NAME}: ${err?.message ?? err}`);
      }
    },

    "chat.params": async (input) => {
      try {
        const model = input?.model;
        if (input?.sessionID && model) {
          models.set(input.sessionID, {
            providerID: model.providerID ?? input.provider?.info?.id ?? null,
            modelID: model.id ?? model.modelID ?? null,
            ...(model.limit ? { limit: { context: model.limit.context, output: model.limit.output } } : {}),
          });
        }
      } catch {
        // model info is only a hint for the bridge
      }
    },

    "experimental.chat.messages.transform": async (input, output) => {
      try {
        const messages = output?.messages;
        if (!Array.isArray(messages) || messages.length === 0) return;
        const sessionID = input?.sessionID || sessionOf(messages);
        if (!sessionID) return;
        await sync.serialize(sessionID, async () => {
          try {
            const model = models.get(sessionID) || modelOf(messages);
            const { patches } = await syncAndSend("transform", sessionID, messages, { model }, settings.timeoutMs);
            applyPatches(messages, patches);
          } catch (err) {
            log("warn", `request for ${sessionID} sent unpruned: ${err?.message ?? err}`);
          }
        });
      } catch (err) {
        log("error", `transform failed, request sent unpruned: ${err?.message ?? err}`);
      }
    },

    "command.execute.before": async (input, output) => {
      if (input?.command !== COMMAND_NAME) return;
      const sessionID = input.sessionID;
      let text;
      let handled = true;
      try {
        const reply = await sync.serialize(sessionID, async () => {
          const extra = { command: COMMAND_NAME, arguments: String(input.arguments ?? "") };
          const known = sync.sessions.get(sessionID);
          if (known && known.generation === bridge.generation) {
            if (!bridge.ensureStarted()) throw new BridgeError("down", "bridge is down (waiting to restart)");
            try {
              return await bridge.request({ op: "command", sessionID, ...extra }, settings.commandTimeoutMs);
            } catch (err) {
              // The child dropped the session (idle): fall through and send it in full.
              if (!(err instanceof BridgeError && err.kind === "remote" && err.message === "resync")) throw err;
              sync.forget(sessionID);
            }
          }
          // Not synced by a transform yet (e.g. the first thing in a resumed session).
          const messages = await fetchSessionMessages(client, sessionID);
          return (await syncAndSend("command", sessionID, messages, extra, settings.commandTimeoutMs)).reply;
        });
        handled = reply.handled !== false;
        text = String(reply.text ?? "");
      } catch (err) {
        text = `dcp: the pruning bridge is unavailable (${err?.message ?? err}). Pruning is off until it restarts.`;
      }
      if (!handled) return;
      try {
        // noReply stores the reply without running the model; ignored keeps it out of the context.
        await client.session.prompt({
          path: { id: sessionID },
          body: { noReply: true, parts: [{ type: "text", text, ignored: true }] },
        });
      } catch (err) {
        log("warn", `could not show the /dcp reply: ${err?.message ?? err}`);
      }
      throw new Error(HANDLED_MESSAGE);
    },
  };

  Object.defineProperty(hooks, BRIDGE_HANDLE, {
    enumerable: false,
    value: { bridge, sync, settings, stop: () => bridge.stop() },
  });
  return hooks;
}
