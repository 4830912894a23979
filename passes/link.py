"""link: each tg op of a function becomes a section (seed 004), the target recorded on the module.

What it decides: the DRAM tensors of every section (named after the function's values, with the
layout the prelude chose once for the whole function, and for bf16 on Tensix the storage format
the `format` option asks for), the buffers joining the stages, the stages themselves and their
access patterns. It decides no sizes: every shape is written with the size symbols (sp_attrs), so
one template serves whatever plan tile picks and whatever block a site ends up covering.

A GEMM section (`tg.matmul`, C = A @ B):

    in0  FIFO of [h, kw] tiles of A     load  A[r0, k0] x [h, kw]
    in1  FIFO of [kw, w] tiles of B     load  B[k0, c0] x [kw, w]
    out  FIFO of [sh, sw] tiles of C    matmul_tiles in0, in1 -> out (accumulator dst)
                                        store C[r0 + ti, c0 + tj] x [sh, sw]

Partial tiles at the edges are padded: a tensor of 100x70 elements is 4x3 tiles in DRAM, the
padding is zero, and the product over it adds nothing. The accumulator's precision follows
`common.Numerics`. Refused, by name: an op that has no section form yet (NotLowered) and a
datatype or storage format the chip does not compute in (UnsupportedDatatype).

The function is replaced by `sp.entry` (its interface, by tensor name) and its sections, in
execution order. Running link again changes nothing: there is no tg op left to link.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from spatial_dialect import sp, tg
from spatial_dialect.passes.common import (
    TARGET_ATTR,
    Numerics,
    choose_target,
    record,
    recorded_target,
)
from spatial_dialect.passes.prelude import Layout as PreludeLayout
from spatial_dialect.passes.prelude import Prelude
from spatial_dialect.sp_attrs import AccessAttr, Layout, Phase, SizesAttr, TensorRole, loop_var
from spatial_dialect.sp_errors import NotLowered, UnsupportedDatatype
from spatial_dialect.targets import Target, TargetError

STORAGE_FORMATS = ("bf16", "bfp8_b", "bfp4_b")
"""What the `format` option may ask of bf16 tensors: bf16 itself or a Tensix block-float format."""

ELEMENT_TYPES: dict[str, Attribute] = {
    "bf16": BFloat16Type(),
    "f16": Float16Type(),
    "f32": Float32Type(),
    "i8": IntegerType(8),
    "i32": IntegerType(32),
}


def _names(function: func.FuncOp, ops: list[tg.TgOp]) -> dict[SSAValue, str]:
    """DRAM tensor names: the function's own value names where it has them, unique."""
    names: dict[SSAValue, str] = {}
    taken: set[str] = set()
    values = [*function.body.block.args, *(r for op in ops for r in op.results)]
    for i, v in enumerate(values):
        base = v.name_hint or (f"arg{i}" if i < len(function.body.block.args) else f"t{i}")
        name, n = base, 1
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        names[v] = name
    return names


