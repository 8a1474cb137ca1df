"""One `.pto` line per op name of the spec's Appendix A, written in the exact §4 forms.

Shared by the parser tests (every op parses) and the printer tests (every op round-trips).
"""

from __future__ import annotations

TB = (
    "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=16, v_col=64, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>"
)
COL = (
    "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=1, v_row=16, v_col=1, blayout=col_major, "
    "slayout=none_box, fractal=512, pad=0>"
)
DYN = (
    "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=?, v_col=?, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>"
)
MAT = "!pto.tile_buf<mat, 16x16xf16, blayout=col_major, slayout=row_major>"
LEFT = "!pto.tile_buf<left, 16x16xf16, slayout=row_major>"
RIGHT = "!pto.tile_buf<right, 16x16xf16, slayout=col_major>"
ACC = "!pto.tile_buf<acc, 16x16xf32, blayout=col_major, slayout=row_major, fractal=1024>"
BIAS = "!pto.tile_buf<bias, 1x16xf32>"
SCALE = "!pto.tile_buf<scaling, 16x2xf8E4M3, slayout=row_major, fractal=32>"
PV = "!pto.partition_tensor_view<16x64xf32>"
TV = "!pto.tensor_view<?x?xf32>"
MR = "memref<128xf32, #pto.address_space<gm>>"

_BINARY = ["tadd", "tsub", "tmul", "tdiv", "tmax", "tmin", "tand", "tor", "tshl", "tshr", "tfmod", "tpartadd", "tpartmax", "tpartmin", "tpartmul", "trowexpandadd", "tcolexpandadd", "tcolexpandsub", "tcolexpandmul", "tcolexpanddiv", "tcolexpandmax", "tcolexpandmin", "tcolexpandexpdif", "tconcat", "tgatherb", "tscatter"]
_TERNARY = ["trem", "txor", "tprelu", "taddc", "tsubc"]
_SCALAR = ["tadds", "tsubs", "tmuls", "tdivs", "tmaxs", "tmins", "tfmods", "tands", "tors", "tshls", "tshrs", "tlrelu", "taxpy"]
_UNARY = ["tabs", "tneg", "texp", "tlog", "tsqrt", "trecip", "trelu", "tnot", "tfillpad", "tfillpad_expand", "tfillpad_inplace", "tpack", "tget_scale_addr", "tcolmax", "tcolmin", "tcolprod", "trowexpand", "tcolexpand"]
_ROW_RED = ["trowsum", "trowmax", "trowmin", "trowprod", "trowargmax", "trowargmin"]
_ROW_EXPAND = ["trowexpandsub", "trowexpandmul", "trowexpanddiv", "trowexpandmax", "trowexpandmin", "trowexpandexpdif"]

OP_LINES: dict[str, str] = {}
for _n in _BINARY:
    OP_LINES[_n] = f"pto.{_n} ins(%a, %b : {TB}, {TB}) outs(%d : {TB})"
for _n in _TERNARY:
    OP_LINES[_n] = f"pto.{_n} ins(%a, %b, %tmp : {TB}, {TB}, {TB}) outs(%d : {TB})"
for _n in _SCALAR:
    OP_LINES[_n] = f"pto.{_n} ins(%a, %s : {TB}, f32) outs(%d : {TB})"
for _n in _UNARY:
    OP_LINES[_n] = f"pto.{_n} ins(%a : {TB}) outs(%d : {TB})"
for _n in _ROW_RED:
    OP_LINES[_n] = f"pto.{_n} ins(%a, %tmp : {TB}, {TB}) outs(%m : {COL})"
for _n in _ROW_EXPAND:
    OP_LINES[_n] = f"pto.{_n} ins(%a, %m : {TB}, {COL}) outs(%d : {TB})"
for _n in ("tmatmul", "tgemv"):
    OP_LINES[_n] = f"pto.{_n} ins(%l, %r : {LEFT}, {RIGHT}) outs(%acc : {ACC})"
    OP_LINES[_n + ".acc"] = f"pto.{_n}.acc ins(%acc, %l, %r : {ACC}, {LEFT}, {RIGHT}) outs(%acc : {ACC})"
    OP_LINES[_n + ".bias"] = f"pto.{_n}.bias ins(%l, %r, %bias : {LEFT}, {RIGHT}, {BIAS}) outs(%acc : {ACC})"
    OP_LINES[_n + ".mx"] = (
        f"pto.{_n}.mx ins(%l, %ls, %r, %rs : {LEFT}, {SCALE}, {RIGHT}, {SCALE}) outs(%acc : {ACC})"
    )
    OP_LINES[_n + ".mx.acc"] = (
        f"pto.{_n}.mx.acc ins(%acc, %l, %ls, %r, %rs : {ACC}, {LEFT}, {SCALE}, {RIGHT}, {SCALE}) "
        f"outs(%acc : {ACC})"
    )
    OP_LINES[_n + ".mx.bias"] = (
        f"pto.{_n}.mx.bias ins(%l, %ls, %r, %rs, %bias : {LEFT}, {SCALE}, {RIGHT}, {SCALE}, {BIAS}) "
        f"outs(%acc : {ACC}) -> tensor<16x16xf32>"
    )

