// tools.test.mjs: the plugin's tools as the shim offers them to OpenCode (against the stub bridge):
// registered from the bridge's answer, run through the bridge, refusals thrown, the system text.
import { test } from "node:test";
import assert from "node:assert/strict";

import { SID, conversation, fakeClient, makePlugin, transform } from "./helpers.mjs";

const DISCARD = {
  name: "discard",
  description: "Remove tool outputs.",
  parameters: { type: "object", properties: { ids: { type: "array", items: { type: "string" } }, reason: { type: "string", enum: ["noise", "done"] } }, required: ["ids", "reason"] },
};
const RESTORE = { name: "restore", description: "Get outputs back.", parameters: { type: "object", properties: { ids: { type: "array" } }, required: ["ids"] } };
const SYSTEM = "[dcp: instructions] the tools are for pruning";
const WITH_TOOLS = { STUB_TOOLS: JSON.stringify([DISCARD, RESTORE]), STUB_SYSTEM: SYSTEM };

const context = (extra = {}) => ({ sessionID: SID, messageID: "msg_x", callID: "call_x", agent: "build", abort: new AbortController().signal, ...extra });

test("the tools the bridge offers are registered in OpenCode's shape", async (t) => {
  const { hooks } = await makePlugin(t, { env: WITH_TOOLS });
  assert.deepEqual(Object.keys(hooks.tool), ["discard", "restore"]);
  assert.equal(hooks.tool.discard.description, DISCARD.description);
  assert.deepEqual(hooks.tool.discard.args, DISCARD.parameters.properties);
  assert.equal(typeof hooks.tool.discard.execute, "function");
});

test("a bridge that offers no tools registers none and adds nothing to the system prompt", async (t) => {
  const { hooks } = await makePlugin(t);
  assert.deepEqual(Object.keys(hooks.tool), []);
  const output = { system: ["base"] };
  await hooks["experimental.chat.system.transform"]({ sessionID: SID }, output);
  assert.deepEqual(output.system, ["base"]);
});

test("the system text is appended once, the same on every request", async (t) => {
  const { hooks } = await makePlugin(t, { env: WITH_TOOLS });
  const outputs = [{ system: ["base"] }, { system: ["base"] }];
  for (const output of outputs) await hooks["experimental.chat.system.transform"]({ sessionID: SID }, output);
  assert.deepEqual(outputs, [{ system: ["base", SYSTEM] }, { system: ["base", SYSTEM] }]);
});

test("a call runs through the bridge with its session, arguments and call id", async (t) => {
  const { hooks, requests } = await makePlugin(t, { env: WITH_TOOLS });
  await transform(hooks, conversation(2));
  const result = await hooks.tool.discard.execute({ ids: ["3kq7"], reason: "noise" }, context());
  assert.deepEqual(result, { output: 'stub ran discard {"ids":["3kq7"],"reason":"noise"} call call_x (3 messages)', title: "stub discard", metadata: {} });
  const [sent] = requests().filter((r) => r.op === "tool");
  assert.deepEqual([sent.sessionID, sent.name, sent.callID, "messages" in sent], [SID, "discard", "call_x", false]);
});

test("a refused call throws its text, so OpenCode records a failed call", async (t) => {
  const { hooks } = await makePlugin(t, { env: WITH_TOOLS });
  await transform(hooks, conversation(1));
  await assert.rejects(hooks.tool.discard.execute({ ids: ["x"], refuse: true }, context()), /^Error: stub ran discard/);
});

test("a call in a session the bridge has not seen sends the stored messages", async (t) => {
  const stored = conversation(3);
  const { hooks, requests } = await makePlugin(t, { env: WITH_TOOLS, client: fakeClient(stored) });
  const result = await hooks.tool.restore.execute({ ids: ["a"] }, context());
  assert.match(result.output, /\(4 messages\)$/);
  const [sent] = requests().filter((r) => r.op === "tool");
  assert.deepEqual([sent.reset, sent.messages.length], [true, 4]);
});

test("a call while the bridge is down throws and says nothing was changed", async (t) => {
  const { hooks } = await makePlugin(t, { env: WITH_TOOLS });
  hooks.__dcpBridge.bridge.stop();
  await assert.rejects(hooks.tool.restore.execute({ ids: ["a"] }, context()), /pruning bridge is unavailable .*nothing was changed/);
});

// A child that never answers: loading must still finish (the test's own timeout catches a hang).
test("loading waits for the tool definitions at most toolsWaitMs", { timeout: 20000 }, async (t) => {
  const silent = [process.execPath, "-e", "setInterval(() => {}, 1000)"];
  const { hooks } = await makePlugin(t, { env: WITH_TOOLS, options: { toolsWaitMs: 50, startupTimeoutMs: 600000, command: silent } });
  assert.deepEqual(Object.keys(hooks.tool), []);
});

test("a second copy of the plugin in the same project registers no tools", async (t) => {
  const first = await makePlugin(t, { env: WITH_TOOLS });
  const second = await makePlugin(t, { env: WITH_TOOLS, dir: first.dir });
  assert.deepEqual([Object.keys(first.hooks.tool).length, Object.keys(second.hooks.tool).length], [2, 0]);
});
