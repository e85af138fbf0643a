"""The files a shell command prints: `cat .env`, `head -n 5 a.py`, `sed -n 1,9p x`, `grep KEY .env`, `< file`.

A protected file must stay protected when the model reads it through the shell instead of the
read tool. The command is split as a POSIX shell would split it (quotes, `;`, `&&`, `||`, `|`),
and in each simple command run by one of :data:`READERS` (after wrappers such as `sudo` and
`VAR=value` assignments) the arguments that are not options are taken as paths; whatever
follows an input redirection `<` is one too, for any program, and `sh -c '...'` is read inside.
It over-approximates (an argument of an option it does not know is taken as a path): that can
only protect more.
"""

from __future__ import annotations

import posixpath
import re
import shlex

# The keys a shell tool's command is under (OpenCode's bash: `command`; some hosts: `cmd`).
COMMAND_KEYS: tuple[str, ...] = ("command", "cmd")
# Programs that print (part of) the files they are given.
READERS = frozenset(
    {
        "cat", "tac", "head", "tail", "less", "more", "most", "nl", "bat", "batcat", "sed", "awk", "strings",
        "xxd", "od", "hexdump", "base64", "sort", "uniq", "cut", "column", "grep", "egrep", "fgrep", "rg",
        "diff", "cmp", "paste", "fold", "fmt", "pr", "rev", "jq", "yq",
    }
)
# Programs whose first argument that is not an option is a script or a pattern, not a file (unless
# the script is given by an option: `sed -e`, `grep -e`, `awk -f`).
_SCRIPT_FIRST = frozenset({"sed", "awk", "grep", "egrep", "fgrep", "rg", "jq", "yq"})
_SCRIPT_OPTIONS = frozenset({"-e", "-f", "--expression", "--file", "--regexp"})
# Options whose value is the next word (so that word is no path), per program.
_HEAD = frozenset({"-n", "-c", "--lines", "--bytes", "-s", "--sleep-interval", "--pid"})
_GREP = frozenset({"-e", "-f", "-A", "-B", "-C", "-m", "--regexp", "--file", "--max-count"})
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "head": _HEAD,
    "tail": _HEAD,
    "sed": frozenset({"-e", "-f", "-l", "--expression", "--file", "--line-length"}),
    "awk": frozenset({"-f", "-F", "-v"}),
    "cut": frozenset({"-d", "-f", "-b", "-c", "--delimiter", "--fields", "--bytes", "--characters"}),
    "sort": frozenset({"-k", "-t", "-o", "-S", "-T", "--key", "--field-separator", "--output"}),
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "rg": _GREP | {"-g", "-t", "-T", "--glob", "--type"},
    "od": frozenset({"-A", "-j", "-N", "-t", "-w"}),
    "xxd": frozenset({"-c", "-g", "-l", "-s", "-o"}),
    "nl": frozenset({"-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"}),
    "bat": frozenset({"-l", "-r", "-H", "-m", "--language", "--line-range", "--style", "--theme"}),
    "jq": frozenset({"--arg", "--argjson", "-f", "--from-file", "--indent"}),
}
_VALUE_OPTIONS["batcat"] = _VALUE_OPTIONS["bat"]
# Words that run the command that follows them.
_WRAPPERS = frozenset({"sudo", "command", "exec", "time", "nohup", "nice", "env", "builtin", "doas", "stdbuf", "timeout"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish"})
_OPERATORS = frozenset({";", "&&", "||", "|", "&", "|&", ";;", "(", ")", "\n"})
# A command longer than this is read up to here (what one call costs stays bounded).
MAX_COMMAND_CHARS = 20_000
_MAX_DEPTH = 3


def command_paths(tool_input: object) -> list[str]:
    """The files the shell command of a tool input (``command`` or ``cmd``) prints, as written in it."""
    if not isinstance(tool_input, dict):
        return []
    for key in COMMAND_KEYS:
        command = tool_input.get(key)
        if isinstance(command, str) and command:
            return _paths_of_text(command, 0)
        if isinstance(command, list) and command and all(isinstance(word, str) for word in command):
            return _paths_of_words(command[:1000], 0)
    return []


def _paths_of_text(command: str, depth: int) -> list[str]:
    lexer = shlex.shlex(command[:MAX_COMMAND_CHARS], posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        words = list(lexer)
    except ValueError:  # an unclosed quote: read it word by word
        words = command[:MAX_COMMAND_CHARS].split()
    return _paths_of_words(words, depth)


def _paths_of_words(words: list[str], depth: int) -> list[str]:
    found: list[str] = []
    simple: list[str] = []
    redirect: bool | None = None  # after `<`: a file read (True); after `>`, `<<`, `>&`: a word to skip (False)
    for word in words:
        if redirect is not None:
            if redirect:
                found.append(word)
            redirect = None
        elif word in ("<", "<>"):
            redirect = True
        elif word.startswith((">", "<")) and set(word) <= set("<>&"):
            redirect = False  # an output redirection, a here-document, a descriptor copy: its target
        elif word in _OPERATORS or (set(word) <= set(";&|()") and word):
            found += _simple_paths(simple, depth)
            simple = []
        else:
            simple.append(word)
    return found + _simple_paths(simple, depth)


def _simple_paths(words: list[str], depth: int) -> list[str]:
    """The files one simple command (no operators) prints."""
    at = 0
    while at < len(words) and (_ASSIGNMENT.match(words[at]) or words[at] in _WRAPPERS):
        at += 1
        # `sudo -u x`, `timeout 5`, `nice -n 5`: options and values of the wrapper itself.
        while at < len(words) and (words[at].startswith("-") or words[at].isdigit()):
            at += 1
    if at >= len(words):
        return []
    program = posixpath.basename(words[at])
    arguments = words[at + 1 :]
    if program in _SHELLS and depth < _MAX_DEPTH:
        for index, word in enumerate(arguments[:-1]):
            if word.startswith("-") and not word.startswith("--") and "c" in word:
                return _paths_of_text(arguments[index + 1], depth + 1)
        return []
    if program not in READERS:
        return []
    found: list[str] = []
    takes_value = _VALUE_OPTIONS.get(program, frozenset())
    script_given = any(word in _SCRIPT_OPTIONS for word in arguments)
    script_pending = program in _SCRIPT_FIRST and not script_given
    skip_value = False
    options_done = False
    for word in arguments:
        if skip_value:
            skip_value = False
            continue
        if not options_done and word == "--":
            options_done = True
            continue
        if not options_done and word.startswith("-") and word != "-":
            skip_value = word in takes_value
            continue
        if script_pending:
            script_pending = False
            continue
        if word != "-" and not word.startswith("+"):
            found.append(word)
    return found