OP_LINES.update(
    {
        # views / allocation
        "make_tensor_view": (
            f"%tv = pto.make_tensor_view %p, shape = [%n, %c64], strides = [%c64, %c1] "
            f"{{layout = #pto.layout<nd>}}: {TV}"
        ),
        "partition_view": (
            f"%pv = pto.partition_view %tv, offsets = [%c0, %c0], sizes   = [%c16, %c64] : {TV} -> {PV}"
        ),
        "get_tensor_view_dim": f"%d = pto.get_tensor_view_dim %tv, %c1 : {TV} -> index",
        "addptr": "%q = pto.addptr %p, %off : <f32> -> <f32>",
        "load_scalar": "%v = pto.load_scalar %p[%off] : !pto.ptr<f32> -> f32",
        "store_scalar": "pto.store_scalar %v, %p[%off] : !pto.ptr<f32>, f32",
        "alloc_tile": f"%t = pto.alloc_tile addr = %c1056_i64 valid_row = %c8 valid_col = %n : {DYN}",
        "declare_tile": f"%t = pto.declare_tile -> {TB}",
        "tassign": f"%t2 = pto.tassign %t, %addr : {TB} -> {TB}",
        "subset": f"%s = pto.subset %t[%r, %c] sizes [16, 16] : {TB}",
        "set_validshape": f"pto.set_validshape %t, %vr, %vc : {DYN}",
        "treshape": f"%r = pto.treshape %t : {COL} -> !pto.tile_buf<vec, 1x16xf32>",
        "bitcast": f"%r = pto.bitcast %t : {TB} -> !pto.tile_buf<vec, 16x64xi32>",
        "bind_tile": (
            "%v = pto.bind_tile %m, %vr, %vc {config = #pto.tile_buf_config<blayout = #pto.blayout<row_major>, "
            "slayout=#pto.slayout<none_box>, s_fractal_size=512, pad=#pto.pad_value<null>>} "
            ": memref<16x16xf16, #pto.address_space<vec>> -> memref<16x16xf16, #pto.address_space<vec>>"
        ),
        "pointer_cast": "%m = pto.pointer_cast(%addr) %vr, %vc : memref<16x16xf16, #pto.address_space<vec>>",
        "declare_tile_memref": "%m = pto.declare_tile_memref -> memref<16x16xf16, #pto.address_space<vec>>",
        "subview": (
            "%v = pto.subview %tv, offsets = [%a, %b], sizes = [32, 32] : !pto.tensor_view<2xf32> "
            "-> !pto.tile_view<32x32xf32>"
        ),
        # data movement
        "tload": f"pto.tload ins(%pv : {PV}) outs(%t : {TB})",
        "tprefetch": f"pto.tprefetch ins(%pv : {PV}) outs(%t : {TB})",
        "tstore": (
            f"pto.tstore ins(%acc : {ACC}, %q : i64) outs(%pv : !pto.partition_tensor_view<16x16xf32>) "
            "{stPhase = #pto<st_phase final>, atomicType = #pto<atomic_type atomic_add>, "
            "reluPreMode = #pto<relu_pre_mode normal_relu>}"
        ),
        "tstore_fp": (
            f"pto.tstore_fp ins(%acc, %fp : {ACC}, {SCALE}) outs(%pv : !pto.partition_tensor_view<16x16xf32>)"
        ),
        "tmov": (
            f"pto.tmov ins(%acc : {ACC}) outs(%d : {TB}) "
            "{accToVecMode = #pto.acc_to_vec_mode<single_mode_vec0>, reluPreMode = #pto<relu_pre_mode normal_relu>}"
        ),
        "tmov.fp": f"pto.tmov.fp ins(%acc, %fp : {ACC}, {SCALE}) outs(%d : {MAT})",
        "textract": f"pto.textract ins(%s, %r, %c : {MAT}, index, index) outs(%d : {LEFT})",
        "textract_fp": f"pto.textract_fp ins(%s, %fp, %r, %c : {ACC}, {SCALE}, index, index) outs(%d : {MAT})",
        "tinsert": f"pto.tinsert ins(%s, %r, %c : {ACC}, index, index) outs(%d : {MAT})",
        "tinsert_fp": f"pto.tinsert_fp ins(%s, %fp, %r, %c : {ACC}, {SCALE}, index, index) outs(%d : {MAT})",
        "ttrans": f"pto.ttrans ins(%s, %tmp : {TB}, {TB}) outs(%d : {TB})",
        "mgather": f"pto.mgather ins(%mem, %idx : {MR}, {TB}) outs(%d : {TB}) {{gatherOob = #pto<gather_oob clamp>}}",
        "mscatter": (
            f"pto.mscatter ins(%s, %idx : {TB}, {TB}) outs(%mem : {MR}) "
            "{scatterAtomicOp = #pto<scatter_atomic_op add>, scatterOob = #pto<scatter_oob skip>}"
        ),
        "tgetval": f"%v = pto.tgetval ins(%t, %off : {TB}, index) outs : f16",
        "tsetval": f"pto.tsetval ins(%off, %v : index, f16) outs(%t : {TB})",
        # scalar specials
        "trems": f"pto.trems ins(%t, %s, %tmp : {TB}, f32, {TB}) outs(%d : {TB})",
        "txors": f"pto.txors ins(%t, %s, %tmp : {TB}, i32, {TB}) outs(%d : {TB})",
        "taddsc": f"pto.taddsc ins(%a, %s, %b : {TB}, f32, {TB}) outs(%d : {TB})",
        "tsubsc": f"pto.tsubsc ins(%a, %s, %b : {TB}, f32, {TB}) outs(%d : {TB})",
        "texpands": f"pto.texpands ins(%s : f32) outs(%d : {TB})",
        "trsqrt": f"pto.trsqrt ins(%s, %tmp : {TB}, {TB}) outs(%d : {TB})",
        # column reductions
        "tcolsum": f"pto.tcolsum ins(%src, %tmp {{isBinary = true}} : {TB}, {TB}) outs(%d : {TB})",
        "tcolargmax": f"pto.tcolargmax ins(%src, %tmp : {TB}, {TB}) outs(%d : {TB})",
        "tcolargmin": f"pto.tcolargmin ins(%src, %tmp : {TB}, {TB}) outs(%d : {TB})",
        # conversion
        "tcvt": (
            f"pto.tcvt ins(%s{{rmode = #pto<round_mode ROUND>, sat_mode = #pto<saturation_mode OFF>}} : {TB}) "
            "outs(%d : !pto.tile_buf<vec, 16x64xbf16>)"
        ),
        "tquant": f"pto.tquant ins(%s, %fp : {TB}, {COL}) outs(%d : {TB}) {{quant_type = #pto<quant_type INT8_SYM>}}",
        "tdequant": f"pto.tdequant ins(%s, %scale, %offset : {TB}, {COL}, {COL}) outs(%d : {TB})",
        # compare / select
        "tcmp": f"pto.tcmp ins(%a, %b {{cmpMode = #pto<cmp lt>}} : {TB}, {TB}) outs(%m : !pto.tile_buf<vec, 16x8xui8>)",
        "tcmps": f"pto.tcmps ins(%a, %s {{cmpMode = #pto<cmp ge>}} : {TB}, f32) outs(%m : !pto.tile_buf<vec, 16x8xui8>)",
        "tsel": f"pto.tsel ins(%m, %a, %b, %tmp : {TB}, {TB}, {TB}, {TB}) outs(%d : {TB})",
        "tsels": f"pto.tsels ins(%m, %a, %tmp, %s : {TB}, {TB}, {TB}, f32) outs(%d : {TB})",
        # gather / sort / misc
        "tgather": f"pto.tgather ins(%src, {{maskPattern = #pto.mask_pattern<P0101>}} : {TB}) outs(%d : {TB})",
        "tsort32": f"pto.tsort32 ins(%src, %idx : {TB}, {TB}) outs(%d : {TB})",
        "tmrgsort": (
            f"pto.tmrgsort ins(%s0, %s1, %tmp {{exhausted = false}} : {TB}, {TB}, {TB}) "
            f"outs(%d, %exec : {TB}, vector<4xi16>)"
        ),
        "tci": f"pto.tci ins(%s {{descending = true}} : i32) outs(%d : {TB})",
        "ttri": f"pto.ttri ins(%diag {{upperOrLower = 1 : i32}} : i32) outs(%d : {TB})",
        "trandom": (
            f"pto.trandom ins(%k0, %k1, %c0, %c1, %c2, %c3 {{rounds = 7 : i32}} : i32, i32, i32, i32, i32, i32) "
            f"outs(%d : {TB})"
        ),
        "thistogram": f"pto.thistogram ins(%src, %idx : {TB}, {COL}) outs(%d : {TB}) {{isMSB = false}}",
        "tprint": f"pto.tprint ins(%t : {TB})",
        "print": 'pto.print ins("%+08.3f", %v : f32)',
        "trap": "pto.trap",
        # sync
        "set_flag": "pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]",
        "wait_flag": "pto.wait_flag [#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_V>, #pto.event<EVENT_ID0>]",
        "set_flag_dyn": "pto.set_flag_dyn [#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_MTE3>, %id]",
        "wait_flag_dyn": "pto.wait_flag_dyn [#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_MTE3>, %id]",
        "barrier": "pto.barrier <PIPE_ALL>",
        "barrier_sync": "pto.barrier_sync [<TVEC>]",
        "record_event": (
            "pto.record_event [#pto.pipe_event_type<TLOAD>, #pto.pipe_event_type<TVEC>, #pto.event<EVENT_ID0>]"
        ),
        "wait_event": "pto.wait_event[#pto.sync_op_type<TLOAD>, #pto.sync_op_type<TMOV_M2L>, <EVENT_ID0>]",
        "get_buf": "pto.get_buf [#pto.pipe_event_type<TLOAD>, 0] {mode = 0 : i32}",
        "rls_buf": "pto.rls_buf [#pto.pipe_event_type<TLOAD>, 0]",
        "tsync": f"pto.tsync ins(%a, %b : {TB}, {TB})",
        "sync.set": "pto.sync.set <PIPE_FIX>, 0 {ffts_mode = 2 : i32}",
        "sync.wait": "pto.sync.wait <PIPE_V>, %id",
        "declare_eventid_array": "%a = pto.declare_eventid_array -> !pto.eventid_array<4>",
        "eventid_array_get": "%e = pto.eventid_array_get %a[%i] : !pto.eventid_array<4>",
        "eventid_array_set": "pto.eventid_array_set %a[%i], %v : !pto.eventid_array<4>",
        "set_ffts": "pto.set_ffts %m : memref<256xi64>",
        # multi-core / FIFO / async
        "get_block_idx": "%b = pto.get_block_idx",
        "get_block_num": "%b = pto.get_block_num",
        "get_subblock_idx": "%b = pto.get_subblock_idx",
        "get_subblock_num": "%b = pto.get_subblock_num",
        "section.cube": "pto.section.cube {\n  pto.barrier #pto.pipe<PIPE_M>\n}",
        "section.vector": "pto.section.vector {\n}",
        "reserve_buffer": (
            '%b = pto.reserve_buffer {name = "c2v_fifo", size = 8192, location = <vec>, auto = true} -> i32'
        ),
        "import_reserved_buffer": (
            '%b = pto.import_reserved_buffer {name = "c2v_fifo", peer_func = @vec_kernel} -> i32'
        ),
        "aic_initialize_pipe": (
            "pto.aic_initialize_pipe {dir_mask = 3, slot_size = 1024} "
            "(c2v_consumer_buf = %a : i32, v2c_consumer_buf = %b : i32)"
        ),
        "aiv_initialize_pipe": (
            "pto.aiv_initialize_pipe {dir_mask = 1, slot_size = 1024, nosplit = true} "
            "(gm_slot_buffer = %g : !pto.ptr<f32>, c2v_consumer_buf = %a : i32, v2c_consumer_buf = %b : i32)"
        ),
        "tpush_to_aiv": f"pto.tpush_to_aiv(%t : {ACC}) {{split = 1}}",
        "tpush_to_aic": f"pto.tpush_to_aic(%t : {TB}) {{split = 0}}",
        "tpop_from_aic": f"%t = pto.tpop_from_aic(%vr, %vc) {{split = 2}} -> {DYN}",
        "tpop_from_aiv": f"%t = pto.tpop_from_aiv {{split = 0}} -> {MAT}",
        "tfree_from_aic": "pto.tfree_from_aic{split = 1}",
        "tfree_from_aiv": "pto.tfree_from_aiv {split = 0}",
        "initialize_l2g2l_pipe": (
            "%p = pto.initialize_l2g2l_pipe {dir_mask = 1, slot_size = 1024, slot_num = 8, local_slot_num = 8, "
            "flag_base = 0}(%gm : memref<256xf32, #pto.address_space<gm>>, %local : i32) -> !pto.pipe"
        ),
        "initialize_l2l_pipe": (
            "%p = pto.initialize_l2l_pipe {dir_mask = 1, slot_size = 1024, slot_num = 8}(%local : i32) -> !pto.pipe"
        ),
        "tpush": f"pto.tpush(%t, %p : {ACC}, !pto.pipe) {{split = 0}}",
        "tpop": f"pto.tpop(%t, %p : {TB}, !pto.pipe) {{split = 1}}",
        "tfree": "pto.tfree(%p : !pto.pipe) {split = 2}",
        "build_async_session": (
            f"%s = pto.build_async_session(%scratch, %ws : {TB}, memref<1024xi8, #pto.address_space<gm>>) "
            "-> !pto.async_session"
        ),
        "tput_async": f"%e = pto.tput_async(%dst, %src, %s : {MR}, {MR}, !pto.async_session) -> !pto.async_event",
        "tget_async": f"%e = pto.tget_async(%dst, %src, %s : {MR}, {MR}, !pto.async_session) -> !pto.async_event",
        "wait_async_event": "%ok = pto.wait_async_event(%e, %s : !pto.async_event, !pto.async_session) -> i1",
        "test_async_event": "%ok = pto.test_async_event(%e, %s : !pto.async_event, !pto.async_session) -> i1",
    }
)

