// shim.test.mjs: the OpenCode JS shim against a stub bridge (node --test tests/js/).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import * as shimModule from "../../dcp_plugin/adapters/bridge/dcp_bridge.mjs";
import { SID, STUB, conversation, fakeClient, makePlugin, tmpDir, transform, waitFor } from "./helpers.mjs";

const Plugin = shimModule.default;

test("the module exports only plugin functions", () => {
  for (const [name, value] of Object.entries(shimModule)) {
    assert.equal(typeof value, "function", `export ${name} must be a function for OpenCode`);
  }
});

test("startup is the first request and carries the project directory", async (t) => {
  const { hooks, dir, requests } = await makePlugin(t);
  await transform(hooks, conversation(1));
  const [first] = requests().filter((r) => r.op);
  assert.equal(first.op, "startup");
  assert.equal(first.context.directory, dir);
});

test("the first transform of a session sends every message with reset", async (t) => {
  const { hooks, transforms } = await makePlugin(t);
  await transform(hooks, conversation(3));
  const [req] = transforms();
  assert.equal(req.reset, true);
  assert.equal(req.base, 0);
  assert.equal(req.messages.length, 4);
  assert.equal(req.total, 4);
  assert.deepEqual(req.fingerprint, { count: 0, firstID: null, lastID: null });
  assert.deepEqual(req.model, { providerID: "fake", modelID: "fake-model" });
});

test("later transforms send only the new messages", async (t) => {
  const { hooks, transforms } = await makePlugin(t);
  await transform(hooks, conversation(2));
  await transform(hooks, conversation(4));
  const second = transforms()[1];
  assert.equal(second.reset, false);
  assert.equal(second.base, 3);
  assert.deepEqual(second.messages.map((m) => m.info.id), ["msg_a3", "msg_a4"]);
  assert.deepEqual(second.fingerprint, { count: 3, firstID: "msg_u0", lastID: "msg_a2" });
  assert.equal(second.total, 5);
});

test("an unchanged history sends an empty delta", async (t) => {
  const { hooks, transforms } = await makePlugin(t);
  await transform(hooks, conversation(2));
  await transform(hooks, conversation(2));
  const second = transforms()[1];
  assert.equal(second.reset, false);
  assert.equal(second.base, 3);
  assert.equal(second.messages.length, 0);
});

test("a removed message makes the next transform resend everything", async (t) => {
  const { hooks, transforms } = await makePlugin(t);
  await transform(hooks, conversation(4));
  const undone = conversation(4).filter((m) => m.info.id !== "msg_a2");
  await transform(hooks, undone);
  const second = transforms()[1];
  assert.equal(second.reset, true);
  assert.equal(second.base, 0);
  assert.deepEqual(second.messages.map((m) => m.info.id), ["msg_u0", "msg_a1", "msg_a3", "msg_a4"]);
});

test("a message that lost parts since it was sent is resent from its index without a reset", async (t) => {
  const { hooks, transforms } = await makePlugin(t);
  await transform(hooks, conversation(3));
  const changed = conversation(4);
  changed[3].parts.pop();
  await transform(hooks, changed);
  const second = transforms()[1];
  assert.deepEqual([second.reset, second.base, second.total], [false, 3, 5]);
  assert.deepEqual(second.messages.map((m) => m.info.id), ["msg_a3", "msg_a4"]);
  assert.deepEqual(second.fingerprint, { count: 3, firstID: "msg_u0", lastID: "msg_a2" });
});

test("a replaced start (compaction) makes the next transform resend everything", async (t) => {
  const { hooks, transforms } = await makePlugin(t);
  await transform(hooks, conversation(3));
  const compacted = conversation(4).slice(2);
  await transform(hooks, compacted);
  assert.equal(transforms()[1].reset, true);
  assert.equal(transforms()[1].messages.length, 3);
});

test("patches replace the pruned tool output in place", async (t) => {
  const { hooks } = await makePlugin(t);
  const messages = conversation(3, { prune: [2] });
  const part = messages[2].parts[1];
  await transform(hooks, messages);
  assert.equal(part.state.output, "[pruned by stub]");
  assert.equal(messages[1].parts[1].state.output, "content 1");
  assert.equal(messages[3].parts[1].state.output, "content 3");
});

