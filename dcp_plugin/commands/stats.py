"""`/dcp stats`: calls pruned and tokens saved in this session and across every session seen."""

from __future__ import annotations

from dcp_plugin.cost.overhead import PluginText, plugin_text_line
from dcp_plugin.cost.requests import net_sentence
from dcp_plugin.host.prune_notice import plural
from dcp_plugin.model.tokens import RATIOS_NOTE
from dcp_plugin.pipeline.strategies import ALL_REASONS
from dcp_plugin.store import Stats

STRATEGIES: tuple[str, ...] = ALL_REASONS


def stats_lines(title: str, stats: Stats) -> list[str]:
    """A heading line with the totals, then one line per strategy (all of them, zeros included)."""
    lines = [
        f"{title}: {plural(stats.calls, 'call')} pruned, ~{stats.tokens_saved:,} tokens saved per request; "
        f"~{stats.tokens_saved_sent:,} tokens saved over {plural(stats.requests, 'request')}"
    ]
    names = [*STRATEGIES, *sorted(set(stats.by_strategy) - set(STRATEGIES))]
    for name in names:
        calls, tokens = stats.by_strategy.get(name, (0, 0))
        lines.append(f"  {name:<17}{calls:>7,} {'call ' if calls == 1 else 'calls'}  ~{tokens:,} tokens")
    if stats.restores:
        lines.append(
            f"  {'restore':<17}{stats.restores:>7,} {'call ' if stats.restores == 1 else 'calls'}  "
            f"{plural(stats.restored_outputs, 'output')} brought back (~{stats.restored_tokens:,} tokens)"
        )
    lines.append(f"  {net_line(stats)}")
    return lines


def net_line(stats: Stats) -> str:
    """What prompt caching makes of the savings: the net cost, after the cache rewrites placeholders caused."""
    net = net_sentence(stats.cost_without, stats.cost_with)
    if net is None:
        return "net cost: no request priced yet"
    saved = stats.saved
    amount = f"~{saved:,.0f} base input tokens saved" if saved >= 0 else f"~{-saved:,.0f} base input tokens more"
    return (
        f"net cost: {net} ({amount}; "
        f"{stats.rewritten:,} tokens the provider processed again because of placeholders)"
    )


def render_text(
    session_id: str,
    session: Stats | None,
    all_time: Stats | None,
    note: str | None = None,
    own: PluginText | None = None,
) -> str:
    """The plain-text reply; ``note`` says where numbers come from when the store is unavailable.

    ``own``: the plugin's own text in this session's requests, named on a line of its own.
    """
    lines = ["DCP stats", ""]
    if session is not None:
        lines += stats_lines(f"This session ({session_id})", session)
        own_line = plugin_text_line(own) if own is not None else None
        if own_line:
            lines.append(f"  {own_line}")
    if all_time is not None:
        if session is not None:
            lines.append("")
        lines += stats_lines(f"All time ({plural(all_time.sessions, 'session')})", all_time)
    if note:
        lines += ["", note]
    lines += ["", f"Tokens are estimates ({RATIOS_NOTE})."]
    return "\n".join(lines)
