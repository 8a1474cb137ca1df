"""Lower a bufferized tile-level module to the level-2 `.pto` form, as :mod:`ptoisa.text.ast` nodes.

* GM memref arguments become ``!pto.ptr<T>`` with one ``pto.make_tensor_view`` each (shape and
  strides from the memref type and its layout); a load/store becomes ``pto.partition_view`` at its
  indices plus ``pto.tload``/``pto.tstore``.
* Each tile op becomes ``pto.alloc_tile addr = ...`` (its bufferized address, valid region from
  ``valid``) and its level-2 instruction with operands in the ISA record's order (scratch tiles
  where the record has ``tmp``).
* Each token becomes synchronisation between the producer's and the consumer's pipe (pipes from
  the ISA records): a ``set_flag`` right after the producer and a ``wait_flag`` right before its
  first consumer on each pipe, with event ids allocated per pipe pair over their live ranges; two
  ops of one pipe that does not complete in order (V on A2/A3) get a ``barrier`` instead, one of an
  in-order pipe nothing. Loops are fenced with ``pto.barrier <PIPE_ALL>`` before them and at the
  end of their body, which orders everything that crosses the loop boundary or an iteration.
* ``pto.constant``/index ops become ``arith`` ops.
"""

from __future__ import annotations

from ptoisa.errors import VerifyError
from ptoisa.machine import Machine
from ptoisa.text import ast as A
from ptoisa.tile.ops import LAYOUT_TO_BUF, LOC_TO_BUF
from ptoisa.tile.passes.common import Names, PassContext, is_tile_op, op_def, pipe_of, result_tile, walk

_INDEX = A.ScalarType("index")
_I64 = A.ScalarType("i64")
_ARITH = {"pto.addi": "arith.addi", "pto.subi": "arith.subi", "pto.muli": "arith.muli",
          "pto.divi": "arith.divsi", "pto.remi": "arith.remsi", "pto.mini": "arith.minsi",
          "pto.maxi": "arith.maxsi"}


def tile_buf_type(t: A.TileType, valid: list[A.Operand] | None, machine: Machine) -> A.TileBufType:
    rows, cols = t.shape
    assert rows is not None and cols is not None and t.loc is not None and t.layout is not None
    vr: int | None = rows
    vc: int | None = cols
    if valid is not None:
        vr = valid[0] if isinstance(valid[0], int) else None
        vc = valid[1] if isinstance(valid[1], int) else None
    blayout, slayout = LAYOUT_TO_BUF[t.layout]
    return A.TileBufType(LOC_TO_BUF[t.loc], t.elem, rows, cols, vr, vc, blayout, slayout,
                         machine.buffers[LOC_TO_BUF[t.loc]].fractal, 0)


def lower_module(module: A.Module, ctx: PassContext) -> A.Module:
    """The level-2 module of a bufferized tile-level ``module``."""
    attrs = {k: v for k, v in module.attrs.items() if k != "pto.target"}
    target = module.attrs.get("pto.target")
    if isinstance(target, A.EnumAttr):
        attrs["pto.target_arch"] = target.value
    return A.Module(module.file, [_Lowering(fn, ctx).run() for fn in module.functions], attrs, module.loc)


