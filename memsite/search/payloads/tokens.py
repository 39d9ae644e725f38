"""The one token estimator memsite uses for every budget (recall, prime).

No tokenizer ships with memsite, so budgets are estimates: one token per four bytes of UTF-8,
rounded up. English prose averages about four characters per token with the common BPE
tokenizers; text in other scripts takes more bytes per character (2-3 for accented Latin,
Cyrillic, CJK) and also more tokens, so counting bytes keeps the estimate from undercounting
them. Budgets are therefore approximate: leave a margin when a hard context limit matters.
"""

from __future__ import annotations

BYTES_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text``: ``ceil(utf8_bytes / 4)``; 0 for the empty string."""
    return tokens_of_size(size_of(text))


def size_of(text: str) -> int:
    """The UTF-8 bytes of ``text``, which the estimate counts: they add up, so a budget
    filled item by item can keep a running sum."""
    return len(text.encode("utf-8", errors="surrogatepass"))


def tokens_of_size(size: int) -> int:
    """Estimated tokens of ``size`` bytes of text (a transcript measured on disk)."""
    return -(-max(size, 0) // BYTES_PER_TOKEN)
