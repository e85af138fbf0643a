// sync.test.mjs: what the shim resends when (changed versus rewritten history) and how it applies
// patches (by position, checked against ids), against the stub bridge.
import { test } from "node:test";
import assert from "node:assert/strict";

import { SID, conversation, makePlugin, transform } from "./helpers.mjs";

const ids = (request) => request.messages.map((m) => m.info.id);
const delta = (request) => [request.reset, request.base, request.total];

function toolPart(step, state) {
  return { id: `prt_${step}_t`, sessionID: SID, messageID: `msg_a${step}`, type: "tool", tool: "read", callID: `call_${step}`, state };
}

// A conversation whose last step's tool part is still running.
function withRunningTail(steps) {
  const messages = conversation(steps);
  messages[steps].parts[1] = toolPart(steps, { status: "running", input: { filePath: "/p/slow.txt" }, time: { start: 1 } });
  return messages;
}

function userMessage(id, text, extra = []) {
  return {
    info: { id, sessionID: SID, role: "user", model: { providerID: "fake", modelID: "fake-model" } },
    parts: [{ id: `prt_${id}`, sessionID: SID, messageID: id, type: "text", text }, ...extra],
  };
}

// Wraps every message so that reading its `parts` is counted: the work a request does per message.
function countingParts(messages) {
  const read = new Set();
  const wrapped = messages.map(
    (message, index) =>
      new Proxy(message, {
        get(target, key, receiver) {
          if (key === "parts") read.add(index);
          return Reflect.get(target, key, receiver);
        },
      }),
  );
  return { wrapped, read };
}

test("a tool part that finishes after it was sent is resent from its message without a reset", async (t) => {
  const { hooks, transforms } = await makePlugin(t);
  await transform(hooks, withRunningTail(3));
  await transform(hooks, conversation(4));
  const second = transforms()[1];
  assert.deepEqual(delta(second), [false, 3, 5]);
  assert.deepEqual(ids(second), ["msg_a3", "msg_a4"]);
  assert.equal(second.messages[0].parts[1].state.status, "completed");
});

test("a running tool part in an older message is still watched after later messages arrive", async (t) => {
  const { hooks, transforms } = await makePlugin(t);
  const first = withRunningTail(2);
  await transform(hooks, first);
  await transform(hooks, [...structuredClone(first), ...conversation(4).slice(3)]);
  await transform(hooks, conversation(5));
  const third = transforms()[2];
  assert.deepEqual(delta(third), [false, 2, 6]);
  assert.deepEqual(ids(third), ["msg_a2", "msg_a3", "msg_a4", "msg_a5"]);
});

test("a message that gained parts since it was sent is resent from its index", async (t) => {
  const { hooks, transforms } = await makePlugin(t);
  await transform(hooks, conversation(2));
  const grown = conversation(3);
  grown[2].parts.push({ id: "prt_2_f", sessionID: SID, messageID: "msg_a2", type: "step-finish" });
  await transform(hooks, grown);
  assert.deepEqual(delta(transforms()[1]), [false, 2, 4]);
  assert.deepEqual(ids(transforms()[1]), ["msg_a2", "msg_a3"]);
});

test("the previous user message losing a reminder part is resent from its index", async (t) => {
  // OpenCode's plan mode adds a synthetic part to the latest user message of every request.
  const { hooks, transforms } = await makePlugin(t);
  const reminder = { id: "prt_reminder", sessionID: SID, messageID: "msg_u2", type: "text", text: "plan mode", synthetic: true };
  const turn = (withReminder) => [...conversation(1), userMessage("msg_u2", "next", withReminder ? [reminder] : []), ...conversation(3).slice(3)];
  await transform(hooks, turn(true));
  await transform(hooks, [...turn(false), userMessage("msg_u4", "again", [reminder])]);
  const second = transforms()[1];
  assert.deepEqual(delta(second), [false, 2, 5]);
  assert.deepEqual(ids(second), ["msg_u2", "msg_a3", "msg_u4"]);
});

test("an undo followed by new messages resends everything with a reset", async (t) => {
  const { hooks, transforms } = await makePlugin(t);
  await transform(hooks, conversation(4));
  const redone = conversation(2);
  for (const id of ["msg_b1", "msg_b2", "msg_b3"]) redone.push(userMessage(id, "redo"));
  await transform(hooks, redone);
  assert.deepEqual(delta(transforms()[1]), [true, 0, 6]);
});