test("patches are applied again to the freshly built list of the next request", async (t) => {
  const { hooks } = await makePlugin(t);
  await transform(hooks, conversation(2, { prune: [1] }));
  const next = conversation(3, { prune: [1] });
  await transform(hooks, next);
  assert.equal(next[1].parts[1].state.output, "[pruned by stub]");
});

test("input patches replace the tool input in place", async (t) => {
  const { hooks } = await makePlugin(t, { env: { STUB_INPUT_PATCH: "1" } });
  const messages = conversation(2, { prune: [1] });
  await transform(hooks, messages);
  assert.deepEqual(messages[1].parts[1].state.input, { pruned: true });
  assert.deepEqual(messages[2].parts[1].state.input, { filePath: "/p/f2.txt" });
});

test("incremental patches accumulate across requests", async (t) => {
  const { hooks } = await makePlugin(t, { env: { STUB_INCREMENTAL: "1" } });
  await transform(hooks, conversation(2, { prune: [1] }));
  const next = conversation(3, { prune: [1, 3] });
  await transform(hooks, next);
  assert.equal(next[1].parts[1].state.output, "[pruned by stub]");
  assert.equal(next[3].parts[1].state.output, "[pruned by stub]");
  assert.equal(next[2].parts[1].state.output, "content 2");
});

test("the patch token of a reply is sent back with the next request", async (t) => {
  const { hooks, transforms } = await makePlugin(t, { env: { STUB_TOKEN: "1" } });
  await transform(hooks, conversation(1));
  await transform(hooks, conversation(2));
  const [first, second] = transforms();
  assert.deepEqual([first.patchToken, second.patchToken], [null, `t${first.id}`]);
});

test("a full resend carries no patch token", async (t) => {
  const { hooks, transforms } = await makePlugin(t, { env: { STUB_TOKEN: "1" } });
  await transform(hooks, conversation(2));
  await transform(hooks, conversation(1));
  assert.deepEqual(transforms().map((r) => [r.reset, r.patchToken]), [[true, null], [true, null]]);
});

test("a resync answer makes the shim resend the session in full", async (t) => {
  const { hooks, transforms } = await makePlugin(t, { env: { STUB_RESYNC_ONCE: "1" } });
  await transform(hooks, conversation(1));
  const messages = conversation(2, { prune: [2] });
  await transform(hooks, messages);
  const [, delta, full] = transforms();
  assert.equal(delta.reset, false);
  assert.equal(full.reset, true);
  assert.equal(full.messages.length, 3);
  assert.equal(messages[2].parts[1].state.output, "[pruned by stub]");
});

test("a bridge slower than the timeout leaves the messages untouched", async (t) => {
  const { hooks } = await makePlugin(t, { env: { STUB_DELAY_MS: "2000" }, options: { timeoutMs: 100 } });
  const messages = conversation(2, { prune: [1, 2] });
  const before = structuredClone(messages);
  await transform(hooks, messages);
  assert.deepEqual(messages, before);
});

test("a timeout counts in the bridge stats", async (t) => {
  const { hooks } = await makePlugin(t, { env: { STUB_DELAY_MS: "2000" }, options: { timeoutMs: 100 } });
  await transform(hooks, conversation(1));
  assert.equal(hooks.__dcpBridge.bridge.stats.timeouts, 1);
});

test("repeated timeouts kill the bridge and a later request restarts it", async (t) => {
  const { hooks } = await makePlugin(t, {
    env: { STUB_DELAY_MS: "2000" },
    options: { timeoutMs: 50, maxTimeouts: 2, backoffMs: 10 },
  });
  const bridge = hooks.__dcpBridge.bridge;
  // Counted rather than stepped: on a loaded machine the startup reply may time out too.
  await waitFor(async () => {
    await transform(hooks, conversation(1));
    return bridge.stats.crashes >= 1;
  });
  assert.ok(bridge.stats.timeouts >= 2);
  await waitFor(async () => {
    await transform(hooks, conversation(1));
    return bridge.stats.spawns >= 2;
  });
});

