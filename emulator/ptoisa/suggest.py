""""Did you mean ...?" for unknown names (ops, entries, machines): close matches, never a guess.

``difflib``'s ratio with a 0.6 cutoff, the same rule Python uses for its own name suggestions; the
caller's message says what was not found and this adds at most three candidates.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def close_matches(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` candidates close to ``name`` (case-insensitive), best first."""
    pool = list(dict.fromkeys(candidates))
    lowered = {c.lower(): c for c in pool}
    hits = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.6)
    return [lowered[h] for h in hits]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x' or 'y'?)``, or ``""`` when nothing is close."""
    hits = close_matches(name, candidates)
    if not hits:
        return ""
    return " (did you mean " + " or ".join(f"'{h}'" for h in hits) + "?)"


__all__ = ["close_matches", "did_you_mean"]
