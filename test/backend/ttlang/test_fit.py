"""The printer's check that constant DFBs fit beside size-buffers' layout (fit.py): it counts
the DFBs made like a constant table at page x depth x f32 tile, not the staging DFBs made like an
`_f32_page_*`, and refuses by section with the bytes past the local memory. That it never fires
on the examples and the trace programs is test_ttlang_emitted.py's and test_trace_counts.py's
(every one prints through it)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from spatial_dialect.tools.backend.ttlang.fit import (
    ConstantsPastLocalMemory,
    check_constants_fit,
    constant_dfb_bytes,
)
from spatial_dialect.tools.backend.ttlang.text import Lines


class _Range:
    """A range whose one laid-out buffer ends at `end` bytes."""

    def __init__(self, end: int):
        self.end = end

    def bindings(self, k_block: int) -> dict:
        return {}

    def offsets(self) -> dict:
        return {"x": 0}

    def bytes_of(self, buf, b) -> int:  # noqa: ANN001
        return self.end


def _section(local_mem: int, end: int) -> SimpleNamespace:
    buf = SimpleNamespace(label=SimpleNamespace(data="x"))
    return SimpleNamespace(
        name="y",
        consts={"_flash_rows": None, "_f32_page_1x1": None},
        mesh=SimpleNamespace(local_mem=local_mem),
        work=SimpleNamespace(k_block=1),
        ranges=[_Range(end)],
        p=SimpleNamespace(buffers=lambda: [buf]),
    )


def _decls() -> Lines:
    out = Lines()
    for role in ("u_m", "u_l", "row0"):
        out(
            f"flash_{role}_dfb = ttl.make_dataflow_buffer_like(_flash_rows, shape=(1, 1), "
            "block_count=1)"
        )
    out("spill_dfb = ttl.make_dataflow_buffer_like(_f32_page_1x1, shape=(2, 2), block_count=2)")
    out("in0_dfb = ttl.make_dataflow_buffer_like(t_x, shape=(1, 4), block_count=2)")
    return out


def test_only_the_constant_tables_dfbs_are_counted():
    assert constant_dfb_bytes(_section(0, 0), _decls()) == {
        "flash_u_m_dfb": 4096,
        "flash_u_l_dfb": 4096,
        "flash_row0_dfb": 4096,
    }


def test_constants_that_fit_beside_the_layout_pass():
    check_constants_fit(_section(100_000, 100_000 - 3 * 4096), _decls())


def test_constants_past_the_local_memory_are_an_internal_error_with_the_bytes():
    with pytest.raises(ConstantsPastLocalMemory) as e:
        check_constants_fit(_section(100_000, 100_000 - 3 * 4096 + 1), _decls())
    msg = str(e.value)
    assert "section @y" in msg and "12288 B" in msg and "flash_u_m_dfb 4096 B" in msg
    assert "beside 87713 B" in msg and "100000-byte local memory" in msg