test("a crashing bridge leaves the messages untouched", async (t) => {
  const dir = tmpDir(t);
  const { hooks } = await makePlugin(t, { env: { STUB_CRASH_ONCE: path.join(dir, "crashed") } });
  const messages = conversation(2, { prune: [1] });
  const before = structuredClone(messages);
  await transform(hooks, messages);
  assert.deepEqual(messages, before);
});

test("after a crash the bridge is restarted and the session is resent in full", async (t) => {
  const dir = tmpDir(t);
  const { hooks, transforms } = await makePlugin(t, { env: { STUB_CRASH_ONCE: path.join(dir, "crashed") } });
  await transform(hooks, conversation(2, { prune: [1] }));
  let messages;
  await waitFor(async () => {
    messages = conversation(3, { prune: [1] });
    await transform(hooks, messages);
    return messages[1].parts[1].state.output === "[pruned by stub]";
  });
  const last = transforms().at(-1);
  assert.equal(last.reset, true);
  assert.equal(last.messages.length, 4);
  assert.equal(hooks.__dcpBridge.bridge.stats.spawns, 2);
});

test("a bridge that cannot be started leaves the messages untouched", async (t) => {
  const { hooks } = await makePlugin(t, { options: { command: [path.join(tmpDir(t), "no-such-python")] } });
  const messages = conversation(2, { prune: [1] });
  const before = structuredClone(messages);
  await transform(hooks, messages);
  assert.deepEqual(messages, before);
});

test("non-protocol output and notify events do not disturb replies", async (t) => {
  const { hooks, client } = await makePlugin(t, { env: { STUB_NOISE: "1" } });
  const messages = conversation(1, { prune: [1] });
  await transform(hooks, messages);
  assert.equal(messages[1].parts[1].state.output, "[pruned by stub]");
  assert.deepEqual(client.calls.toasts.map((x) => x.message), ["stub pruned something"]);
});

test("sessions are synced separately", async (t) => {
  const { hooks, transforms } = await makePlugin(t);
  await transform(hooks, conversation(2, { sessionID: "ses_a" }));
  await transform(hooks, conversation(1, { sessionID: "ses_b" }));
  await transform(hooks, conversation(3, { sessionID: "ses_a" }));
  const [a1, b1, a2] = transforms();
  assert.equal(a1.reset, true);
  assert.equal(b1.reset, true);
  assert.equal(b1.sessionID, "ses_b");
  assert.equal(a2.reset, false);
  assert.equal(a2.base, 3);
});

test("the model seen in chat.params is sent with the next transform", async (t) => {
  const { hooks, transforms } = await makePlugin(t);
  await hooks["chat.params"]({ sessionID: SID, model: { id: "m1", providerID: "p1", limit: { context: 1000, output: 100 } } }, {});
  await transform(hooks, conversation(1));
  assert.deepEqual(transforms()[0].model, { providerID: "p1", modelID: "m1", limit: { context: 1000, output: 100 } });
});

test("a handled /dcp command posts the reply without a model turn and stops the command", async (t) => {
  const { hooks, client } = await makePlugin(t);
  await transform(hooks, conversation(2));
  await assert.rejects(
    hooks["command.execute.before"]({ command: "dcp", sessionID: SID, arguments: "context" }, { parts: [] }),
    /answered by the dcp plugin/,
  );
  assert.equal(client.calls.prompts.length, 1);
  const [prompt] = client.calls.prompts;
  assert.equal(prompt.path.id, SID);
  assert.equal(prompt.body.noReply, true);
  assert.deepEqual(prompt.body.parts, [{ type: "text", text: "stub context (3 messages)", ignored: true }]);
});

test("a /dcp command in a session not yet synced fetches and sends its messages", async (t) => {
  const { hooks, client, requests } = await makePlugin(t, { stored: conversation(3) });
  await assert.rejects(hooks["command.execute.before"]({ command: "dcp", sessionID: SID, arguments: "stats" }, { parts: [] }));
  const cmd = requests().find((r) => r.op === "command");
  assert.equal(client.calls.fetched, 1);
  assert.equal(cmd.reset, true);
  assert.equal(cmd.messages.length, 4);
  assert.equal(client.calls.prompts[0].body.parts[0].text, "stub stats (4 messages)");
});