class _Lowering:
    def __init__(self, fn: A.Function, ctx: PassContext):
        self.fn = fn
        self.ctx = ctx
        self.names = Names(fn)
        self.preamble: list[A.Op] = []
        self.consts: dict[tuple[int | float, str], str] = {}
        self.views: dict[str, tuple[str, A.TensorViewType]] = {}
        self.bufs: dict[str, tuple[str, A.TileBufType]] = {}  # SSA tile -> (alloc name, type)
        self.consts_values: dict[str, int] = {}
        self.producers: dict[str, A.Op] = {}  # token -> producing op
        self.free_ids: dict[tuple[str, str], list[int]] = {}
        self.live_ids: dict[tuple[str, str, str], int] = {}  # (token, src pipe, dst pipe) -> id
        self.consumer_pipes: dict[str, list[str]] = {}  # token -> pipes of its first consumers
        self.valid: dict[str, list[A.Operand]] = {}  # SSA tile -> its valid sizes

    def run(self) -> A.Function:
        fn = self.fn
        args, arg_types = [], []
        for name, ty in zip(fn.args, fn.arg_types, strict=False):
            args.append(name)
            if isinstance(ty, A.TileMemRefType):
                arg_types.append(A.PtrType(ty.elem))
                self._tensor_view(name, ty)
            else:
                arg_types.append(ty)
        for op in walk(fn.body.ops):
            if op.name == "pto.constant" and isinstance(op.attrs.get("value"), int):
                self.consts_values[op.results[0]] = op.attrs["value"]  # type: ignore[assignment]
        body = self.block(fn.body.ops)
        region = A.Region(ops=self.preamble + body)
        return A.Function(fn.name, fn.loc, args, arg_types, fn.result_types, dict(fn.attrs), region, fn.private)

    # ---- helpers

    def const(self, value: int, ty: A.ScalarType = _INDEX) -> str:
        key = (value, ty.name)
        if key not in self.consts:
            name = self.names.fresh(f"c{value}_" if value >= 0 else "cn")
            self.preamble.append(A.Op("arith.constant", self.fn.loc, results=[name], result_types=[ty],
                                      attrs={"value": value}))
            self.consts[key] = name
        return self.consts[key]

    def operand(self, v: A.Operand) -> str:
        return self.const(v) if isinstance(v, int) else v

    def _tensor_view(self, arg: str, ty: A.TileMemRefType) -> None:
        if None in ty.shape:
            raise VerifyError(f"error: argument {arg} has dynamic dims {ty}; the lowering needs static GM "
                              "shapes", self.fn.loc)
        shape = [int(d) for d in ty.shape]  # type: ignore[arg-type]
        if ty.strides is not None and None not in ty.strides:
            strides = [int(s) for s in ty.strides]  # type: ignore[arg-type]
        elif ty.layout == "DN" and len(shape) == 2:
            strides = [1, shape[0]]
        elif ty.layout == "ND":
            strides, acc = [], 1
            for d in reversed(shape):
                strides.insert(0, acc)
                acc *= d
        else:
            raise VerifyError(f"error: argument {arg}: GM layout {ty.layout} is not supported by the lowering",
                              self.fn.loc)
        tv_type = A.TensorViewType(tuple(shape), ty.elem)
        name = self.names.fresh("tv")
        op = A.Op("pto.make_tensor_view", self.fn.loc, results=[name], result_types=[tv_type], operands=[arg],
                  groups={"shape": [self.const(d) for d in shape], "strides": [self.const(s) for s in strides]})
        self.preamble.append(op)
        self.views[arg] = (name, tv_type)

    # ---- blocks and ops

    def block(self, ops: list[A.Op]) -> list[A.Op]:
        out: list[A.Op] = []
        first_consumer = self._first_consumers(ops)
        for op in ops:
            if op.name == "scf.for":
                out.extend(self.loop(op))
            elif op.name == "scf.if":
                self.if_(op, out)
            elif is_tile_op(op):
                self.tile(op, out, first_consumer)
            elif op.name == "pto.constant":
                out.append(A.Op("arith.constant", op.loc, results=list(op.results), result_types=list(op.result_types),
                                attrs={"value": op.attrs["value"]}))
            elif op.name in _ARITH:
                out.append(A.Op(_ARITH[op.name], op.loc, results=list(op.results), result_types=list(op.result_types),
                                operands=list(op.operands), operand_types=list(op.result_types)))
            elif op.name == "pto.memref.subview":
                raise VerifyError("error: 'pto.memref.subview' op survived view canonicalization", op.loc)
            else:
                out.append(op)
        return out

    def loop(self, op: A.Op) -> list[A.Op]:
        """scf.for without its tile iter_args (they live in one buffer: the init's)."""
        body = op.regions[0]
        keep = [k for k, t in enumerate(op.result_types) if not isinstance(t, A.TileType)]
        for k, t in enumerate(op.result_types):
            if isinstance(t, A.TileType):
                self.bufs[body.args[k + 1]] = self.bufs[op.results[k]] = self.bufs[str(op.operands[3 + k])]
        inner = self._region(body.ops, keep, op.loc)
        new = A.Op("scf.for", op.loc, results=[op.results[k] for k in keep],
                   result_types=[op.result_types[k] for k in keep],
                   operands=list(op.operands[:3]) + [op.operands[3 + k] for k in keep],
                   operand_types=list(op.operand_types), attrs={k: v for k, v in op.attrs.items() if k != "addr"},
                   regions=[A.Region([body.args[0]] + [body.args[k + 1] for k in keep],
                                     [body.arg_types[0]] + [body.arg_types[k + 1] for k in keep], inner)])
        return [_barrier_all(op.loc), new] if _has_tile_ops(op) else [new]

    def if_(self, op: A.Op, out: list[A.Op]) -> None:
        """scf.if without its tile results (each lives in one buffer, allocated before the if)."""
        keep = [k for k, t in enumerate(op.result_types) if not isinstance(t, A.TileType)]
        addrs = op.attrs.get("addr")
        for k, t in enumerate(op.result_types):
            if isinstance(t, A.TileType):
                assert isinstance(addrs, list)
                self.alloc(op.results[k], t, int(addrs[k]), None, op.loc, out)
        regions = [A.Region(list(r.args), list(r.arg_types), self._region(r.ops, keep, op.loc)) for r in op.regions]
        if _has_tile_ops(op):
            out.append(_barrier_all(op.loc))
        out.append(A.Op("scf.if", op.loc, results=[op.results[k] for k in keep],
                        result_types=[op.result_types[k] for k in keep], operands=list(op.operands),
                        attrs={k: v for k, v in op.attrs.items() if k != "addr"}, regions=regions))

    def _region(self, ops: list[A.Op], keep: list[int], loc) -> list[A.Op]:
        """A lowered region body ending with a full barrier (when it has tile ops) and a yield of
        the kept (non-tile) values."""
        inner = self.block(ops)
        tail = []
        if inner and inner[-1].name == "scf.yield":
            y = inner.pop()
            tail = [A.Op("scf.yield", y.loc, operands=[y.operands[k] for k in keep],
                         operand_types=[y.operand_types[k] for k in keep] if y.operand_types else [])]
        fence = [_barrier_all(loc)] if any(is_tile_op(o) for o in walk(ops)) else []
        return [*inner, *fence, *tail]

    def _first_consumers(self, ops: list[A.Op]) -> dict[int, list[tuple[str, str]]]:
        """For each op (by id) the (token, producer pipe) pairs it must wait_flag / barrier for."""
        local_tokens: dict[str, A.Op] = {}
        seen: set[tuple[str, str]] = set()
        out: dict[int, list[tuple[str, str]]] = {}
        for op in ops:
            if is_tile_op(op):
                pipe = pipe_of(op, self.ctx)
                for tok in op.groups.get("wait", []):
                    prod = local_tokens.get(str(tok))
                    if prod is None:
                        continue  # from an enclosing block: the loop fence orders it
                    key = (str(tok), pipe)
                    if key not in seen:
                        seen.add(key)
                        out.setdefault(id(op), []).append(key)
                        self.producers[str(tok)] = prod
            for r, t in zip(op.results, op.result_types, strict=False):
                if isinstance(t, A.EventType):
                    local_tokens[r] = op
        consumers: dict[str, list[str]] = {}
        for items in out.values():
            for tok, pipe in items:
                consumers.setdefault(tok, []).append(pipe)
        self.consumer_pipes.update(consumers)
        return out

    def tile(self, op: A.Op, out: list[A.Op], first_consumer: dict[int, list[tuple[str, str]]]) -> None:
        pipe = pipe_of(op, self.ctx)
        barrier = False
        for tok, _ in first_consumer.get(id(op), []):
            src = pipe_of(self.producers[tok], self.ctx)
            if src == pipe:
                barrier = barrier or not self.ctx.machine.in_order.get(pipe, True)
                continue
            key = (tok, src, pipe)
            eid = self.live_ids.pop(key)
            out.append(_flag("pto.wait_flag", op.loc, src, pipe, eid))
            self.free_ids[(src, pipe)].append(eid)
        if barrier:
            out.append(A.Op("pto.barrier", op.loc, attrs={"pipe": A.EnumAttr("pipe", f"PIPE_{pipe}")}))
        self.instruction(op, out)
        for tok, ty in zip(op.results, op.result_types, strict=False):
            if not isinstance(ty, A.EventType):
                continue
            for dst in dict.fromkeys(self.consumer_pipes.get(tok, [])):
                if dst == pipe:
                    continue
                free = self.free_ids.setdefault((pipe, dst), list(range(self.ctx.machine.event_ids)))
                if not free:
                    raise VerifyError(f"error: '{op.name}' op more than {self.ctx.machine.event_ids} flags from "
                                      f"{pipe} to {dst} would be live here (event ids run out)", op.loc)
                free.sort()
                eid = free.pop(0)
                self.live_ids[(tok, pipe, dst)] = eid
                out.append(_flag("pto.set_flag", op.loc, pipe, dst, eid))

    def alloc(self, name: str, t: A.TileType, addr: int, valid: list[A.Operand] | None, loc, out: list[A.Op]) -> str:
        buf_t = tile_buf_type(t, valid, self.ctx.machine)
        buf = self.names.fresh("buf")
        groups: dict[str, list[A.Operand]] = {"addr": [self.const(addr, _I64)]}
        if valid is not None:
            if isinstance(valid[0], str):
                groups["valid_row"] = [valid[0]]
            if isinstance(valid[1], str):
                groups["valid_col"] = [valid[1]]
        out.append(A.Op("pto.alloc_tile", loc, results=[buf], result_types=[buf_t], groups=groups))
        self.bufs[name] = (buf, buf_t)
        if valid is not None:
            self.valid[name] = list(valid)
        return buf

    def instruction(self, op: A.Op, out: list[A.Op]) -> None:
        d = op_def(op, self.ctx.isa)
        spec = self.ctx.isa[d.mnemonic]
        res = result_tile(op)
        dst = None
        if res is not None:
            if "addr" not in op.attrs:
                raise VerifyError(f"error: '{op.name}' op has no buffer address (run bufferize first)", op.loc)
            dst = self.alloc(op.results[0], res, int(op.attrs["addr"]), op.groups.get("valid"), op.loc, out)  # type: ignore[arg-type]
        if d.rule == "load":
            pv, pv_t = self.partition(op, str(op.operands[0]), res, out, op.groups.get("valid"))  # type: ignore[arg-type]
            assert dst is not None
            out.append(_dps("pto.tload", op.loc, [pv], [pv_t], dst, self.bufs[op.results[0]][1]))
            return
        if d.rule == "store":
            src_t = op.operand_types[0]
            assert isinstance(src_t, A.TileType)
            pv, pv_t = self.partition(op, str(op.operands[1]), src_t, out, self.valid.get(str(op.operands[0])))
            buf, buf_t = self.bufs[str(op.operands[0])]
            out.append(_dps("pto.tstore", op.loc, [buf], [buf_t], pv, pv_t))
            return
        ins, in_types = self._ins(op, d, spec, out)
        assert dst is not None
        dst_t = self.bufs[op.results[0]][1]
        if "nd_tiles" in spec.constraints:  # elementwise on column vectors: on their row views
            ins, in_types = zip(*(self._as_row(v, t, op.loc, out) for v, t in zip(ins, in_types, strict=True)),
                                strict=True) if ins else ([], [])
            dst, dst_t = self._as_row(dst, dst_t, op.loc, out)
        new = _dps("pto." + d.mnemonic, op.loc, list(ins), list(in_types), dst, dst_t)
        new.attrs.update({k: v for k, v in op.attrs.items() if k not in ("addr", "scratch")})
        out.append(new)

    def _as_row(self, v: A.Operand, t: A.Type, loc, out: list[A.Op]) -> tuple[A.Operand, A.Type]:
        """A DN column vector (Rx1, the layout a row reduction gives) as the ND 1xR row over the same
        bytes (``pto.treshape``), for the ops that take ND tiles only (elementwise); anything else
        as it is."""
        if not (isinstance(t, A.TileBufType) and t.blayout == "col_major" and t.slayout == "none_box"
                and t.cols == 1 and t.v_col == 1):
            return v, t
        rows = t.v_row
        if rows is None:  # valid rows known at run time: the row view's valid columns, set after
            rows = next((self.valid[n][0] for n, (b, _) in self.bufs.items() if b == v and n in self.valid), None)
            if not isinstance(rows, str):
                return v, t
        static = isinstance(rows, int)
        row_t = A.TileBufType(t.loc, t.dtype, 1, t.rows, 1 if static else None, rows if static else None,
                              "row_major", "none_box", t.fractal, t.pad)
        name = self.names.fresh("row")
        out.append(A.Op("pto.treshape", loc, results=[name], result_types=[row_t], operands=[v], operand_types=[t]))
        if not static:
            out.append(A.Op("pto.set_validshape", loc, operands=[name, self.const(1), rows], operand_types=[row_t]))
        return name, row_t

    def _ins(self, op: A.Op, d, spec, out: list[A.Op]) -> tuple[list[A.Operand], list[A.Type]]:
        written = list(zip(op.operands, op.operand_types, strict=False))
        if d.rule == "extract":
            idx = [self.operand(v) for v in op.groups["indices"]]
            buf, buf_t = self.bufs[str(op.operands[0])]
            return [buf, *idx], [buf_t, _INDEX, _INDEX]
        ins: list[A.Operand] = []
        types: list[A.Type] = []
        for o in spec.ins:
            if o.name == "tmp" and spec.is_required(o):
                src = next(t for t in op.operand_types if isinstance(t, A.TileType))
                name = self.names.fresh("tmp")
                buf_t = tile_buf_type(src, None, self.ctx.machine)
                out.append(A.Op("pto.alloc_tile", op.loc, results=[name], result_types=[buf_t],
                                groups={"addr": [self.const(int(op.attrs["scratch"]), _I64)]}))  # type: ignore[arg-type]
                ins.append(name)
                types.append(buf_t)
            elif o.optional or not written:
                continue
            else:
                v, t = written.pop(0)
                if isinstance(t, A.TileType):
                    buf, buf_t = self.bufs[str(v)]
                    ins.append(buf)
                    types.append(buf_t)
                else:
                    ins.append(v)
                    types.append(t)
        return ins, types

    def partition(self, op: A.Op, mem: str, tile: A.TileType, out: list[A.Op],
                  valid: list[A.Operand] | None) -> tuple[str, A.PartitionViewType]:
        """The GM window a load fills or a store writes: the tile's valid region at the indices."""
        if mem not in self.views:
            raise VerifyError(f"error: '{op.name}' op addresses {mem}, which is not a GM memref argument "
                              "(canonicalize views first)", op.loc)
        tv, tv_t = self.views[mem]
        sizes: list[A.Operand] = list(valid) if valid is not None else [int(d) for d in tile.shape]  # type: ignore[arg-type]
        pv_t = A.PartitionViewType(tuple(s if isinstance(s, int) else None for s in sizes), tile.elem)
        name = self.names.fresh("pv")
        out.append(A.Op("pto.partition_view", op.loc, results=[name], result_types=[pv_t], operands=[tv],
                        operand_types=[tv_t],
                        groups={"offsets": [self.operand(v) for v in op.groups["indices"]],
                                "sizes": [self.operand(s) for s in sizes]}))
        return name, pv_t


def _dps(name: str, loc, ins: list[A.Operand], in_types: list[A.Type], out: A.Operand, out_t: A.Type) -> A.Op:
    return A.Op(name, loc, ins=ins, in_types=in_types, outs=[out], out_types=[out_t], is_dps=True)


def _flag(name: str, loc, src: str, dst: str, eid: int) -> A.Op:
    return A.Op(name, loc, attrs={"args": [A.EnumAttr("pipe", f"PIPE_{src}"), A.EnumAttr("pipe", f"PIPE_{dst}"),
                                            A.EnumAttr("event", f"EVENT_ID{eid}")]})


def _has_tile_ops(op: A.Op) -> bool:
    return any(is_tile_op(o) for r in op.regions for o in walk(r.ops))


def _barrier_all(loc) -> A.Op:
    return A.Op("pto.barrier", loc, attrs={"pipe": A.EnumAttr("pipe", "PIPE_ALL")})
