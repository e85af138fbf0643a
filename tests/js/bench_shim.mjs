// bench_shim.mjs: per-request cost of the shim (delta planning, IPC, patch application) against
// the stub bridge, at several history sizes. Run: node tests/js/bench_shim.mjs [sizes...]
// The stub's own work (re-scanning its whole copy for patches) is included, so this is an upper
// bound for the JS side; it is a measurement, never a test assertion.
import path from "node:path";
import { fileURLToPath } from "node:url";
import Plugin from "../../dcp_plugin/bridge/dcp_bridge.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const sizes = process.argv.slice(2).map(Number).filter(Boolean);

function history(n) {
  const messages = [];
  for (let i = 0; i < n; i++) {
    const id = `msg_${String(i).padStart(6, "0")}`;
    const output = `file ${i % 50} line\n`.repeat(20) + (i % 3 === 0 ? "PRUNE_ME" : "");
    messages.push({
      info: { id, sessionID: "ses_bench", role: i === 0 ? "user" : "assistant" },
      parts: [
        { id: `${id}_s`, messageID: id, type: "step-start" },
        { id: `${id}_t`, messageID: id, type: "tool", tool: "read", callID: `c${i}`, state: { status: "completed", input: { filePath: `/p/f${i % 50}` }, output } },
      ],
    });
  }
  return messages;
}

const hooks = await Plugin({ client: {}, directory: here }, { command: [process.execPath, path.join(here, "stub_bridge.mjs")], timeoutMs: 60000, env: process.env.BENCH_INCREMENTAL ? { STUB_INCREMENTAL: "1" } : {} });
const transform = hooks["experimental.chat.messages.transform"];
for (const n of sizes.length ? sizes : [100, 1000, 10000]) {
  const full = history(n + 20);
  await transform({}, { messages: structuredClone(full.slice(0, n)) }); // cold: full send
  const times = [];
  for (let k = 1; k <= 20; k++) {
    const messages = structuredClone(full.slice(0, n + k)); // the host rebuilds the list each time
    const t0 = process.hrtime.bigint();
    await transform({}, { messages });
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (messages[0].parts[1].state.output !== "[pruned by stub]") throw new Error("patch not applied");
  }
  times.sort((a, b) => a - b);
  const t0 = process.hrtime.bigint();
  JSON.stringify(full.slice(0, n));
  const json = Number(process.hrtime.bigint() - t0) / 1e6;
  console.log(`${n} messages: warm median ${times[10].toFixed(2)} ms, p95 ${times[18].toFixed(2)} ms (JSON.stringify of the list: ${json.toFixed(2)} ms)`);
}
hooks.__dcpBridge.stop();
