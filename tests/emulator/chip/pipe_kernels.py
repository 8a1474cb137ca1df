"""Kernels on explicit pipe objects (``initialize_l2g2l_pipe`` / ``initialize_l2l_pipe`` with
``declare_tile`` + ``tpush`` / ``tpop`` / ``tfree``), written from one template; faults are seeded
by switches."""

from __future__ import annotations

ACC = "!pto.tile_buf<acc, 32x32xf32, blayout=col_major, slayout=row_major, fractal=1024>"
MAT16 = "!pto.tile_buf<mat, 32x32xf16, blayout=col_major, slayout=row_major>"
LEFT = "!pto.tile_buf<left, 32x32xf16, slayout=row_major>"
RIGHT = "!pto.tile_buf<right, 32x32xf16, slayout=col_major>"
HALF = "!pto.tile_buf<vec, 16x32xf32>"
PV16 = "!pto.partition_tensor_view<32x32xf16>"
PVH = "!pto.partition_tensor_view<16x32xf32>"
SLOT = 32 * 32 * 4


def c2v_pipe(tiles: int, slot_num: int = 4, local_slot_num: int = 2, staged: bool = True,
             free_late: bool = False, no_free: bool = False, reserve_slots: int | None = None) -> str:
    """O[i] = 0.5 * (A[i] @ B) for ``tiles`` 32x32 tiles per block: the cube multiplies and pushes
    each accumulator on an explicit C2V pipe (split 1); each vector core pops its 16 rows into a
    ``declare_tile`` handle, scales them and stores them. ``staged``: an l2g2l pipe through a GM
    workspace (arg3, ``slot_num`` slots per block), else an l2l pipe. ``free_late`` frees the slot
    before the last read of it (a read of a freed slot); ``no_free`` never frees (with
    ``local_slot_num`` < tiles: a local slot overwritten before it is consumed); ``reserve_slots``
    sizes the consumer's reserve_buffer (default: the slots the pipe uses locally)."""
    ws_words = slot_num * SLOT // 4
    if reserve_slots is None:
        reserve_slots = local_slot_num if staged else slot_num
    if staged:
        init = ("%p = pto.initialize_l2g2l_pipe {{dir_mask = 1, slot_size = {slot}, slot_num = {n}, local_slot_num = {ln}, "
                "flag_base = 0}}(%pws : !pto.partition_tensor_view<1x{w}xf32>, %{local} : i32) -> !pto.pipe")
    else:
        init = "%p = pto.initialize_l2l_pipe {{dir_mask = 1, slot_size = {slot}, slot_num = {n}}}(%{local} : i32) -> !pto.pipe"
    ws_view = (f"""    %vws = pto.make_tensor_view %ws, shape = [%c1, %wsall], strides = [%wsall, %c1] : !pto.tensor_view<?x?xf32>
    %wsoff = arith.muli %blk, %wsw : index
    %pws = pto.partition_view %vws, offsets = [%c0, %wsoff], sizes = [%c1, %wsw] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x{ws_words}xf32>
""" if staged else "")

    def pipe_init(local: str) -> str:
        return "    " + init.format(slot=SLOT, n=slot_num, ln=local_slot_num, w=ws_words, local=local)

    read_ops = f"""      pto.tmuls ins(%t, %half : {HALF}, f32) outs(%r : {HALF})
      pto.barrier <PIPE_V>"""
    late_read = f"""      pto.tadds ins(%t, %zero : {HALF}, f32) outs(%r2 : {HALF})
      pto.barrier <PIPE_V>"""
    free = "" if no_free else "      pto.tfree(%p : !pto.pipe) {split = 1}"
    body = f"{read_ops}\n{free}\n{late_read}" if free_late else f"{read_ops}\n{late_read}\n{free}"
    return f"""module attributes {{pto.target_arch = "a3"}} {{
  func.func private @mm_cube(%a: !pto.ptr<f16>, %b: !pto.ptr<f16>, %ws: !pto.ptr<f32>, %nb: index)
      attributes {{pto.kernel_kind = #pto.kernel_kind<cube>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %ntiles = arith.constant {tiles} : index
    %wsw = arith.constant {ws_words} : index
    %rows = arith.muli %nb, %ntiles : index
    %m = arith.muli %rows, %c32 : index
    %wsall = arith.muli %nb, %wsw : index
    %blk64 = pto.get_block_idx
    %blk = arith.index_cast %blk64 : i64 to index
{ws_view}    %peer = pto.import_reserved_buffer {{name = "c2v_slots", peer_func = @epi_vec}} -> i32
{pipe_init("peer")}
    %va = pto.make_tensor_view %a, shape = [%m, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf16>
    %vb = pto.make_tensor_view %b, shape = [%c32, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf16>
    %pb = pto.partition_view %vb, offsets = [%c0, %c0], sizes = [%c32, %c32] : !pto.tensor_view<?x?xf16> -> {PV16}
    %a_mat = pto.alloc_tile : {MAT16}
    %b_mat = pto.alloc_tile : {MAT16}
    %a_l = pto.alloc_tile : {LEFT}
    %b_r = pto.alloc_tile : {RIGHT}
    %acc = pto.alloc_tile : {ACC}
    pto.tload ins(%pb : {PV16}) outs(%b_mat : {MAT16})
    %base = arith.muli %blk, %ntiles : index
    scf.for %i = %c0 to %ntiles step %c1 {{
      %ti = arith.addi %base, %i : index
      %row = arith.muli %ti, %c32 : index
      %pa = pto.partition_view %va, offsets = [%row, %c0], sizes = [%c32, %c32] : !pto.tensor_view<?x?xf16> -> {PV16}
      pto.tload ins(%pa : {PV16}) outs(%a_mat : {MAT16})
      pto.set_flag[<PIPE_MTE2>, <PIPE_MTE1>, <EVENT_ID0>]
      pto.wait_flag[<PIPE_MTE2>, <PIPE_MTE1>, <EVENT_ID0>]
      pto.tmov ins(%a_mat : {MAT16}) outs(%a_l : {LEFT})
      pto.tmov ins(%b_mat : {MAT16}) outs(%b_r : {RIGHT})
      pto.set_flag[<PIPE_MTE1>, <PIPE_M>, <EVENT_ID0>]
      pto.wait_flag[<PIPE_MTE1>, <PIPE_M>, <EVENT_ID0>]
      pto.tmatmul ins(%a_l, %b_r : {LEFT}, {RIGHT}) outs(%acc : {ACC})
      pto.set_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]
      pto.wait_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]
      pto.tpush(%acc, %p : {ACC}, !pto.pipe) {{split = 1}}
      pto.barrier <PIPE_ALL>
    }}
    return
  }}
  func.func private @epi_vec(%o: !pto.ptr<f32>, %ws: !pto.ptr<f32>, %nb: index)
      attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %ntiles = arith.constant {tiles} : index
    %wsw = arith.constant {ws_words} : index
    %half = arith.constant 0.5 : f32
    %zero = arith.constant 0.0 : f32
    %rows = arith.muli %nb, %ntiles : index
    %m = arith.muli %rows, %c32 : index
    %wsall = arith.muli %nb, %wsw : index
    %blk64 = pto.get_block_idx
    %blk = arith.index_cast %blk64 : i64 to index
    %sub64 = pto.get_subblock_idx
    %sub = arith.index_cast %sub64 : i64 to index
{ws_view}    %local = pto.reserve_buffer {{name = "c2v_slots", size = {SLOT * reserve_slots}, location = #pto.address_space<vec>, auto = true}} -> i32
{pipe_init("local")}
    %vo = pto.make_tensor_view %o, shape = [%m, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
    %vo2 = pto.make_tensor_view %o, shape = [%m, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
    %r = pto.alloc_tile : {HALF}
    %r2 = pto.alloc_tile : {HALF}
    %t = pto.declare_tile -> {HALF}
    %base = arith.muli %blk, %ntiles : index
    %r1 = arith.muli %sub, %c16 : index
    scf.for %i = %c0 to %ntiles step %c1 {{
      %ti = arith.addi %base, %i : index
      %r0 = arith.muli %ti, %c32 : index
      %row = arith.addi %r0, %r1 : index
      %po = pto.partition_view %vo, offsets = [%row, %c0], sizes = [%c16, %c32] : !pto.tensor_view<?x?xf32> -> {PVH}
      pto.tpop(%t, %p : {HALF}, !pto.pipe) {{split = 1}}
{body}
      pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
      pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
      pto.tstore ins(%r : {HALF}) outs(%po : {PVH})
      pto.barrier <PIPE_ALL>
    }}
    return
  }}
  func.func @c2v_pipe(%a: !pto.ptr<f16>, %b: !pto.ptr<f16>, %o: !pto.ptr<f32>, %ws: !pto.ptr<f32>, %nb: index)
      attributes {{pto.entry}} {{
    func.call @mm_cube(%a, %b, %ws, %nb) : (!pto.ptr<f16>, !pto.ptr<f16>, !pto.ptr<f32>, index) -> ()
    func.call @epi_vec(%o, %ws, %nb) : (!pto.ptr<f32>, !pto.ptr<f32>, index) -> ()
    return
  }}
}}
"""
