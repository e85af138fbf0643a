// copies.test.mjs: what the user is told when the bridge cannot start, and one active copy of the
// plugin per OpenCode project when it is loaded twice (both process-wide, through the registry).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { once } from "node:events";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { SID, STUB, conversation, fakeClient, makePlugin, tmpDir, transform, waitFor } from "./helpers.mjs";

const SHIM = path.resolve(path.dirname(STUB), "../../dcp_plugin/adapters/bridge/dcp_bridge.mjs");
// A child that fails the way a Python without dcp_plugin does.
const NO_MODULE = [process.execPath, "-e", "console.error(\"ModuleNotFoundError: No module named 'dcp_plugin'\"); process.exit(1)"];

// Calls one hook of each copy in load order with the same input and output, as OpenCode does.
async function trigger(copies, name, input, output) {
  for (const { hooks } of copies) await hooks[name]?.(input, output);
  return output;
}

function resetUnavailableToast(plugin) {
  plugin.hooks.__dcpBridge.registry.unavailableShown = false;
}

const unavailableToasts = (client) => client.calls.toasts.filter((x) => /pruning is off/.test(x.message));
const duplicateToasts = (client) => client.calls.toasts.filter((x) => /loaded twice/.test(x.message));

test("a bridge that cannot start shows one toast per process, at the first request, with the reason", async (t) => {
  const client = fakeClient();
  const options = { command: NO_MODULE, backoffMs: 10 };
  const first = await makePlugin(t, { client, options });
  const second = await makePlugin(t, { client, options });
  resetUnavailableToast(first);
  await waitFor(() => first.hooks.__dcpBridge.bridge.stats.crashes >= 1 && second.hooks.__dcpBridge.bridge.stats.crashes >= 1);
  assert.equal(unavailableToasts(client).length, 0, "no toast before a request: the TUI may not listen yet");
  for (let i = 0; i < 3; i++) {
    for (const plugin of [first, second]) await transform(plugin.hooks, conversation(1));
    await new Promise((r) => setTimeout(r, 30)); // let restarts fail again
  }
  const [toast, ...more] = unavailableToasts(client);
  assert.equal(more.length, 0);
  assert.match(toast.message, /No module named 'dcp_plugin'/);
  assert.match(toast.message, /comes from the plugin's `command` option/);
  assert.equal(toast.variant, "error");
});

test("a missing interpreter is reported with the reason", async (t) => {
  const client = fakeClient();
  const plugin = await makePlugin(t, { client, options: { command: [path.join(tmpDir(t), "no-such-python")] } });
  resetUnavailableToast(plugin);
  await transform(plugin.hooks, conversation(1));
  await waitFor(async () => {
    await transform(plugin.hooks, conversation(1));
    return unavailableToasts(client).length === 1;
  });
  assert.match(unavailableToasts(client)[0].message, /ENOENT/);
});

test("a bridge that cannot start because of DCP_PYTHON says so, not to reinstall", async (t) => {
  const client = fakeClient();
  const before = process.env.DCP_PYTHON;
  process.env.DCP_PYTHON = path.join(tmpDir(t), "no-such-python");
  let plugin;
  try {
    plugin = await makePlugin(t, { client, options: { command: undefined } });
  } finally {
    if (before === undefined) delete process.env.DCP_PYTHON;
    else process.env.DCP_PYTHON = before;
  }
  resetUnavailableToast(plugin);
  await waitFor(async () => {
    await transform(plugin.hooks, conversation(1));
    return unavailableToasts(client).length === 1;
  });
  const { message } = unavailableToasts(client)[0];
  assert.match(message, /comes from DCP_PYTHON/);
  assert.doesNotMatch(message, /Reinstall/);
});

test("a bridge that crashes after it started shows no unavailable toast", async (t) => {
  const client = fakeClient();
  const flag = path.join(tmpDir(t), "crashed");
  const plugin = await makePlugin(t, { client, env: { STUB_CRASH_ONCE: flag } });
  resetUnavailableToast(plugin);
  await waitFor(async () => {
    const messages = await transform(plugin.hooks, conversation(1, { prune: [1] }));
    return messages[1].parts[1].state.output === "[pruned by stub]";
  });
  assert.equal(fs.existsSync(flag), true);
  assert.equal(unavailableToasts(client).length, 0);
});

test("a second copy for the same project starts no bridge, prunes nothing and says so once", async (t) => {
  const dir = tmpDir(t);
  const active = await makePlugin(t, { dir });
  const idle = await makePlugin(t, { dir });
  await trigger([active, idle], "config", {}, {});
  for (let steps = 1; steps <= 3; steps++) {
    const output = await trigger([active, idle], "experimental.chat.messages.transform", {}, { messages: conversation(steps, { prune: [1] }) });
    assert.equal(output.messages[1].parts[1].state.output, "[pruned by stub]");
  }
  assert.equal(idle.hooks.__dcpBridge.bridge.stats.spawns, 0);
  assert.equal(idle.requests().length, 0);
  assert.equal(active.transforms().length, 3);
  assert.equal(duplicateToasts(idle.client).length, 1);
  assert.equal(idle.client.calls.logs.filter((l) => /loaded twice/.test(l.message)).length, 1);
  assert.equal(duplicateToasts(active.client).length, 0);
});

test("two different files of the plugin in one project are detected as copies", async (t) => {
  // The entry and its shim/ modules copied elsewhere: a second module graph, as two installs are.
  const copyDir = tmpDir(t);
  const copyPath = path.join(copyDir, "dcp_copy.mjs");
  fs.copyFileSync(SHIM, copyPath);
  fs.cpSync(path.join(path.dirname(SHIM), "shim"), path.join(copyDir, "shim"), { recursive: true });
  const { default: OtherPlugin } = await import(pathToFileURL(copyPath).href);
  const dir = tmpDir(t);
  const active = await makePlugin(t, { dir });
  const client = fakeClient();
  const other = await OtherPlugin({ client, directory: dir }, { command: [process.execPath, STUB] });
  t.after(() => other.__dcpBridge.stop());
  await trigger([active, { hooks: other }], "experimental.chat.messages.transform", {}, { messages: conversation(1) });
  assert.equal(other.__dcpBridge.bridge.stats.spawns, 0);
  assert.equal(duplicateToasts(client).length, 1);
});

test("with two copies loaded a /dcp command is answered by one", async (t) => {
  const dir = tmpDir(t);
  const active = await makePlugin(t, { dir });
  const idle = await makePlugin(t, { dir });
  await trigger([active, idle], "experimental.chat.messages.transform", {}, { messages: conversation(1) });
  await trigger([active, idle], "command.execute.before", { command: "dcp", sessionID: SID, arguments: "passthrough" }, { parts: [] });
  await assert.rejects(trigger([active, idle], "command.execute.before", { command: "dcp", sessionID: SID, arguments: "stats" }, { parts: [] }));
  assert.equal(active.requests().filter((r) => r.op === "command").length, 2);
  assert.equal(active.client.calls.prompts.length, 1);
  assert.equal(idle.client.calls.prompts.length, 0);
});

test("copies for different projects are not duplicates", async (t) => {
  const first = await makePlugin(t);
  const second = await makePlugin(t);
  await trigger([first, second], "experimental.chat.messages.transform", {}, { messages: conversation(1) });
  await trigger([second], "experimental.chat.messages.transform", {}, { messages: conversation(1) });
  assert.deepEqual([first.transforms().length, second.transforms().length], [1, 2]);
  assert.equal(duplicateToasts(first.client).length + duplicateToasts(second.client).length, 0);
});

test("a copy takes over when the active copy's instance was disposed", async (t) => {
  const dir = tmpDir(t);
  const disposed = await makePlugin(t, { dir });
  const next = await makePlugin(t, { dir });
  await disposed.hooks.dispose();
  const output = await trigger([next], "experimental.chat.messages.transform", {}, { messages: conversation(1, { prune: [1] }) });
  assert.equal(output.messages[1].parts[1].state.output, "[pruned by stub]");
  assert.equal(next.hooks.__dcpBridge.isActive(), true);
  assert.equal(duplicateToasts(next.client).length, 0);
});

test("a copy takes over when the registered copy no longer gets hook calls", async (t) => {
  const dir = tmpDir(t);
  await makePlugin(t, { dir }); // registered, never called again: its instance is gone
  const next = await makePlugin(t, { dir });
  const output = await trigger([next], "experimental.chat.messages.transform", {}, { messages: conversation(1, { prune: [1] }) });
  assert.equal(output.messages[1].parts[1].state.output, "[pruned by stub]");
  assert.equal(next.hooks.__dcpBridge.bridge.stats.spawns, 1);
});

test("dispose closes the bridge's stdin and lets it exit by itself", async (t) => {
  const plugin = await makePlugin(t);
  await transform(plugin.hooks, conversation(1));
  const child = plugin.hooks.__dcpBridge.bridge.child;
  const exited = once(child, "exit");
  const alive = setInterval(() => {}, 20); // the idle child does not hold the event loop
  await plugin.hooks.dispose();
  const [code, signal] = await exited.finally(() => clearInterval(alive));
  assert.deepEqual([code, signal], [0, null]);
});
