"""link for tg.moe: the router, then each expert that may be read as GEMMs, maps and a combine.

    router    GEMM x @ router -> @y__logits (T x E, f32: routing ranks exact f32 logits)
    shared    GEMMs x @ shared_gate, x @ shared_up -> swiglu -> GEMM @ shared_down
              -> @y__shared (f32); with a gate weight: GEMM x @ shared_weight, map sigmoid ->
              @y__shared_scale, and moe_combine scales the shared expert by it
    per expert instance i (below):
      route   sp.route -> @y__weight<i> (T x 1 f32: each row's weight for the instance)
      gate    GEMM x @ w_gate[block] -> @y__gate<i>  (x's element type)
      up      GEMM x @ w_up[block]   -> @y__up<i>
      act     map swiglu             -> @y__act<i>
      down    GEMM act @ w_down[block] -> @y__down<i> (f32)
      combine map moe_combine: acc + down * weight -> @y__sum<i> (f32; the last one is @y, in
              x's element type)

The decision is which expert blocks a step reads (docs/passes.md#link-a-mixture-of-experts-reads-
only-what-it-routes-to), recorded on every expert GEMM as `moe`:

- gathered (T = 1, a decode step): instance i is the token's i-th chosen expert. A route
  section writes its id (@y__id<i>, i32) and the expert GEMMs load their B block by it, an
  indexed load (sp.load ... by @y__id<i> stride D/32): k experts' weights are read, never E.
- dense (T > 1): instance i is expert i, its B block at a fixed offset; its route weight is zero
  on the rows that did not choose it. Every expert is read once: E = min(E, T * k) when
  T * k >= E (a prefill). A step of 1 < T with T * k < E still reads E experts: the gathered
  form indexes one token's experts, and no form yet gathers per token.

A chip of the tensor-parallel `experts` plan (experts_held H < E: chip c holds experts
c x H .. c x H + H - 1, its stacked matrices H experts tall) gets an input `y__first` ([1, 1] i32,
chip c's value c x H) that the host supplies per chip (LinkContext.chip_first; the entry's
`mesh.chip_firsts`): SPMD sections are the same on every chip, so which experts a chip holds
must come from its data. Every route section reads it (sp.route `first ... held H`): ids count
from it (a pick the chip does not hold: id 0, weight 0), and the dense form's H instances are
experts first .. first + H - 1. A whole function holding fewer than E experts is refused.

An expert's blocks start at multiples of D (gate, up) and F (down) rows, which must be whole
tiles (NotLowered otherwise).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute
from xdsl.ir.affine import AffineExpr

from spatial_dialect import sp, tg
from spatial_dialect.passes.link.context import (
    BLOCK,
    C0,
    F32,
    K0,
    R0,
    ZERO,
    LinkContext,
    ProgramBuilder,
)
from spatial_dialect.passes.link.maps import map_section
from spatial_dialect.passes.link.matmul import gemm_section
from spatial_dialect.passes.numerics import Numerics
from spatial_dialect.sp import AccessAttr, Layout, Mode, RouteOp, SectionKind, TensorRole
from spatial_dialect.sp.errors import NotLowered

I32 = IntegerType(32)


def expert_bytes(ctx: LinkContext, op: tg.MoeOp) -> int:
    """The DRAM bytes of one expert's three matrices (gate, up, down) as stored."""
    _, d, _, f = op.sizes()
    dtype = str(op.elt(op.x))
    tiles = ctx.tiles(d, f)
    return 3 * tiles[0] * tiles[1] * ctx.target.tile_bytes(ctx.storage(dtype) or dtype)


def gathered(op: tg.MoeOp) -> bool:
    """The gathered form reads one token's k chosen experts (module docstring)."""
    return op.sizes()[0] == 1


def plan_reason(ctx: LinkContext, op: tg.MoeOp) -> str:
    """The `moe` decision with its numbers: which experts are read, their bytes, the other form's."""
    t, _, e, _ = op.sizes()
    k, h = op.top_k.value.data, op.held()
    each = expert_bytes(ctx, op)
    # a chip of the `experts` plan holds h of the e experts (c x h .. c x h + h - 1)
    chip = f" of this chip's {h} (experts c x {h} .. c x {h} + {h - 1})" if h < e else ""
    if gathered(op):
        return (
            f"gathered: T = 1 token reads its {k} of {e} experts{chip}, {k} x {each} = "
            f"{k * each} bytes; dense would read {h} x {each} = {h * each}"
        )
    return (
        f"dense: T = {t} tokens read every expert{chip} once, {h} x {each} = {h * each} bytes "
        f"(min(E, T*k) = min({e}, {t * k}) = {min(e, t * k)}); gathering would read "
        f"T*k = {t * k} experts"
    )


