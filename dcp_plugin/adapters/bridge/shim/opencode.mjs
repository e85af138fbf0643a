// opencode.mjs: what the shim asks of OpenCode's client (ctx.client, the v1 SDK): its log, a
// toast, a session's stored messages, a model's configured limit. None of it may break the host.

const PROVIDERS_TIMEOUT_MS = 2000;

// OpenCode 1.18 writes a plugin's log line as `level=INFO ... message="..."`, without the service
// it is given: every line starts with `dcp:` so `grep 'dcp:'` finds them all.
export function makeLogger(client, debug) {
  return (level, message) => {
    if (debug) process.stderr.write(`[dcp-bridge] ${level}: ${message}\n`);
    const text = String(message).startsWith("dcp") ? String(message) : `dcp: ${message}`;
    try {
      const result = client?.app?.log?.({ body: { service: "dcp", level, message: text } });
      if (result && typeof result.catch === "function") result.catch(() => {});
    } catch {
      // logging must never break the host
    }
  };
}

export function makeToast(client) {
  return (message, variant) => {
    try {
      const shown = client?.tui?.showToast?.({ body: { message, variant } });
      if (shown && typeof shown.catch === "function") shown.catch(() => {});
    } catch {
      // a host without a TUI only logs it
    }
  };
}

function dataOf(result) {
  return result && typeof result === "object" && "data" in result ? result.data : result;
}

export async function fetchSessionMessages(client, sessionID) {
  const data = dataOf(await client.session.messages({ path: { id: sessionID } }));
  return Array.isArray(data) ? data : [];
}

function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref?.();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// `model` with the context limit OpenCode has configured for it, when it came without one (the
// user message's model, before any chat.params of this process); `model` itself otherwise.
export async function withConfiguredLimit(client, model) {
  if (!model || model.limit || !model.providerID || !model.modelID || !client?.config?.providers) return model;
  try {
    const data = dataOf(await withTimeout(Promise.resolve(client.config.providers()), PROVIDERS_TIMEOUT_MS));
    const providers = Array.isArray(data?.providers) ? data.providers : [];
    const limit = providers.find((p) => p?.id === model.providerID)?.models?.[model.modelID]?.limit;
    if (limit && typeof limit === "object") return { ...model, limit: { context: limit.context, output: limit.output } };
  } catch {
    // the limit is only a hint for /dcp context
  }
  return model;
}
