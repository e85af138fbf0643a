// hardening.test.mjs: what the shim does with kept patches once OpenCode changed the output they
// were made for (its compaction clears old outputs), and what it shows when its bridge crashes,
// against the stub bridge.
import { test } from "node:test";
import assert from "node:assert/strict";

import path from "node:path";

import { conversation, makePlugin, tmpDir, transform, waitFor } from "./helpers.mjs";

const CLEARED = "[Old tool result content cleared]";
const target = { messageIndex: 1, partIndex: 1, messageID: "msg_a1", partID: "prt_1_t", callID: "call_1", field: "output" };

function cleared(steps) {
  const messages = conversation(steps);
  const state = messages[1].parts[1].state;
  state.output = CLEARED;
  state.time = { start: 1, end: 2, compacted: 1700000000000 };
  return messages;
}

test("a kept cut patch is not written over an output the host cleared since", async (t) => {
  const list = { ...target, cuts: [[9, 9, "\n\n[dcp: a list]"]], expect: { length: 9 } };
  const { hooks } = await makePlugin(t, { env: { STUB_INCREMENTAL: "1", STUB_EXTRA_PATCHES: JSON.stringify([list]) } });
  const first = await transform(hooks, conversation(2));
  assert.equal(first[1].parts[1].state.output, "content 1\n\n[dcp: a list]");
  const second = await transform(hooks, cleared(3));
  assert.equal(second[1].parts[1].state.output, CLEARED);
});

test("a kept cut patch is not written over an output the host replaced by one of another length", async (t) => {
  const cuts = { ...target, cuts: [[0, 7, "[dcp: x]"]], expect: { length: 9 } };
  const { hooks } = await makePlugin(t, { env: { STUB_INCREMENTAL: "1", STUB_EXTRA_PATCHES: JSON.stringify([cuts]) } });
  await transform(hooks, conversation(2));
  const replaced = conversation(3);
  replaced[1].parts[1].state.output = "content one, rewritten";
  const second = await transform(hooks, replaced);
  assert.equal(second[1].parts[1].state.output, "content one, rewritten");
});

// N12: a bridge that dies during a request is shown once (like one that cannot start), logged each time.
test("a bridge crash during a request shows one toast and logs the reason", async (t) => {
  const dir = tmpDir(t);
  const { hooks, client } = await makePlugin(t, { env: { STUB_CRASH_ONCE: path.join(dir, "crashed") } });
  hooks.__dcpBridge.registry.crashShown = false;
  await transform(hooks, conversation(2, { prune: [1] }));
  await waitFor(async () => {
    const messages = conversation(3, { prune: [1] });
    await transform(hooks, messages);
    return messages[1].parts[1].state.output === "[pruned by stub]";
  });
  await transform(hooks, conversation(4, { prune: [1] }));
  const shown = client.calls.toasts.filter((toast) => /stopped during a request/.test(toast.message));
  assert.equal(shown.length, 1);
  assert.match(shown[0].message, /exited with code 3/);
  assert.equal(client.calls.logs.filter((l) => /stopped during a request/.test(l.message)).length, 1);
});

test("a crash is shown once per OpenCode process, however many crashes follow", async (t) => {
  const dir = tmpDir(t);
  const first = await makePlugin(t, { env: { STUB_CRASH_ONCE: path.join(dir, "first") } });
  first.hooks.__dcpBridge.registry.crashShown = false;
  await transform(first.hooks, conversation(2));
  const second = await makePlugin(t, { env: { STUB_CRASH_ONCE: path.join(dir, "second") } });
  await transform(second.hooks, conversation(2));
  const toasts = [...first.client.calls.toasts, ...second.client.calls.toasts];
  assert.equal(toasts.filter((toast) => /stopped during a request/.test(toast.message)).length, 1);
});

// R3: a kept whole-output value names the output it was made for; OpenCode changing that output in
// place later (cleared, emptied, rewritten) is never overwritten with the placeholder again.
const whole = { ...target, value: "[dcp: gone]", expect: { length: 9, head: "content 1", tail: "content 1" } };

async function changedInPlace(t, changed) {
  const { hooks } = await makePlugin(t, { env: { STUB_INCREMENTAL: "1", STUB_EXTRA_PATCHES: JSON.stringify([whole]) } });
  const first = await transform(hooks, conversation(2));
  assert.equal(first[1].parts[1].state.output, "[dcp: gone]");
  const messages = conversation(3);
  messages[1].parts[1].state.output = changed;
  const second = await transform(hooks, messages);
  assert.equal(second[1].parts[1].state.output, changed);
}

test("a kept whole-output patch is not written over an output the host changed in place: null", (t) => changedInPlace(t, null));
test("a kept whole-output patch is not written over an output the host changed in place: empty", (t) => changedInPlace(t, ""));
test("a kept whole-output patch is not written over an output the host changed in place: short", (t) => changedInPlace(t, "ok"));
test("a kept whole-output patch is not written over an output the host changed in place: rewritten", (t) => changedInPlace(t, "new text ".repeat(334)));
test("a kept whole-output patch is not written over an output the host changed in place: same length", (t) => changedInPlace(t, "content X"));

test("a kept whole-output patch is still written over the output it was made for", async (t) => {
  const { hooks } = await makePlugin(t, { env: { STUB_INCREMENTAL: "1", STUB_EXTRA_PATCHES: JSON.stringify([whole]) } });
  await transform(hooks, conversation(2));
  const second = await transform(hooks, conversation(3));
  assert.equal(second[1].parts[1].state.output, "[dcp: gone]");
});
