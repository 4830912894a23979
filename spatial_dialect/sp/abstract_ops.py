"""The abstract bases of the sp ops: what every op of a section body, every buffer and every
stage has in common. xDSL registers only the concrete ops (`sp.fifo`, `sp.load`, ...); these
bases are `abc.ABC`s, as xDSL's own abstract op bases are.

The section ops live in an `sp.program`, which in turn lists them (its buffers, its stages,
its work), so this module names the program op by its name, not by its class: the bases sit
below program.py in the import graph.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import OpTrait
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.sp.attrs import BUFFER, AccessAttr, BufferType, EngineAttr, SizesAttr
from spatial_dialect.sp.formats import Engine, Size, Sizes, TensorAccess
from spatial_dialect.sp.syntax import IntValue, int_attr, int_prop

if TYPE_CHECKING:
    from spatial_dialect.sp.program import ProgramOp

PROGRAM = "sp.program"
"""The name of the op whose body holds the section ops."""


@dataclass(frozen=True)
class InProgram(OpTrait):
    """`HasParent(ProgramOp)`, by the program op's name (the same check and the same message)."""

    def verify(self, op: Operation) -> None:
        parent = op.parent_op()
        # Don't check parent when op is detached
        if parent is None or parent.name == PROGRAM:
            return
        raise VerifyException(f"'{op.name}' expects parent op '{PROGRAM}'")


def section_traits():
    return traits_def(InProgram())


# ── Section ops ───────────────────────────────────────────────────────────────────────────────


class SectionOp(IRDLOperation, ABC):
    """An op that lives directly in an sp.program body."""

    @property
    def program(self) -> ProgramOp:
        parent = self.parent_op()
        assert parent is not None and parent.name == PROGRAM
        return cast("ProgramOp", parent)


# ── Buffers ───────────────────────────────────────────────────────────────────────────────────


class BufferOp(SectionOp, ABC):
    """A buffer template: one instance per site of the section's ranges.

    `label` names it (instances are `label@x,y`), `page` is the shape in tiles of one page
    (rows x cols, tiles row-major), `elt` the element type, `format` the storage format of its
    tiles where it is not the element type's (bfp8_b, bfp4_b), `tile_bytes` the bytes of one
    stored tile.
    """

    label = prop_def(StringAttr)
    page = prop_def(SizesAttr)
    elt = prop_def(Attribute)
    format = opt_prop_def(StringAttr)
    res = result_def(BufferType)

    @property
    def storage(self) -> str:
        return self.format.data if self.format else str(self.elt)

    def page_tiles(self, bindings: dict[str, int]) -> int:
        rows, cols = self.page.resolve(bindings)
        return rows * cols

    def verify_(self) -> None:
        if len(self.page.exprs) != 2:
            raise VerifyException(f"buffer {self.label.data}: a page is [rows, cols] of tiles")


class MemoryBufferOp(BufferOp, ABC):
    """A buffer in the site's local memory: `depth` pages (unless a range's memory map gives
    its own, `SitesOp.depth_of`), laid out at an offset once sized."""

    depth = prop_def(SizesAttr)
    tile_bytes_attr = int_prop("tile_bytes")
    alias = opt_operand_def(BufferType)
    tile_bytes = IntValue("tile_bytes")
    custom_directives = (Size, Sizes)
    assembly_format = (
        "$label `depth` custom<Size>($depth) `page` custom<Sizes>($page) $elt"
        " (`as` $format^)? `tile_bytes` $tile_bytes (`alias` $alias^)? attr-dict-with-keyword"
    )

    def __init__(
        self,
        label: str,
        depth: SizesAttr,
        page: SizesAttr,
        elt: Attribute,
        tile_bytes: int,
        format: str | None = None,
        alias: SSAValue | None = None,
    ):
        super().__init__(
            operands=[alias],
            properties={
                "label": StringAttr(label),
                "depth": depth,
                "page": page,
                "elt": elt,
                "tile_bytes": int_attr(tile_bytes),
                "format": StringAttr(format) if format else None,
            },
            result_types=[BUFFER],
        )

    def bytes(self, bindings: dict[str, int], depth: int | None = None) -> int:
        """depth x page tiles x tile bytes under `bindings`, at `depth` pages where given (a
        range's, `SitesOp.bytes_of`), else at the buffer's own."""
        pages = self.depth.resolve(bindings)[0] if depth is None else depth
        return pages * self.page_tiles(bindings) * self.tile_bytes

    @property
    def alias_of(self) -> MemoryBufferOp | None:
        if self.alias is None:
            return None
        owner = self.alias.owner
        assert isinstance(owner, MemoryBufferOp), "the verifier checks what an alias names"
        return owner

    def verify_(self) -> None:
        super().verify_()
        if len(self.depth.exprs) != 1:
            raise VerifyException(f"buffer {self.label.data}: a depth is one size")
        if (d := self.depth.constant()) is not None and d[0] < 1:
            raise VerifyException(f"buffer {self.label.data}: depth {d[0]} must be at least 1")
        if self.tile_bytes <= 0:
            raise VerifyException(f"buffer {self.label.data}: tile bytes must be positive")
        if self.alias is not None and not isinstance(self.alias.owner, MemoryBufferOp):
            raise VerifyException(
                f"buffer {self.label.data}: an alias names a buffer in local memory"
            )


def buffer_of(value: SSAValue) -> BufferOp:
    owner = value.owner
    assert isinstance(owner, BufferOp), "buffer operands are !sp.buffer results of buffer ops"
    return owner


# ── Stages ────────────────────────────────────────────────────────────────────────────────────


class StageOp(SectionOp, ABC):
    """A stage template: one instance per site, on the engine `engine` once placed."""

    engine = opt_prop_def(EngineAttr)

    @abstractmethod
    def stage_name(self) -> str: ...

    def set_engine(self, engine: EngineAttr) -> None:
        self.properties["engine"] = engine


ON_ENGINE = "(`on` custom<Engine>($engine)^)? attr-dict-with-keyword"
"""The end of every stage's format: the engine once placed, then the other attributes."""


class ComputeStage(StageOp, ABC):
    """A compute stage with a kind (each subclass declares `ins` and then `out`)."""

    def stage_name(self) -> str:
        return f"{self.name.removeprefix('sp.')} {self.kind.data}"


class IndexedStage(StageOp, ABC):
    """A movement stage whose rows come from a runtime index: `tensor` is the DRAM tensor it
    reads or writes by row, `index` the i32 vector of DRAM it reads the rows from, `count` the
    real rows the work covers."""

    tensor = prop_def(SymbolRefAttr)
    index = prop_def(SymbolRefAttr)
    access = prop_def(AccessAttr)
    count_attr = int_prop("count")
    count = IntValue("count")
    custom_directives = (TensorAccess, Engine)

    def __init__(
        self,
        tensor: str,
        index: str,
        access: AccessAttr,
        count: int,
        buffer: SSAValue,
        engine: Attribute | None = None,
    ):
        super().__init__(
            operands=[buffer],
            properties={
                "tensor": SymbolRefAttr(tensor),
                "index": SymbolRefAttr(index),
                "access": access,
                "count": int_attr(count),
                "engine": engine,
            },
        )

    @abstractmethod
    def buffer(self) -> SSAValue: ...
