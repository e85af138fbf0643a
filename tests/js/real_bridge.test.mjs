// real_bridge.test.mjs: the shim against the real `python -m dcp_plugin.adapters.bridge` (no OpenCode), so
// drift between the two ends of the protocol shows even when the OpenCode e2e tests skip.
// The interpreter comes from DCP_TEST_PYTHON (tests/js/conftest.py sets it to the one running
// pytest); without it, `python3` is tried and the tests skip if it cannot run the bridge. Either
// way the bridge imports this checkout's dcp_plugin (PYTHONPATH), not some other install.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { SID, fakeClient, tmpDir, transform } from "./helpers.mjs";
import Plugin from "../../dcp_plugin/adapters/bridge/dcp_bridge.mjs";

const PYTHON = process.env.DCP_TEST_PYTHON || "python3";
const CHECKOUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const PYTHONPATH = [CHECKOUT, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter);
const python = (code, ...args) =>
  spawnSync(PYTHON, ["-c", code, ...args], { encoding: "utf8", cwd: os.tmpdir(), env: { ...process.env, PYTHONPATH } });
const probe = python("import dcp_plugin.pipeline.placeholders");
const available = probe.status === 0;
if (!available && process.env.DCP_TEST_PYTHON) {
  throw new Error(`DCP_TEST_PYTHON=${PYTHON} cannot import dcp_plugin: ${probe.stderr || probe.error}`);
}
const skip = available ? false : `${PYTHON} cannot import dcp_plugin (set DCP_TEST_PYTHON)`;
// The duplicate placeholder as the bridge writes it for a call: it names the call's id.
const DUPLICATE = (message) =>
  python(
    "import sys; from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER, placeholder_for; print(placeholder_for(DUPLICATE_PLACEHOLDER, sys.argv[1]))",
    message.parts[0].callID,
  ).stdout.trim();
const LONG = "line of a file that is long enough to be worth pruning\n".repeat(20);

let next = 0;
const newId = (kind) => `${kind}_${String(++next).padStart(6, "0")}`;

function user(text = "go on") {
  const id = newId("msg");
  return { info: { id, sessionID: SID, role: "user", model: { providerID: "fake", modelID: "fake-model" } }, parts: [{ id: newId("prt"), sessionID: SID, messageID: id, type: "text", text }] };
}

function read(file, { status = "completed" } = {}) {
  const id = newId("msg");
  const state = status === "completed"
    ? { status, input: { filePath: file }, output: `${file}\n${LONG}`, title: file, metadata: {}, time: { start: 1, end: 2 } }
    : { status, input: { filePath: file }, time: { start: 1 } };
  return {
    info: { id, sessionID: SID, role: "assistant" },
    parts: [{ id: newId("prt"), sessionID: SID, messageID: id, type: "tool", tool: "read", callID: newId("call"), state }],
  };
}

const outputOf = (message) => message.parts[0].state.output;

