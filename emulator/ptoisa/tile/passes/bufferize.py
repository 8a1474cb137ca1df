"""Bufferize (seed 002 §8.6): every SSA tile gets a tile buffer, an address in its loc's memory.

Live ranges come from program order over the whole function (a tile used inside a loop but defined
outside it lives to the loop's end). Addresses are assigned first-fit by a linear scan, aligned as
the machine record says, within the buffer's capacity; a tile is never placed over one still live,
and an op's result never shares an operand's buffer. Instructions that need a scratch tile
(``tmp`` in their ISA record) get one for the op's duration. When a tile reuses bytes of a dead tile
in the same block, its producer must wait for every reader of the old tile (WAR) and its writer
(WAW): those orders become tokens (a new event result on the reader if it had none).

Each tile op records its placement as ``{addr = N}`` (and ``{scratch = N}``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoisa.dtypes import itemsize
from ptoisa.errors import VerifyError
from ptoisa.text import ast as A
from ptoisa.tile.ops import LOC_TO_BUF
from ptoisa.tile.passes.common import Names, PassContext, all_uses, blocks, is_tile_op, op_def, uses, walk
from ptoisa.tile.passes.events import add_event_result, insert_block_events


@dataclass
class _Value:
    """One SSA tile, or (after merging) a class of tiles that must share a buffer: a loop's init,
    iter_arg, yielded value and result; an if's result and the values its branches yield."""

    name: str
    loc: str
    size: int
    start: int
    end: int
    writer: A.Op
    block: int
    members: list[_Value] = field(default_factory=list)


class Bufferize:
    name = "bufferize"

    def apply(self, module: A.Module, ctx: PassContext) -> None:
        for fn in module.functions:
            if fn.name in ctx.derived_events:  # its tokens are re-derived after, so a copy may be added
                _copy_carried_values(fn, Names(fn))
            _bufferize(fn, ctx)


def tile_bytes(t: A.TileType) -> int:
    rows, cols = t.shape
    assert rows is not None and cols is not None
    return rows * cols * itemsize(t.elem)


def _linearise(fn: A.Function) -> tuple[list[tuple[A.Op, int, int]], dict[int, int]]:
    """(op, position, block id) in program order, and for each block id its last position."""
    flat: list[tuple[A.Op, int, int]] = []
    block_end: dict[int, int] = {}
    counter = [0]

    def visit(ops: list[A.Op], block: int) -> None:
        for op in ops:
            flat.append((op, counter[0], block))
            counter[0] += 1
            for r in op.regions:
                inner = id(r)
                visit(r.ops, inner)
                block_end[inner] = counter[0]
                counter[0] += 1
    visit(fn.body.ops, id(fn.body))
    block_end[id(fn.body)] = counter[0]
    return flat, block_end


def _bufferize(fn: A.Function, ctx: PassContext) -> None:
    flat, block_end = _linearise(fn)
    parents = _block_parents(fn)
    values: dict[str, _Value] = {}
    readers: dict[str, list[tuple[A.Op, int]]] = {}
    use_pos: dict[str, list[int]] = {}
    for op, pos, block in flat:
        for v in uses(op):
            val = values.get(v)
            if val is None:
                continue
            end = pos
            b = block  # used in a block nested below the value's block: live to that block's end
            while b != val.block and b in parents:
                end = max(end, block_end[b])
                b = parents[b]
            val.end = max(val.end, end)
            readers.setdefault(v, []).append((op, block))
            use_pos.setdefault(v, []).append(pos)
        for name, ty in zip(op.results, op.result_types, strict=False):
            if isinstance(ty, A.TileType):
                values[name] = _Value(name, str(ty.loc), tile_bytes(ty), pos, pos, op, block)
        if op.name == "scf.for":
            body = op.regions[0]
            for name, ty in zip(body.args[1:], body.arg_types[1:], strict=False):
                if isinstance(ty, A.TileType):
                    values[name] = _Value(name, str(ty.loc), tile_bytes(ty), pos, pos, op, id(body))
    classes = _merge(flat, values, use_pos, block_end)
    scratch = [(op, pos, block) for op, pos, block in flat if is_tile_op(op) and op_def(op, ctx.isa).scratch]
    names = Names(fn)
    reuse: dict[int, list[A.Op]] = {}
    _assign(classes, scratch, readers, reuse, ctx)
    if fn.name in ctx.derived_events:  # sequential input: re-derive the minimal tokens with reuse orders
        for region in blocks(fn):
            insert_block_events(region.ops, ctx, names, reuse)
    else:  # tokens written by hand: keep them, add what reuse needs
        for op, _pos, _block in flat:
            for other in reuse.get(id(op), []):
                waits = op.groups.setdefault("wait", [])
                tok = add_event_result(other, ctx, names)
                if tok not in waits:
                    waits.append(tok)


