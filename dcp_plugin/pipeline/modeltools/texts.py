"""Every text the model reads from the tools: results, refusals, the prunable list and its nudge."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

# A refused call's result starts with this (the host may also mark it as an error): a replay
# never applies a call whose stored result says it was refused.
REFUSED = "Refused:"
LIST_HEAD = (
    "[dcp: instructions - outputs you may prune, listed by the context-pruning plugin, not by the user; "
    "replaces earlier lists. discard or extract them by id]"
)
VALID_IDS_SHOWN = 20


THIS_OUTPUT = "  (this output)"


def tokens(count: int) -> str:
    """``~2,400 tokens``."""
    return f"~{count:,} tokens"


def outputs(count: int) -> str:
    """``1 output``, ``2 outputs``."""
    return f"{count:,} output" if count == 1 else f"{count:,} outputs"


def parts(count: int) -> str:
    """``1 part``, ``3 parts``."""
    return f"{count:,} part" if count == 1 else f"{count:,} parts"


def refused(action: str, problems: Sequence[str]) -> str:
    """A refusal: nothing changed, and each reason on its own line."""
    if len(problems) == 1:
        return f"{REFUSED} nothing was {action}: {problems[0]}"
    return "\n".join([f"{REFUSED} nothing was {action}:", *(f"- {p}" for p in problems)])


def valid_ids(ids: Sequence[str], what: str) -> str:
    """The ids the model may use now, largest first, cut to a readable number."""
    if not ids:
        return f"There are no {what} now."
    shown = ", ".join(ids[:VALID_IDS_SHOWN])
    more = len(ids) - VALID_IDS_SHOWN
    return f"Valid ids of {what} now: {shown}" + (f" (and {more:,} more)" if more > 0 else "") + "."


def pruned(action: str, labels: Sequence[str], removed: int) -> str:
    """The result of an accepted discard or extract."""
    head = f"{action.capitalize()} {outputs(len(labels))} ({tokens(removed)}): {'; '.join(labels)}."
    they, them = ("It leaves", "it") if len(labels) == 1 else ("They leave", "them")
    return f"{head} {they} the context once rewriting the cached prompt pays (often at once); restore brings {them} back."


def restored_content(sections: Sequence[tuple[str, str]]) -> str:
    """The originals a restore brings back, each headed by its id and call: what is cut into parts."""
    return "\n".join(line for head, body in sections for line in ("", f"--- {head} ---", body))


def restored(count: int, content: str, part: int, parts: int, problems: Sequence[str], ids: Sequence[str]) -> str:
    """The result of a restore: part ``part`` of ``parts`` of the originals, then what could not be restored."""
    where = "the placeholder stays where it is" if count == 1 else "the placeholders stay where they are"
    if parts == 1:
        head = f"Restored {outputs(count)}; {where}. The original content:"
    else:
        if part < parts:
            named = ", ".join(f'"{ident}"' for ident in ids)
            then = f"the next part continues exactly where this one stops: restore(ids=[{named}], part={part + 1})"
        else:
            then = "this is the last part"
        head = (
            f"Restored {outputs(count)}; {where}. The original content is too long for one tool result, so it comes "
            f"in {parts} parts: this is part {part} of {parts}; {then}."
        )
    lines = [head, content]
    if problems:
        lines += ["", "Not restored:", *(f"- {p}" for p in problems)]
    return "\n".join(lines)


def prunable_list(
    rows: Sequence[tuple[str, str, int]], rest: tuple[int, int, int], nudge: str | None, this: str | None = None
) -> str:
    """The list appended to a tool result: one ``id  call  ~tokens`` row each, the rest summed, the nudge.

    ``rest`` is (how many more, their tokens, the size none of them exceeds); ``this`` the id of
    the output the list is appended to, marked as such in its row.
    """
    lines = ["", "", LIST_HEAD]
    lines += [f"{ident}  {label}  {tokens(size)}{THIS_OUTPUT if ident == this else ''}" for ident, label, size in rows]
    count, size, under = rest
    if count == 1:
        lines.append(f"(and 1 more output: {tokens(size)})")
    elif count:
        lines.append(f"(and {outputs(count)} of at most {tokens(under)} each: {tokens(size)})")
    if nudge:
        lines.append(nudge)
    return "\n".join(lines)


def nudge(tier: str, context: int, window: int) -> str:
    """One line when the context reached the warn threshold (or a higher one)."""
    share = 100 * context / window if window else 0.0
    return (
        f"The context holds {tokens(context)} of {window:,} ({share:.0f} %), past the {tier} threshold: "
        "discard or extract what you no longer need."
    )


# Every text of the plugin starts with `[dcp:`, and the model is told to trust such texts as the
# plugin's. A distillation (which may quote a web page) must never start one: its markers are
# neutralised, however spaced, cased or spelled. Matched on a skeleton of the text: each character
# in its NFKC form (fullwidth `［ｄｃｐ：` is `[dcp:`), then folded by the look-alikes below and
# case; invisible characters (zero-width spaces, joiners, bidi controls, NUL) are dropped from the
# distillation itself, as nothing a model distils needs them.
_MARKER = re.compile(r"\[\s*dcp\s*:")
_ASCII_MARKER = re.compile(r"\[\s*dcp\s*:", re.IGNORECASE)
_ASCII_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LOOK_ALIKES = str.maketrans(
    {
        **dict.fromkeys("\u0441\u0421\u03f2\u03f9\u1d04\u2ca5\u2ca4\u216d\u217d", "c"),  # Cyrillic с С, Greek lunate sigma, ...
        **dict.fromkeys("\u0501\u0500\u1d05\u146f\ua4d2\ua4d3\u13a0\u216e\u217e", "d"),  # Cyrillic ԁ, Lisu, Cherokee, ...
        **dict.fromkeys("\u0440\u0420\u03c1\u03a1\u03f1\u1d18\u2ca3\u2ca2\u13e2", "p"),  # Cyrillic р Р, Greek ρ Ρ, ...
        **dict.fromkeys("\u2045\u27e6\u298b\u298d\u298f\u2772\u3010\u3014\u3016\u3018\u301a\ufe5d", "["),
        **dict.fromkeys("\u0589\u05c3\u2236\ua789\u02d0\u02f8\u1361\u16ec\u205d\ufe30", ":"),
    }
)


def _invisible(char: str) -> bool:
    return unicodedata.category(char) in ("Cf", "Cc") and char not in "\n\t\r"


def quoted_markers(text: str) -> str:
    """``text`` with every `[dcp:` (any case, spacing or look-alike spelling) made visibly not the plugin's: `[quoted dcp:`."""
    if text.isascii():  # most distillations: no look-alike is possible
        return _ASCII_MARKER.sub("[quoted dcp:", _ASCII_CONTROLS.sub("", text))
    text = "".join(char for char in text if not _invisible(char))
    skeleton: list[str] = []
    origin: list[int] = []  # the index in ``text`` each skeleton character comes from
    for index, char in enumerate(text):
        folded = char.lower() if char.isascii() else unicodedata.normalize("NFKC", char).translate(_LOOK_ALIKES).casefold()
        skeleton.append(folded)
        origin.extend([index] * len(folded))
    out: list[str] = []
    at = 0
    for match in _MARKER.finditer("".join(skeleton)):
        start, end = origin[match.start()], origin[match.end() - 1] + 1
        if start < at:
            continue
        out += (text[at:start], "[quoted dcp:")
        at = end
    return "".join(out) + text[at:] if out else text
