// patches.mjs: the bridge's patches (PROTOCOL.md) applied to OpenCode's messages in place, each
// by one lookup at its position; a patch whose target does not match is skipped, never forced.

const PATCH_FIELDS = new Set(["output", "input"]);

// The key a patch is kept under: a later patch for the same target replaces the kept one.
// null for a patch this shim cannot apply (no valid position, unknown field, nothing to set).
export function patchKey(patch) {
  if (patch === null || typeof patch !== "object" || !PATCH_FIELDS.has(patch.field)) return null;
  const { messageIndex, partIndex } = patch;
  if (!Number.isInteger(messageIndex) || messageIndex < 0 || !Number.isInteger(partIndex) || partIndex < 0) return null;
  if (!Array.isArray(patch.cuts) && !("value" in patch)) return null;
  return `${messageIndex}/${partIndex}/${patch.field}`;
}

// The state of the tool part a patch targets, or null when the part at its position is not the
// one it names: duplicate ids elsewhere can then never attract it.
function targetState(messages, patch) {
  const message = messages[patch.messageIndex];
  if (message === null || typeof message !== "object") return null;
  if ((message.info?.id ?? null) !== (patch.messageID ?? null)) return null;
  const parts = message.parts;
  if (!Array.isArray(parts)) return null;
  const part = parts[patch.partIndex];
  if (part === null || typeof part !== "object" || part.type !== "tool") return null;
  if ((typeof part.id === "string" ? part.id : null) !== (patch.partID ?? null)) return null;
  if (typeof part.callID === "string" && part.callID !== "" && part.callID !== patch.callID) return null;
  const state = part.state;
  return state !== null && typeof state === "object" && !Array.isArray(state) ? state : null;
}

// Whether `current` is the string a patch was made for: its length in UTF-16 code units and, when
// the patch names them, its first and last characters (constant time: a kept patch is checked
// on every request, and OpenCode may have cleared or rewritten the output in place since).
function isExpected(current, expect) {
  if (typeof current !== "string" || !Number.isInteger(expect?.length) || current.length !== expect.length) return false;
  if (typeof expect.head === "string" && !current.startsWith(expect.head)) return false;
  return typeof expect.tail !== "string" || current.endsWith(expect.tail);
}

// `original` with each [start, end, replacement] cut applied (offsets in UTF-16 code units, cuts
// sorted and disjoint); undefined when the original is not the string the cuts were made for.
function applyCuts(original, cuts, expect) {
  if (!isExpected(original, expect)) return undefined;
  let out = "";
  let at = 0;
  for (const cut of cuts) {
    if (!Array.isArray(cut) || cut.length !== 3) return undefined;
    const [start, end, replacement] = cut;
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < at || end < start || end > original.length) return undefined;
    if (typeof replacement !== "string") return undefined;
    out += original.slice(at, start) + replacement;
    at = end;
  }
  return out + original.slice(at);
}

// Applies one patch to its target; false (and nothing changed) when the target does not match.
function applyPatch(messages, patch) {
  const state = targetState(messages, patch);
  if (state === null) return false;
  if (Array.isArray(patch.cuts)) {
    const value = applyCuts(state[patch.field], patch.cuts, patch.expect);
    if (value === undefined) return false;
    state[patch.field] = value;
    return true;
  }
  // A whole value made for one output (the bridge names it) is written only over that output.
  if ("expect" in patch && !isExpected(state[patch.field], patch.expect)) return false;
  const value = patch.value;
  // A copy, so that whatever OpenCode does with the part later cannot alter the kept value.
  state[patch.field] = value === null || typeof value !== "object" ? value : Array.isArray(value) ? value.slice() : { ...value };
  return true;
}

// Applies every patch (one lookup each, no walk over the history); returns those skipped.
export function applyPatches(messages, patches) {
  const skipped = [];
  for (const patch of patches) {
    if (!applyPatch(messages, patch)) skipped.push(patch);
  }
  return skipped;
}
