// helpers.mjs: what the node tests of the shim share (a fake OpenCode client, conversations in
// OpenCode's message shape, a plugin wired to the stub bridge).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import Plugin from "../../dcp_plugin/adapters/bridge/dcp_bridge.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const STUB = path.join(here, "stub_bridge.mjs");
export const SID = "ses_test";

export function tmpDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dcp-shim-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// A fake OpenCode client recording what the shim asks of it; `providers` is what
// config.providers() answers (OpenCode's configured providers and their models' limits).
export function fakeClient(stored = [], providers = undefined) {
  const calls = { prompts: [], logs: [], toasts: [], fetched: 0 };
  return {
    calls,
    ...(providers ? { config: { providers: async () => ({ data: { providers, default: {} } }) } } : {}),
    app: { log: async (arg) => calls.logs.push(arg.body) },
    tui: { showToast: async (arg) => calls.toasts.push(arg.body) },
    session: {
      prompt: async (arg) => {
        calls.prompts.push(arg);
        return { data: {} };
      },
      messages: async () => {
        calls.fetched++;
        return { data: structuredClone(stored) };
      },
    },
  };
}

// Messages in OpenCode's {info, parts} shape: a user message, then `steps` assistant steps with
// one completed read each. Outputs of the steps listed in `prune` carry the stub's marker.
export function conversation(steps, { prune = [], sessionID = SID } = {}) {
  const messages = [
    {
      info: { id: "msg_u0", sessionID, role: "user", model: { providerID: "fake", modelID: "fake-model" } },
      parts: [{ id: "prt_u0", sessionID, messageID: "msg_u0", type: "text", text: "hi" }],
    },
  ];
  for (let i = 1; i <= steps; i++) {
    const id = `msg_a${i}`;
    messages.push({
      info: { id, sessionID, role: "assistant" },
      parts: [
        { id: `prt_${i}_s`, sessionID, messageID: id, type: "step-start" },
        {
          id: `prt_${i}_t`,
          sessionID,
          messageID: id,
          type: "tool",
          tool: "read",
          callID: `call_${i}`,
          state: { status: "completed", input: { filePath: `/p/f${i}.txt` }, output: `content ${i}${prune.includes(i) ? " PRUNE_ME" : ""}` },
        },
      ],
    });
  }
  return messages;
}

// The plugin with the stub bridge as its child; `dir` shares a project directory between copies.
export async function makePlugin(t, { env = {}, options = {}, stored, dir = tmpDir(t), client = fakeClient(stored) } = {}) {
  const log = path.join(dir, `requests-${++plugins}.jsonl`);
  const hooks = await Plugin({ client, directory: dir, worktree: dir, project: { id: "p1" } }, {
    command: [process.execPath, STUB],
    timeoutMs: 5000,
    backoffMs: 20,
    env: { STUB_LOG: log, ...env },
    ...options,
  });
  t.after(() => hooks.__dcpBridge.stop());
  const requests = () =>
    fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
  const transforms = () => requests().filter((r) => r.op === "transform");
  return { hooks, client, dir, log, requests, transforms };
}

let plugins = 0;

export async function transform(hooks, messages) {
  const output = { messages };
  await hooks["experimental.chat.messages.transform"]({}, output);
  return output.messages;
}

// Polls `check` (which may itself drive requests) until it returns true; restart tests need a
// backoff to elapse, and asserting on wall time would be flaky.
export async function waitFor(check, attempts = 100) {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail("condition not reached");
}

