// process.mjs: the transport: one long-lived child process speaking the protocol over JSON lines
// on its stdin/stdout (PROTOCOL.md), with request timeouts, and restarts with backoff when it dies.

import { spawn } from "node:child_process";

const STDERR_LINES_KEPT = 20;

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

export class BridgeError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind; // "down" | "timeout" | "remote" | "crash"
  }
}

// One long-lived child process speaking the protocol, restarted with backoff when it dies.
export class BridgeProcess {
  constructor(settings, context, log, onEvent, onStartFailure, onCrash) {
    this.settings = settings;
    this.context = context;
    this.log = log;
    this.onEvent = onEvent;
    this.onStartFailure = onStartFailure; // ({command, reason}) when a child dies before its first reply
    this.onCrash = onCrash; // ({reason}) when a started child dies while requests wait for it
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
      const midRequest = started && this.pending.size > 0;
      this.markDead(`bridge process error: ${err?.message ?? err}`);
      if (!started) this.startFailed(`could not run ${cmd} (${err?.code ?? err?.message ?? err})`, stderr);
      if (midRequest) this.crashed(`bridge process error: ${err?.message ?? err}`, stderr);
    });
    // "close" comes once stderr is drained, so the reason can quote it; "exit" is the fallback
    // for a child whose pipes stay open (a grandchild holding them).
    const ended = (code, signal) => {
      if (!current()) return;
      const started = this.ready;
      const midRequest = started && this.pending.size > 0;
      const tail = stderr.length ? `; last stderr: ${stderr.join(" | ")}` : "";
      this.markDead(`bridge exited (code ${code}, signal ${signal})${tail}`);
      if (!started) this.startFailed(`it exited with ${code !== null ? `code ${code}` : `signal ${signal}`} before answering`, stderr);
      if (midRequest) this.crashed(`it exited with ${code !== null ? `code ${code}` : `signal ${signal}`}`, stderr);
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

  // Reports a started child that died while requests waited for it (they went out unpruned).
  crashed(what, stderr) {
    const last = stderr.length ? stderr[stderr.length - 1].trim() : "";
    try {
      this.onCrash?.({ reason: last ? `${what}: ${last}` : what });
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
