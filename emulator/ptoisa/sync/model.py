"""What the sync planner needs to know about a function, whoever wrote it.

The planner sees a tree: *nodes* with ``regions`` (each region has ``ops``, a list of nodes). The
`.pto` adapter (:mod:`ptoisa.sync.pto`) uses the contract's AST as it is; the compiler builds a small
mirror of its IR. For every node a :class:`SyncModel` says what kind it is (:class:`OpInfo`), which
pipe runs it (from the ISA records), how often a loop runs when that is a known constant, and
whether two accesses may touch the same memory. Indexing the tree (parents, positions, enclosing
loops) is common to every client and done here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ptoisa.errors import Loc

# Node kinds: ``access`` runs on ``pipe`` and reads/writes memory; ``fence`` is a call or an op the
# client cannot model (a full barrier before and after it); ``for``/``if``/``while`` are structured
# control flow (a ``for`` has one region, its body; an ``if`` one region per arm; a ``while`` its
# condition and body regions); ``region`` is any other node with regions, run in order; ``meta``
# has no effect on ordering; ``end`` terminates its region (yield, return: nothing goes after it);
# ``sync`` is sync the author wrote and the client keeps (see :meth:`SyncModel.user_sync`).
KINDS = frozenset({"access", "fence", "for", "if", "while", "region", "meta", "end", "sync"})


@dataclass(slots=True)
class OpInfo:
    """Classification of one node (see :data:`KINDS`); ``pipe`` for accesses."""

    kind: str
    pipe: str = ""


class SyncModel:
    """Base of a client's model. Subclasses fill :attr:`info` (``id(node) -> OpInfo``) and override
    :meth:`conflict`, :meth:`trip_count`, :meth:`loc` and :meth:`callee`."""

    def __init__(self, body: Any, name: str = "") -> None:
        self.body = body
        self.name = name
        self.parent: dict[int, tuple[Any, Any | None]] = {}  # id(node) -> (its region, owner node)
        self.index: dict[int, int] = {}  # id(node) -> position in its region
        self.ops: dict[int, Any] = {}
        self.info: dict[int, OpInfo] = {}
        self._index_region(body, None)

    def _index_region(self, region: Any, owner: Any | None) -> None:
        for i, op in enumerate(region.ops):
            self.parent[id(op)] = (region, owner)
            self.index[id(op)] = i
            self.ops[id(op)] = op
            for r in op.regions:
                self._index_region(r, op)

    def chain(self, op: Any) -> list[tuple[Any, Any]]:
        """``[(op, region containing it), (parent node, its region), ...]`` up to the body."""
        out = []
        cur: Any | None = op
        while cur is not None:
            region, owner = self.parent[id(cur)]
            out.append((cur, region))
            cur = owner
        return out

    # ------------------------------------------------------------------ what clients provide

    def conflict(self, p: Any, c: Any, varying: int | None) -> bool:
        """May access ``p`` (earlier) and access ``c`` (later) touch the same memory with at least one
        write? ``varying``: None = same iteration of every enclosing loop; ``id(loop)`` = ``c`` runs
        one or more iterations of that loop after ``p``; ``-1`` = in any pair of iterations."""
        raise NotImplementedError

    def trip_count(self, loop: Any) -> int | None:
        """Iterations of a ``for`` node when they are a known constant, else None."""
        return None

    def loc(self, node: Any) -> Loc | None:
        """Where ``node`` is written (for error messages)."""
        return None

    def callee(self, node: Any) -> str | None:
        """The function a ``fence`` node calls, if it is a call."""
        return None

    def user_sync(self, node: Any) -> tuple[str, str, str, int] | None:
        """A ``sync`` node's ``(kind, src pipe, dst pipe, event id)``: kind ``set``/``wait``, or
        ``barrier`` with ``src`` the pipe (``ALL``: every pipe). The planner counts the order it
        gives and never uses its event ids for the same pipe pair."""
        return None