@dataclass(frozen=True)
class SectionContext:
    """What linking one op needs besides the op: names, layouts, results, the chip, the format."""

    names: dict[SSAValue, str]
    prelude: Prelude
    results: frozenset[SSAValue]
    target: Target
    fmt: str

    def storage(self, dtype: str) -> str | None:
        """The storage format a tensor of `dtype` takes under the `format` option (bf16 only)."""
        return self.fmt if dtype == "bf16" and self.fmt != "bf16" else None

    def tensor(self, value: SSAValue, role: TensorRole) -> sp.TensorOp:
        t = value.type
        assert isinstance(t, TensorType)
        shape = t.get_shape()
        rows, cols = (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])
        tr, tc = self.target.tile_rows, self.target.tile_cols
        layout = Layout.TILED if self.prelude.layout(value) == PreludeLayout.TILED else Layout.ROWS
        if role == TensorRole.OUTPUT and value not in self.results:
            role = TensorRole.SCRATCH
        return sp.TensorOp(
            self.names[value],
            t,
            (-(-rows // tr), -(-cols // tc)),
            role,
            layout,
            self.storage(str(t.element_type)),
        )

    def check_dtype(self, op: Operation, dtype: str, matmul: bool) -> None:
        """Refuse a datatype (or storage format) the chip does not compute in, by name."""
        try:
            storage = self.storage(dtype) or dtype
            self.target.tile_bytes(storage)
            if matmul:
                self.target.matmul_tile_cycles(dtype)
        except TargetError as err:
            raise UnsupportedDatatype(f"{op.name}: {err}") from None


def link_matmul(op: tg.MatmulOp, ctx: SectionContext) -> sp.ProgramOp:
    a_t, c_t = op.a.type, op.res.type
    assert isinstance(a_t, TensorType) and isinstance(c_t, TensorType)
    in_dtype, out_dtype = str(a_t.element_type), str(c_t.element_type)
    ctx.check_dtype(op, in_dtype, matmul=True)
    ctx.check_dtype(op, out_dtype, matmul=False)
    acc_dtype = Numerics.of(ctx.target, in_dtype, out_dtype).acc
    a, b, c = (
        ctx.tensor(v, r)
        for v, r in (
            (op.a, TensorRole.INPUT),
            (op.b, TensorRole.INPUT),
            (op.res, TensorRole.OUTPUT),
        )
    )

    def fifo(label: str, tensor: sp.TensorOp, page: SizesAttr) -> sp.FifoOp:
        fmt = tensor.format.data if tensor.format else None
        buf = sp.FifoOp(
            label,
            SizesAttr.of(2),
            page,
            tensor.element_type,
            ctx.target.tile_bytes(tensor.storage),
            fmt,
        )
        buf.res.name_hint = label
        return buf

    in0 = fifo("in0", a, SizesAttr.of("h", "kw"))
    in1 = fifo("in1", b, SizesAttr.of("kw", "w"))
    out = fifo("out", c, SizesAttr.of("sh", "sw"))
    dst = sp.AccOp("dst", SizesAttr.of("sh", "sw"), ELEMENT_TYPES[acc_dtype])
    dst.res.name_hint = "dst"
    r0, c0, k0, ti, tj = (loop_var(v) for v in ("r0", "c0", "k0", "ti", "tj"))
    stages: list[Operation] = [
        sp.LoadOp(a.sym_name.data, AccessAttr.of(r0, k0, "h", "kw"), in0.res),
        sp.LoadOp(b.sym_name.data, AccessAttr.of(k0, c0, "kw", "w"), in1.res),
        sp.MatmulTilesOp(in0.res, in1.res, out.res, dst.res),
        sp.StoreOp(out.res, c.sym_name.data, AccessAttr.of(r0 + ti, c0 + tj, "sh", "sw")),
    ]
    tile = (ctx.target.tile_rows, ctx.target.tile_cols)
    return sp.ProgramOp(
        c.sym_name.data, op.name, Phase.LINKED, tile, [a, b, c, in0, in1, out, dst, *stages]
    )


LINKERS = {tg.MatmulOp: link_matmul}
"""The tg ops with a section form; the others arrive with the decoder-layer work."""


@dataclass
class LinkFunction(RewritePattern):
    """A function of tg ops becomes its interface and one section per op (the unit is the
    function: tensor names, layouts and the interface are decided for all its ops at once)."""

    target: Target
    fmt: str

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        body = list(op.body.walk())
        ops = [o for o in body if isinstance(o, tg.TgOp)]
        if not ops:
            return
        ret = op.body.block.last_op
        for o in body:
            if not isinstance(o, tg.TgOp | func.ReturnOp):
                raise NotLowered(f"{o.name} in @{op.sym_name.data}: link takes functions of tg ops")
        ctx = SectionContext(
            _names(op, ops),
            Prelude.of(op),
            frozenset(ret.operands if ret else ()),
            self.target,
            self.fmt,
        )
        sections: list[Operation] = []
        for o in ops:
            linker = LINKERS.get(type(o))
            if linker is None:
                raise NotLowered(
                    f"{o.name} has no section form yet (link lowers {', '.join(k.name for k in LINKERS)})"
                )
            sections.append(linker(o, ctx))
        entry = sp.EntryOp(
            op.sym_name.data,
            [ctx.names[a] for a in op.body.block.args],
            [ctx.names[v] for v in (ret.operands if ret else ())],
        )
        rewriter.replace(op, [entry, *sections], [])


@dataclass(frozen=True)
class LinkPass(ModulePass):
    """`link{target=NAME format=bf16 grid=XxY local-mem=BYTES}`: lower every tg function to
    sections and record the target (a preset name or a TOML file) and these options on the module:
    the storage format of bf16 tensors, the sub-grid of the mesh to use (tt-metal's compute grid)
    and the local-memory budget of a site (the target's configurable maximum by default)."""

    name = "link"
    target: str | None = None
    format: str = "bf16"
    grid: str | None = None
    local_mem: int | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.format not in STORAGE_FORMATS:
            raise UnsupportedDatatype(
                f"format {self.format}: bf16 tensors are stored as {', '.join(STORAGE_FORMATS)}"
            )
        op.attributes[TARGET_ATTR] = StringAttr(choose_target(op, self.target))
        extra = {
            "grid": self.grid,
            "local_mem": None if self.local_mem is None else str(self.local_mem),
        }
        record(op, format=self.format, **{k: v for k, v in extra.items() if v is not None})
        PatternRewriteWalker(
            LinkFunction(recorded_target(op, self.name), self.format), apply_recursively=False
        ).rewrite_module(op)