def _copy_carried_values(fn: A.Function, names: Names) -> None:
    """A loop-carried Vec tile whose old value is still read after its new value is computed
    (``%mn = max %m, %c`` ... ``sub %m, %mn`` ... ``yield %mn``) cannot share one buffer with it,
    as a carried value must: the new value is yielded through a copy made right before the yield
    (``pto.tile.mov.v2v``), as MLIR's bufferization copies, instead of refusing the loop."""
    for loop in walk(fn.body.ops):
        if loop.name != "scf.for" or not loop.regions or not loop.regions[0].ops:
            continue
        body = loop.regions[0]
        yld = body.ops[-1]
        if yld.name != "scf.yield":
            continue
        for k, (arg, ty) in enumerate(zip(body.args[1:], body.arg_types[1:], strict=False)):
            out = yld.operands[k] if k < len(yld.operands) else None
            if not isinstance(ty, A.TileType) or ty.loc != "Vec" or not isinstance(out, str) or out == arg:
                continue
            defined = next((i for i, op in enumerate(body.ops[:-1])
                            if out in op.results or any(out in o.results for o in walk(
                                [x for r in op.regions for x in r.ops]))), None)
            if defined is None or not any(arg in all_uses(op) for op in body.ops[defined + 1:-1]):
                continue
            copy = names.fresh("carried")
            body.ops.insert(len(body.ops) - 1, A.Op("pto.tile.mov.v2v", yld.loc, results=[copy], result_types=[ty],
                                                     operands=[out], operand_types=[ty]))
            yld.operands[k] = copy


def _merge(flat: list[tuple[A.Op, int, int]], values: dict[str, _Value], use_pos: dict[str, list[int]],
           block_end: dict[int, int]) -> list[_Value]:
    """Classes of values that share one buffer (loop-carried and if-merged tiles), checked for
    interference: what a class member overwrites must be dead."""
    parent = {name: name for name in values}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        if a in parent and b in parent:
            parent[find(b)] = find(a)

    at = {id(op): pos for op, pos, _block in flat}
    for op, pos, _block in flat:
        pairs = (_loop_pairs(op, pos, values, (values, use_pos, block_end, at)) if op.name == "scf.for"
                 else _if_pairs(op, values, use_pos, block_end))
        for a, b in pairs:
            union(a, b)
    classes: dict[str, _Value] = {}
    for name, v in sorted(values.items(), key=lambda kv: kv[1].start):
        root = find(name)
        cls = classes.get(root)
        if cls is None:
            cls = classes[root] = _Value(name, v.loc, v.size, v.start, v.end, v.writer, v.block)
        elif (v.loc, v.size) != (cls.loc, cls.size):
            raise _interference(v.writer, f"{v.name} must share a buffer with {cls.name} but differs in loc or size")
        cls.end = max(cls.end, v.end)
        cls.members.append(v)
    return list(classes.values())


# (values, use positions, block ends, op positions by id) of _merge, for _read_after_replaced
_Where = tuple[dict[str, _Value], dict[str, list[int]], dict[int, int], dict[int, int]]


def _loop_pairs(op: A.Op, pos: int, values: dict[str, _Value], where: _Where) -> list[tuple[str, str]]:
    """A loop's tile result shares a buffer with its init, iter_arg and yielded value."""
    body = op.regions[0]
    yields = body.ops[-1].operands if body.ops and body.ops[-1].name == "scf.yield" else []
    pairs = []
    for k, (init, res) in enumerate(zip(op.operands[3:], op.results, strict=False)):
        if res not in values:
            continue
        arg = body.args[k + 1]
        if values[str(init)].end > pos:
            raise _interference(op, f"{init} is used after the loop that carries it; copy it first")
        out = str(yields[k])
        if out != arg and _read_after_replaced(arg, out, body.ops, where, pos, where[2][id(body)]):
            raise _interference(op, f"{arg} is read after {out}, which replaces it in the same buffer")
        pairs += [(res, str(init)), (res, arg), (res, out)]
    return pairs


def _read_after_replaced(arg: str, out: str, ops: list[A.Op], where: _Where, lo: int, hi: int) -> bool:
    """Whether the carried ``arg`` is read after ``out``, which replaces it in the same buffer, is
    written (reads at positions in ``(lo, hi]``, the block ``ops``). The result of an ``scf.if`` is
    written in its branches, each by the value it yields: a read in one branch is compared with that
    branch's value only (the branches exclude each other; comparing with the if's own position
    refused ``%n = scf.if .. { add %a, %t } else { max %a, %t }; yield %n``, red team 15), a read
    after the if with any."""
    values, use_pos, block_end, at = where
    iff = next((o for o in ops if o.name == "scf.if" and out in o.results), None)
    if iff is None:
        if at.get(id(values[out].writer), -1) < lo:  # written before this block: any later read
            return values[arg].end > values[out].start
        return any(values[out].start < p <= hi for p in use_pos.get(arg, []))
    k = iff.results.index(out)
    last = max(block_end[id(r)] for r in iff.regions)
    if any(last < p <= hi for p in use_pos.get(arg, [])):
        return True
    start = at[id(iff)]
    for r in iff.regions:
        end = block_end[id(r)]
        if r.ops and r.ops[-1].name == "scf.yield":
            o = str(r.ops[-1].operands[k])
            if o != arg and _read_after_replaced(arg, o, r.ops, where, start, end):
                return True
        start = end
    return False


