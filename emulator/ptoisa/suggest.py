""""Did you mean ...?" for unknown names (ops, entries, machines): close matches, never a guess.

``difflib``'s ratio with a 0.6 cutoff, the same rule Python uses for its own name suggestions; the
caller's message says what was not found and this adds at most three candidates.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def _edits(a: str, b: str) -> int:
    """Levenshtein distance (insert, delete, substitute): the names here are short."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def close_matches(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` candidates close to ``name`` (case-insensitive), best first: fewest edits, then
    difflib's ratio. difflib alone breaks its many ties in reverse alphabetical order, so
    ``pto.tadx`` listed 'pto.tmax' and 'pto.tand' before 'pto.tadd', one letter away."""
    pool = list(dict.fromkeys(candidates))
    lowered = {c.lower(): c for c in pool}
    key = name.lower()
    hits = difflib.get_close_matches(key, list(lowered), n=max(n, 20), cutoff=0.6)
    hits.sort(key=lambda h: (_edits(key, h), -difflib.SequenceMatcher(None, key, h).ratio(), h))
    return [lowered[h] for h in hits[:n]]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x' or 'y'?)``, or ``""`` when nothing is close."""
    hits = close_matches(name, candidates)
    if not hits:
        return ""
    return " (did you mean " + " or ".join(f"'{h}'" for h in hits) + "?)"


__all__ = ["close_matches", "did_you_mean"]