test("an older message changed in place is found by the rolling check and resent from the earliest change", async (t) => {
  const { hooks, transforms } = await makePlugin(t);
  const history = conversation(99);
  await transform(hooks, structuredClone(history));
  for (const step of [40, 10]) history[step].parts[1].state.time = { start: 1, end: 2, compacted: 3 };
  // 100 messages, 32 re-checked per request: every message is checked within four requests.
  for (let i = 0; i < 4; i++) await transform(hooks, structuredClone(history));
  const later = transforms().slice(1);
  const resends = later.filter((r) => r.base < r.total);
  assert.equal(resends.length, 1);
  assert.deepEqual(delta(resends[0]), [false, 10, 100]);
  assert.equal(later.every((r) => r.reset === false), true);
});

test("a warm request reads a bounded number of messages whatever the history's length", async (t) => {
  const { hooks } = await makePlugin(t);
  const history = conversation(2000, { prune: [5, 500, 1500] });
  await transform(hooks, structuredClone(history.slice(0, 2000)));
  const { wrapped, read } = countingParts(structuredClone(history));
  await transform(hooks, wrapped);
  assert.equal(wrapped[500].parts[1].state.output, "[pruned by stub]");
  // One new message, the watched ones, the rolling window and the three patched ones.
  assert.ok(read.size <= 40, `read the parts of ${read.size} messages`);
});

test("a patch lands on the part at its position when other parts share its ids", async (t) => {
  const { hooks } = await makePlugin(t);
  const messages = conversation(3, { prune: [2] });
  for (const step of [2, 3]) {
    messages[step].info.id = "msg_dup";
    messages[step].parts[1].id = "prt_dup";
    messages[step].parts[1].messageID = "msg_dup";
  }
  await transform(hooks, messages);
  assert.equal(messages[2].parts[1].state.output, "[pruned by stub]");
  assert.equal(messages[3].parts[1].state.output, "content 3");
});

const target = { messageIndex: 1, partIndex: 1, messageID: "msg_a1", partID: "prt_1_t", callID: "call_1", field: "output" };

test("a patch whose part id does not match its position is skipped and logged once", async (t) => {
  const wrong = { ...target, partID: "prt_other", value: "WRONG" };
  const { hooks, client } = await makePlugin(t, { env: { STUB_EXTRA_PATCHES: JSON.stringify([wrong]) } });
  const first = await transform(hooks, conversation(2));
  const second = await transform(hooks, conversation(3));
  assert.deepEqual([first[1].parts[1].state.output, second[1].parts[1].state.output], ["content 1", "content 1"]);
  const warnings = client.calls.logs.filter((l) => /skipped 1 patch/.test(l.message));
  assert.equal(warnings.length, 1);
});

test("a patch whose call id does not match the part's is skipped", async (t) => {
  const wrong = { ...target, callID: "call_9", value: "WRONG" };
  const { hooks } = await makePlugin(t, { env: { STUB_EXTRA_PATCHES: JSON.stringify([wrong]) } });
  const messages = await transform(hooks, conversation(2));
  assert.equal(messages[1].parts[1].state.output, "content 1");
});

test("a patch pointing at a part that is not a tool part is skipped", async (t) => {
  const wrong = { ...target, partIndex: 0, partID: "prt_1_s", value: "WRONG" };
  const { hooks } = await makePlugin(t, { env: { STUB_EXTRA_PATCHES: JSON.stringify([wrong]) } });
  const messages = await transform(hooks, conversation(2));
  assert.equal("state" in messages[1].parts[0], false);
});

test("a later patch for the same part and field replaces the earlier one", async (t) => {
  const later = { ...target, value: "second" };
  const { hooks } = await makePlugin(t, { env: { STUB_INCREMENTAL: "1", STUB_EXTRA_PATCHES: JSON.stringify([later]) } });
  const first = await transform(hooks, conversation(2, { prune: [1] }));
  const second = await transform(hooks, conversation(3, { prune: [1] }));
  assert.deepEqual([first[1].parts[1].state.output, second[1].parts[1].state.output], ["second", "second"]);
});

test("a kept object value is not altered by later edits of the patched part", async (t) => {
  const { hooks } = await makePlugin(t, { env: { STUB_INPUT_PATCH: "1", STUB_INCREMENTAL: "1" } });
  const first = await transform(hooks, conversation(2, { prune: [1] }));
  first[1].parts[1].state.input.pruned = "edited by someone else";
  const second = await transform(hooks, conversation(3, { prune: [1] }));
  assert.deepEqual(second[1].parts[1].state.input, { pruned: true });
});

