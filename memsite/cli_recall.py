"""Commands that rank memory: index, search, recall, prime, related, eval (issue 3)."""

from __future__ import annotations
