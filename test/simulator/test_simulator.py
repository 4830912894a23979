"""The simulator's machinery: local memory, FIFOs over its bytes, the scheduler and its deadlock
report, DRAM tensors. Whole compiled programs are simulated in test_run_compiled.py."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import Float32Type, TensorType

from spatial_dialect.sp import Layout, TensorOp, TensorRole
from spatial_dialect.tools.simulator.machine import (
    AccessOutsideTensor,
    BufferOutsideMemory,
    DramTensor,
    Fifo,
    FifoDeadlock,
    LocalMemory,
    UnwrittenOutput,
    UnwrittenRead,
    Wait,
    give,
    run_processes,
    take,
)

BF16 = np.dtype(ml_dtypes.bfloat16)


def fifo(memory: LocalMemory, name: str, offset: int, depth: int = 2, dtype=np.float32) -> Fifo:
    nbytes = depth * 32 * 32 * np.dtype(dtype).itemsize
    return Fifo(
        name, memory.window((0, 0), name, offset, nbytes), depth, (1, 1), np.dtype(dtype), (32, 32)
    )


def test_a_page_round_trips_through_local_memory_bytes():
    memory = LocalMemory(1 << 16)
    f = Fifo("f", memory.window((0, 0), "f", 0, 2 * 4 * 2048), 2, (2, 2), BF16, (32, 32))
    page = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 7
    f.push(page, "test")
    np.testing.assert_array_equal(f.front((2, 2), "test"), page.astype(BF16))
    # Stored tile after tile: the first 2048 bytes are the top-left tile.
    first_tile = memory.window((0, 0), "f", 0, 2048).view(BF16).reshape(32, 32)
    np.testing.assert_array_equal(first_tile, page[:32, :32].astype(BF16))


def test_overlapping_buffers_corrupt_each_other():
    memory = LocalMemory(1 << 16)
    a, b = fifo(memory, "a", 0), fifo(memory, "b", 2048)  # b's page 0 is a's second half
    a.push(np.ones((32, 32), np.float32), "test")
    b.push(np.full((32, 32), 5, np.float32), "test")
    page = a.front((1, 1), "test")
    assert page[16:].min() == 5 and page[:16].max() == 1  # a's page now holds b's data


def test_buffer_past_the_end_of_local_memory():
    with pytest.raises(
        BufferOutsideMemory,
        match=r"buffer x@0,0 occupies \[61440, 69632\) but local memory is \[0, 65536\)",
    ):
        fifo(LocalMemory(1 << 16), "x@0,0", 61440)


def test_scheduler_runs_a_pipeline_through_a_small_fifo():
    f = fifo(LocalMemory(1 << 16), "f", 0, depth=1)
    got = []

    def producer():
        for i in range(5):
            yield from give((f,), np.full((32, 32), i, np.float32), "producer")

    def consumer():
        for _ in range(5):
            page = yield from take(f, (1, 1), "consumer")
            got.append(float(page[0, 0]))

    run_processes("s", [consumer(), producer()])
    assert got == [0, 1, 2, 3, 4]


def test_a_process_whose_last_step_moves_a_page_is_progress():
    # Pass 1: the waiter waits on g, the finisher on room in the full f, the freer pops f and
    # ends. Pass 2: only the finisher moves, and its move (a push to g) ends it: that is
    # progress, so pass 3 wakes the waiter instead of reporting a deadlock.
    memory = LocalMemory(1 << 16)
    f, g = fifo(memory, "f", 0, depth=1), fifo(memory, "g", 8192, depth=1)
    f.push(np.zeros((32, 32), np.float32), "test")
    got = []

    def waiter():
        page = yield from take(g, (1, 1), "waiter")
        got.append(float(page[0, 0]))

    def finisher():
        yield from give((f,), np.zeros((32, 32), np.float32), "finisher")
        yield from give((g,), np.full((32, 32), 7, np.float32), "finisher")

    def freer():
        yield from take(f, (1, 1), "freer")

    run_processes("s", [waiter(), finisher(), freer()])
    assert got == [7]


def test_scheduler_reports_a_deadlock_with_who_waits_on_what():
    memory = LocalMemory(1 << 16)
    f, g = fifo(memory, "f", 0, depth=1), fifo(memory, "g", 8192, depth=1)

    def takes_f_then_g():
        yield from take(f, (1, 1), "first")
        yield from give((g,), np.zeros((32, 32), np.float32), "first")

    def takes_g_then_f():
        yield from take(g, (1, 1), "second")
        yield from give((f,), np.zeros((32, 32), np.float32), "second")

    with pytest.raises(FifoDeadlock) as info:
        run_processes("s", [takes_f_then_g(), takes_g_then_f()])
    assert "first waits for a full page in f (0/1 pages full)" in str(info.value)
    assert "second waits for a full page in g (0/1 pages full)" in str(info.value)


def test_wait_on_several_fifos_needs_all_of_them():
    memory = LocalMemory(1 << 16)
    f, g = fifo(memory, "f", 0, depth=1), fifo(memory, "g", 8192, depth=1)
    f.push(np.zeros((32, 32), np.float32), "test")
    assert Wait((f, g), True, 1, "w").blocked() == [f] and not Wait((g,), True, 1, "w").blocked()
    assert Wait((f, g), False, 1, "w").blocked() == [g] and not Wait((f,), False, 1, "w").blocked()
    assert Wait((f,), False, 2, "w").blocked() == [f]  # two pages wanted, one there


def dram(rows: int, cols: int) -> DramTensor:
    t = TensorType(Float32Type(), [rows, cols])
    return DramTensor(
        TensorOp("t", t, (-(-rows // 32), -(-cols // 32)), TensorRole.OUTPUT, Layout.TILED),
        (32, 32),
    )


def test_dram_tensor_pads_inputs_with_zeros_and_checks_bounds():
    t = dram(40, 70)  # 2x3 tiles
    t.fill(np.ones((40, 70), np.float32))
    block = t.read("load", 1, 2, 1, 1)
    assert block.shape == (32, 32) and block[:8, :6].min() == 1 and block[8:].max() == 0
    with pytest.raises(
        AccessOutsideTensor,
        match=r"load: the block of 1x2 tiles at tile \(1, 2\) leaves @t, which has 2x3 tiles",
    ):
        t.read("load", 1, 2, 1, 2)


def test_dram_tensor_reports_what_was_never_written():
    t = dram(64, 64)
    t.write("store", 0, 0, 1, 2, np.ones((32, 64), np.float32))
    with pytest.raises(
        UnwrittenRead,
        match=r"load reads 1 tile\(s\) of @t that nothing wrote, the first at element \(32, 32\)",
    ):
        t.read("load", 0, 1, 2, 1)
    with pytest.raises(
        UnwrittenOutput,
        match=r"output @t: 2 of its 4 tiles never written, the first at element \(32, 0\)",
    ):
        t.result()
    t.write("store", 1, 0, 1, 2, np.full((32, 64), 2, np.float32))
    assert t.result()[63, 63] == 2