test("a cuts patch replaces parts of the original string", async (t) => {
  const cuts = { ...target, cuts: [[0, 7, "CONTENT"], [8, 9, "#1"]], expect: { length: 9 } };
  const { hooks } = await makePlugin(t, { env: { STUB_EXTRA_PATCHES: JSON.stringify([cuts]) } });
  const first = await transform(hooks, conversation(2));
  const second = await transform(hooks, conversation(3));
  assert.deepEqual([first[1].parts[1].state.output, second[1].parts[1].state.output], ["CONTENT #1", "CONTENT #1"]);
});

test("a cut with an empty range inserts text, and a patch with no cuts drops the kept one", async (t) => {
  const inserted = { ...target, cuts: [[9, 9, "\n\n[dcp: instructions - a list]"]], expect: { length: 9 } };
  const { hooks } = await makePlugin(t, { env: { STUB_EXTRA_PATCHES: JSON.stringify([inserted]) } });
  const messages = await transform(hooks, conversation(2));
  assert.equal(messages[1].parts[1].state.output, "content 1\n\n[dcp: instructions - a list]");
  const takenOut = { ...target, cuts: [], expect: { length: 9 } };
  const again = await makePlugin(t, { env: { STUB_EXTRA_PATCHES: JSON.stringify([inserted, takenOut]) } });
  const restored = await transform(again.hooks, conversation(2));
  assert.equal(restored[1].parts[1].state.output, "content 1");
  assert.equal([...again.hooks.__dcpBridge.sync.sessions.get(SID).patches.keys()].includes("1/1/output"), false);
});

test("a cuts patch for a string of another length is skipped", async (t) => {
  const cuts = { ...target, cuts: [[0, 7, "CONTENT"]], expect: { length: 10 } };
  const { hooks } = await makePlugin(t, { env: { STUB_EXTRA_PATCHES: JSON.stringify([cuts]) } });
  const messages = await transform(hooks, conversation(2));
  assert.equal(messages[1].parts[1].state.output, "content 1");
});

test("a cuts patch with overlapping cuts is skipped", async (t) => {
  const cuts = { ...target, cuts: [[0, 5, "A"], [3, 7, "B"]], expect: { length: 9 } };
  const { hooks } = await makePlugin(t, { env: { STUB_EXTRA_PATCHES: JSON.stringify([cuts]) } });
  const messages = await transform(hooks, conversation(2));
  assert.equal(messages[1].parts[1].state.output, "content 1");
});

test("a cuts patch counts offsets in UTF-16 code units", async (t) => {
  const cuts = { ...target, cuts: [[2, 3, "!"]], expect: { length: 3 } };
  const { hooks } = await makePlugin(t, { env: { STUB_EXTRA_PATCHES: JSON.stringify([cuts]) } });
  const messages = conversation(2);
  messages[1].parts[1].state.output = "\u{1F600}x"; // one emoji is two code units
  await transform(hooks, messages);
  assert.equal(messages[1].parts[1].state.output, "\u{1F600}!");
});

test("a patch without a position is ignored and logged", async (t) => {
  const old = { messageID: "msg_a1", partID: "prt_1_t", callID: "call_1", field: "output", value: "WRONG" };
  const { hooks, client } = await makePlugin(t, { env: { STUB_EXTRA_PATCHES: JSON.stringify([old]) } });
  const messages = await transform(hooks, conversation(2));
  assert.equal(messages[1].parts[1].state.output, "content 1");
  assert.equal(client.calls.logs.filter((l) => /ignored 1 malformed patch/.test(l.message)).length, 1);
});

test("malformed entries in the list never break the request", async (t) => {
  const { hooks } = await makePlugin(t);
  const odd = [...conversation(2, { prune: [1] }), null, 7, { parts: "not a list" }, { info: null, parts: [null, { type: "tool", state: null }] }];
  await transform(hooks, odd);
  await transform(hooks, [...odd, { info: { id: "msg_z", sessionID: SID, role: "user" }, parts: [] }]);
  const messages = await transform(hooks, conversation(3, { prune: [1] }));
  assert.equal(messages[1].parts[1].state.output, "[pruned by stub]");
});

test("a cuts patch counted in code points on a string with an emoji is skipped", async (t) => {
  const cuts = { ...target, cuts: [[1, 2, "!"]], expect: { length: 3 } }; // Python's len("\u{1F600}xy") is 3
  const { hooks } = await makePlugin(t, { env: { STUB_EXTRA_PATCHES: JSON.stringify([cuts]) } });
  const messages = conversation(2);
  messages[1].parts[1].state.output = "\u{1F600}xy";
  await transform(hooks, messages);
  assert.equal(messages[1].parts[1].state.output, "\u{1F600}xy");
});
