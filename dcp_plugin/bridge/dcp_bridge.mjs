// dcp_bridge.mjs: the OpenCode plugin that forwards OpenCode's hooks to the Python dcp bridge.
//
// Dependency-free ES module. OpenCode loads it from `.opencode/plugins/` (or a "plugin" entry in
// opencode.json) and calls the default export `async (ctx, options) => hooks`. Every export of
// this module must be a plugin function (OpenCode rejects any other export), so nothing else is
// exported; tests reach the internals through the non-enumerable `hooks[BRIDGE_HANDLE]`.
//
// The wire protocol (requests, replies, patches, events, what is resent when, failure policy)
// is specified once, in PROTOCOL.md beside this file; the Python side cites the same file.
//
// Settings, first found wins: plugin options (second argument), environment, defaults.
//   options.command / DCP_BRIDGE_COMMAND (JSON array): the whole command line of the child.
//   options.python  / DCP_PYTHON: interpreter for `-m dcp_plugin.bridge`; default INSTALLED_PYTHON.
//   options.timeoutMs / DCP_BRIDGE_TIMEOUT_MS: per transform request (default 5000).
//   options.commandTimeoutMs: per /dcp command and per call of the plugin's tools (default 15000).
//   options.toolsWaitMs: how long loading waits for the tool definitions (default 5000); a slower
//     bridge still registers them if its answer comes before OpenCode first lists its tools.
//   options.backoffMs (500), options.maxBackoffMs (30000), options.maxTimeouts (3).
//   options.env: extra environment variables for the child.
//   DCP_BRIDGE_DEBUG=1: also print the shim's log lines to stderr.

import { spawn } from "node:child_process";

// `dcp opencode install` rewrites this line to the interpreter that installed the package.
const INSTALLED_PYTHON = "python3";

const COMMAND_NAME = "dcp";
const BRIDGE_HANDLE = "__dcpBridge";
const PATCH_FIELDS = new Set(["output", "input"]);
const STDERR_LINES_KEPT = 20;
// How many older messages each request re-checks besides the watched ones (PROTOCOL.md).
const ROLLING_CHECK = 32;
// At most this many messages with unfinished tool parts are re-checked on every request; older
// ones (a tool OpenCode never finished) are left to the rolling check.
const MAX_WATCHED = 64;
// Waits for a child that had its stdin closed before it is sent SIGTERM (it flushes on exit).
const EXIT_GRACE_MS = 5000;
const PROVIDERS_TIMEOUT_MS = 2000;
// Shared by every copy of this plugin in the process: a project and a global install are two
// module instances, the same file listed twice is one module called twice.
const REGISTRY_KEY = Symbol.for("dcp_plugin.bridge.registry");
// Thrown from command.execute.before: OpenCode 1.18 has no "handled" flag, so throwing is the
// only way to keep a handled command from being sent to the model (see tests/e2e/FINDINGS.md).
// This process is `opencode run --command ...`, whose output is a terminal's or a pipe's, not a screen's.
const RUN_COMMAND_LINE = process.argv[2] === "run" && process.argv.includes("--command");
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
  // Where the command came from: what the user must change when it cannot start.
  let source = "installed";
  if (command) source = Array.isArray(opts.command) ? "option command" : "DCP_BRIDGE_COMMAND";
  else if (opts.python) source = "option python";
  else if (env.DCP_PYTHON) source = "DCP_PYTHON";
  return {
    command: command || [python, "-m", "dcp_plugin.bridge"],
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

function idOf(message) {
  return message?.info?.id;
}

function statusCode(status) {
  switch (status) {
    case "completed":
      return "c";
    case "error":
      return "e";
    case "running":
      return "r";
    case "pending":
      return "p";
    default:
      return "?";
  }
}

// Tool statuses that can still change: the message holding one is re-checked every request.
const UNFINISHED = /[pr?]/;

// What is remembered of a sent message to notice that it changed (PROTOCOL.md): its part count,
// and per tool part its status and whether OpenCode marked its output compacted.
function messageKey(message) {
  const parts = message?.parts;
  if (!Array.isArray(parts)) return "-";
  let key = String(parts.length);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part === null || typeof part !== "object" || part.type !== "tool") continue;
    const state = part.state;
    if (state === null || typeof state !== "object") {
      key += "?";
      continue;
    }
    key += statusCode(state.status);
    if (state.time?.compacted) key += "k";
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

// The model of the latest user message (OpenCode records one on each), else null. Stops at that
// message: a list without models costs the last turn, not the whole history.
function modelOf(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const info = messages[i]?.info;
    if (info?.role !== "user") continue;
    return info.model?.providerID ? { providerID: info.model.providerID, modelID: info.model.modelID ?? null } : null;
  }
  return null;
}

