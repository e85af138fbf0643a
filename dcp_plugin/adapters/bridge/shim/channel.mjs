// channel.mjs: a session's requests to the bridge: the messages it lacks (a delta, or the whole
// list when the history was rewritten or the child asks for a resync), the kept patches applied
// to OpenCode's messages, and ops for a session the child may not hold yet.

import { modelOf, prefixFingerprint } from "./messages.mjs";
import { fetchSessionMessages } from "./opencode.mjs";
import { applyPatches, patchKey } from "./patches.mjs";
import { BridgeError } from "./process.mjs";
import { fullPlan } from "./sync.mjs";

export class SessionChannel {
  constructor(bridge, sync, client, log, commandTimeoutMs) {
    this.bridge = bridge;
    this.sync = sync;
    this.client = client;
    this.log = log;
    this.commandTimeoutMs = commandTimeoutMs;
  }

  // Sends the session's messages (delta or full) with `extra` fields; retries once in full when
  // the child asks for a resync. Returns the reply and the session's record (its kept patches).
  async syncAndSend(op, sessionID, messages, extra, timeoutMs) {
    const { bridge, sync } = this;
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
        if (record.unusable > 0) this.log("warn", `ignored ${record.unusable} malformed patch(es) for session ${sessionID}`);
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

  // Prunes `messages` in place: syncs them with the child and applies every patch kept for the
  // session; a patch whose target does not match is skipped and logged once.
  async prune(sessionID, messages, model, timeoutMs) {
    const { record } = await this.syncAndSend("transform", sessionID, messages, { model }, timeoutMs);
    const skipped = applyPatches(messages, record.patches.values());
    if (skipped.length > 0) this.logSkipped(sessionID, record, skipped);
  }

  // Logs the skipped patches not logged before for this session's record (a reset starts over).
  logSkipped(sessionID, record, skipped) {
    const fresh = skipped.filter((patch) => {
      const id = `${patchKey(patch)} ${patch.messageID} ${patch.partID} ${patch.callID}`;
      if (record.reported.has(id)) return false;
      record.reported.add(id);
      return true;
    });
    if (fresh.length === 0) return;
    const first = fresh[0];
    this.log(
      "warn",
      `skipped ${fresh.length} patch(es) for session ${sessionID} whose target did not match ` +
        `(first: message ${first.messageIndex} part ${first.partIndex}, ${first.field}); those parts went out unpruned`,
    );
  }

  // Sends `op` for a session through the child: without its messages when the child holds the
  // session, else (not synced by a transform yet, e.g. the first thing in a resumed session, or
  // dropped by the child while idle) with the stored messages in full. `modelFor(fallback)` is
  // the model to send along. `fresh`: read the session as stored now even when the child holds it
  // (a command reports on the session: what the child holds stops at the last request, without its
  // answer and usage).
  async sendForSession(op, sessionID, extra, modelFor, fresh = false) {
    const { bridge, sync } = this;
    const known = sync.held(sessionID, bridge.generation);
    if (known && fresh) {
      const stored = await fetchSessionMessages(this.client, sessionID).catch(() => []);
      if (stored.length > 0) {
        const full = { ...extra, model: await modelFor(known.model) };
        return (await this.syncAndSend(op, sessionID, stored, full, this.commandTimeoutMs)).reply;
      }
    }
    if (known) {
      if (!bridge.ensureStarted()) throw new BridgeError("down", "bridge is down (waiting to restart)");
      try {
        const model = await modelFor(known.model);
        return await bridge.request({ op, sessionID, ...extra, model }, this.commandTimeoutMs);
      } catch (err) {
        if (!(err instanceof BridgeError && err.kind === "remote" && err.message === "resync")) throw err;
        sync.forget(sessionID);
      }
    }
    const messages = await fetchSessionMessages(this.client, sessionID);
    const full = { ...extra, model: await modelFor(modelOf(messages)) };
    return (await this.syncAndSend(op, sessionID, messages, full, this.commandTimeoutMs)).reply;
  }
}