def _if_pairs(op: A.Op, values: dict[str, _Value], use_pos: dict[str, list[int]],
              block_end: dict[int, int]) -> list[tuple[str, str]]:
    """An if's tile result shares a buffer with what each branch yields. A branch may yield a
    value from before the if (it leaves the buffer alone) only if that value is dead after the if
    and no branch reads it after writing its own replacement."""
    if op.name != "scf.if":
        return []
    pairs = []
    last = max(block_end[id(r)] for r in op.regions)
    for k, res in enumerate(op.results):
        if res not in values:
            continue
        outs = [(r, str(r.ops[-1].operands[k])) for r in op.regions if r.ops and r.ops[-1].name == "scf.yield"]
        outer = {o for r, o in outs if values[o].writer not in r.ops}
        for o in outer:
            if values[o].end > last:
                raise _interference(op, f"yields {o}, which is still used after the if; copy it first")
        for r, o in outs:
            if o in outer:
                continue
            for prior in outer:
                if any(values[o].start < p <= block_end[id(r)] for p in use_pos.get(prior, [])):
                    raise _interference(op, f"reads {prior} after {o} replaced it in the same buffer")
        pairs += [(res, o) for _r, o in outs]
    return pairs


def _interference(op: A.Op, what: str) -> VerifyError:
    return VerifyError(f"error: '{op.name}' op {what}", op.loc)


def _block_parents(fn: A.Function) -> dict[int, int]:
    parents: dict[int, int] = {}
    for region in blocks(fn):
        for op in region.ops:
            for r in op.regions:
                parents[id(r)] = id(region)
    return parents


def _assign(values: list[_Value], scratch: list[tuple[A.Op, int, int]], readers, reuse: dict[int, list[A.Op]],
            ctx: PassContext) -> None:
    items: list[tuple[int, int, _Value | None, A.Op | None, int]] = []
    for v in values:
        items.append((v.start, 1, v, None, v.block))
    for op, pos, block in scratch:
        items.append((pos, 0, None, op, block))
    items.sort(key=lambda it: (it[0], it[1]))
    placed: dict[str, list[tuple[int, int, int, _Value | None]]] = {}  # loc -> (lo, hi, end, value)
    for pos, _kind, val, op, _block in items:
        if val is not None:
            loc, size, end = val.loc, val.size, val.end
        else:
            assert op is not None
            src = next(t for t in op.operand_types if isinstance(t, A.TileType))
            loc, size, end = str(src.loc), tile_bytes(src), pos
        buf = ctx.machine.buffers[LOC_TO_BUF[loc]]
        live = [(lo, hi, e, v) for lo, hi, e, v in placed.get(loc, []) if e >= pos]
        addr = _first_fit(live, size, buf.align)
        if addr + size > buf.size:
            where = op if op is not None else val.writer  # type: ignore[union-attr]
            used = sum(hi - lo for lo, hi, _, _ in live)
            raise VerifyError(f"error: '{where.name}' op its tile needs {size} bytes of {buf.name} but only "
                              f"{buf.size - used} of {buf.size} are free here ({len(live)} live tiles)", where.loc)
        if val is not None:
            _record(val, addr)
            for lo, hi, _e, old in placed.get(loc, []):
                if old is not None and old.end < pos and lo < addr + size and addr < hi:
                    _order_after(val, old, readers, reuse)
        else:
            assert op is not None
            op.attrs["scratch"] = addr
        placed.setdefault(loc, []).append((addr, addr + size, end, val))


def _record(cls: _Value, addr: int) -> None:
    """Every member's writer records the address: tile ops as ``addr``, scf ops per result."""
    for m in cls.members:
        op = m.writer
        if is_tile_op(op):
            op.attrs["addr"] = addr
        elif m.name in op.results:
            addrs = op.attrs.get("addr")
            if not isinstance(addrs, list):
                addrs = op.attrs["addr"] = [-1] * len(op.results)
            addrs[op.results.index(m.name)] = addr


def _first_fit(live: list[tuple[int, int, int, _Value | None]], size: int, align: int) -> int:
    addr = 0
    for lo, hi, _e, _v in sorted(live, key=lambda x: x[0]):
        if addr + size <= lo:
            break
        addr = max(addr, -(-hi // align) * align)
    return addr


def _order_after(new: _Value, old: _Value, readers, reuse: dict[int, list[A.Op]]) -> None:
    """``new``'s first writer reuses ``old``'s bytes: it must follow every reader and writer of
    old's members in its block (in different blocks the region fences order them)."""
    if new.block != old.block or not is_tile_op(new.writer):
        return
    follow = reuse.setdefault(id(new.writer), [])
    for m in old.members:
        for reader, block in [*readers.get(m.name, []), (m.writer, m.block)]:
            if block == new.block and reader is not new.writer and is_tile_op(reader) and reader not in follow:
                follow.append(reader)