function prefixFingerprint(messages, base) {
  return {
    count: base,
    firstID: base > 0 ? idOf(messages[0]) ?? null : null,
    lastID: base > 0 ? idOf(messages[base - 1]) ?? null : null,
  };
}

// The key a patch is kept under: a later patch for the same target replaces the kept one.
// null for a patch this shim cannot apply (no valid position, unknown field, nothing to set).
function patchKey(patch) {
  if (patch === null || typeof patch !== "object" || !PATCH_FIELDS.has(patch.field)) return null;
  const { messageIndex, partIndex } = patch;
  if (!Number.isInteger(messageIndex) || messageIndex < 0 || !Number.isInteger(partIndex) || partIndex < 0) return null;
  if (!Array.isArray(patch.cuts) && !("value" in patch)) return null;
  return `${messageIndex}/${partIndex}/${patch.field}`;
}

// The state of the tool part a patch targets, or null when the part at its position is not the
// one it names: duplicate ids elsewhere can then never attract it.
function targetState(messages, patch) {
  const message = messages[patch.messageIndex];
  if (message === null || typeof message !== "object") return null;
  if ((message.info?.id ?? null) !== (patch.messageID ?? null)) return null;
  const parts = message.parts;
  if (!Array.isArray(parts)) return null;
  const part = parts[patch.partIndex];
  if (part === null || typeof part !== "object" || part.type !== "tool") return null;
  if ((typeof part.id === "string" ? part.id : null) !== (patch.partID ?? null)) return null;
  if (typeof part.callID === "string" && part.callID !== "" && part.callID !== patch.callID) return null;
  const state = part.state;
  return state !== null && typeof state === "object" && !Array.isArray(state) ? state : null;
}

// `original` with each [start, end, replacement] cut applied (offsets in UTF-16 code units, cuts
// sorted and disjoint); undefined when the original is not the string the cuts were made for.
function applyCuts(original, cuts, expect) {
  if (typeof original !== "string" || !Number.isInteger(expect?.length) || original.length !== expect.length) return undefined;
  let out = "";
  let at = 0;
  for (const cut of cuts) {
    if (!Array.isArray(cut) || cut.length !== 3) return undefined;
    const [start, end, replacement] = cut;
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < at || end < start || end > original.length) return undefined;
    if (typeof replacement !== "string") return undefined;
    out += original.slice(at, start) + replacement;
    at = end;
  }
  return out + original.slice(at);
}

// Applies one patch to its target; false (and nothing changed) when the target does not match.
function applyPatch(messages, patch) {
  const state = targetState(messages, patch);
  if (state === null) return false;
  if (Array.isArray(patch.cuts)) {
    const value = applyCuts(state[patch.field], patch.cuts, patch.expect);
    if (value === undefined) return false;
    state[patch.field] = value;
    return true;
  }
  const value = patch.value;
  // A copy, so that whatever OpenCode does with the part later cannot alter the kept value.
  state[patch.field] = value === null || typeof value !== "object" ? value : Array.isArray(value) ? value.slice() : { ...value };
  return true;
}

