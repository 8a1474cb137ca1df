"""InsertSync: set/wait flags between pipes and barriers within pipes that do not complete in order.

The pass simulates issue order over the kernel (loop bodies twice, to see cross-iteration hazards;
both branches of an if, merged) with a scoreboard per buffer (last writers, readers since) and a
vector clock per pipe (the latest op of every pipe known to be complete). A RAW/WAR/WAW dependency
on another pipe that the clock does not already cover gets a ``sync_src`` after the producer and a
``sync_dst`` before the consumer, both placed in the innermost block containing the two ops (a
cross-iteration wait goes to the end of that block). A dependency on the same pipe gets a barrier for
V and M. Event ids are allocated per pipe pair over the pairs' live intervals (at most 8).

Hand-written ``pl.system`` sync is honoured rather than duplicated: a ``sync_src``/``sync_dst`` pair
transfers the setting pipe's knowledge to the waiting pipe and a barrier completes its pipe, so a
hazard the user already ordered gets no second flag (a second set of the same flag before its wait
is an error on the machine), and the compiler never picks an event id the user's code uses for the
same pipe pair.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pypto.enums import PipeType
from pypto.errors import CompileError
from pypto.ir import stmt as St
from pypto.ir.expr import Call
from pypto.ir.visitor import stmt_list
from pypto.ops import system
from pypto.passes.analysis import effects, op_call, pipe_of
from pypto.passes.base import Pass, is_kernel

UNORDERED_PIPES = {PipeType.V: "bar_v", PipeType.M: "bar_m"}
MAX_EVENTS = 8


class _State:
    def __init__(self) -> None:
        self.know: dict = {}  # pipe -> {pipe: seq}
        self.buf: dict = {}  # memref -> (writers, readers); each a list of (seq, pipe, op_key)
        self.last: dict = {}  # pipe -> last issued seq
        self.flags: dict = {}  # (set pipe, wait pipe, event) -> knowledge carried by a user set_flag

    def copy(self) -> _State:
        s = _State()
        s.know = {p: dict(k) for p, k in self.know.items()}
        s.buf = {m: (list(w), list(r)) for m, (w, r) in self.buf.items()}
        s.last = dict(self.last)
        s.flags = {f: dict(k) for f, k in self.flags.items()}
        return s

    @staticmethod
    def merge(a: _State, b: _State) -> _State:
        s = _State()
        for p in set(a.know) | set(b.know):
            ka, kb = a.know.get(p, {}), b.know.get(p, {})
            s.know[p] = {x: min(ka.get(x, -1), kb.get(x, -1)) for x in set(ka) & set(kb)}
        for m in set(a.buf) | set(b.buf):
            wa, ra = a.buf.get(m, ([], []))
            wb, rb = b.buf.get(m, ([], []))
            s.buf[m] = (list(dict.fromkeys(wa + wb)), list(dict.fromkeys(ra + rb)))
        for p in set(a.last) | set(b.last):
            s.last[p] = max(a.last.get(p, -1), b.last.get(p, -1))
        for f in set(a.flags) & set(b.flags):
            fa, fb = a.flags[f], b.flags[f]
            s.flags[f] = {x: min(fa[x], fb[x]) for x in set(fa) & set(fb)}
        return s


class _Planner:
    def __init__(self, func: St.Function):
        self.blocks: dict[int, list] = {}
        self.paths: dict = {}  # op key -> tuple of (block id, index)
        self.seq = 0
        self.snap: dict = {}  # seq -> knowledge snapshot of the issuing pipe
        self.pairs: dict = {}  # (Q, P, block, set_idx, wait_idx or 'end') -> True
        self.barriers: dict = {}  # (block, idx) -> set of pipes
        self._children: dict = {}  # (block, id(stmt)) -> child block ids
        self.user_events: set = set()  # (set pipe, wait pipe, event id) used by hand-written sync
        self.root = self.index(func.body, ())

    def index(self, body: Any, path: tuple) -> int:
        bid = len(self.blocks)
        stmts = list(stmt_list(body)) if body is not None else []
        self.blocks[bid] = stmts
        for i, s in enumerate(stmts):
            p = path + ((bid, i),)
            if isinstance(s, (St.ForStmt, St.WhileStmt, St.ScopeStmt)):
                self._children[(bid, id(s))] = (self.index(s.body, p),)
            elif isinstance(s, St.IfStmt):
                self._children[(bid, id(s))] = (self.index(s.then_body, p), self.index(s.else_body, p))
            else:
                self.paths[id(s)] = p
        return bid

    # ------------------------------------------------------------------ simulation
    def run(self) -> None:
        self.sim(self.root, _State())

    def sim(self, bid: int, st: _State) -> _State:
        for s in self.blocks[bid]:
            if isinstance(s, (St.ForStmt, St.WhileStmt)):
                body = self._child_of(bid, s)
                first = self.sim(body, st.copy())
                second = self.sim(body, first)
                st = _State.merge(st, second)
            elif isinstance(s, St.IfStmt):
                tb, eb = self._child_of(bid, s, 0), self._child_of(bid, s, 1)
                st = _State.merge(self.sim(tb, st.copy()), self.sim(eb, st.copy()))
            elif isinstance(s, St.ScopeStmt):
                st = self.sim(self._child_of(bid, s), st)
            else:
                self.op(s, st)
        return st

    def _child_of(self, bid: int, s: Any, which: int = 0) -> int:
        return self._children[(bid, id(s))][which]

    def op(self, s: Any, st: _State) -> None:
        call = op_call(s)
        if call is None:
            return
        if call.op.name.startswith("system."):
            self.user_sync(call, st)
            return
        pipe = pipe_of(call, getattr(s, "var", None))
        if pipe is PipeType.S:
            return
        reads, writes = effects(s)
        deps = []
        for m in reads:
            deps.extend(st.buf.get(m, ([], []))[0])
        for m in writes:
            w, r = st.buf.get(m, ([], []))
            deps.extend(w)
            deps.extend(r)
        know = st.know.setdefault(pipe, {})
        for seq, q, key in sorted(set(deps), key=lambda d: -d[0]):
            if q is pipe:
                if pipe in UNORDERED_PIPES and know.get(pipe, -1) < seq:
                    self.barriers.setdefault(self._loc(id(s)), set()).add(pipe)
                    know[pipe] = st.last.get(pipe, -1)
                continue
            if know.get(q, -1) >= seq:
                continue
            self.add_pair(q, pipe, key, id(s))
            for x, v in self.snap[seq].items():
                if v > know.get(x, -1):
                    know[x] = v
        self.seq += 1
        snap = dict(know)
        snap[pipe] = self.seq
        self.snap[self.seq] = snap
        st.last[pipe] = self.seq
        entry = (self.seq, pipe, id(s))
        for m in writes:
            st.buf[m] = ([entry], [])
        for m in reads:
            if m not in writes:
                w, r = st.buf.setdefault(m, ([], []))
                r.append(entry)

    def user_sync(self, call: Call, st: _State) -> None:
        """Account for a hand-written flag or barrier (see the module docstring)."""
        short = call.op.name.split(".", 1)[1]
        kw = call.kwargs
        if short in ("sync_src", "sync_dst"):
            q, p, event = PipeType(kw["set_pipe"]), PipeType(kw["wait_pipe"]), int(kw["event_id"])
            self.user_events.add((q, p, event))
            if short == "sync_src":
                last = st.last.get(q, -1)
                carried = dict(self.snap.get(last, {})) if last >= 0 else {}
                carried[q] = max(carried.get(q, -1), last)
                st.flags[(q, p, event)] = carried
            else:
                know = st.know.setdefault(p, {})
                for x, v in st.flags.pop((q, p, event), {}).items():
                    if v > know.get(x, -1):
                        know[x] = v
            return
        pipes = [PipeType.V] if short == "bar_v" else [PipeType.M] if short == "bar_m" else list(st.last)
        for p in pipes:
            know = st.know.setdefault(p, {})
            for x in ([p] if short != "bar_all" else list(st.last)):
                know[x] = max(know.get(x, -1), st.last.get(x, -1))

    def _loc(self, key: int) -> tuple:
        return self.paths[key][-1]

    def add_pair(self, q: PipeType, p: PipeType, producer: int, consumer: int) -> None:
        pp, cp = self.paths[producer], self.paths[consumer]
        i = 0
        while i < min(len(pp), len(cp)) and pp[i] == cp[i]:
            i += 1
        if i < len(pp) and i < len(cp) and pp[i][0] == cp[i][0]:
            block, tp, tc = pp[i][0], pp[i][1], cp[i][1]
        else:
            block, tp = pp[i - 1]
            tc = tp
        wait = tc if tp < tc else "end"
        self.pairs[(q, p, block, tp, wait)] = True


def _sync(kind: str, q: PipeType, p: PipeType, event: int, span: Any) -> St.EvalStmt:
    build = system.sync_src if kind == "src" else system.sync_dst
    return St.EvalStmt(build(int(q), int(p), event, span), span)


@dataclass(frozen=True)
class InsertSyncPass(Pass):
    name: ClassVar[str] = "insert-sync"
    dump_name: ClassVar[str] = "InsertSync"

    def run_function(self, func: St.Function) -> St.Function:
        if not is_kernel(func):
            return func
        planner = _Planner(func)
        planner.run()
        events = self.allocate_events(planner)
        return replace(func, body=self.rebuild(planner, planner.root, func.body, events))

    @staticmethod
    def allocate_events(planner: _Planner) -> dict:
        """Linear live intervals per pair, coloured per pipe pair with at most 8 ids."""
        pre: dict = {}
        post: dict = {}
        counter = [0]

        def number(bid: int) -> None:
            for i, s in enumerate(planner.blocks[bid]):
                counter[0] += 1
                pre[(bid, i)] = counter[0]
                for child in planner._children.get((bid, id(s)), ()):
                    number(child)
                counter[0] += 1
                post[(bid, i)] = counter[0]
            counter[0] += 1
            post[(bid, "end")] = counter[0]

        number(planner.root)
        by_pair: dict = {}
        for key in planner.pairs:
            q, p, block, tp, wait = key
            lo = post[(block, tp)] + 0.5
            hi = (post[(block, "end")] - 0.25) if wait == "end" else pre[(block, wait)] - 0.25
            by_pair.setdefault((q, p), []).append((lo, hi, key))
        events: dict = {}
        for (q, p), items in by_pair.items():
            taken: list[list] = [[] for _ in range(MAX_EVENTS)]
            for uq, up, eid in planner.user_events:
                if (uq, up) == (q, p) and 0 <= eid < MAX_EVENTS:
                    taken[eid].append((float("-inf"), float("inf")))  # the user's flag: never shared
            for lo, hi, key in sorted(items, key=lambda x: (x[0], x[1])):
                for eid in range(MAX_EVENTS):
                    if all(hi < a or lo > b for a, b in taken[eid]):
                        taken[eid].append((lo, hi))
                        events[key] = eid
                        break
                else:
                    raise CompileError(f"more than {MAX_EVENTS} outstanding {q.name}->{p.name} sync events")
        return events

    def rebuild(self, planner: _Planner, bid: int, body: Any, events: dict) -> Any:
        stmts = planner.blocks[bid]
        after: dict = {}
        before: dict = {}
        end: list = []
        for key, eid in sorted(events.items(), key=lambda kv: (kv[0][3], str(kv[0][4]), kv[0][0], kv[0][1])):
            q, p, block, tp, wait = key
            if block != bid:
                continue
            span = getattr(stmts[tp], "span", None)
            after.setdefault(tp, []).append(_sync("src", q, p, eid, span))
            target = end if wait == "end" else before.setdefault(wait, [])
            target.append(_sync("dst", q, p, eid, span))
        out: list = []
        for i, s in enumerate(stmts):
            out.extend(before.get(i, []))
            for pipe in sorted(planner.barriers.get((bid, i), ())):
                call: Call = getattr(system, UNORDERED_PIPES[pipe])(getattr(s, "span", None))
                out.append(St.EvalStmt(call, getattr(s, "span", None)))
            kids = planner._children.get((bid, id(s)), ())
            if isinstance(s, (St.ForStmt, St.WhileStmt, St.ScopeStmt)):
                s = replace(s, body=self.rebuild(planner, kids[0], s.body, events))
            elif isinstance(s, St.IfStmt):
                tb = self.rebuild(planner, kids[0], s.then_body, events)
                eb = self.rebuild(planner, kids[1], s.else_body, events) if s.else_body is not None else None
                s = replace(s, then_body=tb, else_body=eb)
            out.append(s)
            out.extend(after.get(i, []))
        if end:
            if out and isinstance(out[-1], St.YieldStmt):
                out[-1:-1] = end
            else:
                out.extend(end)
        if body is None and not out:
            return None
        return St.SeqStmts(tuple(out), getattr(body, "span", None) or getattr(out[0], "span", None))
