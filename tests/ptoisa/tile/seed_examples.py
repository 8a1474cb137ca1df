"""The examples of seed 002 (tile-level PTO IR), verbatim, and the programs that host them.

Where the seed writes ``...`` or a placeholder (``MxKxTa``, ``La``) inside a type, :func:`fill`
substitutes the obvious concrete type; everything else is the seed's text character for character.
"""

from __future__ import annotations

# §4.1 Scalar and index ops
SCALAR = """\
%c32 = pto.constant 32 : index
%cz  = pto.constant 0.0 : f32
%0 = pto.muli %arg3, %c32 : index
"""

# §4.2 Memref view ops
SUBVIEW = """\
%sv = pto.memref.subview %arg0[%o0, %o1] [32, 32] [1, 1]
    : pto.memref<1024x1024xf32>
   to pto.memref<32x32xf32, strided<[1024, 1], offset: ?>>
"""

# §4.3 Tile load/store
LOAD = """\
%t0 = pto.tile.load %sv[%c0, %c0]
    : pto.memref<32x32xf32, strided<[1024, 1], offset: ?>>, tile<32x32xf32>
"""
STORE = """\
pto.tile.store %t1, %sv_out[%c0, %c0]
    : pto.memref<32x32xf32, strided<[1024, 1], offset: ?>>, tile<32x32xf32>
"""

# §4.4 Elementwise tile ops
ADD = """\
%t2 = pto.tile.add %t0, %t1 : tile<32x32xf32>
"""

# §5.1 Event type
EVENT_TYPE = "!pto.event<producer = #pto.op<TLOAD>, scope = #pto.scope<intra|inter>, eid = 0>"

# §5.2 Asynchronous op form
ASYNC = """\
%t0, %e0 = pto.tile.load %sv0[%c0, %c0] wait(%e_prev)
    : pto.memref<32x32xf32, ...>, tile<32x32xf32>, !pto.event<producer = #pto.op<TLOAD>>

%t1, %e1 = pto.tile.load %sv1[%c0, %c0] wait(%e_prev)
    : pto.memref<32x32xf32, ...>, tile<32x32xf32>, !pto.event<producer = #pto.op<TLOAD>>

%t2, %e2 = pto.tile.add %t0, %t1 wait(%e0, %e1)
    : tile<32x32xf32>, !pto.event<producer = #pto.op<TADD>>

%e3 = pto.tile.store %t2, %sv2[%c0, %c0] wait(%e2)
    : pto.memref<32x32xf32, ...>, tile<32x32xf32>, !pto.event<producer = #pto.op<TSTORE_VEC>>
"""

# §6.1 pto.tile.mov.*
MOVS = """\
%left  = pto.tile.mov.m2l %mat : tile<...> -> tile<...>
%right = pto.tile.mov.m2r %mat : tile<...> -> tile<...>
%bias  = pto.tile.mov.m2b %mat : tile<...> -> tile<...>
%scale = pto.tile.mov.m2s %mat : tile<...> -> tile<...>
%vec   = pto.tile.mov.a2v %acc : tile<...> -> tile<...>
%v1    = pto.tile.mov.v2v %v0  : tile<...> -> tile<...>
"""

# §6.2 pto.tile.extract
EXTRACT = """\
%dst = pto.tile.extract %src[%r0, %r1]
    : tile<SrcShape x Ts, #pto.tile_info<loc=Mat, layout=Ls>>
   -> tile<DstShape x Ts, #pto.tile_info<loc=Left|Right, layout=Ld>>
"""

# §6.3 pto.tile.matmul*
MATMUL = """\
%acc = pto.tile.matmul %a, %b
    : tile<MxKxTa, #pto.tile_info<loc=Left,  layout=La>>,
      tile<KxNxTb, #pto.tile_info<loc=Right, layout=Lb>>
   -> tile<MxNxTc, #pto.tile_info<loc=Acc,   layout=Lc>>

%acc1 = pto.tile.matmul.acc %acc0, %a, %b
    : tile<MxNxTc, #pto.tile_info<loc=Acc, layout=Lc>>,
      tile<MxKxTa, #pto.tile_info<loc=Left,  layout=La>>,
      tile<KxNxTb, #pto.tile_info<loc=Right, layout=Lb>>
   -> tile<MxNxTc, #pto.tile_info<loc=Acc, layout=Lc>>

%acc2 = pto.tile.matmul.bias %a, %b, %bias
    : tile<MxKxTa, #pto.tile_info<loc=Left,  layout=La>>,
      tile<KxNxTb, #pto.tile_info<loc=Right, layout=Lb>>,
      tile<1xNxTb2, #pto.tile_info<loc=Bias, layout=Lbias>>
   -> tile<MxNxTc, #pto.tile_info<loc=Acc, layout=Lc>>
"""

