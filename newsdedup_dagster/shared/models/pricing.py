"""Token prices and call cost (pure).

Price table format (env NEWSDEDUP_LLM_PRICES, USD per 1M tokens)::

    model=in/out[/cached_in],model=in/out...

e.g. ``deepseek-chat=0.27/1.10/0.07,qwen-plus=0.40/1.20``. ``cached_in`` is the price of prompt
tokens served from the provider's prompt cache (DeepSeek, OpenAI and DashScope bill them lower);
without it cached tokens cost the normal input price. A model missing from the table costs 0 and
``cost_usd`` says so (``known=False``) so the caller can flag it rather than silently under-count.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

PER_TOKENS = Decimal(1_000_000)
MICRO = Decimal("0.000001")  # llm_calls.cost_usd is numeric(12, 6)


@dataclass(frozen=True)
class Price:
    input_per_m: Decimal
    output_per_m: Decimal
    cached_input_per_m: Decimal | None = None


def parse_prices(spec: str | None) -> dict[str, Price]:
    """Parse the price table; raises ValueError naming the bad entry."""
    table: dict[str, Price] = {}
    for entry in (spec or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        model, sep, numbers = entry.rpartition("=")
        parts = numbers.split("/")
        if not sep or not model.strip() or len(parts) not in (2, 3):
            raise ValueError(f"NEWSDEDUP_LLM_PRICES entry {entry!r}: expected model=in/out[/cached_in]")
        try:
            values = [Decimal(p.strip()) for p in parts]
        except ArithmeticError:
            raise ValueError(f"NEWSDEDUP_LLM_PRICES entry {entry!r}: prices must be numbers") from None
        if any(v < 0 for v in values):
            raise ValueError(f"NEWSDEDUP_LLM_PRICES entry {entry!r}: negative price")
        table[model.strip()] = Price(values[0], values[1], values[2] if len(values) == 3 else None)
    return table


def cost_usd(prices: dict[str, Price], model: str, tokens_in: int, tokens_out: int,
             tokens_cached: int = 0) -> tuple[Decimal, bool]:
    """(cost rounded to 1e-6 USD, whether the model had a price)."""
    price = prices.get(model)
    if price is None:
        return Decimal(0), False
    cached = max(0, min(tokens_cached, tokens_in))
    cached_price = price.cached_input_per_m if price.cached_input_per_m is not None else price.input_per_m
    total = ((tokens_in - cached) * price.input_per_m + cached * cached_price
             + tokens_out * price.output_per_m) / PER_TOKENS
    return total.quantize(MICRO, rounding=ROUND_HALF_UP), True
