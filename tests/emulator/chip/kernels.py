"""Chip test kernels written from templates: a C2V FIFO pipeline with a loop of tiles, and a
cross-core hand-off through GM ordered by sync.set / sync.wait. Faults are seeded by switches."""

from __future__ import annotations


def mat(rows: int, cols: int) -> str:
    return f"!pto.tile_buf<mat, {rows}x{cols}xf32, blayout=col_major, slayout=row_major>"


def vec(rows: int, cols: int) -> str:
    return f"!pto.tile_buf<vec, {rows}x{cols}xf32>"


def pv(rows: int, cols: int) -> str:
    return f"!pto.partition_tensor_view<{rows}x{cols}xf32>"


def c2v_loop(tiles: int, cols: int, split: int, dir_mask: int = 1, free: bool = True,
             shared_out: bool = False, slot_size: int | None = None) -> str:
    """Per block, the cube core loads ``tiles`` 32 x ``cols`` f32 tiles of X (rows of the block) into
    L1 and pushes each to the vector cores (split 1: 16 rows each, 2: half the columns each); each
    vector core pops, doubles and stores its part of O. ``free=False`` drops the vector cores' frees
    (a FIFO overrun once tiles > slots); ``shared_out`` makes every block store the same window."""
    slot = slot_size or 32 * cols * 4
    slots = 8 if dir_mask in (1, 2) else 4
    hr, hc = (16, cols) if split == 1 else (32, cols // 2)
    free_op = f"pto.tfree_from_aic {{split = {split}}}" if free else ""
    blk_rows = "%c0" if shared_out else "%rb"
    return f"""module {{
  func.func private @push_cube(%x: !pto.ptr<f32>, %m: index) attributes {{pto.kernel_kind = #pto.kernel_kind<cube>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %cols = arith.constant {cols} : index
    %ntiles = arith.constant {tiles} : index
    %c0_i32 = arith.constant 0 : i32
    %fifo = pto.import_reserved_buffer {{name = "c2v", peer_func = @pop_vec}} -> i32
    pto.aic_initialize_pipe {{dir_mask = {dir_mask}, slot_size = {slot}}} (c2v_consumer_buf = %fifo : i32, v2c_consumer_buf = %c0_i32 : i32)
    %b64 = pto.get_block_idx
    %b = arith.index_cast %b64 : i64 to index
    %per = arith.muli %ntiles, %c32 : index
    %rb = arith.muli %b, %per : index
    %vx = pto.make_tensor_view %x, shape = [%m, %cols], strides = [%cols, %c1] : !pto.tensor_view<?x?xf32>
    %t = pto.alloc_tile : {mat(32, cols)}
    scf.for %i = %c0 to %ntiles step %c1 {{
      %r0 = arith.muli %i, %c32 : index
      %r = arith.addi %rb, %r0 : index
      %px = pto.partition_view %vx, offsets = [%r, %c0], sizes = [%c32, %cols] : !pto.tensor_view<?x?xf32> -> {pv(32, cols)}
      pto.tload ins(%px : {pv(32, cols)}) outs(%t : {mat(32, cols)})
      pto.set_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]
      pto.wait_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]
      pto.tpush_to_aiv(%t : {mat(32, cols)}) {{split = {split}}}
      pto.barrier <PIPE_ALL>
    }}
    return
  }}
  func.func private @pop_vec(%o: !pto.ptr<f32>, %m: index) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %cols = arith.constant {cols} : index
    %hr = arith.constant {hr} : index
    %hc = arith.constant {hc} : index
    %ntiles = arith.constant {tiles} : index
    %c0_i32 = arith.constant 0 : i32
    %two = arith.constant 2.0 : f32
    %fifo = pto.reserve_buffer {{name = "c2v", size = {slot * slots}, location = #pto.address_space<vec>, auto = true}} -> i32
    pto.aiv_initialize_pipe {{dir_mask = {dir_mask}, slot_size = {slot}}} (c2v_consumer_buf = %fifo : i32, v2c_consumer_buf = %c0_i32 : i32)
    %b64 = pto.get_block_idx
    %b = arith.index_cast %b64 : i64 to index
    %s64 = pto.get_subblock_idx
    %s = arith.index_cast %s64 : i64 to index
    %per = arith.muli %ntiles, %c32 : index
    %rb = arith.muli %b, %per : index
    %sr = arith.muli %s, %hr : index
    %sc0 = arith.muli %s, %hc : index
    %split_rows = arith.constant {1 if split == 1 else 0} : index
    %sc1 = arith.muli %sc0, %split_rows : index
    %sc = arith.subi %sc0, %sc1 : index
    %srr = arith.muli %sr, %split_rows : index
    %vo = pto.make_tensor_view %o, shape = [%m, %cols], strides = [%cols, %c1] : !pto.tensor_view<?x?xf32>
    %d = pto.alloc_tile : {vec(hr, hc)}
    scf.for %i = %c0 to %ntiles step %c1 {{
      %r0 = arith.muli %i, %c32 : index
      %r1 = arith.addi {blk_rows}, %r0 : index
      %r = arith.addi %r1, %srr : index
      %t = pto.tpop_from_aic {{split = {split}}} -> {vec(hr, hc)}
      pto.tmuls ins(%t, %two : {vec(hr, hc)}, f32) outs(%d : {vec(hr, hc)})
      {free_op}
      pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
      pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
      %po = pto.partition_view %vo, offsets = [%r, %sc], sizes = [%hr, %hc] : !pto.tensor_view<?x?xf32> -> {pv(hr, hc)}
      pto.tstore ins(%d : {vec(hr, hc)}) outs(%po : {pv(hr, hc)})
      pto.barrier <PIPE_ALL>
    }}
    return
  }}
  func.func @c2v_loop(%x: !pto.ptr<f32>, %o: !pto.ptr<f32>, %m: index) attributes {{pto.entry}} {{
    func.call @push_cube(%x, %m) : (!pto.ptr<f32>, index) -> ()
    func.call @pop_vec(%o, %m) : (!pto.ptr<f32>, index) -> ()
    return
  }}
}}
"""


def gm_handoff(wait: bool = True, set_: bool = True) -> str:
    """The cube core writes Y = X (16x16 f32) to GM and raises cross-core signal 0 from FIX; each
    vector core waits for it on MTE2, then loads Y, adds 1 and stores its 8 rows of Z.
    ``wait=False`` drops the vector cores' sync.wait (a race), ``set_=False`` the cube's set
    (a deadlock)."""
    t16 = "!pto.tile_buf<acc, 16x16xf32, blayout=col_major, slayout=row_major, fractal=1024>"
    m16 = mat(16, 16)
    w = "pto.sync.wait <PIPE_MTE2>, 0" if wait else ""
    st = "pto.sync.set <PIPE_MTE3>, 0" if set_ else ""
    del t16
    return f"""module {{
  func.func private @cube(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) attributes {{pto.kernel_kind = #pto.kernel_kind<cube>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %vx = pto.make_tensor_view %x, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %vy = pto.make_tensor_view %y, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> {pv(16, 16)}
    %py = pto.partition_view %vy, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> {pv(16, 16)}
    %t = pto.alloc_tile : {m16}
    pto.tload ins(%px : {pv(16, 16)}) outs(%t : {m16})
    pto.set_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]
    pto.wait_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]
    pto.tstore ins(%t : {m16}) outs(%py : {pv(16, 16)})
    {st}
    return
  }}
  func.func private @vector(%y: !pto.ptr<f32>, %z: !pto.ptr<f32>) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %one = arith.constant 1.0 : f32
    %s64 = pto.get_subblock_idx
    %s = arith.index_cast %s64 : i64 to index
    %r = arith.muli %s, %c8 : index
    %vy = pto.make_tensor_view %y, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %vz = pto.make_tensor_view %z, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %py = pto.partition_view %vy, offsets = [%r, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> {pv(8, 16)}
    %pz = pto.partition_view %vz, offsets = [%r, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> {pv(8, 16)}
    %t = pto.alloc_tile : {vec(8, 16)}
    {w}
    pto.tload ins(%py : {pv(8, 16)}) outs(%t : {vec(8, 16)})
    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
    pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
    pto.tadds ins(%t, %one : {vec(8, 16)}, f32) outs(%t : {vec(8, 16)})
    pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
    pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
    pto.tstore ins(%t : {vec(8, 16)}) outs(%pz : {pv(8, 16)})
    return
  }}
  func.func @handoff(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %z: !pto.ptr<f32>) attributes {{pto.entry}} {{
    func.call @cube(%x, %y) : (!pto.ptr<f32>, !pto.ptr<f32>) -> ()
    func.call @vector(%y, %z) : (!pto.ptr<f32>, !pto.ptr<f32>) -> ()
    return
  }}
}}
"""