# §7 target annotation
MODULE = "module attributes { pto.target = #pto.target<a3> } { ... }"


def fill(text: str, *pairs: tuple[str, str], each: list[str] | None = None) -> str:
    """``text`` with each placeholder replaced (``pairs`` everywhere, in order); ``each`` replaces
    successive occurrences of ``tile<...>`` one by one."""
    for old, new in pairs:
        text = text.replace(old, new)
    for new in each or []:
        text = text.replace("tile<...>", new, 1)
    return text


def module(body: str, args: str) -> str:
    """The seed's §7 module holding one function ``@k(args)`` with ``body``."""
    func = f"func.func @k({args}) {{\n{body}\n    return\n  }}"
    return MODULE.replace("...", func)


SV = "pto.memref<32x32xf32, strided<[1024, 1], offset: ?>>"
GM = "pto.memref<1024x1024xf32, {space = #pto.space<gm>, layout = #pto.layout<ND>}>"

# §4 + §5.2: vector add of one 32x32 window at block (%arg3, %arg4), the seed's async form.
# %e_prev is the previous stage: a copy of arg5's window into arg2's (which the add then overwrites).
ASYNC_PROGRAM = module(
    f"""\
    %c0 = pto.constant 0 : index
{fill(SCALAR, ('%cz ', '%unused'))}
    %1 = pto.muli %arg4, %c32 : index
    %sv0 = pto.memref.subview %arg0[%0, %1] [32, 32] [1, 1] : pto.memref<1024x1024xf32> to {SV}
    %sv1 = pto.memref.subview %arg1[%0, %1] [32, 32] [1, 1] : pto.memref<1024x1024xf32> to {SV}
    %sv2 = pto.memref.subview %arg2[%0, %1] [32, 32] [1, 1] : pto.memref<1024x1024xf32> to {SV}
    %svp = pto.memref.subview %arg5[%0, %1] [32, 32] [1, 1] : pto.memref<1024x1024xf32> to {SV}
    %tp, %ep = pto.tile.load %svp[%c0, %c0] : {SV}, tile<32x32xf32>, !pto.event<producer = #pto.op<TLOAD>>
    %e_prev = pto.tile.store %tp, %sv2[%c0, %c0] wait(%ep) : {SV}, tile<32x32xf32>, !pto.event<producer = #pto.op<TSTORE_VEC>>
{fill(ASYNC, ('pto.memref<32x32xf32, ...>', SV))}""",
    f"%arg0: {GM}, %arg1: {GM}, %arg2: {GM}, %arg3: index, %arg4: index, %arg5: {GM}",
)

# §4.1-§4.4 sequential: the same add without tokens (insert-events derives them).
SEQUENTIAL_PROGRAM = module(
    f"""\
    %c0 = pto.constant 0 : index
{SCALAR}
    %1 = pto.muli %arg4, %c32 : index
{fill(SUBVIEW, ('%o0', '%0'), ('%o1', '%1'))}
    %sv1 = pto.memref.subview %arg1[%0, %1] [32, 32] [1, 1] : pto.memref<1024x1024xf32> to {SV}
    %sv_out = pto.memref.subview %arg2[%0, %1] [32, 32] [1, 1] : pto.memref<1024x1024xf32> to {SV}
{LOAD}
    %t1 = pto.tile.load %sv1[%c0, %c0] : {SV}, tile<32x32xf32>
{ADD}
{fill(STORE, ('%t1,', '%t2,'))}""",
    f"%arg0: {GM}, %arg1: {GM}, %arg2: {GM}, %arg3: index, %arg4: index",
)

_MM = (("1xNxTb2", "1x16xf32"), ("MxKxTa", "16x32xf16"), ("KxNxTb", "32x16xf16"), ("MxNxTc", "16x16xf32"),
       ("Lbias", "ND"), ("La", "Zz"), ("Lb", "Zn"), ("Lc", "Nz"))
