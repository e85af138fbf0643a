// messages.mjs: what the shim reads of OpenCode's {info, parts} messages: ids, session, model,
// and the short key that tells whether a sent message changed (PROTOCOL.md).

export function idOf(message) {
  return message?.info?.id;
}

function statusCode(status) {
  switch (status) {
    case "completed":
      return "c";
    case "error":
      return "e";
    case "running":
      return "r";
    case "pending":
      return "p";
    default:
      return "?";
  }
}

// Tool statuses that can still change: the message holding one is re-checked every request.
export const UNFINISHED = /[pr?]/;

// What is remembered of a sent message to notice that it changed (PROTOCOL.md): its part count,
// and per tool part its status and whether OpenCode marked its output compacted.
export function messageKey(message) {
  const parts = message?.parts;
  if (!Array.isArray(parts)) return "-";
  let key = String(parts.length);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part === null || typeof part !== "object" || part.type !== "tool") continue;
    const state = part.state;
    if (state === null || typeof state !== "object") {
      key += "?";
      continue;
    }
    key += statusCode(state.status);
    if (state.time?.compacted) key += "k";
  }
  return key;
}

export function sessionOf(messages) {
  for (const m of messages) {
    const sid = m?.info?.sessionID;
    if (sid) return sid;
  }
  return undefined;
}

// The model of the latest user message (OpenCode records one on each), else null. Stops at that
// message: a list without models costs the last turn, not the whole history.
export function modelOf(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const info = messages[i]?.info;
    if (info?.role !== "user") continue;
    return info.model?.providerID ? { providerID: info.model.providerID, modelID: info.model.modelID ?? null } : null;
  }
  return null;
}

export function prefixFingerprint(messages, base) {
  return {
    count: base,
    firstID: base > 0 ? idOf(messages[0]) ?? null : null,
    lastID: base > 0 ? idOf(messages[base - 1]) ?? null : null,
  };
}
