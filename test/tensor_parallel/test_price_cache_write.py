"""A cache write is priced on the rows it writes, not on the cache it returns.

`tg.set_rows` / `tg.batch_set_rows` take the cache and return it with a few rows replaced, in
place. Priced on every operand's and result's bytes, one new row of a 4096-position cache cost
two whole caches of DRAM traffic, which outweighed the projections feeding it when
tensor-parallel chose between splitting a head's cache and replicating it.
"""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import Float32Type, IntegerType, TensorType
from xdsl.utils.test_value import create_ssa_value

from spatial_dialect.passes.tensor_parallel.price import op_us
from spatial_dialect.targets.mesh import MESH_PRESETS
from spatial_dialect.tg import SetRowsOp


@pytest.mark.parametrize("positions", [128, 4096])
def test_one_row_costs_the_same_whatever_the_cache(positions):
    mesh = MESH_PRESETS["n300"]
    cache_t = TensorType(Float32Type(), [positions, 1024])
    rows_t = TensorType(Float32Type(), [1, 1024])
    pos_t = TensorType(IntegerType(32), [1])
    op = SetRowsOp(create_ssa_value(cache_t), create_ssa_value(rows_t), create_ssa_value(pos_t))
    us = op_us(mesh, op, [cache_t, rows_t, pos_t], [cache_t])
    # the row read (4 KiB), the row written in place (4 KiB) and the position (4 B), at DRAM rate
    chip = mesh.chip
    expected = (4096 + 4096 + 4) / chip.dram_bytes_per_cycle / (chip.clock_ghz * 1000.0)
    assert us == pytest.approx(expected)