_MAT = "#pto.tile_info<loc=Mat, layout=Nz>"

# §6.1 + §6.3: C0 = A@B, C1 = C0 + A@B (acc), C2 = A@B + bias, all on the cube.
MATMUL_PROGRAM = module(
    f"""\
    %c0 = pto.constant 0 : index
    %am = pto.tile.load %A[%c0, %c0] : pto.memref<16x32xf16>, tile<16x32xf16, {_MAT}>
    %bm = pto.tile.load %B[%c0, %c0] : pto.memref<32x16xf16>, tile<32x16xf16, {_MAT}>
    %biasm = pto.tile.load %Bias[%c0, %c0] : pto.memref<1x16xf32>, tile<1x16xf32, #pto.tile_info<loc=Mat, layout=ND>>
    %a = pto.tile.mov.m2l %am : tile<16x32xf16, {_MAT}> -> tile<16x32xf16, #pto.tile_info<loc=Left, layout=Zz>>
    %b = pto.tile.mov.m2r %bm : tile<32x16xf16, {_MAT}> -> tile<32x16xf16, #pto.tile_info<loc=Right, layout=Zn>>
    %bias = pto.tile.mov.m2b %biasm : tile<1x16xf32, #pto.tile_info<loc=Mat, layout=ND>> -> tile<1x16xf32, #pto.tile_info<loc=Bias, layout=ND>>
{fill(MATMUL, ('%acc0', '%acc'), *_MM)}
    pto.tile.store %acc, %C0[%c0, %c0] : pto.memref<16x16xf32>, tile<16x16xf32>
    pto.tile.store %acc1, %C1[%c0, %c0] : pto.memref<16x16xf32>, tile<16x16xf32>
    pto.tile.store %acc2, %C2[%c0, %c0] : pto.memref<16x16xf32>, tile<16x16xf32>""",
    "%A: pto.memref<16x32xf16>, %B: pto.memref<32x16xf16>, %Bias: pto.memref<1x16xf32>, "
    "%C0: pto.memref<16x16xf32>, %C1: pto.memref<16x16xf32>, %C2: pto.memref<16x16xf32>",
)

# §6.1 (all six moves) and §6.2, IR-level: the hosting function defines their sources.
MOVES_PROGRAM = module(
    f"""\
    %c0 = pto.constant 0 : index
    %r0 = pto.constant 0 : index
    %r1 = pto.constant 16 : index
    %mat = pto.tile.load %M[%c0, %c0] : pto.memref<32x32xf16>, tile<32x32xf16, {_MAT}>
    %src = pto.tile.load %M[%c0, %c0] : pto.memref<32x32xf16>, tile<32x32xf16, {_MAT}>
    %v0 = pto.tile.load %V[%c0, %c0] : pto.memref<32x32xf32>, tile<32x32xf32>
    %la = pto.tile.mov.m2l %src : tile<32x32xf16, {_MAT}> -> tile<32x32xf16>
    %rb = pto.tile.mov.m2r %src : tile<32x32xf16, {_MAT}> -> tile<32x32xf16>
    %acc = pto.tile.matmul %la, %rb : tile<32x32xf16>, tile<32x32xf16> -> tile<32x32xf32>
{fill(MOVS, each=[
    f"tile<32x32xf16, {_MAT}>", "tile<32x32xf16, #pto.tile_info<loc=Left, layout=Zz>>",
    f"tile<32x32xf16, {_MAT}>", "tile<32x32xf16, #pto.tile_info<loc=Right, layout=Zn>>",
    f"tile<32x32xf16, {_MAT}>", "tile<32x32xf16, #pto.tile_info<loc=Bias, layout=ND>>",
    f"tile<32x32xf16, {_MAT}>", "tile<32x32xf16, #pto.tile_info<loc=Scale, layout=Zz>>",
    "tile<32x32xf32, #pto.tile_info<loc=Acc, layout=Nz>>", "tile<32x32xf32, #pto.tile_info<loc=Vec, layout=ND>>",
    "tile<32x32xf32>", "tile<32x32xf32>"])}
{fill(EXTRACT, ('SrcShape x Ts', '32x32xf16'), ('DstShape x Ts', '16x16xf16'), ('Left|Right', 'Left'),
      ('Ls', 'Nz'), ('Ld', 'Zz'))}""",
    "%M: pto.memref<32x32xf16>, %V: pto.memref<32x32xf32>",
)
