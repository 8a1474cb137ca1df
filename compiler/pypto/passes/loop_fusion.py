"""Loop fusion inside one kernel body: two tile loops over the same iteration space, the second reading
tile by tile what the first wrote, become one loop whose body runs both bodies per tile (seed 003
§3.6, §6).

Works on SSA form after ConvertTensorToBlockOps, where a tile loop that writes a tensor threads it as
an iter arg through ``block.store`` and yields the store's result::

    for r, (t_1,) in pl.range(0, 256, 32, init_values=(t,)):       # producer A
        ...; t_2 = pl.block.store(p, [r, 0], t_1); t_3 = pl.yield_(t_2)
    for r2, (y_1,) in pl.range(0, 256, 32, init_values=(y,)):      # consumer B
        u = pl.block.load(t_3, [r2, 0], [32, 64], ...); ...

Legality, each failure left alone with its reason:

* same iteration space: start, stop and step are the same expressions (different tiling is not
  fused);
* B reads A's result only through top-level ``block.load``s whose window, with B's loop variable
  renamed to A's, is exactly a window A stores in the same iteration, with the stored tile's shape,
  valid shape and dtype (so the load is the stored tile; a consumer that needs other tiles first,
  like a reduction over the whole intermediate, reads windows A has not written yet);
* B needs no other result of A (a scalar or tile A carries to its end is only known after A's last
  iteration);
* A writes the intermediate only by a chain of top-level stores (no read-back, no nested stores);
* neither loop writes a buffer the other reads or writes (running A's iteration r + 1 after B's
  iteration r must not change what either sees);
* nothing else uses the intermediate: no statement after B, and its buffer is *dead* at the end of
  the kernel (a tensor whose only reader is B: the caller passes one it never reads again, see
  :func:`pypto.passes.launch_fusion.dead_out_params`). Then the stores go away and the intermediate
  never reaches GM.

A statement between the loops may stay between them only if it does not read A's results (the fused
loop takes B's place).

Library calls (:mod:`pypto.lib`) emit their blocks as *grid loops* (``loop_origin`` =
:data:`pypto.lib.emit.GRID_LOOP`): one loop per piece of the plan (the full row blocks, the row tail;
inside each, the column pieces when a row needs several tiles), kept even for one block. Consecutive
grid loops threading one op's result are that op's *group*; the group of the next op, when it reads
this one's result, is fused piece by piece (:func:`fuse_groups`): the same number of pieces, each
pair over the same range with the same nesting, the innermost bodies fused with the rules above.
A two-level row program (a composite over rows wider than a tile: statistics over the column
chunks, then its output pass over them) followed by an op over the same column pieces fuses the
same way, the statistics staying in front of the fused output pass; the reverse order is refused
(the statistics need whole rows of the intermediate before the first output).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pypto.enums import ForKind
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import TensorType, TileType
from pypto.ir.visitor import stmt_list, substitute, walk, walk_stmts
from pypto.lib.emit import GRID_LOOP
from pypto.passes.ir_utils import fold, used_vars


class FusionRefused(Exception):
    """Two loops that are a producer/consumer pair but cannot be fused; ``str()`` says why."""


@dataclass
class FusionLog:
    """What the fusion pass did and what it left alone, one line each (written into the pass dump)."""

    lines: list

    def fused(self, where: str, a: St.ForStmt, b: St.ForStmt, kept: list[str]) -> None:
        dropped = "" if not kept else f"; stores into {', '.join(kept)} dropped (the intermediate stays on chip)"
        self.lines.append(f"{where}: fused the loops at {_line(a)} and {_line(b)}{dropped}")

    def refused(self, where: str, a: Any, b: Any, why: str) -> None:
        self.lines.append(f"{where}: not fused: the loops at {_line(a)} and {_line(b)}: {why}")


def _line(s: Any) -> str:
    sp = getattr(s, "span", None)
    return f"line {sp.line}" if sp is not None and sp.is_known() else "<unknown line>"


def is_call(e: Any, name: str) -> bool:
    return isinstance(e, E.Call) and not isinstance(e.op, E.GlobalVar) and e.op.name == name


def same_expr(a: Any, b: Any) -> bool:
    """Two index expressions are the same computation: variables by identity, constants by value."""
    a, b = fold(a), fold(b)
    if isinstance(a, E.Var) or isinstance(b, E.Var):
        return a is b
    ia, ib = E.static_int(a), E.static_int(b)
    if ia is not None or ib is not None:
        return ia == ib
    if type(a) is not type(b):
        return False
    if isinstance(a, E.MakeTuple):
        return len(a.elements) == len(b.elements) and all(
            same_expr(x, y) for x, y in zip(a.elements, b.elements, strict=True))
    if isinstance(a, E.BinaryExpr):
        return same_expr(a.left, b.left) and same_expr(a.right, b.right)
    if isinstance(a, E.UnaryExpr):
        return same_expr(a.operand, b.operand)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_expr(x, y) for x, y in zip(a, b, strict=True))
    return False


def _items(e: Any) -> tuple:
    return tuple(e.elements) if isinstance(e, E.MakeTuple) else tuple(e) if isinstance(e, (tuple, list)) else (e,)


def window(access: St.AssignStmt) -> tuple:
    """The offsets of a ``block.load`` / ``block.store`` statement."""
    return _items(access.value.args[1])


def _range_text(s: St.ForStmt) -> str:
    def t(x: Any) -> str:
        v = E.static_int(fold(x))
        return str(v) if v is not None else getattr(x, "name", "?")
    return f"range({t(s.start)}, {t(s.stop)}, {t(s.step)})"


def buffer_links(body: Any) -> dict:
    """Tensor variable -> the variable whose buffer it names (store result -> its target, alias -> the
    aliased variable, iter arg -> its init value, loop/if result -> the iter arg / yielded value)."""
    link: dict = {}
    for s in walk_stmts(body):
        if isinstance(s, St.AssignStmt) and is_call(s.value, "block.store"):
            link[s.var] = s.value.args[2]
        elif isinstance(s, St.AssignStmt) and isinstance(s.value, E.Var) and isinstance(s.var.type, TensorType):
            link[s.var] = s.value
        elif isinstance(s, (St.ForStmt, St.WhileStmt)):
            for ia, rv in zip(s.iter_args, s.return_vars, strict=False):
                if isinstance(ia.type, TensorType):
                    link[ia] = ia.init_value
                    link[rv] = ia
        elif isinstance(s, St.IfStmt):
            ys = [x for x in stmt_list(s.then_body) if isinstance(x, St.YieldStmt)]
            for i, rv in enumerate(s.return_vars):
                if ys and i < len(ys[-1].value) and isinstance(rv.type, TensorType):
                    link[rv] = ys[-1].value[i]
    return link


def buffer_root(v: Any, link: dict) -> Any:
    for _ in range(10000):
        if not (isinstance(v, E.Var) and v in link):
            return v
        v = link[v]
    return v


def _accesses(loop: St.ForStmt, op: str, link: dict) -> list[tuple[St.AssignStmt, Any, bool]]:
    """(statement, buffer root, at the loop body's top level) of each ``op`` (load or store) in ``loop``."""
    top = set(stmt_list(loop.body))
    arg = 2 if op == "block.store" else 0
    return [(s, buffer_root(s.value.args[arg], link), s in top) for s in walk_stmts(loop.body)
            if isinstance(s, St.AssignStmt) and is_call(s.value, op)]


def same_tile(load_type: Any, tile_type: Any) -> bool:
    if not isinstance(load_type, TileType) or not isinstance(tile_type, TileType):
        return False
    la, ta = load_type.view, tile_type.view
    return (load_type.dtype is tile_type.dtype and same_expr(load_type.shape, tile_type.shape)
            and same_expr(load_type.valid_shape, tile_type.valid_shape)
            and (la.blayout, la.slayout, la.fractal, la.pad) == (ta.blayout, ta.slayout, ta.fractal, ta.pad))


def _name(v: Any) -> str:
    return getattr(v, "name", "?")


def rooted_at(node: Any, roots: set, link: dict) -> E.Var | None:
    """A variable in ``node`` naming one of the buffers ``roots``, if any."""
    for n in walk(node):
        if isinstance(n, E.Var) and isinstance(n.type, TensorType) and buffer_root(n, link) in roots:
            return n
    return None


@dataclass
class _Plan:
    """What fusing two loops changes: intermediates kept on chip, the loads they replace, the stores
    and iter args that go away."""

    inter: set
    replaced: dict
    dropped_stores: set
    loop_map: dict


def _plan(a: St.ForStmt, b: St.ForStmt, link: dict) -> _Plan:
    """Match ``b``'s loads of the buffers ``a`` writes to ``a``'s stored tiles, or refuse."""
    if not _same_space(a, b):
        raise FusionRefused(f"different iteration spaces ({_range_text(a)} vs {_range_text(b)}: different tiling)")
    if a.power2 != b.power2:
        raise FusionRefused(f"different power-of-two chunk bounds ({a.power2} vs {b.power2})")
    if ForKind.Unroll in (a.kind, b.kind) or a.chunk_size is not None or b.chunk_size is not None:
        raise FusionRefused("an unrolled or chunked loop is expanded, not fused")
    b_uses = used_vars(b)
    for rv in a.return_vars:
        if rv in b_uses and not isinstance(rv.type, TensorType):
            raise FusionRefused(f"the consumer needs '{rv.name}', which the producer only has after its last "
                                "iteration (a reduction over the whole loop)")
    stores, loads = _accesses(a, "block.store", link), _accesses(b, "block.load", link)
    inter = {r for _, r, _ in stores} & {r for _, r, _ in loads}
    loop_map: dict = {b.loop_var: a.loop_var}
    replaced: dict = {}
    dropped: set = set()
    for stmt, root, top in stores:
        if root in inter:
            if not top:
                raise FusionRefused(f"the producer writes '{_name(root)}' inside nested control flow")
            dropped.add(stmt)
    for stmt, root, top in loads:
        if root not in inter:
            continue
        if not top:
            raise FusionRefused(f"the consumer reads '{_name(root)}' inside nested control flow")
        offs = tuple(substitute(o, dict(loop_map)) for o in _items(stmt.value.args[1]))
        hit = [s for s in dropped if buffer_root(s.value.args[2], link) is root
               and same_expr(offs, _items(s.value.args[1]))]
        if not hit:
            raise FusionRefused(
                f"an iteration of the consumer reads a window of '{_name(root)}' that the same iteration of the "
                "producer does not write (it needs the whole intermediate, or other tiles of it, first)")
        tile = hit[-1].value.args[0]
        if not isinstance(tile, E.Var) or not same_tile(stmt.var.type, tile.type):
            raise FusionRefused(f"the consumer loads '{_name(root)}' as a different tile (shape, valid shape, "
                                "dtype or layout) than the producer stored")
        replaced[stmt.var] = tile
    return _Plan(inter, replaced, dropped, loop_map)


def _same_space(a: St.ForStmt, b: St.ForStmt) -> bool:
    return all(same_expr(x, y) for x, y in ((a.start, b.start), (a.stop, b.stop), (a.step, b.step)))


def fuse_pair(a: St.ForStmt, b: St.ForStmt, between: list, later: list, dead: set,
              link: dict) -> tuple[St.ForStmt, list, list[str]]:
    """The loop running ``a``'s and ``b``'s bodies per iteration, the statements that stay between
    them, and the intermediates kept on chip.

    ``later``: the statements after ``b`` (up to the function's return); ``dead``: buffers nobody
    reads after the kernel. Raises :class:`FusionRefused` with the reason when fusion is not legal.
    """
    plan = _plan(a, b, link)
    for root in plan.inter:
        if root not in dead:
            raise FusionRefused(f"the intermediate '{_name(root)}' is read after the kernel (a second "
                                "consumer: the caller)")
    fused = _build(a, b, plan, link)
    kept = [s for s in between if not (isinstance(s, St.AssignStmt) and isinstance(s.value, E.Var)
                                       and buffer_root(s.value, link) in plan.inter)]
    for what, node in (("the producer reads", fused), ("a statement between the loops reads", kept),
                       ("a second consumer after the loops reads", later)):
        v = rooted_at(St.SeqStmts(tuple(node)) if isinstance(node, list) else node, plan.inter, link)
        if v is not None:
            raise FusionRefused(f"{what} the intermediate '{_name(buffer_root(v, link))}' (as '{v.name}')")
    a_written = {r for _, r, _ in _accesses(a, "block.store", link)}
    a_read = {r for _, r, _ in _accesses(a, "block.load", link)}
    b_written = {r for _, r, _ in _accesses(b, "block.store", link)}
    b_read = {r for _, r, _ in _accesses(b, "block.load", link)}
    clash = (b_written & (a_read | a_written)) | ((a_written - plan.inter) & b_read)
    if clash:
        raise FusionRefused(f"the loops share the buffer(s) {', '.join(sorted(_name(v) for v in clash))} "
                            "beyond the intermediate")
    return fused, kept, sorted(_name(r) for r in plan.inter)


def _build(a: St.ForStmt, b: St.ForStmt, plan: _Plan, link: dict) -> St.ForStmt:
    a_stmts = [s for s in stmt_list(a.body) if s not in plan.dropped_stores]
    a_yield = a_stmts.pop() if a_stmts and isinstance(a_stmts[-1], St.YieldStmt) else None
    b_kept = [s for s in stmt_list(b.body) if not (isinstance(s, St.AssignStmt) and s.var in plan.replaced)]
    mapping = dict(plan.loop_map)
    mapping.update(plan.replaced)
    b_stmts = list(stmt_list(substitute(St.SeqStmts(tuple(b_kept), b.span), mapping)))
    b_yield = b_stmts.pop() if b_stmts and isinstance(b_stmts[-1], St.YieldStmt) else None
    keep = [k for k, ia in enumerate(a.iter_args)
            if not (isinstance(ia.type, TensorType) and buffer_root(ia.init_value, link) in plan.inter)]
    values = [a_yield.value[k] for k in keep] if a_yield is not None else []
    values += list(b_yield.value) if b_yield is not None else []
    body = a_stmts + b_stmts
    if values:
        body.append(St.YieldStmt(tuple(values), (b_yield or a_yield).span))
    kind = ForKind.Parallel if a.kind is ForKind.Parallel and b.kind is ForKind.Parallel else ForKind.Sequential
    return replace(a, iter_args=tuple(a.iter_args[k] for k in keep) + tuple(b.iter_args),
                   body=St.SeqStmts(tuple(body), a.span),
                   return_vars=tuple(a.return_vars[k] for k in keep) + tuple(b.return_vars), kind=kind)


def _producer_consumer(a: St.ForStmt, b: St.ForStmt, link: dict) -> bool:
    """``b`` reads a result of ``a`` or loads a buffer ``a`` stores into."""
    b_uses = used_vars(b)
    if any(rv in b_uses for rv in a.return_vars):
        return True
    written = {r for _, r, _ in _accesses(a, "block.store", link)}
    return any(r in written for _, r, _ in _accesses(b, "block.load", link))


def is_grid(s: Any) -> bool:
    """A library loop over the blocks of a plan (:data:`pypto.lib.emit.GRID_LOOP`)."""
    return isinstance(s, St.ForStmt) and s.loop_origin == GRID_LOOP


def grid_group(stmts: list, i: int) -> int:
    """How many grid loop nests from ``stmts[i]`` belong to one library op: its pieces (full blocks,
    tails) thread the op's result, each nest's iter args starting from the previous nest's results."""
    n = 0
    while i + n < len(stmts) and is_grid(stmts[i + n]):
        if n and not any(ia.init_value in stmts[i + n - 1].return_vars for ia in stmts[i + n].iter_args):
            break
        n += 1
    return n


def _inner_grid(loop: St.ForStmt) -> list | None:
    """The grid loops a grid loop's body consists of (besides its yield), or None for a body of
    straight-line code (the blocks' tile ops)."""
    body = [s for s in stmt_list(loop.body) if not isinstance(s, St.YieldStmt)]
    if body and all(is_grid(s) for s in body) and grid_group(body, 0) == len(body):
        return body
    return None


def _grid_tail(loop: St.ForStmt) -> tuple[list, list] | None:
    """``(prefix, grid loops)`` of a grid loop whose body is straight-line code or loops that are not
    grid loops (a two-level row program's statistics) followed by grid loops (its output pass over the
    column pieces), or None."""
    body = [s for s in stmt_list(loop.body) if not isinstance(s, St.YieldStmt)]
    n = len(body)
    while n and is_grid(body[n - 1]):
        n -= 1
    grids = body[n:]
    if not grids or n == 0 or any(is_grid(s) for s in body[:n]) or grid_group(grids, 0) != len(grids):
        return None
    return body[:n], grids


def _yielded(loop: St.ForStmt) -> tuple:
    last = stmt_list(loop.body)[-1:]
    return tuple(last[0].value) if last and isinstance(last[0], St.YieldStmt) else ()


def fuse_nests(a: St.ForStmt, b: St.ForStmt, link: dict) -> tuple[St.ForStmt, set]:
    """Grid loops ``a`` and ``b`` (one piece of two ops over the same plan) as one loop whose innermost
    bodies run both ops' bodies per block, and the intermediates it keeps on chip."""
    if not _same_space(a, b):
        raise FusionRefused(f"different iteration spaces ({_range_text(a)} vs {_range_text(b)}: different tiling)")
    a_in = _inner_grid(a)
    b = replace(b, body=substitute(b.body, {b.loop_var: a.loop_var}))
    b_in = _inner_grid(b)
    if a_in is None and b_in is None:
        plan = _plan(a, b, link)
        return _build(a, b, plan, link), plan.inter
    prefix: list = []
    if a_in is None and b_in is not None and _grid_tail(a) is not None:
        # a two-level row program (statistics, then its output chunk by chunk) followed by an op over
        # the same column pieces: the consumer runs in the output pass, after the statistics
        prefix, a_in = _grid_tail(a)
    elif b_in is None and a_in is not None and _grid_tail(b) is not None:
        raise FusionRefused("the consumer is a two-level row program: its statistics need whole rows of the "
                            "intermediate before its first output")
    if a_in is None or b_in is None or len(a_in) != len(b_in):
        raise FusionRefused("different loop nests over the blocks (different tiling)")
    inner, inter = [], set()
    for x, y in zip(a_in, b_in, strict=True):
        f, kept = fuse_nests(x, y, link)
        inner.append(f)
        inter |= kept
    keep = [k for k, ia in enumerate(a.iter_args)
            if not (isinstance(ia.type, TensorType) and buffer_root(ia.init_value, link) in inter)]
    a_yield = _yielded(a)
    values = tuple(a_yield[k] for k in keep) + _yielded(b)
    body = prefix + inner + ([St.YieldStmt(values, a.span)] if values else [])
    fused = replace(a, iter_args=tuple(a.iter_args[k] for k in keep) + tuple(b.iter_args),
                    body=St.SeqStmts(tuple(body), a.span),
                    return_vars=tuple(a.return_vars[k] for k in keep) + tuple(b.return_vars))
    return fused, inter


def fuse_groups(a: list, b: list, later: list, dead: set, link: dict) -> tuple[list, list[str]]:
    """Two library ops over the same plan (their grid nests ``a`` and ``b``, the consumer ``b`` right
    after the producer) as one nest per piece, pieces paired in order; raises :class:`FusionRefused`."""
    if len(a) != len(b):
        raise FusionRefused(f"different tilings ({len(a)} vs {len(b)} loop nests over the blocks)")
    fused, inter = [], set()
    for x, y in zip(a, b, strict=True):
        f, kept = fuse_nests(x, y, link)
        fused.append(f)
        inter |= kept
    if not inter:
        raise FusionRefused("the consumer loads nothing the producer stores")
    for root in inter:
        if root not in dead:
            raise FusionRefused(f"the intermediate '{_name(root)}' is read after the kernel (a second consumer: "
                                "the caller)")
    for what, node in (("the fused loops still read", fused), ("a second consumer after the loops reads", later)):
        v = rooted_at(St.SeqStmts(tuple(node)), inter, link)
        if v is not None:
            raise FusionRefused(f"{what} the intermediate '{_name(buffer_root(v, link))}' (as '{v.name}')")

    def roots(loops: list, op: str) -> set:
        return {r for loop in loops for _, r, _ in _accesses(loop, op, link)}

    a_written, a_read = roots(a, "block.store"), roots(a, "block.load")
    b_written, b_read = roots(b, "block.store"), roots(b, "block.load")
    clash = (b_written & (a_read | a_written)) | ((a_written - inter) & b_read)
    if clash:
        raise FusionRefused(f"the loops share the buffer(s) {', '.join(sorted(_name(v) for v in clash))} "
                            "beyond the intermediate")
    return fused, sorted(_name(r) for r in inter)


def _fuse_grid_at(out: list, i: int, dead: set, link: dict, log: FusionLog, where: str) -> tuple[list, int]:
    """``out`` with the library op whose grid nests start at ``i`` fused with the op right after it, when
    that one consumes its result; and the index to go on from."""
    na = grid_group(out, i)
    j = i + na
    nb = grid_group(out, j)
    a, b = out[i:j], out[j:j + nb]
    if not nb or not any(_producer_consumer(x, y, link) for x in a for y in b):
        return out, j
    try:
        fused, kept = fuse_groups(a, b, out[j + nb:], dead, link)
    except FusionRefused as why:
        log.refused(where, a[0], b[0], str(why))
        return out, j
    log.fused(where, a[0], b[0], kept)
    return out[:i] + fused + out[j + nb:], i  # the fused op may fuse with the next consumer


def fuse_block(stmts: list, dead: set, link: dict, log: FusionLog, where: str, chunkwise: bool = False) -> list:
    """``stmts`` with every fusable producer/consumer loop pair fused (chains too), nested blocks included.

    With ``chunkwise`` two non-parallel user loops (``pl.range``) are left alone: ExpandPower2 fuses
    them chunk by chunk after expanding them (seed §6.5)."""
    out = [_fuse_nested(s, dead, link, log, where, chunkwise) for s in stmts]
    i = 0
    while i < len(out):
        if is_grid(out[i]):
            out, i = _fuse_grid_at(out, i, dead, link, log, where)
            continue
        j = _next_consumer(out, i, link)
        if j is None:
            i += 1
            continue
        a, b = out[i], out[j]
        if chunkwise and _nonparallel(a) and _nonparallel(b):
            log.refused(where, a, b, "non-parallel loops fuse chunk-wise only (after power-of-two expansion)")
            i += 1
            continue
        try:
            fused, between, kept = fuse_pair(a, b, out[i + 1:j], out[j + 1:], dead, link)
        except FusionRefused as why:
            log.refused(where, a, b, str(why))
            i += 1
            continue
        log.fused(where, a, b, kept)
        out = out[:i] + between + [fused] + out[j + 1:]
        i += len(between)  # the fused loop may fuse with the next consumer
    return out


def _next_consumer(stmts: list, i: int, link: dict) -> int | None:
    """Index of the next loop after the loop ``stmts[i]`` when it reads that loop's results and only
    plain assignments (no stores, no other loops) lie between."""
    a = stmts[i]
    if not isinstance(a, St.ForStmt):
        return None
    for j in range(i + 1, len(stmts)):
        s = stmts[j]
        if isinstance(s, St.ForStmt):
            return j if _producer_consumer(a, s, link) else None
        if not isinstance(s, St.AssignStmt) or is_call(s.value, "block.store"):
            return None
    return None


def _nonparallel(s: St.ForStmt) -> bool:
    """A user's ``pl.range`` loop (not a parallel, power-of-two, chunked or library loop)."""
    return s.kind is ForKind.Sequential and s.loop_origin == 0 and s.power2 is None and s.chunk_size is None


def _fuse_nested(s: Any, dead: set, link: dict, log: FusionLog, where: str, chunkwise: bool = False) -> Any:
    if isinstance(s, (St.ForStmt, St.WhileStmt)):
        inner = stmt_list(s.body)
        if sum(isinstance(x, St.ForStmt) for x in inner) > 1:
            return replace(s, body=St.SeqStmts(tuple(fuse_block(list(inner), dead, link, log, where, chunkwise)),
                                               s.span))
    return s