// Applies every patch (one lookup each, no walk over the history); returns those skipped.
function applyPatches(messages, patches) {
  const skipped = [];
  for (const patch of patches) {
    if (!applyPatch(messages, patch)) skipped.push(patch);
  }
  return skipped;
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
  constructor(settings, context, log, onEvent, onStartFailure) {
    this.settings = settings;
    this.context = context;
    this.log = log;
    this.onEvent = onEvent;
    this.onStartFailure = onStartFailure; // ({command, reason}) when a child dies before its first reply
    this.child = null;
    this.ready = false; // the current child has answered a request: it did start
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
      this.ready = false;
      this.markDead(`could not start ${cmd}: ${err?.message ?? err}`);
      this.startFailed(`could not run ${cmd} (${err?.code ?? err?.message ?? err})`, []);
      return false;
    }
    this.child = child;
    this.ready = false;
    this.generation++;
    this.nextId = 1;
    this.buffer = "";
    const stderr = (this.stderrTail = []);
    this.stats.spawns++;
    const generation = this.generation;
    const current = () => this.generation === generation && this.child === child;
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => this.onStdout(chunk));
    child.stderr.setEncoding("utf8");
    const keep = (line) => {
      if (!line.trim()) return;
      stderr.push(line);
      if (stderr.length > STDERR_LINES_KEPT) stderr.shift();
    };
    let partial = ""; // a line split across chunks
    child.stderr.on("data", (chunk) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop();
      if (partial.length > 4096) {
        keep(partial);
        partial = "";
      }
      lines.forEach(keep);
    });
    child.stderr.on("end", () => {
      keep(partial);
      partial = "";
    });
    child.stdin.on("error", () => {}); // EPIPE after a crash is reported by "exit" instead
    child.on("error", (err) => {
      if (!current()) return;
      const started = this.ready;
      this.markDead(`bridge process error: ${err?.message ?? err}`);
      if (!started) this.startFailed(`could not run ${cmd} (${err?.code ?? err?.message ?? err})`, stderr);
    });
    // "close" comes once stderr is drained, so the reason can quote it; "exit" is the fallback
    // for a child whose pipes stay open (a grandchild holding them).
    const ended = (code, signal) => {
      if (!current()) return;
      const started = this.ready;
      const tail = stderr.length ? `; last stderr: ${stderr.join(" | ")}` : "";
      this.markDead(`bridge exited (code ${code}, signal ${signal})${tail}`);
      if (!started) this.startFailed(`it exited with ${code !== null ? `code ${code}` : `signal ${signal}`} before answering`, stderr);
    };
    child.on("close", ended);
    child.on("exit", (code, signal) => {
      const timer = setTimeout(() => ended(code, signal), 200);
      timer.unref?.();
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
    this.ready = true;
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

  // Reports a child that could not start: the command and why, quoting its last stderr line
  // (for Python, the exception of the traceback).
  startFailed(what, stderr) {
    const last = stderr.length ? stderr[stderr.length - 1].trim() : "";
    try {
      this.onStartFailure?.({
        command: this.settings.command.join(" "),
        source: this.settings.source,
        reason: last ? `${what}: ${last}` : what,
      });
    } catch {
      // reporting must never break the host
    }
  }

  // Stops for good. With `graceMs`, the child only sees its stdin close (it finishes its work and
  // exits by itself) and gets SIGTERM if it is still running after that long.
  stop(graceMs = 0) {
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
      if (graceMs > 0) {
        const timer = setTimeout(() => killChild(child, "SIGTERM"), graceMs);
        timer.unref?.();
      } else {
        killChild(child, "SIGTERM");
      }
    }
  }
}

// The ids and keys of `messages[from..]`, computing only the keys not already in `fresh`.
function describe(messages, from, fresh) {
  const count = messages.length - from;
  const ids = new Array(count);
  const keys = new Array(count);
  for (let i = 0; i < count; i++) {
    const message = messages[from + i];
    ids[i] = idOf(message);
    keys[i] = fresh?.get(from + i) ?? messageKey(message);
  }
  return { ids, keys };
}

function fullPlan(messages) {
  return { reset: true, base: 0, ...describe(messages, 0, null), cursor: 0, token: null };
}

