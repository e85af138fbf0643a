// bench_shim.mjs: per-request cost of the shim (change detection, IPC, re-applying the kept
// patches) against the stub bridge, at several history sizes, as a ratio to one JSON.stringify
// of the same list. Run: node --expose-gc tests/js/bench_shim.mjs [sizes...]
//
// The stub answers incrementally and looks only at the messages it was sent, as the Python bridge
// does, so the round trip is the shim's own work plus a pipe and the stub parsing the delta: an
// upper bound for the JS side. Target: a warm request at 10,000 messages at most 10 % of
// JSON.stringify of the list. This is a measurement, never a test assertion. Run it with
// `node --expose-gc` so that the host's garbage is not counted as the shim's.
import path from "node:path";
import { fileURLToPath } from "node:url";
import Plugin from "../../dcp_plugin/adapters/bridge/dcp_bridge.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const sizes = process.argv.slice(2).map(Number).filter(Boolean);
const REQUESTS = 40;
const PRUNED = "[pruned by stub]";

function history(n) {
  const messages = [];
  for (let i = 0; i < n; i++) {
    const id = `msg_${String(i).padStart(6, "0")}`;
    const output = `file ${i % 50} line\n`.repeat(20) + (i % 3 === 0 ? "PRUNE_ME" : "");
    messages.push({
      info: { id, sessionID: "ses_bench", role: i % 10 === 0 ? "user" : "assistant" },
      parts: [
        { id: `${id}_s`, messageID: id, type: "step-start" },
        { id: `${id}_t`, messageID: id, type: "tool", tool: "read", callID: `c${i}`, state: { status: "completed", input: { filePath: `/p/f${i % 50}` }, output } },
      ],
    });
  }
  return messages;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function p95(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))];
}

const hooks = await Plugin({ client: {}, directory: here }, { command: [process.execPath, path.join(here, "stub_bridge.mjs")], timeoutMs: 60000, env: { STUB_INCREMENTAL: "1" } });
const transform = hooks["experimental.chat.messages.transform"];
const bridge = hooks.__dcpBridge.bridge;

// The time the shim spends waiting for its child: from the write of a request (after encoding
// it) to the start of decoding the reply. The rest of a request is the shim's own work.
let waiting = 0;
let written = 0n;
const request = bridge.request.bind(bridge);
bridge.request = (body, timeoutMs) => {
  const reply = request(body, timeoutMs);
  written = process.hrtime.bigint();
  return reply;
};
const onLine = bridge.onLine.bind(bridge);
bridge.onLine = (line) => {
  waiting += Number(process.hrtime.bigint() - written) / 1e6;
  return onLine(line);
};

// Times one request on a list the host just built; the garbage of building it is the host's, so it
// is collected first (with --expose-gc) and the collector's background work given time to end.
// Returns [round trip, the shim's own part of it] in ms.
async function timed(transform, messages) {
  globalThis.gc?.();
  await new Promise((resolve) => setTimeout(resolve, 5));
  waiting = 0;
  const t0 = process.hrtime.bigint();
  await transform({}, { messages });
  const total = Number(process.hrtime.bigint() - t0) / 1e6;
  return [total, total - waiting];
}
const rows = [];
for (const n of sizes.length ? sizes : [100, 1000, 10000]) {
  const full = history(n + 2 * REQUESTS + 2);
  await transform({}, { messages: structuredClone(full.slice(0, n)) }); // cold: full send
  const warm = [];
  const own = [];
  let length = n;
  for (let k = 0; k < REQUESTS; k++) {
    const messages = structuredClone(full.slice(0, ++length)); // the host rebuilds the list each time
    const [total, shim] = await timed(transform, messages);
    warm.push(total);
    own.push(shim);
    if (messages[0].parts[1].state.output !== PRUNED) throw new Error("patch not applied");
  }
  // A tool part that finishes after it was sent: sent running, then completed with one more message.
  const late = [];
  for (let k = 0; k < REQUESTS / 2; k++) {
    const running = structuredClone(full.slice(0, ++length));
    running[length - 1].parts[1].state = { status: "running", input: { filePath: "/p/slow" }, time: { start: 1 } };
    await transform({}, { messages: running });
    late.push((await timed(transform, structuredClone(full.slice(0, ++length))))[0]);
  }
  const list = full.slice(0, n);
  const json = [];
  for (let k = 0; k < 9; k++) {
    const t0 = process.hrtime.bigint();
    JSON.stringify(list);
    json.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  rows.push({ n, warm: median(warm), warmP95: p95(warm), own: median(own), late: median(late), json: median(json) });
}
hooks.__dcpBridge.stop();

const percent = (part, whole) => `${((100 * part) / whole).toFixed(1)} %`;
console.log("| messages | kept patches | warm round trip ms (p95) | of it the shim's own work | tool part finished late ms | JSON.stringify ms | shim / stringify | round trip / stringify |");
console.log("|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  const patches = Math.ceil(r.n / 3);
  console.log(
    `| ${r.n.toLocaleString("en")} | ~${patches.toLocaleString("en")} | ${r.warm.toFixed(2)} (${r.warmP95.toFixed(2)}) | ${r.own.toFixed(2)} | ${r.late.toFixed(2)} | ${r.json.toFixed(2)} | ${percent(r.own, r.json)} | ${percent(r.warm, r.json)} |`,
  );
}