APPENDIX_A_NAMES = ["make_tensor_view", "partition_view", "get_tensor_view_dim", "addptr", "load_scalar", "store_scalar", "alloc_tile", "declare_tile", "tassign", "subset", "set_validshape", "treshape", "bitcast", "bind_tile", "pointer_cast", "declare_tile_memref", "subview", "tload", "tprefetch", "tstore", "tstore_fp", "tmov", "tmov.fp", "textract", "textract_fp", "tinsert", "tinsert_fp", "tfillpad", "tfillpad_expand", "tfillpad_inplace", "tpack", "ttrans", "mgather", "mscatter", "tgetval", "tsetval", "tadd", "tsub", "tmul", "tdiv", "tmax", "tmin", "tand", "tor", "tshl", "tshr", "tfmod", "trem", "txor", "tprelu", "tpartadd", "tpartmax", "tpartmin", "tpartmul", "tadds", "tsubs", "tmuls", "tdivs", "tmaxs", "tmins", "tfmods", "trems", "tands", "tors", "tshls", "tshrs", "txors", "tlrelu", "taxpy", "taddsc", "tsubsc", "texpands", "tabs", "tneg", "texp", "tlog", "tsqrt", "trsqrt", "trecip", "trelu", "tnot", "taddc", "tsubc", "trowsum", "trowmax", "trowmin", "trowprod", "trowargmax", "trowargmin", "tcolsum", "tcolmax", "tcolmin", "tcolprod", "tcolargmax", "tcolargmin", "trowexpand", "trowexpandadd", "trowexpandsub", "trowexpandmul", "trowexpanddiv", "trowexpandmax", "trowexpandmin", "trowexpandexpdif", "tcolexpand", "tcolexpandadd", "tcolexpandsub", "tcolexpandmul", "tcolexpanddiv", "tcolexpandmax", "tcolexpandmin", "tcolexpandexpdif", "tmatmul", "tmatmul.acc", "tmatmul.bias", "tmatmul.mx", "tmatmul.mx.acc", "tmatmul.mx.bias", "tgemv", "tgemv.acc", "tgemv.bias", "tgemv.mx", "tgemv.mx.acc", "tgemv.mx.bias", "tcvt", "tquant", "tdequant", "tget_scale_addr", "tcmp", "tcmps", "tsel", "tsels", "tgather", "tgatherb", "tscatter", "tconcat", "tsort32", "tmrgsort", "tci", "ttri", "trandom", "thistogram", "tprint", "print", "trap", "set_flag", "wait_flag", "set_flag_dyn", "wait_flag_dyn", "barrier", "barrier_sync", "record_event", "wait_event", "get_buf", "rls_buf", "tsync", "sync.set", "sync.wait", "declare_eventid_array", "eventid_array_get", "eventid_array_set", "set_ffts", "get_block_idx", "get_block_num", "get_subblock_idx", "get_subblock_num", "section.cube", "section.vector", "reserve_buffer", "import_reserved_buffer", "aic_initialize_pipe", "aiv_initialize_pipe", "tpush_to_aiv", "tpush_to_aic", "tpop_from_aic", "tpop_from_aiv", "tfree_from_aic", "tfree_from_aiv", "initialize_l2g2l_pipe", "initialize_l2l_pipe", "tpush", "tpop", "tfree", "build_async_session", "tput_async", "tget_async", "wait_async_event", "test_async_event"]


def wrap(body: str) -> str:
    """Put op lines into one function of an (unwrapped) module."""
    return "func.func @k() {\n" + body + "\n  return\n}\n"
