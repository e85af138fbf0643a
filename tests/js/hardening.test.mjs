// hardening.test.mjs: what the shim does with kept patches once OpenCode changed the output they
// were made for (its compaction clears old outputs), against the stub bridge.
import { test } from "node:test";
import assert from "node:assert/strict";

import { conversation, makePlugin, transform } from "./helpers.mjs";

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
