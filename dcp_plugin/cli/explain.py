"""The plain-language sentences a replay report shows, in the terminal and in the HTML report alike."""

from __future__ import annotations

from dataclasses import dataclass

from dcp_plugin.cost.prices import ANTHROPIC_1H, DEFAULTS
from dcp_plugin.replay.engine import ReplayReport, RequestRow

# One gloss per term the reports use; the terminal prints them under its tables, the HTML report beside its sections.
GLOSSARY: dict[str, str] = {
    "edit anchor": (
        "the longest line of the text an edit replaced: the model needed it in view to make the edit, so a "
        "placeholder that hid it before the edit may have cost a re-read"
    ),
    "prompt overhead": (
        "what the provider counted in the prompt beyond the messages: the system prompt and the tool definitions"
    ),
    "rewrite": (
        "a request where a placeholder changed a part already sent, so the provider processes everything after "
        "it again at the full price (a prefix break): that request costs more than without the plugin, later ones less"
    ),
    "cold": "the prompt cache had expired (a long pause): the whole request is processed at the full price either way",
    "mask batch": "a request where maskOldOutputs replaced a batch of old outputs at once",
    "cost unit": "one uncached input token at the model's base price",
}


def cache_read_price(pricing: str) -> str:
    """How a cached token is priced, in words: `a tenth` of the base input price under most pricings."""
    if pricing == "auto":
        return "a tenth (a quarter on Google)"
    prices = ANTHROPIC_1H if pricing == "anthropic-1h" else DEFAULTS.get(pricing)
    if prices is None or prices.read >= 1.0:
        return "the full price (no prompt cache)"
    words = {0.1: "a tenth", 0.25: "a quarter", 0.5: "half"}
    return words.get(prices.read, f"{prices.read:g} times")


def why_cost_differs(report: ReplayReport) -> str:
    """Why the net cost saving is smaller than the share of tokens removed, in one sentence."""
    c = report.costs
    if report.total_with >= report.total_without:
        return "Nothing was pruned: the requests send and cost the same with the plugin as without it."
    cached = c.cached_without + c.written_without
    share = 100 * c.cached_without / cached if cached else 0.0
    text = (
        f"Net cost moves less than tokens: {share:.0f} % of what the session sends without the plugin is read "
        f"from the prompt cache, where a token costs {cache_read_price(report.pricing)} of the base price"
    )
    if c.prefix_breaks:
        text += (
            f", and the plugin's {c.prefix_breaks:,} rewrites had {c.rewritten:,} tokens processed again at the full price"
        )
    return text + "."


@dataclass(frozen=True, slots=True)
class WorstRequest:
    """The request that cost most over what it would have cost without the plugin."""

    row: RequestRow

    @property
    def extra(self) -> float:
        return self.row.cost_with - self.row.cost_without

    @property
    def ratio(self) -> float:
        return self.row.cost_with / self.row.cost_without if self.row.cost_without else 0.0

    def sentence(self) -> str:
        r = self.row
        why = (
            "a rewrite: a placeholder changed a part already sent, so everything after it was processed again"
            if r.prefix_break
            else "more of it was processed outside the prompt cache than without the plugin"
        )
        return (
            f"Worst request: #{r.request} cost {r.cost_with:,.0f} units with the plugin against {r.cost_without:,.0f} "
            f"without ({self.ratio:.1f}x), {why}."
        )


def worst_request(report: ReplayReport) -> WorstRequest | None:
    """The request the plugin made most expensive, None when none cost more with it."""
    rows = [r for r in report.requests if r.cost_with > r.cost_without]
    return WorstRequest(max(rows, key=lambda r: r.cost_with - r.cost_without)) if rows else None


def row_note(row: RequestRow) -> str:
    """The per-request table's note: why a row costs what it does."""
    if row.cold:
        return "cold"
    if row.prefix_break:
        return "rewrite"
    return ""
