"""What `OperationWriter` (printer.py) asks of a stage printer kept in a module of its own
(moe.py: sp.route; delta.py: sp.causal_conv, sp.gated_delta), the one table they register in
(`SECTION_PRINTERS`, keyed by the sp op class: the decorator `prints` sits on each printer
class, so a stage has one registration, next to its code), and the pieces those printers share:
the row mask and the per-item constant reads (docs/backend-ttlang.md).

A stage may add constant tensors (the host allocates them beside the program's own, listed in
the docs) and the DFBs it reads them through; its compute runs in the compute kernel, and the
movement kernel that loads its input reads those constants in step with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from spatial_dialect import sp
from spatial_dialect.targets.gemm import TILE
from spatial_dialect.tools.backend.index import Ix, from_affine
from spatial_dialect.tools.backend.names import ident

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter
    from spatial_dialect.tools.backend.ttlang.text import Lines

Consts = dict[str, tuple[tuple[int, int], str]]


class StagePrinter:
    """One kind of stage in TT-Lang: its refusals, the constants and DFBs it adds, the kernels
    it is printed in besides its engine's, and its text in each kernel (`key`: "compute",
    "movement 0", "movement 1"). `host`: the functions the host calls to build its constants,
    printed into the program by their source."""

    host: tuple[Callable[..., object], ...] = ()

    def check(self, sec: OperationWriter, s: sp.StageOp) -> None:
        """Raise TTLangUnsupported, naming what is missing, where the stage has no form."""

    def constants(self, sec: OperationWriter, s: sp.StageOp) -> Consts:
        return {}

    def buffers(self, sec: OperationWriter, s: sp.StageOp, out: Lines) -> None:
        """The DFBs it adds (not in the sized IR)."""

    def engines(self, sec: OperationWriter, s: sp.StageOp) -> list[str]:
        return []

    def in_k_loop(self, s: sp.StageOp, key: str) -> bool:
        """Whether its part in kernel `key` runs inside the K loop of the loads."""
        return False

    def emit(
        self, sec: OperationWriter, out: Lines, s: sp.StageOp, key: str, r: sp.SitesOp, b: dict
    ) -> None:
        raise NotImplementedError


SECTION_PRINTERS: dict[type[sp.StageOp], StagePrinter] = {}
"""The stages printed by a module of their own, by op class (filled by `prints`; registry.py
imports every such module, so the table is whole wherever it is read)."""


def prints(op: type[sp.StageOp]) -> Callable[[type[StagePrinter]], type[StagePrinter]]:
    """Class decorator: the decorated StagePrinter prints stages of class `op`."""

    def register(cls: type[StagePrinter]) -> type[StagePrinter]:
        assert op not in SECTION_PRINTERS, f"{op.name} has two TT-Lang printers"
        SECTION_PRINTERS[op] = cls()
        return cls

    return register


def printer_of(s: sp.StageOp) -> StagePrinter | None:
    return SECTION_PRINTERS.get(type(s))


# Shared by the stage printers (and indexed.py) ------------------------------------------


def tname(name: str) -> str:
    """A DRAM tensor's parameter name (prefixed: a tensor may be called x or y)."""
    return "t_" + ident(name, prefix="")


def expr(e: object) -> Ix:
    """An access pattern's affine expression in the kernels' loop variables, simplified
    (tools/backend/index.py)."""
    return from_affine(e, tuple(sp.LOOP_VARS))  # type: ignore[arg-type]


def pad(n: int) -> int:
    return -(-n // TILE) * TILE


def page(v, b: dict) -> tuple[int, int]:  # noqa: ANN001
    """The page (in tiles) of the buffer `v`, under a range's bindings."""
    return sp.buffer_of(v).page.resolve(b)


def load_into(stages: list[sp.StageOp], v) -> sp.LoadOp:  # noqa: ANN001
    """The load that fills the buffer of value `v`."""
    buf = sp.buffer_of(v)
    return next(s for s in stages if isinstance(s, sp.LoadOp) and sp.buffer_of(s.dst) is buf)


def engine_key(s: sp.StageOp) -> str:
    """The kernel a stage runs in: "compute", "movement 0" or "movement 1"."""
    text = s.engine.text()
    return "compute" if text.startswith("compute") else " ".join(text.split()[:2])


def pages(sec: OperationWriter, f) -> list[tuple[int, int]]:  # noqa: ANN001
    """The distinct pages `f(bindings)` over the section's ranges, in range order."""
    out = []
    for r in sec.ranges:
        p = f(r.bindings(sec.work.k_block))
        if p not in out:
            out.append(p)
    return out


def dfb_name(base: str, page: tuple[int, int], pages: list) -> str:  # noqa: ANN001
    """A DFB's name: one per distinct page (a TT-Lang DFB has one block shape)."""
    return f"{base}_dfb" if len(pages) == 1 else f"{base}_dfb_{page[0]}x{page[1]}"


def rows_mask(sec: OperationWriter, rows: int, v) -> tuple[str, tuple[tuple[int, int], str]]:  # noqa: ANN001
    """The constant whose element (i, j) is 1 where row i < `rows` (every column), else 0, as
    tall as the tensor that fills buffer `v`: a stage multiplies by it to keep the rows past the
    data zero, as sp says (the DRAM rows past `rows` of a padded tensor hold what earlier
    stages computed from their padding). (name, (shape, numpy source))."""
    padded = sec.tensors[load_into(sec.stages, v).tensor.root_reference.data].tiles[0] * TILE
    name = f"_rows_{rows}_{padded}"
    src = f"np.repeat((np.arange({padded}) < {rows})[:, None], {TILE}, 1).astype(np.float32)"
    return name, ((padded, TILE), src)


def input_engine(sec: OperationWriter, v) -> str:  # noqa: ANN001
    """The movement kernel that loads the buffer `v` (its constants are read beside it)."""
    return engine_key(load_into(sec.stages, v))


def const_dfb(sec: OperationWriter, name: str, page_of, b: dict) -> str:  # noqa: ANN001
    """The DFB of constant `name` whose page, per range bindings, is `page_of(b)`."""
    return dfb_name(name.lstrip("_"), page_of(b), pages(sec, page_of))


def const_buffers(sec: OperationWriter, out: Lines, name: str, page_of) -> None:  # noqa: ANN001
    """One DFB (block_count 2) per distinct page of constant `name` over the ranges."""
    all_pages = pages(sec, page_of)
    for p in all_pages:
        out(
            f"{dfb_name(name.lstrip('_'), p, all_pages)} = ttl.make_dataflow_buffer_like("
            f"{name}, shape={p}, block_count=2)"
        )


def const_read(out: Lines, dfb: str, view: str) -> None:
    out(f"with {dfb}.reserve() as blk:")
    with out.indent():
        out(f"tx = ttl.copy({view}, blk)")
        out("tx.wait()")


def gt(a: str, b: str) -> str:
    """1 where a > b, else 0. The TT-Lang specification has no block comparison (tt-lang-sim's
    `ttl.math.gt` is the simulator's own): relu keeps the positive differences, sign makes
    them 1 (api_check.py)."""
    return f"ttl.math.sign(ttl.math.relu({a} - {b}))"


def eq(a: str, b: str, shape: str) -> str:
    """1 where a == b, else 0, from the specification's functions as `gt`: 1 - sign(|a - b|)."""
    return f"ttl.block.fill(1.0, {shape}) - ttl.math.sign(ttl.math.abs({a} - {b}))"