// What the child of one session holds, as far as this shim sent it (PROTOCOL.md, "changed"
// versus "rewritten"), and the patches kept for it.
class SessionRecord {
  constructor(generation) {
    this.generation = generation;
    this.ids = []; // info.id of every message the child holds, by index
    this.keys = []; // messageKey of each, as sent
    this.watch = []; // indices re-checked on every request
    this.lastUser = -1; // index of the latest user message
    this.cursor = 0; // where the rolling check goes on
    this.patches = new Map(); // patchKey -> patch, in the order received
    this.unusable = 0; // malformed patches in the latest reply
    this.token = null;
    this.model = null; // the model sent with the latest request
    this.reported = new Set(); // targets of skipped patches already logged
  }

  // The delta for `messages`, or null when the history was rewritten (send it all, reset).
  plan(messages, rolling) {
    const { ids, keys } = this;
    const held = ids.length;
    const count = messages.length;
    if (count < held) return null;
    if (held > 0 && (idOf(messages[0]) !== ids[0] || idOf(messages[held - 1]) !== ids[held - 1])) return null;
    let base = held;
    const fresh = new Map(); // index -> key computed on this request
    const check = (i) => {
      const message = messages[i];
      if (idOf(message) !== ids[i]) return false;
      const key = fresh.get(i) ?? messageKey(message);
      if (key !== keys[i]) fresh.set(i, key);
      return true;
    };
    for (const i of this.watch) {
      if (!check(i)) return null;
      if (fresh.has(i) && i < base) base = i;
    }
    let cursor = this.cursor < held ? this.cursor : 0;
    let changed = -1;
    for (let k = Math.min(rolling, held); k > 0; k--) {
      const i = cursor;
      cursor = cursor + 1 < held ? cursor + 1 : 0;
      if (!check(i)) return null;
      if (fresh.has(i) && i < base && (changed < 0 || i < changed)) changed = i;
    }
    if (changed >= 0) {
      // An older message changed in place (OpenCode's prune marks old outputs compacted, many
      // at once): find the earliest change, so that one resend covers them all.
      for (let i = 0; i < changed; i++) {
        if (!check(i)) return null;
        if (fresh.has(i)) {
          changed = i;
          break;
        }
      }
      base = changed;
    }
    return { reset: false, base, ...describe(messages, base, fresh), cursor, token: this.token };
  }

  // Takes in what a request sent: the child now holds ids[:base] + plan.ids.
  advance(plan, messages) {
    const { base } = plan;
    this.ids.length = base;
    this.keys.length = base;
    for (let i = 0; i < plan.ids.length; i++) {
      this.ids.push(plan.ids[i]);
      this.keys.push(plan.keys[i]);
    }
    const count = this.ids.length;
    let unfinished = this.watch.filter((i) => i < base && UNFINISHED.test(this.keys[i]));
    for (let i = base; i < count; i++) {
      if (UNFINISHED.test(this.keys[i])) unfinished.push(i);
    }
    if (unfinished.length > MAX_WATCHED) unfinished = unfinished.sort((a, b) => a - b).slice(-MAX_WATCHED);
    let lastUser = this.lastUser < base ? this.lastUser : -1;
    for (let i = count - 1; i >= base; i--) {
      if (messages[i]?.info?.role === "user") {
        lastUser = i;
        break;
      }
    }
    this.lastUser = lastUser;
    // The last message may still grow; OpenCode adds its plan-mode reminders to the latest user
    // message; unfinished tool parts finish.
    const watch = new Set(unfinished);
    if (lastUser >= 0) watch.add(lastUser);
    if (count > 0) watch.add(count - 1);
    this.watch = [...watch];
    this.cursor = plan.cursor;
  }

