// sync.mjs: what the child holds of each session, so that a request sends only the messages it
// has not seen or that changed (PROTOCOL.md, "changed" versus "rewritten"), and the patches kept
// for each session; one session's requests run in order.

import { UNFINISHED, idOf, messageKey } from "./messages.mjs";
import { patchKey } from "./patches.mjs";

// How many older messages each request re-checks besides the watched ones (PROTOCOL.md).
const ROLLING_CHECK = 32;
// At most this many messages with unfinished tool parts are re-checked on every request; older
// ones (a tool OpenCode never finished) are left to the rolling check.
const MAX_WATCHED = 64;

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

export function fullPlan(messages) {
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
export class SessionSync {
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