class MoeLinker:
    """The sections of one tg.moe, in execution order."""

    def __init__(self, op: tg.MoeOp, ctx: LinkContext):
        self.op, self.ctx = op, ctx
        self.t, self.d, self.e, self.f = op.sizes()
        self.y = ctx.names[op.res]
        t = op.x.type
        assert isinstance(t, TensorType)
        self.elt: Attribute = t.element_type
        self.dtype = str(self.elt)
        self.reason = plan_reason(ctx, op)
        self.held = op.held()
        self.sections: list[sp.ProgramOp] = []
        self.first: sp.TensorOp | None = None

    def check(self) -> None:
        if self.held < self.e and not self.ctx.per_chip:
            raise NotLowered(
                f"{self.op.name}: holds {self.held} of the router's {self.e} experts "
                "(experts_held, the tensor-parallel experts plan): a chip's share, which only a "
                "per-chip function over a mesh has"
            )
        tr = self.ctx.tile[0]
        for name, rows in (("w_gate and w_up", self.d), ("w_down", self.f)):
            if rows % tr:
                raise NotLowered(
                    f"{self.op.name}: the experts of {name} start every {rows} rows, not at whole "
                    f"{tr}-row tiles"
                )
        self.ctx.check_dtype(self.op, self.dtype, matmul=True)

    def scratch(self, what: str, cols: int, elt: Attribute, role: TensorRole) -> sp.TensorOp:
        return self.ctx.scratch(f"{self.y}__{what}", (self.t, cols), elt, role)

    def gemm(
        self,
        a: sp.TensorOp,
        b: sp.TensorOp,
        c: sp.TensorOp,
        b_rows: AffineExpr = ZERO,
        b_index: tuple[sp.TensorOp, int] | None = None,
        why: str | None = None,
    ) -> None:
        s = ProgramBuilder(self.ctx, self.op)
        for t in (a, b, c, *(b_index[:1] if b_index else ())):
            s.declare(t)
        in0, in1 = s.fifo("in0", a, "h", "kw"), s.fifo("in1", b, "kw", "w")
        acc = Numerics.of(self.ctx.target, self.dtype, str(c.element_type)).acc
        if why is not None:
            s.why("moe", why)
        index = (b_index[0].sym_name.data, b_index[1]) if b_index else None
        self.sections.append(gemm_section(s, a, b, c, in0, in1, acc, b_rows, index))

    def x(self) -> sp.TensorOp:
        return self.ctx.tensor(self.op.x, TensorRole.INPUT, Layout.TILED)

    def weight(self, value) -> sp.TensorOp:
        return self.ctx.tensor(value, TensorRole.INPUT, Layout.TILED)

    def route(self, logits: sp.TensorOp, pick: str, at: int, name: str) -> sp.TensorOp:
        """A route section writing one T x 1 column: an id (i32) or a weight (f32)."""
        elt = I32 if pick == "id" else F32
        s = ProgramBuilder(self.ctx, self.op)
        src = s.declare(self.scratch("logits", self.e, F32, TensorRole.INPUT))
        out_t = s.declare(self.scratch(name, 1, elt, TensorRole.SCRATCH))
        # the whole row of logits, read once per item: one page (512 experts' logits are 16
        # f32 tiles, which two pages would put over a GPU block's 99 KiB)
        in0 = s.fifo("in0", src, "h", "kw", depth=1)
        first = None
        if self.first is not None:
            s.declare(self.first)
            first = s.fifo("first", self.first, 1, 1)
        out = s.fifo("out", out_t, "h", 1)
        s.load(src, AccessAttr.of(R0, K0, "h", "kw"), in0)
        if self.first is not None and first is not None:
            s.load(self.first, AccessAttr.of(ZERO, ZERO, 1, 1), first)
        op = self.op
        s.stage(
            RouteOp(
                in0,
                out,
                op.top_k.value.data,
                op.scores.data,
                op.renormalized(),
                pick,
                at,
                self.e,
                self.t,
                first=first,
                held=self.held if first is not None else None,
            )
        )
        s.store(out, out_t, AccessAttr.of(R0, C0, "h", 1))
        self.sections.append(s.build(out_t.sym_name.data, SectionKind.ROUTE))
        return self.scratch(name, 1, elt, TensorRole.INPUT)

    def ffn(
        self,
        name: str,
        gate: sp.TensorOp,
        up: sp.TensorOp,
        down: sp.TensorOp,
        block: tuple[AffineExpr, AffineExpr] = (ZERO, ZERO),
        index: sp.TensorOp | None = None,
        why: str | None = None,
    ) -> sp.TensorOp:
        """One SwiGLU FFN over x: gate and up GEMMs, swiglu, the down GEMM into f32. `block`:
        the first tile rows of the gate/up and the down matrices; `index`: the id tensor an
        indexed load reads them by."""
        tr = self.ctx.tile[0]
        ff = gate.shape2d[1]
        dt, ft = self.d // tr, self.f // tr
        x = self.x()
        g_idx = (index, dt) if index is not None else None
        d_idx = (index, ft) if index is not None else None
        g = self.scratch(f"gate{name}", ff, self.elt, TensorRole.SCRATCH)
        u = self.scratch(f"up{name}", ff, self.elt, TensorRole.SCRATCH)
        self.gemm(x, gate, g, block[0], g_idx, why)
        self.gemm(x, up, u, block[0], g_idx, why)
        act = self.scratch(f"act{name}", ff, self.elt, TensorRole.SCRATCH)
        g_in, u_in = (
            self.scratch(n, ff, self.elt, TensorRole.INPUT) for n in (f"gate{name}", f"up{name}")
        )
        self.sections.append(
            map_section(
                self.ctx,
                self.op,
                "swiglu",
                [(g_in, Mode.FULL, BLOCK), (u_in, Mode.FULL, BLOCK)],
                act,
            )
        )
        act_in = self.scratch(f"act{name}", ff, self.elt, TensorRole.INPUT)
        o = self.scratch(f"down{name}", self.d, F32, TensorRole.SCRATCH)
        self.gemm(act_in, down, o, block[1], d_idx, why)
        return self.scratch(f"down{name}", self.d, F32, TensorRole.INPUT)

    def combine(
        self, name: str, x: sp.TensorOp, weight: sp.TensorOp, acc: sp.TensorOp | None, last: bool
    ) -> sp.TensorOp:
        """acc + x * weight into the running f32 sum, or into the result when `last`."""
        s = ProgramBuilder(self.ctx, self.op)
        if last:
            out = s.output(self.op.res, Layout.TILED)
        else:
            out = self.scratch(f"sum{name}", self.d, F32, TensorRole.SCRATCH)
        operands = [(x, Mode.FULL, BLOCK), (weight, Mode.COLS, AccessAttr.of(R0, ZERO, "h", 1))]
        if acc is not None:
            operands.append((acc, Mode.FULL, BLOCK))
        self.sections.append(map_section(self.ctx, self.op, "moe_combine", operands, out, s))
        return self.scratch(f"sum{name}", self.d, F32, TensorRole.INPUT)

    def link(self) -> list[sp.ProgramOp]:
        self.check()
        if self.held < self.e:  # a chip of the `experts` plan: its first held expert, an input
            self.first = self.ctx.chip_first(f"{self.y}__first", self.held)
        op = self.op
        logits = self.scratch("logits", self.e, F32, TensorRole.SCRATCH)
        self.gemm(self.x(), self.weight(op.router), logits)
        logits_in = self.scratch("logits", self.e, F32, TensorRole.INPUT)
        acc = self.shared()
        instances = op.top_k.value.data if gathered(op) else self.held
        tr = self.ctx.tile[0]
        gate, up, down = (self.weight(v) for v in (op.w_gate, op.w_up, op.w_down))
        for i in range(instances):
            last = i == instances - 1
            if gathered(op):
                ids = self.route(logits_in, "id", i, f"id{i}")
                weight = self.route(logits_in, "weight", i, f"weight{i}")
                why = f"slot {i}: {self.reason}"
                o = self.ffn(str(i), gate, up, down, index=ids, why=why)
            else:
                weight = self.route(logits_in, "expert", i, f"weight{i}")
                block = (
                    AffineExpr.constant(i * self.d // tr),
                    AffineExpr.constant(i * self.f // tr),
                )
                o = self.ffn(str(i), gate, up, down, block, why=f"expert {i}: {self.reason}")
            acc = self.combine(str(i), o, weight, acc, last)
        return self.sections

    def shared(self) -> sp.TensorOp | None:
        """The shared expert's output (scaled by its sigmoid gate where given): the running
        sum's start, or None."""
        op = self.op
        if not op.shared:
            return None
        parts = [op.shared_operand(r) for r in ("shared_gate", "shared_up", "shared_down")]
        o = self.ffn("_shared", *(self.weight(v) for v in parts))
        sw = op.shared_operand("shared_weight")
        if sw is None:
            return o
        logit = self.scratch("shared_logit", 1, F32, TensorRole.SCRATCH)
        self.gemm(self.x(), self.weight(sw), logit)
        scale = self.scratch("shared_scale", 1, F32, TensorRole.SCRATCH)
        logit_in = self.scratch("shared_logit", 1, F32, TensorRole.INPUT)
        self.sections.append(
            map_section(self.ctx, op, "sigmoid", [(logit_in, Mode.FULL, BLOCK)], scale)
        )
        scale_in = self.scratch("shared_scale", 1, F32, TensorRole.INPUT)
        return self.combine("_shared", o, scale_in, None, False)


def link_moe(op: tg.MoeOp, ctx: LinkContext) -> list[sp.ProgramOp]:
    return MoeLinker(op, ctx).link()


LINKERS = {tg.MoeOp: link_moe}
"""The ops this module links."""