test("a /dcp command after a transform sends no messages", async (t) => {
  const { hooks, requests } = await makePlugin(t);
  await transform(hooks, conversation(2));
  await assert.rejects(hooks["command.execute.before"]({ command: "dcp", sessionID: SID, arguments: "" }, { parts: [] }));
  const cmd = requests().find((r) => r.op === "command");
  assert.equal("messages" in cmd, false);
  assert.equal(cmd.arguments, "");
});

test("a /dcp command sends what was stored since the last request (its answer), as a delta", async (t) => {
  const { hooks, client, requests } = await makePlugin(t, { stored: conversation(3) });
  await transform(hooks, conversation(2));
  await assert.rejects(hooks["command.execute.before"]({ command: "dcp", sessionID: SID, arguments: "stats" }, { parts: [] }));
  const commands = requests().filter((r) => r.op === "command");
  assert.deepEqual(commands.map((r) => [r.reset, r.base, r.messages.length]), [[false, 3, 1]]);
  assert.equal(client.calls.fetched, 1);
  assert.equal(client.calls.prompts[0].body.parts[0].text, "stub stats (4 messages)");
});

test("a /dcp command whose session the bridge dropped resends the session in full", async (t) => {
  // Nothing stored to read (the host's messages call failed): the command goes without messages.
  const { hooks, client, requests } = await makePlugin(t, { env: { STUB_FORGET_ON_COMMAND: "1" }, stored: [] });
  await transform(hooks, conversation(2));
  await assert.rejects(hooks["command.execute.before"]({ command: "dcp", sessionID: SID, arguments: "stats" }, { parts: [] }));
  const commands = requests().filter((r) => r.op === "command");
  assert.deepEqual(commands.map((r) => [("messages" in r), r.reset ?? null]), [[false, null], [true, true]]);
  assert.equal(client.calls.fetched, 2);
});

// Runs a handled `/dcp context` (the shim throws to stop OpenCode) and returns what the stub got.
async function dcpContextRequest(plugin) {
  await assert.rejects(plugin.hooks["command.execute.before"]({ command: "dcp", sessionID: SID, arguments: "context" }, { parts: [] }));
  return plugin.requests().find((r) => r.op === "command");
}

test("a /dcp command carries the model seen in chat.params", async (t) => {
  const plugin = await makePlugin(t);
  await transform(plugin.hooks, conversation(1));
  await plugin.hooks["chat.params"]({ sessionID: SID, model: { id: "m1", providerID: "p1", limit: { context: 64000, output: 100 } } }, {});
  const cmd = await dcpContextRequest(plugin);
  assert.deepEqual(cmd.model, { providerID: "p1", modelID: "m1", limit: { context: 64000, output: 100 } });
});

test("a /dcp command after a transform carries the transform's model", async (t) => {
  const plugin = await makePlugin(t);
  await transform(plugin.hooks, conversation(1));
  assert.deepEqual((await dcpContextRequest(plugin)).model, { providerID: "fake", modelID: "fake-model" });
});

test("a /dcp command in a session not yet synced carries the user's model with its configured limit", async (t) => {
  const providers = [{ id: "fake", models: { "fake-model": { id: "fake-model", limit: { context: 64000, output: 4096 } } } }];
  const plugin = await makePlugin(t, { client: fakeClient(conversation(2), providers) });
  const cmd = await dcpContextRequest(plugin);
  assert.deepEqual(cmd.model, { providerID: "fake", modelID: "fake-model", limit: { context: 64000, output: 4096 } });
});

test("a /dcp command the bridge does not handle goes on to the model", async (t) => {
  const { hooks, client } = await makePlugin(t);
  await transform(hooks, conversation(1));
  const output = { parts: [{ type: "text", text: "template" }] };
  await hooks["command.execute.before"]({ command: "dcp", sessionID: SID, arguments: "passthrough" }, output);
  assert.equal(client.calls.prompts.length, 0);
  assert.deepEqual(output.parts, [{ type: "text", text: "template" }]);
});

