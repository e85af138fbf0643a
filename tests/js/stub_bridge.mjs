// stub_bridge.mjs: a stand-in for `python -m dcp_plugin.adapters.bridge` that speaks the shim's protocol.
//
// It keeps each session's messages exactly as the protocol describes (known[:base] + messages,
// checked against the fingerprint) and prunes every completed tool output containing the marker
// STUB_PRUNE (default "PRUNE_ME"). Behaviour switches, all environment variables:
//   STUB_LOG            file that receives one JSON line per request (and {"spawn":pid} at start)
//   STUB_DELAY_MS       delay every transform reply by this many ms
//   STUB_CRASH_ONCE     path of a flag file: if it does not exist, create it and exit(3) on the
//                       first transform (so the restarted stub behaves)
//   STUB_RESYNC_ONCE    answer the first non-reset transform with "resync"
//   STUB_INCREMENTAL    reply with only the new patches and "incremental": true (it looks only at
//                       the messages from the request's base on: the rest were answered before)
//   STUB_INPUT_PATCH    also replace state.input of pruned parts with {"pruned": true}
//   STUB_NOISE          print a non-JSON line and a notify event before the first reply
//   STUB_TOKEN          add "patchToken": "t<request id>" to every transform reply
//   STUB_EXTRA_PATCHES  a JSON array of patches added to every transform reply (as given)
//   STUB_FORGET_ON_COMMAND  forget the session when a command without messages arrives and
//                       answer "resync" (as the Python bridge does after dropping an idle session)
//   STUB_TOOLS          a JSON array of tool definitions the `tools` op answers (default none), with
//                       STUB_SYSTEM as the system text; a `tool` call answers what it was asked,
//                       refused (error) when its arguments hold "refuse": true
import fs from "node:fs";
import readline from "node:readline";

const env = process.env;
const marker = env.STUB_PRUNE || "PRUNE_ME";
const sessions = new Map(); // sessionID -> { messages, sentPatchKeys: Set }
const extraPatches = env.STUB_EXTRA_PATCHES ? JSON.parse(env.STUB_EXTRA_PATCHES) : [];
let resyncSent = false;
let noiseSent = false;

function record(obj) {
  if (env.STUB_LOG) fs.appendFileSync(env.STUB_LOG, JSON.stringify(obj) + "\n");
}

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function patchesFor(messages, from = 0) {
  const patches = [];
  for (let messageIndex = from; messageIndex < messages.length; messageIndex++) {
    const m = messages[messageIndex];
    (m.parts || []).forEach((p, partIndex) => {
      if (p.type !== "tool" || p.state?.status !== "completed") return;
      if (typeof p.state.output !== "string" || !p.state.output.includes(marker)) return;
      const target = { messageIndex, partIndex, messageID: m.info.id, partID: p.id, callID: p.callID };
      patches.push({ ...target, field: "output", value: "[pruned by stub]" });
      if (env.STUB_INPUT_PATCH) patches.push({ ...target, field: "input", value: { pruned: true } });
    });
  }
  return patches.concat(extraPatches);
}

// Applies a transform/command delta; returns an error string or null.
function syncSession(req) {
  if (!("messages" in req)) return null;
  let state = sessions.get(req.sessionID);
  if (req.reset || !state) {
    if (!req.reset && req.base > 0) return "resync";
    state = { messages: [], sentPatchKeys: new Set() };
    sessions.set(req.sessionID, state);
  }
  const fp = req.fingerprint || {};
  const known = state.messages;
  if (req.base > known.length) return "resync";
  if (req.base > 0 && (known[0].info.id !== fp.firstID || known[req.base - 1].info.id !== fp.lastID)) return "resync";
  known.length = req.base; // held[:base] + messages, in place: a warm request costs the delta
  for (const message of req.messages) known.push(message);
  if (state.messages.length !== req.total) return "resync";
  return null;
}

async function handle(req) {
  if (req.op === "startup") return send({ id: req.id, ok: true });
  if (req.op === "transform") {
    if (env.STUB_CRASH_ONCE && !fs.existsSync(env.STUB_CRASH_ONCE)) {
      fs.writeFileSync(env.STUB_CRASH_ONCE, "crashed");
      process.exit(3);
    }
    if (env.STUB_RESYNC_ONCE && !resyncSent && !req.reset) {
      resyncSent = true;
      return send({ id: req.id, ok: false, error: "resync" });
    }
    if (env.STUB_DELAY_MS) await new Promise((r) => setTimeout(r, Number(env.STUB_DELAY_MS)));
    const error = syncSession(req);
    if (error) return send({ id: req.id, ok: false, error });
    if (env.STUB_NOISE && !noiseSent) {
      noiseSent = true;
      process.stdout.write("this line is not protocol\n");
      send({ event: "notify", sessionID: req.sessionID, text: "stub pruned something" });
    }
    const state = sessions.get(req.sessionID);
    let patches = patchesFor(state.messages, env.STUB_INCREMENTAL && !req.reset ? req.base : 0);
    if (env.STUB_INCREMENTAL) {
      if (req.reset) state.sentPatchKeys = new Set();
      patches = patches.filter((p) => !state.sentPatchKeys.has(`${p.messageIndex}/${p.partIndex}/${p.field}`));
      for (const p of patches) state.sentPatchKeys.add(`${p.messageIndex}/${p.partIndex}/${p.field}`);
      return send({ id: req.id, ok: true, patches, incremental: true });
    }
    if (env.STUB_TOKEN) return send({ id: req.id, ok: true, patches, patchToken: `t${req.id}` });
    return send({ id: req.id, ok: true, patches });
  }
  if (req.op === "tools") {
    return send({ id: req.id, ok: true, tools: env.STUB_TOOLS ? JSON.parse(env.STUB_TOOLS) : [], system: env.STUB_SYSTEM || null });
  }
  if (req.op === "tool") {
    if (!("messages" in req) && !sessions.has(req.sessionID)) return send({ id: req.id, ok: false, error: "resync" });
    const error = syncSession(req);
    if (error) return send({ id: req.id, ok: false, error });
    const count = sessions.get(req.sessionID)?.messages.length ?? 0;
    const output = `stub ran ${req.name} ${JSON.stringify(req.arguments)} call ${req.callID} (${count} messages)`;
    return send({ id: req.id, ok: true, output, error: req.arguments?.refuse === true, title: `stub ${req.name}` });
  }
  if (req.op === "command") {
    if (env.STUB_FORGET_ON_COMMAND && !("messages" in req)) {
      sessions.delete(req.sessionID);
      return send({ id: req.id, ok: false, error: "resync" });
    }
    const error = syncSession(req);
    if (error) return send({ id: req.id, ok: false, error });
    if (req.arguments === "passthrough") return send({ id: req.id, ok: true, handled: false, text: "" });
    const count = sessions.get(req.sessionID)?.messages.length ?? 0;
    return send({ id: req.id, ok: true, handled: true, text: `stub ${req.arguments} (${count} messages)` });
  }
  send({ id: req.id, ok: false, error: `unknown op ${req.op}` });
}

record({ spawn: process.pid });
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  let req;
  try {
    req = JSON.parse(line);
  } catch {
    send({ id: null, ok: false, error: "malformed request" });
    return;
  }
  record(req);
  handle(req).catch((err) => send({ id: req.id, ok: false, error: String(err) }));
});
rl.on("close", () => process.exit(0));
