"""Pre-memory normalisation used by InitMemRef.

* ``block.sum/max/min`` over the last axis (keepdim) become a scratch ``create_tile`` plus
  ``row_sum/row_max/row_min`` (PTO row reductions need a tmp tile).
* Ops whose PTO instruction needs a scratch tile the language does not expose (``sel``, ``sels``,
  ``rem``, ``rems``, ``transpose``) get one: a ``create_tile`` right before the op, appended as the
  op's last argument, so memory planning and sync insertion see it like any other tile.
* ``subc(a, b, c)`` = a - b - c and ``subsc(a, s, c)`` = a - s - c become two subtractions: the PTO
  ``tsubc``/``tsubsc`` instructions compute a - b + c, not the language's a - b - c.
* Mixed-dtype integer tile operands (``UINT32 + INT32`` deduces INT32) are cast to the result dtype
  the same way; integer scalars keep their dtype (the scalar forms take the tile's dtype already).
* Mixed-precision float arithmetic (``muls(fp16_tile, 0.5)`` deduces FP32 by §2.1 promotion) runs in
  the result dtype: narrower tile operands are first converted with ``block.cast`` and scalar
  operands are converted to the result dtype. Converting first (rather than computing in FP16 and
  widening the result) is exact for the inputs, cannot overflow FP16 in the intermediate, and gives
  what the promoted type promises: the operation performed in FP32.
* The bias operand of ``matmul_bias``/``gemv_bias`` is moved to the Bias table when it is not there yet.
* Loop-carried and if-merged tiles share one buffer. A carried tile takes the memory space of what
  flows into it (an accumulator carried through a K loop stays in Acc). For Vec tiles, an incoming
  value that cannot safely live in that buffer (used elsewhere, or the carried value is still read
  after it is defined) is first copied with ``block.move(..., Vec)``. Cube-side spaces have no
  same-space copy (``tmov`` cannot write Acc), so there the value is shared as it is, and a carried
  value that is still read after its successor is computed is rejected instead of miscompiled.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from pypto.dtype import DataType
from pypto.enums import MemorySpace
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.expr import static_int
from pypto.ir.registry import create_op_call
from pypto.ir.types import TileType
from pypto.ir.visitor import stmt_list, substitute, walk
from pypto.lib.broadcast import BROADCASTING, lower_binary, needs_lowering, vec_kind
from pypto.ops import block as B
from pypto.ops import isa
from pypto.passes.analysis import space_of_def

_ROW = {"block.sum": "row_sum", "block.max": "row_max", "block.min": "row_min"}
# op -> (scratch shape and dtype from the call's tile operands) for the ops that get a compiler scratch tile.
_SCRATCH = {
    # tsel/tsels: a small mask scratch (the corpus uses a 1x16 ui32 tile on A2/A3)
    "block.sel": lambda c: ([1, 16], DataType.UINT32),
    "block.sels": lambda c: ([1, 16], DataType.UINT32),
    # trem/trems: one row of the destination dtype, as wide as the destination
    "block.rem": lambda c: ([1, _cols(c.type)], c.type.dtype),
    "block.rems": lambda c: ([1, _cols(c.type)], c.type.dtype),
    # ttrans: the source's shape
    "block.transpose": lambda c: (list(c.args[0].type.shape), c.args[0].type.dtype),
}
# Float ops whose result dtype is the promotion of their operands: argument positions that are data
# operands (scratch tiles and expands' shape-only target are left alone).
_PROMOTING = {
    **{f"block.{n}": (0, 1) for n in ("add", "sub", "mul", "div", "maximum", "minimum", "rem", "adds", "subs",
                                      "muls", "divs", "maxs", "mins", "lrelu", "rems", "prelu")},
    **{f"block.{n}": (0, 1, 2) for n in ("addc", "subc", "addsc", "subsc")},
    **{f"block.row_expand_{n}": (0, 1) for n in ("add", "sub", "mul", "div")},
    **{f"block.col_expand_{n}": (0, 1) for n in ("mul", "div", "sub")},
    "block.expands": (1,),
}


def _cols(t: Any) -> Any:
    return t.shape[-1]


def _last_yield(body: Any) -> St.YieldStmt | None:
    stmts = stmt_list(body)
    return stmts[-1] if stmts and isinstance(stmts[-1], St.YieldStmt) else None


class Normalizer:
    def __init__(self, func: St.Function):
        self.uses = Counter(n for n in walk(func.body) if isinstance(n, E.Var))
        self.space: dict = {}
        for n in walk(func.body):
            if isinstance(n, St.AssignStmt):
                self.space[n.var] = space_of_def(n.value)
        self._propagate_phi_spaces(func)
        self.names = {n.name for n in walk(func) if isinstance(n, E.Var)}
        self.counter = 0

    def _propagate_phi_spaces(self, func: St.Function) -> None:
        """Give loop iter args, loop/if results and plain aliases the space of the values flowing in.

        Iterated to a fixpoint because a loop result can be the init of a later loop (or of a nested
        one) and an iter arg's only known source may be the value yielded back into it.
        """
        changed = True
        while changed:
            changed = False

            def learn(target: Any, sources: list) -> None:
                nonlocal changed
                if self.space.get(target) is not None or not isinstance(getattr(target, "type", None), TileType):
                    return
                for src in sources:
                    sp = self.space.get(src) if isinstance(src, E.Var) else None
                    if sp is not None:
                        self.space[target] = sp
                        changed = True
                        return

            for n in walk(func.body):
                if isinstance(n, St.AssignStmt) and isinstance(n.value, E.Var):
                    learn(n.var, [n.value])
                elif isinstance(n, (St.ForStmt, St.WhileStmt)):
                    y = _last_yield(n.body)
                    for i, (ia, rv) in enumerate(zip(n.iter_args, n.return_vars, strict=False)):
                        yv = [y.value[i]] if y is not None and i < len(y.value) else []
                        learn(ia, [ia.init_value, *yv, rv])
                        learn(rv, [ia])
                elif isinstance(n, St.IfStmt):
                    ys = [_last_yield(b) for b in (n.then_body, n.else_body) if b is not None]
                    for i, rv in enumerate(n.return_vars):
                        learn(rv, [y.value[i] for y in ys if y is not None and i < len(y.value)])

    def is_vec(self, v: Any) -> bool:
        return isinstance(getattr(v, "type", None), TileType) and self.space.get(v, MemorySpace.Vec) in (
            MemorySpace.Vec, None,
        )

    def copy(self, v: E.Var, span: Any) -> tuple[St.AssignStmt, E.Var]:
        call = B.move(v, MemorySpace.Vec, span=span)
        self.counter += 1
        nv = E.Var(f"{v.name}_phi{self.counter}", call.type, span)
        self.space[nv] = MemorySpace.Vec
        return St.AssignStmt(nv, call, span), nv

    def block(self, body: Any, carried: tuple = ()) -> St.SeqStmts:
        out: list = []
        for s in stmt_list(body):
            out.extend(self.stmt(s))
        return St.SeqStmts(tuple(out), getattr(body, "span", None))

    def fresh(self, base: str) -> str:
        self.counter += 1
        name = f"{base}{self.counter}"
        while name in self.names:
            self.counter += 1
            name = f"{base}{self.counter}"
        self.names.add(name)
        return name

    def let(self, base: str, call: E.Call, span: Any, out: list) -> E.Var:
        v = E.Var(self.fresh(base), call.type, span)
        out.append(St.AssignStmt(v, call, span))
        self.space[v] = space_of_def(call)
        return v

    def promote(self, s: St.AssignStmt, out: list) -> St.AssignStmt:
        """Convert the operands of a mixed-precision float op to its result dtype (module docstring)."""
        c = s.value
        rd = getattr(s.var.type, "dtype", None)
        positions = _PROMOTING.get(c.op.name)
        if positions is None or not isinstance(s.var.type, TileType):
            return s
        args, changed = list(c.args), False
        for i in positions:
            if i >= len(args):
                continue
            a = args[i]
            t = getattr(a, "type", None)
            if getattr(t, "dtype", rd) is rd or (not rd.is_float() and not isinstance(t, TileType)):
                continue
            if isinstance(t, TileType) and not rd.is_float() and t.dtype.is_int() and t.dtype.nbytes == rd.nbytes:
                # same-width signedness change: two's-complement conversion is a re-typing of the bits
                retype = create_op_call("block.reshape", [a, E.MakeTuple(tuple(t.shape))], {"dtype": rd}, c.span)
                args[i] = self.let(f"{s.var.name}_in", retype, s.span, out)
            elif isinstance(t, TileType):
                args[i] = self.let(f"{s.var.name}_in", B.cast(a, rd, span=c.span), s.span, out)
            elif isinstance(a, (E.ConstFloat, E.ConstInt)):
                args[i] = E.ConstFloat(float(a.value), rd, a.span)
            else:
                args[i] = E.Cast(a, rd, c.span)
            changed = True
        if not changed:
            return s
        return St.AssignStmt(s.var, create_op_call(c.op.name, args, dict(c.kwargs), c.span), s.span)

    def legalize(self, s: St.AssignStmt) -> list | None:
        """Rewrite one op statement (see the module docstring); None when it stays as it is."""
        out: list = []
        promoted = self.promote(s, out)
        if promoted is not s:
            rest = self.legalize(promoted)
            return out + (rest if rest is not None else [promoted])
        c, name = s.value, s.value.op.name
        lowered = self.lower_broadcast(s, out)
        if lowered is not None:
            return lowered
        if name in _SCRATCH and len(c.args) == isa.scratch_arg(name):  # the scratch tile is missing
            shape, dtype = _SCRATCH[name](c)
            tmp = self.let(f"{s.var.name}_tmp", B.create_tile(shape, dtype, MemorySpace.Vec, span=s.span), s.span, out)
            call = create_op_call(name, [*c.args, tmp], dict(c.kwargs), c.span)
            return out + [St.AssignStmt(s.var, call, s.span)]
        if name in ("block.subc", "block.subsc"):
            a, b, rest = c.args
            first = B.sub(a, b, span=c.span) if name == "block.subc" else B.subs(a, b, span=c.span)
            t = self.let(f"{s.var.name}_part", first, s.span, out)
            return out + [St.AssignStmt(s.var, B.sub(t, rest, span=c.span), s.span)]
        if name in ("block.matmul_bias", "block.gemv_bias") and self.space.get(c.args[2]) is not MemorySpace.Bias:
            bias = self.let(f"{s.var.name}_bias", B.move(c.args[2], MemorySpace.Bias, span=c.span), s.span, out)
            call = create_op_call(name, [c.args[0], c.args[1], bias], dict(c.kwargs), c.span)
            return out + [St.AssignStmt(s.var, call, s.span)]
        return None

    def lower_broadcast(self, s: St.AssignStmt, out: list) -> list | None:
        """Make a broadcasting binary tile op explicit with the expand ops (see :mod:`.broadcast`)."""
        c = s.value
        op = c.op.name.split(".", 1)[1] if c.op.name.startswith("block.") else ""
        if op not in BROADCASTING or len(c.args) != 2 or not isinstance(s.var.type, TileType):
            return None
        a, b = c.args
        if not (isinstance(getattr(a, "type", None), TileType) and isinstance(getattr(b, "type", None), TileType)):
            return None
        full = [static_int(d) for d in s.var.type.shape]
        if len(full) != 2 or None in full or not needs_lowering(a.type.shape, b.type.shape, tuple(full)):
            # same-shape operands, or a form type deduction already rejected (check_broadcast_lowerable)
            return None
        kinds = (vec_kind(a.type.shape, tuple(full)), vec_kind(b.type.shape, tuple(full)))
        call = lower_binary(op, a, b, kinds, full, lambda base, e: self.let(f"{s.var.name}_{base}", e, s.span, out),
                            c.span)
        return out + [St.AssignStmt(s.var, call, s.span)]

    def stmt(self, s: Any) -> list:
        if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call) and not isinstance(s.value.op, E.GlobalVar):
            done = self.legalize(s)
            if done is not None:
                return done
        if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call) and s.value.op.name in _ROW:
            c = s.value
            t = c.args[0].type
            axis = c.kwargs.get("axis", 0) % len(t.shape)
            if axis == len(t.shape) - 1 and len(t.shape) == 2 and c.kwargs.get("keepdim", False):
                tmp_call = B.create_tile(list(t.shape), t.dtype, MemorySpace.Vec, span=s.span)
                self.counter += 1
                tmp = E.Var(f"{s.var.name}_tmp{self.counter}", tmp_call.type, s.span)
                red = getattr(B, _ROW[c.op.name])(c.args[0], tmp, span=s.span)
                return [St.AssignStmt(tmp, tmp_call, s.span), St.AssignStmt(s.var, red, s.span)]
            return [s]
        if isinstance(s, (St.ForStmt, St.WhileStmt)):
            pre, new_ias = [], []
            for ia in s.iter_args:
                init = ia.init_value
                if self.is_vec(ia) and isinstance(init, E.Var) and (
                    self.uses[init] > 2 or isinstance(init, E.IterArg) or init not in self.space
                ):
                    st, nv = self.copy(init, s.span)
                    pre.append(st)
                    new_ias.append((ia, nv))
            body = self.block(s.body)
            body = self.fix_yield(body, s.iter_args, loop=True)
            s = replace(s, body=body)
            if new_ias:
                mapping = {ia: E.IterArg(ia.name, ia.type, ia.span, nv) for ia, nv in new_ias}
                s = substitute(s, mapping)
            return pre + [s]
        if isinstance(s, St.IfStmt):
            tb = self.fix_yield(self.block(s.then_body), s.return_vars, loop=False)
            eb = self.fix_yield(self.block(s.else_body), s.return_vars, loop=False) if s.else_body else None
            return [replace(s, then_body=tb, else_body=eb)]
        if isinstance(s, St.ScopeStmt):
            return [replace(s, body=self.block(s.body))]
        return [s]

    def fix_yield(self, body: St.SeqStmts, phis: tuple, loop: bool) -> St.SeqStmts:
        stmts = list(body.stmts)
        if not stmts or not isinstance(stmts[-1], St.YieldStmt):
            return body
        y = stmts.pop()
        defs = {st.var: i for i, st in enumerate(stmts) if isinstance(st, St.AssignStmt)}
        values = list(y.value)
        for k, (phi, v) in enumerate(zip(phis, values, strict=False)):
            if not isinstance(v, E.Var):
                continue
            if not self.is_vec(phi):
                if loop and isinstance(getattr(phi, "type", None), TileType) and v in defs:
                    later = stmts[defs[v] + 1:]
                    if any(n is phi for st in later for n in walk(st)):
                        sp = self.space.get(phi)
                        raise CompileError(
                            f"loop-carried tile '{phi.name}' is still read after its next value '{v.name}' is "
                            f"computed; it lives in {sp.name if sp else 'a cube buffer'}, where the two cannot "
                            "be kept apart (no same-space copy exists)",
                            y.span,
                        )
                continue
            chain = _alias_chain(v, stmts, defs)
            root = chain[-1]
            safe = (root in defs and not isinstance(stmts[defs[root]].value, E.Var)
                    and all(self.uses[c] == 2 for c in chain) and self.space.get(v) is not None)
            if safe and loop:
                # from the first definition of the shared buffer on, the old carried value is gone
                later = stmts[defs[root] + 1 :]
                safe = not any(n is phi for st in later for n in walk(st))
                if safe:
                    d = stmts[defs[root]]
                    safe = not (isinstance(d.value, E.Call) and d.value.op.name == "block.load"
                                and any(n is phi for n in walk(d)))
            if not safe:
                st, nv = self.copy(v, y.span)
                stmts.append(st)
                values[k] = nv
        stmts.append(St.YieldStmt(tuple(values), y.span))
        return St.SeqStmts(tuple(stmts), body.span)


def _alias_chain(v: E.Var, stmts: list, defs: dict) -> list:
    """``v`` and the values it aliases in this body (``m = mn`` then ``yield m``: [m, mn]).

    InitMemRef gives an alias the buffer of its value, so a yielded alias shares the carried buffer
    from the aliased value's definition on, not from the alias's own.
    """
    chain = [v]
    while chain[-1] in defs:
        value = stmts[defs[chain[-1]]].value
        if not isinstance(value, E.Var) or value in chain or value not in defs:
            break
        chain.append(value)
    return chain


def normalize(func: St.Function) -> St.Function:
    return replace(func, body=Normalizer(func).block(func.body))
