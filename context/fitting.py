"""Cutting text to an exact token budget: previews of large results, capped lists and notes.

Everything here counts with the ledger (the model's own tokenizer), never with characters,
and never tokenizes more than a bounded slice of a huge input, so a 1 MB tool result costs
a few milliseconds, not a full tokenization.
"""

from __future__ import annotations

from context.ledger import Ledger

# No tokenizer in use packs more than this many characters into one token on real text.
_MAX_CHARS_PER_TOKEN = 12


def head(ledger: Ledger, text: str, limit: int) -> str:
    """The longest prefix of `text` (cut at whitespace when possible) within `limit` tokens."""
    if limit <= 0 or not text:
        return ""
    window = text[: limit * _MAX_CHARS_PER_TOKEN]
    n = ledger.count(window)
    if n <= limit and len(window) == len(text):
        return text
    lo, hi = 0, len(window)
    if n <= limit:
        lo = hi
    else:
        # Start from the proportional guess, then binary-search the exact cut.
        guess = max(1, int(len(window) * limit / n))
        if ledger.count(window[:guess]) <= limit:
            lo = guess
        else:
            hi = guess
        while hi - lo > 16:
            mid = (lo + hi) // 2
            if ledger.count(window[:mid]) <= limit:
                lo = mid
            else:
                hi = mid
    cut = window[:lo]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space > lo * 0.8:
        cut = cut[:space]
    while cut and ledger.count(cut) > limit:
        cut = cut[: int(len(cut) * 0.9)]
    return cut


def token_count_bounded(ledger: Ledger, text: str, cap_chars: int = 200_000) -> tuple[int, bool]:
    """(tokens, exact): exact up to `cap_chars`; beyond it, a proportional estimate."""
    if len(text) <= cap_chars:
        return ledger.count(text), True
    sample = ledger.count(text[:cap_chars])
    return int(sample * len(text) / cap_chars), False


def preview(ledger: Ledger, text: str, limit: int, item_id: str, total_tokens: int) -> str:
    """A result cut to `limit` tokens with a footer naming its id and how to read on."""
    probe = f"\n[preview: first part of result {item_id} (about {total_tokens:,} tokens in all); "

    def footer_for(shown: int) -> str:
        return f'{probe}get_context(ids=["{item_id}"], offset={shown}) continues it]'

    budget = max(1, limit - ledger.count(footer_for(10**7)))
    body = head(ledger, text, budget)
    return body + footer_for(len(body))


def cap_lines(ledger: Ledger, text: str, limit: int, more: str) -> tuple[str, int]:
    """Keep whole lines within `limit` tokens; returns (text, lines dropped).

    `more` is appended when lines are dropped ("{n}" is replaced by the count).
    """
    if ledger.count(text) <= limit:
        return text, 0
    lines = text.splitlines()
    kept: list[str] = []
    reserve = ledger.count(more.format(n=len(lines)))
    used = 0
    for line in lines:
        n = ledger.count(line + "\n")
        if used + n > limit - reserve:
            break
        kept.append(line)
        used += n
    dropped = len(lines) - len(kept)
    if not kept:
        return head(ledger, text, limit - reserve) + "\n" + more.format(n=dropped), dropped
    return "\n".join(kept) + "\n" + more.format(n=dropped), dropped