  // Keeps the patches of a reply: they replace the kept set unless the reply is incremental,
  // and a patch for a target already kept replaces that one.
  keep(reply, continuing) {
    const kept = reply.incremental === true && continuing ? this.patches : new Map();
    this.unusable = 0;
    for (const patch of Array.isArray(reply.patches) ? reply.patches : []) {
      const key = patchKey(patch);
      if (key === null) this.unusable++;
      else if (Array.isArray(patch.cuts) && patch.cuts.length === 0) kept.delete(key); // back to the stored content
      else kept.set(key, patch);
    }
    this.patches = kept;
    this.token = typeof reply.patchToken === "string" ? reply.patchToken : null;
  }
}

// Per-session sync state: what the current child holds, so only new or changed messages are sent.
class SessionSync {
  constructor(rolling = ROLLING_CHECK) {
    this.rolling = rolling;
    this.sessions = new Map(); // sessionID -> SessionRecord
    this.queues = new Map(); // sessionID -> tail promise, so one session's requests run in order
  }

  // The record of a session synced with the child `generation`, else undefined.
  held(sessionID, generation) {
    const known = this.sessions.get(sessionID);
    return known && known.generation === generation ? known : undefined;
  }

  // The delta to send for `messages`, given what the child `generation` already holds.
  plan(sessionID, messages, generation) {
    const known = this.held(sessionID, generation);
    return (known && known.plan(messages, this.rolling)) || fullPlan(messages);
  }