test("other commands are left alone", async (t) => {
  const { hooks, client, requests } = await makePlugin(t);
  await hooks["command.execute.before"]({ command: "review", sessionID: SID, arguments: "x" }, { parts: [] });
  assert.equal(client.calls.prompts.length, 0);
  assert.equal(requests().filter((r) => r.op === "command").length, 0);
});

test("a /dcp command with the bridge down answers with the reason and still stops the command", async (t) => {
  const { hooks, client } = await makePlugin(t, { options: { command: [path.join(tmpDir(t), "no-such-python")] } });
  await assert.rejects(hooks["command.execute.before"]({ command: "dcp", sessionID: SID, arguments: "context" }, { parts: [] }));
  assert.match(client.calls.prompts[0].body.parts[0].text, /bridge is unavailable/);
});

test("the config hook registers /dcp", async (t) => {
  const { hooks } = await makePlugin(t);
  const config = {};
  await hooks.config(config);
  assert.equal(config.command.dcp.template, "/dcp $ARGUMENTS");
});

test("the config hook keeps a user-defined /dcp command", async (t) => {
  const { hooks } = await makePlugin(t);
  const config = { command: { dcp: { template: "mine" } } };
  await hooks.config(config);
  assert.equal(config.command.dcp.template, "mine");
});

test("the bridge handle is not an enumerable hook", async (t) => {
  const { hooks } = await makePlugin(t);
  assert.deepEqual(Object.keys(hooks).sort(), [
    "chat.params",
    "command.execute.before",
    "config",
    "dispose",
    "experimental.chat.messages.transform",
    "experimental.chat.system.transform",
    "tool",
  ]);
});

test("DCP_BRIDGE_COMMAND overrides the command line", async (t) => {
  const dir = tmpDir(t);
  const log = path.join(dir, "env.jsonl");
  process.env.DCP_BRIDGE_COMMAND = JSON.stringify([process.execPath, STUB]);
  process.env.STUB_LOG = log;
  let hooks;
  try {
    hooks = await Plugin({ client: fakeClient(), directory: dir }, {});
  } finally {
    delete process.env.DCP_BRIDGE_COMMAND;
    delete process.env.STUB_LOG;
  }
  t.after(() => hooks.__dcpBridge.stop());
  await transform(hooks, conversation(1));
  assert.deepEqual(hooks.__dcpBridge.settings.command, [process.execPath, STUB]);
  assert.equal(fs.readFileSync(log, "utf8").includes('"op":"transform"'), true);
});

test("DCP_PYTHON picks the interpreter of the default command", async (t) => {
  process.env.DCP_PYTHON = "/opt/py/bin/python3.12";
  let hooks;
  try {
    hooks = await Plugin({ client: fakeClient(), directory: tmpDir(t) }, { backoffMs: 10 });
  } finally {
    delete process.env.DCP_PYTHON;
  }
  t.after(() => hooks.__dcpBridge.stop());
  assert.deepEqual(hooks.__dcpBridge.settings.command, ["/opt/py/bin/python3.12", "-m", "dcp_plugin.adapters.bridge"]);
});

test("stopping a bridge whose spawn failed signals no other process", async (t) => {
  // Regression: a failed spawn briefly has pid 0, and kill(0) would hit this whole process group.
  let hits = 0;
  const onTerm = () => hits++;
  process.on("SIGTERM", onTerm);
  t.after(() => process.off("SIGTERM", onTerm));
  const hooks = await Plugin({ client: fakeClient(), directory: tmpDir(t) }, { command: [path.join(tmpDir(t), "no-such-python")] });
  hooks.__dcpBridge.stop();
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(hits, 0);
});

test("every line the shim logs starts with dcp, since OpenCode's log drops the service name", async (t) => {
  const { hooks, client } = await makePlugin(t);
  await transform(hooks, conversation(1));
  await waitFor(() => client.calls.logs.some((l) => /started bridge/.test(l.message)));
  assert.ok(client.calls.logs.length > 0);
  for (const line of client.calls.logs) assert.match(line.message, /^dcp/, line.message);
});
