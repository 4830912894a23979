"""`spatial-import --batch B --paged auto`: the page size a batched decode's KV pool is cut in,
priced on the target (targets/paging.py, docs/tg.md#choosing-the-page-size).

What the price needs of the model is read off the step itself, built contiguous: the caches are
the first operands of its `tg.batch_set_rows` (one K or V row of a layer: the cache's row width
times its element's bytes); every other argument is a weight (or a small input) that shares the
DRAM with the pool. The decision is recorded on the decode function as `tg.page_size`, with its
runner-up and both prices, so the program says why its blocks are the size they are.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, StringAttr, TensorType, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument

from spatial_dialect.targets.paging import KvShape, PageChoice, choose_page_size
from spatial_dialect.targets.spec import Target
from spatial_dialect.tg.batched import BatchSetRowsOp

PAGE_SIZE_ATTR = "tg.page_size"
"""The decode function's attribute that records a priced page size and its runner-up."""


def tensor_bytes(t: Attribute) -> int:
    """The bytes of a tensor argument (0 for anything else)."""
    if not isinstance(t, TensorType):
        return 0
    count = 1
    for d in t.get_shape():
        count *= d
    return count * t.get_element_type().bitwidth // 8  # type: ignore[attr-defined]


def kv_shape(step: FuncOp, users: int, rows: int) -> KvShape:
    """The priced shape of a batched step built contiguous: its caches (the first operands of its
    tg.batch_set_rows) and, beside them, the bytes of every other argument."""
    caches = [op.operands[0] for op in step.walk() if isinstance(op, BatchSetRowsOp)]
    cache_args = {c for c in caches if isinstance(c, BlockArgument)}
    first = caches[0].type
    assert isinstance(first, TensorType)
    row_bytes = tensor_bytes(first) // first.get_shape()[0]
    weights = sum(tensor_bytes(a.type) for a in step.args if a not in cache_args)
    return KvShape(users, rows, len(caches) // 2, row_bytes, weights)


def choose(step: FuncOp, target: Target, users: int, rows: int) -> tuple[PageChoice, KvShape]:
    """The page size of the contiguous batched `step` on `target` (PagingError where none fits)."""
    shape = kv_shape(step, users, rows)
    return choose_page_size(target, shape), shape


def record(step: FuncOp, choice: PageChoice, shape: KvShape, target: Target) -> None:
    """Puts the decision on `step`: the block, its price, the runner-up's, the expected waste."""

    def num(v: float) -> IntegerAttr:
        return IntegerAttr(round(v), i64)

    c, r = choice.chosen, choice.runner_up
    fields: dict[str, Attribute] = {
        "target": StringAttr(target.name),
        "block": num(c.block),
        "cycles": num(c.cycles),
        "overhead_cycles": num(c.overhead_cycles),
        "waste_cycles": num(c.waste_cycles),
        "waste_bytes_per_user": num(c.waste_bytes_per_user(shape)),
        "pool_bytes": num(c.pool_bytes),
    }
    if r is not None:
        fields |= {"runner_up": num(r.block), "runner_up_cycles": num(r.cycles)}
    step.attributes[PAGE_SIZE_ATTR] = DictionaryAttr(fields)


def note(choice: PageChoice, target: Target) -> str:
    """What the module's first line adds of the decision."""
    r = choice.runner_up
    runner = "" if r is None else f", runner-up {r.block} at {r.cycles:.0f}"
    return f" (priced on {target.name}: {choice.chosen.cycles:.0f} cycles a step{runner})"