// The plugin with the real bridge as its child, isolated from the user's config and statistics;
// `sent` records every request body the shim writes.
async function realPlugin(t) {
  const root = tmpDir(t);
  const home = path.join(root, "home");
  const project = path.join(root, "project");
  fs.mkdirSync(path.join(project, ".opencode"), { recursive: true });
  // What reaches the provider, request by request: every prune written at once (the cache
  // scheduler, which may wait for a prune to pay, has its own tests on the Python side).
  fs.writeFileSync(path.join(project, ".opencode", "dcp.jsonc"), '{"cache": {"scheduler": false}}\n');
  const env = {
    PYTHONPATH,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local/share"),
    XDG_STATE_HOME: path.join(home, ".local/state"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    OPENCODE_CONFIG_DIR: path.join(root, "none"),
  };
  const client = fakeClient();
  const hooks = await Plugin({ client, directory: project, worktree: project, project: { id: "p" } }, { python: PYTHON, env, timeoutMs: 60000, startupTimeoutMs: 60000, commandTimeoutMs: 60000 });
  t.after(() => hooks.__dcpBridge.stop());
  const bridge = hooks.__dcpBridge.bridge;
  const sent = [];
  const request = bridge.request.bind(bridge);
  bridge.request = (body, timeoutMs) => {
    sent.push(body);
    return request(body, timeoutMs);
  };
  return { hooks, client, sent, project, transforms: () => sent.filter((b) => b.op === "transform") };
}

test("a session against the real bridge: duplicates, a late tool part, an undo and /dcp", { skip }, async (t) => {
  const { hooks, client, sent, transforms } = await realPlugin(t);
  const a1 = read("/p/a.txt");
  const a2 = read("/p/a.txt");
  const history = [user("read a twice"), a1, a2];

  // 1. A duplicate read: the older one reaches the model as the placeholder.
  let out = await transform(hooks, structuredClone(history));
  assert.equal(outputOf(out[1]), DUPLICATE(a1));
  assert.match(outputOf(out[2]), /long enough/);
  assert.deepEqual([transforms()[0].reset, transforms()[0].base], [true, 0]);

  // 2. More requests on freshly built lists: only new messages go out, placeholders come back.
  const b = read("/p/b.txt", { status: "running" });
  history.push(user("and b"), b);
  out = await transform(hooks, structuredClone(history));
  assert.equal(outputOf(out[1]), DUPLICATE(a1));
  assert.deepEqual([transforms()[1].reset, transforms()[1].base, transforms()[1].messages.length], [false, 3, 2]);

  // 3. The b read finishes after later messages were sent: resent from its index, no reset,
  // and a later duplicate of it is pruned.
  history.push(user("meanwhile"));
  await transform(hooks, structuredClone(history));
  history[4] = read("/p/b.txt");
  history[4].info.id = b.info.id;
  history[4].parts[0] = { ...history[4].parts[0], id: b.parts[0].id, messageID: b.info.id, callID: b.parts[0].callID };
  history.push(read("/p/b.txt"));
  out = await transform(hooks, structuredClone(history));
  const late = transforms()[3];
  assert.deepEqual([late.reset, late.base, late.messages.map((m) => m.info.id)], [false, 4, [b.info.id, history[5].info.id, history[6].info.id]]);
  assert.equal(transforms().length, 4, "no resync round: the bridge took the delta");
  assert.equal(outputOf(out[4]), DUPLICATE(b));
  assert.equal(outputOf(out[1]), DUPLICATE(a1));

  // 4. An undo drops the second read of a: everything is resent and a1 is no longer obsolete.
  const undone = [history[0], history[1], history[3], history[4], history[5], history[6]];
  out = await transform(hooks, structuredClone(undone));
  assert.deepEqual([transforms()[4].reset, transforms()[4].base], [true, 0]);
  assert.match(outputOf(out[1]), /long enough/);
  assert.equal(outputOf(out[3]), DUPLICATE(b));

  // 5. /dcp context is answered by the bridge, stored without a model turn, never sent on.
  await assert.rejects(hooks["command.execute.before"]({ command: "dcp", sessionID: SID, arguments: "context" }, { parts: [] }), /answered by the dcp plugin/);
  const command = sent.find((b) => b.op === "command");
  assert.equal("messages" in command, false);
  const [prompt] = client.calls.prompts;
  const text = prompt.body.parts[0].text;
  assert.match(text, /context/i);
  assert.doesNotMatch(text, /unavailable|failed/);
  assert.equal(client.calls.logs.filter((l) => l.level === "warn" || l.level === "error").length, 0, JSON.stringify(client.calls.logs));
});

test("a /dcp command in a session the real bridge has not seen sends the stored messages", { skip }, async (t) => {
  const { hooks, client, sent } = await realPlugin(t);
  const stored = [user("read a twice"), read("/p/a.txt"), read("/p/a.txt")];
  client.session.messages = async () => ({ data: structuredClone(stored) });
  await assert.rejects(hooks["command.execute.before"]({ command: "dcp", sessionID: SID, arguments: "context" }, { parts: [] }));
  const command = sent.find((b) => b.op === "command");
  assert.deepEqual([command.reset, command.messages.length], [true, 3]);
  assert.doesNotMatch(client.calls.prompts[0].body.parts[0].text, /unavailable|failed/);
});

test("a /dcp command reads the session as stored now: the answer to the last request and its usage", { skip }, async (t) => {
  const { hooks, client, sent } = await realPlugin(t);
  const history = [user("read a"), read("/p/a.txt")];
  await transform(hooks, structuredClone(history));
  const answer = { info: { id: newId("msg"), sessionID: SID, role: "assistant", tokens: { input: 4321, output: 7, reasoning: 0, cache: { read: 0, write: 0 } } }, parts: [] };
  answer.parts.push({ id: newId("prt"), sessionID: SID, messageID: answer.info.id, type: "text", text: "done" });
  client.session.messages = async () => ({ data: structuredClone([...history, answer]) });
  await assert.rejects(hooks["command.execute.before"]({ command: "dcp", sessionID: SID, arguments: "context" }, { parts: [] }));
  const command = sent.find((b) => b.op === "command");
  assert.deepEqual([command.reset, command.base, command.messages.map((m) => m.info.id)], [false, 2, [answer.info.id]]);
  assert.match(client.calls.prompts[0].body.parts[0].text, /provider's count for the last request \(4,321\)/);
});

test("the real bridge offers the tools, and a discard the model calls prunes at the next request", { skip }, async (t) => {
  const { hooks, client } = await realPlugin(t);
  assert.deepEqual(Object.keys(hooks.tool), ["discard", "extract", "restore"]);
  const a = read("/p/a.txt");
  const history = [user("read a"), a, read("/p/b.txt")];
  await transform(hooks, structuredClone(history));
  const id = python("import sys; from dcp_plugin.pipeline.ids import short_id; print(short_id(sys.argv[1]))", a.parts[0].callID).stdout.trim();
  const ctx = { sessionID: SID, messageID: "msg_d", callID: "call_discard", agent: "build" };
  const result = await hooks.tool.discard.execute({ ids: [id], reason: "done" }, ctx);
  assert.match(result.output, /^Discarded 1 output/);
  const call = {
    info: { id: "msg_d", sessionID: SID, role: "assistant" },
    parts: [{ id: "prt_d", sessionID: SID, messageID: "msg_d", type: "tool", tool: "discard", callID: "call_discard",
              state: { status: "completed", input: { ids: [id], reason: "done" }, output: result.output, title: result.title, metadata: {}, time: { start: 1, end: 2 } } }],
  };
  history.push(call);
  const out = await transform(hooks, structuredClone(history));
  assert.match(outputOf(out[1]), new RegExp(`^\\[dcp: output discarded by the model: the task that needed it is done \\(id ${id}\\)\\]$`));
  const system = { system: ["base"] };
  await hooks["experimental.chat.system.transform"]({ sessionID: SID }, system);
  assert.match(system.system[1], /^\[dcp: instructions\]/);
  assert.equal(client.calls.logs.filter((l) => l.level === "warn" || l.level === "error").length, 0, JSON.stringify(client.calls.logs));
});

// R3: OpenCode changes an old output in place after it was pruned (nothing in the message's key
// changes, so only new messages are sent): the kept placeholder is not written over it.
async function keptOverChanged(t, changed) {
  const { hooks, transforms } = await realPlugin(t);
  const a1 = read("/p/a.txt");
  const history = [user("read a twice"), a1, read("/p/a.txt")];
  let out = await transform(hooks, structuredClone(history));
  assert.equal(outputOf(out[1]), DUPLICATE(a1));
  history[1].parts[0].state.output = changed;
  history.push(user("go on"));
  out = await transform(hooks, structuredClone(history));
  assert.deepEqual([transforms()[1].reset, transforms()[1].base], [false, 3], "only the new message was sent");
  assert.equal(outputOf(out[1]), changed);
}

test("the real bridge's kept placeholder is not written over an output changed in place: null", { skip }, (t) => keptOverChanged(t, null));
test("the real bridge's kept placeholder is not written over an output changed in place: empty", { skip }, (t) => keptOverChanged(t, ""));
test("the real bridge's kept placeholder is not written over an output changed in place: short", { skip }, (t) => keptOverChanged(t, "ok"));
test("the real bridge's kept placeholder is not written over an output changed in place: rewritten", { skip }, (t) => keptOverChanged(t, "new text ".repeat(334)));

// What Python's own hosts send for each list (a pluggy host writes the same decisions in place).
function pythonOutputs(project, lists) {
  const code = [
    "import copy, json, sys",
    "from dcp_plugin.config.model import DcpConfig",
    "from dcp_plugin.adapters.pluggy_host import DcpPlugin",
    "from dcp_plugin.host.runtime import Runtime",
    "lists = json.load(sys.stdin)",
    "runtime = Runtime(sys.argv[1], DcpConfig.model_validate({'cache': {'scheduler': False}}))",
    "out = []",
    "for messages in lists:",
    "    sent = copy.deepcopy(messages)",
    "    DcpPlugin(runtime).chat_messages_transform({}, {'messages': sent})",
    "    out.append([p['state'].get('output') for m in sent for p in m['parts'] if p.get('type') == 'tool'])",
    "print(json.dumps(out))",
  ].join("\n");
  const done = spawnSync(PYTHON, ["-c", code, project], { input: JSON.stringify(lists), encoding: "utf8", env: { ...process.env, PYTHONPATH } });
  assert.equal(done.status, 0, done.stderr);
  return JSON.parse(done.stdout);
}

function toolCall(tool, input, output) {
  const id = newId("msg");
  return {
    info: { id, sessionID: SID, role: "assistant" },
    parts: [{ id: newId("prt"), sessionID: SID, messageID: id, type: "tool", tool, callID: newId("call"), state: { status: "completed", input, output, title: tool, metadata: {}, time: { start: 1, end: 2 } } }],
  };
}

test("diagnostics cuts from the real bridge leave the same text as Python's own hosts, emoji included", { skip }, async (t) => {
  const { hooks, project } = await realPlugin(t);
  const a = path.join(project, "src", "a.py");
  const b = path.join(project, "src", "b.py");
  const block = (file, header, ...errors) => `\n\nLSP errors detected in ${header}:\n<diagnostics file="${file}">\n${errors.join("\n")}\n</diagnostics>`;
  // Characters outside the Basic Multilingual Plane before and between the blocks: offsets in
  // UTF-16 code units (JavaScript) and in code points (Python) differ there.
  const written = "Wrote file successfully. \u{1F600}\u{1F680}" +
    block(a, "this file, please fix", "ERROR [1:1] \u{1F4A5} bad token", "ERROR [2:4] Expected expression") +
    block(b, "other files", "ERROR [3:1] Import \u{1F9E9} could not be resolved", "ERROR [5:2] Undefined name");
  const steps = [
    [user("write a"), toolCall("write", { filePath: a, content: "x = \u{1F600}\n" }, written)],
    [user("fix a"), toolCall("edit", { filePath: a, oldString: "x", newString: "y" }, "Edit applied successfully.")],
    [user("fix b"), toolCall("edit", { filePath: b, oldString: "u", newString: "v" }, "Edit applied successfully.")],
  ];
  const lists = [];
  let history = [];
  for (const step of steps) {
    history = [...history, ...step];
    lists.push(structuredClone(history));
  }
  const expected = pythonOutputs(project, lists);
  const seen = [];
  for (const list of lists) {
    const out = await transform(hooks, structuredClone(list));
    seen.push(out.flatMap((m) => m.parts.filter((p) => p.type === "tool").map((p) => p.state.output)));
  }
  assert.deepEqual(seen, expected);
  // One block cut after the first edit, both after the second, the result line kept throughout.
  assert.equal((seen[1][0].match(/<diagnostics /g) || []).length, 1);
  assert.equal((seen[2][0].match(/<diagnostics /g) || []).length, 0);
  assert.ok(seen[2][0].startsWith("Wrote file successfully. \u{1F600}\u{1F680}\n\n[dcp: outdated diagnostics for src/a.py"));
});