  // Records a successful reply to `plan`; returns the session's record (its kept patches).
  commit(sessionID, generation, plan, messages, reply, model) {
    const previous = this.held(sessionID, generation);
    const continuing = Boolean(previous) && !plan.reset;
    const record = continuing ? previous : new SessionRecord(generation);
    record.advance(plan, messages);
    record.keep(reply, continuing);
    record.model = model ?? null;
    this.sessions.set(sessionID, record);
    return record;
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

function makeToast(client) {
  return (message, variant) => {
    try {
      const shown = client?.tui?.showToast?.({ body: { message, variant } });
      if (shown && typeof shown.catch === "function") shown.catch(() => {});
    } catch {
      // a host without a TUI only logs it
    }
  };
}

// The process-wide registry every copy of this plugin shares (see REGISTRY_KEY).
function sharedRegistry() {
  let registry = globalThis[REGISTRY_KEY];
  if (registry === null || typeof registry !== "object") {
    registry = {};
    Object.defineProperty(globalThis, REGISTRY_KEY, { value: registry, configurable: true, writable: true });
  }
  if (!(registry.owners instanceof Map)) registry.owners = new Map(); // instance directory -> active copy
  if (!(registry.handled instanceof WeakSet)) registry.handled = new WeakSet(); // hook outputs an active copy took
  if (typeof registry.unavailableShown !== "boolean") registry.unavailableShown = false;
  return registry;
}

function dataOf(result) {
  return result && typeof result === "object" && "data" in result ? result.data : result;
}

async function fetchSessionMessages(client, sessionID) {
  const data = dataOf(await client.session.messages({ path: { id: sessionID } }));
  return Array.isArray(data) ? data : [];
}

function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref?.();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// `model` with the context limit OpenCode has configured for it, when it came without one (the
// user message's model, before any chat.params of this process); `model` itself otherwise.
async function withConfiguredLimit(client, model) {
  if (!model || model.limit || !model.providerID || !model.modelID || !client?.config?.providers) return model;
  try {
    const data = dataOf(await withTimeout(Promise.resolve(client.config.providers()), PROVIDERS_TIMEOUT_MS));
    const providers = Array.isArray(data?.providers) ? data.providers : [];
    const limit = providers.find((p) => p?.id === model.providerID)?.models?.[model.modelID]?.limit;
    if (limit && typeof limit === "object") return { ...model, limit: { context: limit.context, output: limit.output } };
  } catch {
    // the limit is only a hint for /dcp context
  }
  return model;
}

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

function unavailableText(failure) {
  return (
    `dcp: context pruning is off: its Python bridge could not start (${failure.reason}). ` +
    `Requests go to the model unpruned. ${FIXES[failure.source] ?? FIXES.installed} ` +
    `Command that failed: ${failure.command}`
  );
}

const DUPLICATE_TEXT =
  "dcp: the dcp plugin is loaded twice in this project (installed both in the project and globally, " +
  "or listed twice); this copy stays idle and the other one prunes. Remove one: " +
  "`dcp opencode uninstall --global` or `dcp opencode uninstall` in the project.";

export default async function DcpBridgePlugin(ctx, options) {
  const settings = resolveSettings(options, process.env);
  const client = ctx?.client;
  const log = makeLogger(client, settings.debug);
  const toast = makeToast(client);
  const sync = new SessionSync();
  const models = new Map(); // sessionID -> model seen in chat.params (has the context limit)
  const registry = sharedRegistry();
  // One OpenCode process serves several projects, each with its own plugin instances: a copy is
  // a duplicate only of another copy loaded for the same directory.
  const instanceKey = String(ctx?.directory ?? "");
  const self = {};
  let requestSeen = false; // a request hook ran: a toast now reaches the user
  let startFailure = null;
  let duplicateAnnounced = false;
  let stopped = false; // disposed: this copy never serves a hook again

  const announceUnavailable = () => {
    if (!startFailure || !requestSeen || registry.unavailableShown) return;
    registry.unavailableShown = true;
    toast(unavailableText(startFailure), "error");
  };

  const onStartFailure = (failure) => {
    startFailure = failure;
    log("error", unavailableText(failure));
    announceUnavailable();
  };

  const onEvent = (event) => {
    if (event.event === "notify" && typeof event.text === "string") {
      toast(event.text, "info");
      log("info", event.text);
    } else if (event.event === "log") {
      log(String(event.level || "info"), String(event.message ?? ""));
    }
  };

  const context = { directory: ctx?.directory, worktree: ctx?.worktree, projectID: ctx?.project?.id };
  const bridge = new BridgeProcess(settings, context, log, onEvent, onStartFailure);
  const isActive = () => registry.owners.get(instanceKey) === self;
  if (!registry.owners.has(instanceKey)) registry.owners.set(instanceKey, self);
  if (isActive()) bridge.ensureStarted();

  // Whether this copy serves the hook call whose output object is `output`. OpenCode calls each
  // plugin's hook in load order with the same output object, so the active copy marks it and a
  // later copy that finds it marked stays idle. A copy that finds it unmarked although another
  // copy is registered takes over: that one belongs to an instance OpenCode disposed.
  const claim = (output, request) => {
    if (stopped) return false;
    const markable = output !== null && typeof output === "object";
    if (!isActive()) {
      if (!markable) return false;
      if (registry.handled.has(output)) {
        if (request && !duplicateAnnounced) {
          duplicateAnnounced = true;
          log("warn", DUPLICATE_TEXT);
          toast(DUPLICATE_TEXT, "warning");
        }
        return false;
      }
      registry.owners.set(instanceKey, self);
      log("info", "dcp: no other active copy of the plugin answered; this copy takes over");
      bridge.ensureStarted();
    }
    if (markable) registry.handled.add(output);
    if (request) {
      requestSeen = true;
      announceUnavailable();
    }
    return true;
  };

  const stop = (graceMs = 0) => {
    stopped = true;
    bridge.stop(graceMs);
    if (isActive()) registry.owners.delete(instanceKey);
  };

  // Logs the skipped patches not logged before for this session's record (a reset starts over).
  const logSkipped = (sessionID, record, skipped) => {
    const fresh = skipped.filter((patch) => {
      const id = `${patchKey(patch)} ${patch.messageID} ${patch.partID} ${patch.callID}`;
      if (record.reported.has(id)) return false;
      record.reported.add(id);
      return true;
    });
    if (fresh.length === 0) return;
    const first = fresh[0];
    log(
      "warn",
      `skipped ${fresh.length} patch(es) for session ${sessionID} whose target did not match ` +
        `(first: message ${first.messageIndex} part ${first.partIndex}, ${first.field}); those parts went out unpruned`,
    );
  };

  // Sends the session's messages (delta or full) with `extra` fields; retries once in full when
  // the child asks for a resync. Returns the reply and the session's record (its kept patches).
  async function syncAndSend(op, sessionID, messages, extra, timeoutMs) {
    if (!bridge.ensureStarted()) throw new BridgeError("down", "bridge is down (waiting to restart)");
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 0; attempt < 2; attempt++) {
      const generation = bridge.generation;
      const plan = attempt === 0 ? sync.plan(sessionID, messages, generation) : fullPlan(messages);
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
        const record = sync.commit(sessionID, generation, plan, messages, reply, extra.model);
        if (record.unusable > 0) log("warn", `ignored ${record.unusable} malformed patch(es) for session ${sessionID}`);
        return { reply, record };
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

  // Sends `op` for a session through the child: without its messages when the child holds the
  // session, else (not synced by a transform yet, e.g. the first thing in a resumed session, or
  // dropped by the child while idle) with the stored messages in full. `modelFor(fallback)` is
  // the model to send along.
  // `fresh`: read the session as stored now even when the child holds it (a command reports on
  // the session: what the child holds stops at the last request, without its answer and usage).
  async function sendForSession(op, sessionID, extra, modelFor, fresh = false) {
    const known = sync.held(sessionID, bridge.generation);
    if (known && fresh) {
      const stored = await fetchSessionMessages(client, sessionID).catch(() => []);
      if (stored.length > 0) {
        const full = { ...extra, model: await modelFor(known.model) };
        return (await syncAndSend(op, sessionID, stored, full, settings.commandTimeoutMs)).reply;
      }
    }
    if (known) {
      if (!bridge.ensureStarted()) throw new BridgeError("down", "bridge is down (waiting to restart)");
      try {
        const model = await modelFor(known.model);
        return await bridge.request({ op, sessionID, ...extra, model }, settings.commandTimeoutMs);
      } catch (err) {
        if (!(err instanceof BridgeError && err.kind === "remote" && err.message === "resync")) throw err;
        sync.forget(sessionID);
      }
    }
    const messages = await fetchSessionMessages(client, sessionID);
    const full = { ...extra, model: await modelFor(modelOf(messages)) };
    return (await syncAndSend(op, sessionID, messages, full, settings.commandTimeoutMs)).reply;
  }

  // Answers a /dcp command through the child, with the session's model and its configured limit.
  const runCommand = (sessionID, args) =>
    sendForSession(
      "command",
      sessionID,
      { command: COMMAND_NAME, arguments: args },
      (fallback) => withConfiguredLimit(client, models.get(sessionID) || fallback),
      true,
    );

  // Runs a call of one of the plugin's tools through the child, like a command.
  const runTool = (sessionID, name, args, callID) =>
    sendForSession("tool", sessionID, { name, arguments: args ?? {}, callID: callID ?? null }, async (fallback) =>
      models.get(sessionID) || fallback,
    );

  // OpenCode's shape of a plugin tool: `args` are JSON Schema properties (OpenCode makes them all
  // required); `execute` answers the model. A refused call throws, so OpenCode records it as a
  // failed call (the model reads the same text).
  const toolOf = (definition) => ({
    description: String(definition.description ?? ""),
    args: definition.parameters?.properties ?? {},
    execute: async (args, toolContext) => {
      const sessionID = toolContext?.sessionID;
      let reply;
      try {
        if (!sessionID) throw new Error("the call came without a session id");
        reply = await sync.serialize(sessionID, () => runTool(sessionID, definition.name, args, toolContext?.callID));
      } catch (err) {
        log("warn", `${definition.name} failed: ${err?.message ?? err}`);
        throw new Error(`dcp: the pruning bridge is unavailable (${err?.message ?? err}); nothing was changed.`);
      }
      if (reply.error) throw new Error(String(reply.output ?? "refused"));
      return { output: String(reply.output ?? ""), title: String(reply.title ?? definition.name), metadata: {} };
    },
  });

  // The tools and the system text come from the child (its config says which tools are on).
  // OpenCode reads `hooks.tool` when it first lists its tools, so the object is filled in place.
  const tools = {};
  let systemText = null;
  const loadTools = async () => {
    try {
      const reply = await bridge.request({ op: "tools" }, settings.startupTimeoutMs);
      for (const definition of Array.isArray(reply.tools) ? reply.tools : []) {
        if (definition && typeof definition.name === "string") tools[definition.name] = toolOf(definition);
      }
      systemText = typeof reply.system === "string" && reply.system ? reply.system : null;
    } catch (err) {
      log("warn", `no pruning tools for the model: ${err?.message ?? err}`);
    }
  };
  if (isActive() && bridge.alive) {
    let timer;
    const waited = new Promise((resolve) => {
      timer = setTimeout(resolve, settings.toolsWaitMs);
      timer.unref?.();
    });
    await Promise.race([loadTools(), waited]);
    clearTimeout(timer);
  }

  const hooks = {
    tool: tools,

    // Adds what the tools are for (the same text on every request, so the cached prompt stays valid).
    "experimental.chat.system.transform": async (input, output) => {
      try {
        if (!systemText || !claim(output, false)) return;
        if (Array.isArray(output?.system) && !output.system.includes(systemText)) output.system.push(systemText);
      } catch (err) {
        log("warn", `could not add to the system prompt: ${err?.message ?? err}`);
      }
    },

    // Registers /dcp unless the user defined their own command with that name.
    config: async (config) => {
      try {
        if (!config || typeof config !== "object" || !claim(config, false)) return;
        config.command = config.command || {};
        if (!config.command[COMMAND_NAME]) {
          config.command[COMMAND_NAME] = {
            template: "/dcp $ARGUMENTS",
            description: "Dynamic context pruning: context, stats, sweep, pin, unpin (answered by the dcp plugin)",
          };
        }
      } catch (err) {
        log("warn", `could not register /${COMMAND_NAME}: ${err?.message ?? err}`);
      }
    },

    "chat.params": async (input, output) => {
      try {
        if (!claim(output, true)) return;
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
        if (!claim(output, true)) return;
        const messages = output?.messages;
        if (!Array.isArray(messages) || messages.length === 0) return;
        const sessionID = input?.sessionID || sessionOf(messages);
        if (!sessionID) return;
        await sync.serialize(sessionID, async () => {
          try {
            const model = models.get(sessionID) || modelOf(messages);
            const { record } = await syncAndSend("transform", sessionID, messages, { model }, settings.timeoutMs);
            const skipped = applyPatches(messages, record.patches.values());
            if (skipped.length > 0) logSkipped(sessionID, record, skipped);
          } catch (err) {
            log("warn", `request for ${sessionID} sent unpruned: ${err?.message ?? err}`);
          }
        });
      } catch (err) {
        log("error", `transform failed, request sent unpruned: ${err?.message ?? err}`);
      }
    },

    "command.execute.before": async (input, output) => {
      let sessionID;
      let text;
      let handled = true;
      try {
        if (input?.command !== COMMAND_NAME || !claim(output, true)) return;
        sessionID = input.sessionID;
        const reply = await sync.serialize(sessionID, () => runCommand(sessionID, String(input.arguments ?? "")));
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
      // `opencode run --command dcp ...` shows nothing of a handled command but OpenCode's own
      // "Unexpected server error": print the reply on stderr there (never in the terminal UI).
      if (RUN_COMMAND_LINE) process.stderr.write(`${text}\n`);
      throw new Error(HANDLED_MESSAGE);
    },

    // OpenCode disposes an instance's plugins when it reloads or closes the instance: let the
    // child finish (it exits when its stdin closes) and let a later copy take over.
    dispose: async () => {
      try {
        stop(EXIT_GRACE_MS);
      } catch {
        // nothing to clean up then
      }
    },
  };

  Object.defineProperty(hooks, BRIDGE_HANDLE, {
    enumerable: false,
    value: { bridge, sync, settings, registry, isActive, stop: () => stop() },
  });
  return hooks;
}
