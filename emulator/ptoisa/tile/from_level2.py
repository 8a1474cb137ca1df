"""Raise a level-2 `.pto` module (tile buffers written in place) to the tile-level SSA form.

This is how a producer of level-2 code (the PyPTO compiler's codegen) emits the tile-level form:
every write of a tile buffer defines a new SSA tile, every read takes the buffer's current tile;
loops carry the buffers their body writes (``scf.for ... iter_args`` of tile type) and ifs merge
them (``scf.if -> (tile<..>)``). GM pointers with one static ``pto.make_tensor_view`` become
``pto.memref`` arguments and each ``partition_view`` + ``tload``/``tstore`` becomes
``pto.tile.load``/``store`` at the window's offsets. Synchronisation (flags, barriers) is dropped:
the tile-level pipeline derives its own from the data flow. Buffers are identified by their loc and
address (two allocations at one address are one buffer); scratch (``tmp``) operands are dropped
(bufferization provides them again where the instruction needs them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ptoisa.errors import VerifyError
from ptoisa.isa.spec import ISA
from ptoisa.text import ast as A
from ptoisa.tile.ops import BUF_TO_LOC, LAYOUT_TO_BUF, MOV_KINDS, tile_op
from ptoisa.tile.passes.common import Names, walk

_INDEX = A.ScalarType("index")
_SYNC = frozenset({"pto.set_flag", "pto.wait_flag", "pto.barrier", "pto.set_flag_dyn", "pto.wait_flag_dyn"})
_BUF_TO_LAYOUT = {v: k for k, v in LAYOUT_TO_BUF.items()}
_MOV_BY_LOCS = {(s, d): k for k, (s, d) in MOV_KINDS.items()}
_INDEX_OPS = {"arith.addi": "pto.addi", "arith.subi": "pto.subi", "arith.muli": "pto.muli"}


def raise_module(module: A.Module, isa: ISA) -> A.Module:
    """The tile-level module equivalent to level-2 ``module`` (which is left unchanged)."""
    attrs = {k: v for k, v in module.attrs.items() if k != "pto.target_arch"}
    arch = module.attrs.get("pto.target_arch")
    attrs["pto.target"] = A.EnumAttr("target", str(arch).lower() if isinstance(arch, str) else "a3")
    return A.Module(module.file, [_Raise(fn, isa).run() for fn in module.functions], attrs, module.loc)


def _fail(op: A.Op, what: str) -> VerifyError:
    return VerifyError(f"error: '{op.name}' op cannot be raised to the tile-level form: {what}", op.loc)


@dataclass
class _State:
    """The current SSA tile of each buffer (keyed by loc and address) in the block being raised."""

    current: dict[tuple, str] = field(default_factory=dict)
    types: dict[tuple, A.TileType] = field(default_factory=dict)

    def copy(self) -> _State:
        return _State(dict(self.current), dict(self.types))


class _Raise:
    def __init__(self, fn: A.Function, isa: ISA):
        self.fn = fn
        self.isa = isa
        self.names = Names(fn)
        self.consts: dict[str, int | float] = {}
        self.views: dict[str, tuple[str, A.TileMemRefType]] = {}  # tensor_view -> (arg, memref type)
        self.windows: dict[str, tuple[str, list[A.Operand]]] = {}  # partition_view -> (arg, offsets)
        self.buffers: dict[str, tuple[tuple, A.TileBufType, dict]] = {}  # alloc -> (key, type, valid)
        self.used: set[str] = set()  # values read by something other than allocations and views

    def run(self) -> A.Function:
        fn = self.fn
        for op in walk(fn.body.ops):
            if op.name == "arith.constant" and isinstance(op.attrs.get("value"), (int, float)):
                self.consts[op.results[0]] = op.attrs["value"]  # type: ignore[assignment]
            if op.name == "pto.partition_view":
                self.used.update(str(v) for v in op.groups.get("offsets", []))
            elif op.name not in ("pto.alloc_tile", "pto.make_tensor_view"):
                self.used.update(str(v) for v in op.operands)
                self.used.update(str(v) for g in op.groups.values() for v in g)
                self.used.update(str(v) for v in op.ins)
        arg_types = list(fn.arg_types)
        for op in fn.body.ops:
            if op.name == "pto.make_tensor_view":
                self._memref_arg(op, arg_types)
        body = self.block(fn.body.ops, _State())
        return A.Function(fn.name, fn.loc, list(fn.args), arg_types, list(fn.result_types), dict(fn.attrs),
                          A.Region(ops=body), fn.private)

    def _memref_arg(self, op: A.Op, arg_types: list[A.Type]) -> None:
        ptr = str(op.operands[0])
        if ptr not in self.fn.args:
            raise _fail(op, f"the view's base {ptr} is not an argument")
        shape = [self.consts.get(str(v)) for v in op.groups["shape"]]
        strides = [self.consts.get(str(v)) for v in op.groups["strides"]]
        if not all(isinstance(d, int) for d in shape + strides):
            raise _fail(op, "GM shapes and strides must be constants")
        i = self.fn.args.index(ptr)
        elem = op.result_types[0].elem if isinstance(op.result_types[0], A.TensorViewType) else ""
        row_major = [math.prod(shape[k + 1:]) for k in range(len(shape))]  # type: ignore[arg-type]
        if strides == row_major:
            ty = A.TileMemRefType(tuple(shape), elem)  # type: ignore[arg-type]
        elif len(shape) == 2 and strides == [1, shape[0]]:
            ty = A.TileMemRefType(tuple(shape), elem, layout="DN")  # type: ignore[arg-type]
        else:
            ty = A.TileMemRefType(tuple(shape), elem, strides=tuple(strides), offset=0)  # type: ignore[arg-type]
        if isinstance(arg_types[i], A.TileMemRefType) and arg_types[i] != ty:
            raise _fail(op, f"{ptr} is viewed twice with different shapes")
        arg_types[i] = ty
        self.views[op.results[0]] = (ptr, ty)

    # ---- blocks

    def block(self, ops: list[A.Op], state: _State) -> list[A.Op]:
        out: list[A.Op] = []
        for op in ops:
            name = op.name
            if name in _SYNC or name == "pto.make_tensor_view":
                continue
            if name == "pto.partition_view":
                src = str(op.operands[0])
                if src not in self.views:
                    raise _fail(op, f"{src} is not a tensor view of an argument")
                self.windows[op.results[0]] = (self.views[src][0], list(op.groups["offsets"]))
            elif name == "pto.alloc_tile":
                self._alloc(op)
            elif name == "scf.for":
                out.append(self.loop(op, state))
            elif name == "scf.if":
                out.append(self.if_(op, state))
            elif op.is_dps:
                out.append(self.instruction(op, state))
            elif name == "arith.constant" and op.results[0] not in self.used:
                continue  # an address or a view shape: the tile-level form has neither
            elif name == "arith.constant" and op.result_types and isinstance(op.result_types[0], A.ScalarType):
                out.append(A.Op("pto.constant", op.loc, results=list(op.results), result_types=list(op.result_types),
                                attrs={"value": op.attrs["value"]}))
            elif name in _INDEX_OPS and op.result_types == [_INDEX]:
                out.append(A.Op(_INDEX_OPS[name], op.loc, results=list(op.results), result_types=[_INDEX],
                                operands=list(op.operands), operand_types=[_INDEX, _INDEX]))
            elif name.startswith("pto."):
                raise _fail(op, "no tile-level equivalent")
            else:
                out.append(op)
        return out

    def _alloc(self, op: A.Op) -> None:
        ty = op.result_types[0]
        assert isinstance(ty, A.TileBufType)
        addr = op.groups.get("addr")
        value = self.consts.get(str(addr[0])) if addr else None
        key = (ty.loc, value) if value is not None else (ty.loc, op.results[0])
        valid: dict = {}
        if ty.v_row is None or ty.v_col is None or (ty.v_row, ty.v_col) != (ty.rows, ty.cols):
            valid["valid"] = [ty.v_row if ty.v_row is not None else op.groups.get("valid_row", [None])[0],
                              ty.v_col if ty.v_col is not None else op.groups.get("valid_col", [None])[0]]
            if None in valid["valid"]:
                raise _fail(op, "a dynamic valid region needs valid_row/valid_col operands")
        self.buffers[op.results[0]] = (key, ty, valid)

    def tile_type(self, buf: str, op: A.Op) -> A.TileType:
        if buf not in self.buffers:
            raise _fail(op, f"{buf} is not a tile buffer")
        _key, ty, _ = self.buffers[buf]
        layout = _BUF_TO_LAYOUT.get((ty.blayout, ty.slayout))
        if layout is None:
            raise _fail(op, f"layout {ty.blayout}/{ty.slayout} has no tile-level name")
        return A.TileType((ty.rows, ty.cols), ty.dtype, BUF_TO_LOC[ty.loc], layout)

    def read(self, buf: str, op: A.Op, state: _State) -> tuple[str, A.TileType]:
        key = self.buffers[buf][0] if buf in self.buffers else None
        if key is None or key not in state.current:
            raise _fail(op, f"reads {buf} before anything wrote it")
        return state.current[key], self.tile_type(buf, op)

    def write(self, buf: str, op: A.Op, state: _State) -> tuple[str, A.TileType]:
        if buf not in self.buffers:
            raise _fail(op, f"writes {buf}, which is not a tile buffer allocated in this function")
        key = self.buffers[buf][0]
        name = self.names.fresh("t" + buf.lstrip("%").split("#")[0] + "_v")
        ty = self.tile_type(buf, op)
        state.current[key] = name
        state.types[key] = ty
        return name, ty

    # ---- instructions

    def instruction(self, op: A.Op, state: _State) -> A.Op:
        mnemonic = op.name.removeprefix("pto.")
        spec = self.isa.get(mnemonic)
        if spec is None:
            raise _fail(op, "unknown instruction")
        if len(op.outs) != 1:
            raise _fail(op, "it does not write exactly one tile")
        if mnemonic == "tload":
            arg, offsets = self._window(op, str(op.ins[0]))
            name, ty = self.write(str(op.outs[0]), op, state)
            new = A.Op("pto.tile.load", op.loc, results=[name], result_types=[ty], operands=[arg],
                       operand_types=[self._memref(arg)], groups={"indices": offsets})
            return self._valid(new, str(op.outs[0]))
        if mnemonic == "tstore":
            arg, offsets = self._window(op, str(op.outs[0]))
            if not op.ins:
                raise _fail(op, "it stores no tile")
            value, ty = self.read(str(op.ins[0]), op, state)
            return A.Op("pto.tile.store", op.loc, operands=[value, arg], operand_types=[ty, self._memref(arg)],
                        groups={"indices": offsets})
        operands: list[A.Operand] = []
        types: list[A.Type] = []
        indices: list[A.Operand] = []
        for i, (o, v) in enumerate(zip(spec.ins, op.ins, strict=False)):
            if o.name == "tmp":
                continue
            if isinstance(v, str) and v in self.buffers:
                value, ty = self.read(v, op, state)
                operands.append(value)
                types.append(ty)
            elif o.name in ("row", "col"):
                indices.append(v)
            else:
                operands.append(v)
                types.append(self._scalar_type(op, i))
        name = self._tile_op_name(op, mnemonic, types)
        if tile_op(name, self.isa) is None:
            raise _fail(op, f"no tile-level op {name}")
        out_name, out_ty = self.write(str(op.outs[0]), op, state)
        new = A.Op(name, op.loc, results=[out_name], result_types=[out_ty], operands=operands, operand_types=types,
                   attrs=dict(op.attrs))
        if indices:
            new.groups["indices"] = indices
        return self._valid(new, str(op.outs[0]))

    def _tile_op_name(self, op: A.Op, mnemonic: str, types: list[A.Type]) -> str:
        if mnemonic == "tmov":
            src = types[0]
            dst = self.tile_type(str(op.outs[0]), op)
            assert isinstance(src, A.TileType)
            kind = _MOV_BY_LOCS.get((str(src.loc), str(dst.loc)))
            if kind is None:
                raise _fail(op, f"no tile-level move from {src.loc} to {dst.loc}")
            return f"pto.tile.mov.{kind}"
        return "pto.tile." + mnemonic[1:]

    def _scalar_type(self, op: A.Op, i: int) -> A.Type:
        ty = op.in_types[i] if i < len(op.in_types) else None
        return ty if isinstance(ty, A.ScalarType) else A.ScalarType("f32")

    def _window(self, op: A.Op, pv: str) -> tuple[str, list[A.Operand]]:
        if pv not in self.windows:
            raise _fail(op, f"{pv} is not a partition of an argument's tensor view")
        return self.windows[pv]

    def _memref(self, arg: str) -> A.TileMemRefType:
        ty = next(t for _a, (a, t) in self.views.items() if a == arg)
        return ty

    def _valid(self, op: A.Op, buf: str) -> A.Op:
        valid = self.buffers[buf][2].get("valid")
        if valid is not None:
            op.groups["valid"] = list(valid)
        return op

    # ---- control flow

    def _written(self, ops: list[A.Op]) -> list[tuple]:
        keys: list[tuple] = []
        for op in walk(ops):
            if op.name == "pto.alloc_tile":
                self._alloc(op)
            if op.is_dps and op.name != "pto.tstore":
                for v in op.outs:
                    key = self.buffers[str(v)][0] if str(v) in self.buffers else None
                    if key is not None and key not in keys:
                        keys.append(key)
        return keys

    def loop(self, op: A.Op, state: _State) -> A.Op:
        body = op.regions[0]
        carried = [k for k in self._written(body.ops) if k in state.current]
        inner = state.copy()
        args = list(body.args)
        arg_types = list(body.arg_types)
        inits = list(op.operands)
        results = list(op.results)
        result_types = list(op.result_types)
        for key in carried:
            arg = self.names.fresh("carried")
            inner.current[key] = arg
            args.append(arg)
            arg_types.append(state.types[key])
            inits.append(state.current[key])
            result_types.append(state.types[key])
        ops = self.block(body.ops, inner)
        yield_op = ops.pop() if ops and ops[-1].name == "scf.yield" else A.Op("scf.yield", op.loc)
        yield_op = A.Op("scf.yield", yield_op.loc, operands=[*yield_op.operands, *(inner.current[k] for k in carried)],
                        operand_types=[*yield_op.operand_types, *(state.types[k] for k in carried)])
        for key in carried:
            res = self.names.fresh("loop_v")
            results.append(res)
            state.current[key] = res
        return A.Op("scf.for", op.loc, results=results, result_types=result_types, operands=inits,
                    operand_types=list(op.operand_types), attrs=dict(op.attrs),
                    regions=[A.Region(args, arg_types, [*ops, yield_op])])

    def if_(self, op: A.Op, state: _State) -> A.Op:
        branches = [state.copy() for _ in op.regions]
        bodies = [self.block(r.ops, b) for r, b in zip(op.regions, branches, strict=False)]
        if len(bodies) == 1:
            branches.append(state.copy())
            bodies.append([])
        merged = [k for k in self._written([o for r in op.regions for o in r.ops])
                  if all(k in b.current for b in branches)]
        results = list(op.results)
        result_types = list(op.result_types)
        regions = []
        for body, b in zip(bodies, branches, strict=False):
            yield_op = body.pop() if body and body[-1].name == "scf.yield" else A.Op("scf.yield", op.loc)
            types = [b.types.get(k) or state.types[k] for k in merged]
            body.append(A.Op("scf.yield", yield_op.loc, operands=[*yield_op.operands, *(b.current[k] for k in merged)],
                             operand_types=[*yield_op.operand_types, *types]))
            regions.append(A.Region(ops=body))
        for key in merged:
            res = self.names.fresh("if_v")
            results.append(res)
            result_types.append(branches[0].types.get(key) or state.types[key])
            state.current[key] = res
            state.types[key] = result_types[-1]  # type: ignore[assignment]
        return A.Op("scf.if", op.loc, results=results, result_types=result_types, operands=list(op.operands),
                    attrs=dict(op.attrs), regions=regions)
