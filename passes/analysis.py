"""What several passes share, in one module that imports no pass (so no pass imports a later one).

- The module's target and options: the target is chosen once (link records it on the module)
  and every later pass reads it from there, so no two passes can plan for different chips. The
  pipeline options that change the target (`grid`) or the numbers (`fidelity`, `format`) are
  recorded next to it, and the report prints them.
- Phase gates: which sections a pass takes (`takes`, `sections_taken`).
- A GEMM section's view (`GemmView`: its matmul, the loads of A and B, the store), the plan tile
  recorded as the cost model's `GemmPlan`, and how it accumulates (`Numerics`).
- The footprint adapters (`buffer_bytes`, `memory_buffers`, `site_bytes`, `operand_fifos`): what
  size-buffers lays out is what tile and link price, so both call these.
- The engines assignment (`engines`): what tile's packing promised, place carries out.

A section's kind is recorded on it by link (`program.kind`); no pass asks its stages again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

from xdsl.dialects.builtin import (
    BFloat16Type,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    IntegerType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute

from spatial_dialect import sp, tg
from spatial_dialect.sp import COMPUTE_STAGES, EngineAttr, Phase, SectionKind
from spatial_dialect.sp.errors import InvalidTarget, SpatialPassError, TooManyEngines, WrongPhase
from spatial_dialect.targets import Target, TargetError, load_target
from spatial_dialect.targets.cost import GemmCost, GemmPlan, GemmShape, gemm_cost, plan_fits
from spatial_dialect.targets.gemm import divisors

ELEMENT_TYPES: dict[str, Attribute] = {
    "bf16": BFloat16Type(),
    "f16": Float16Type(),
    "f32": Float32Type(),
    "i8": IntegerType(8),
    "i32": IntegerType(32),
}
"""The element types by the names the target and the cost model use."""

TARGET_ATTR = "sp.target"
OPTIONS_ATTR = "sp.options"
DEFAULT_TARGET = "wormhole_n150"


# ── The module's target ───────────────────────────────────────────────────────────────────────


@lru_cache(maxsize=32)
def _load(name: str) -> Target:
    try:
        return load_target(name)
    except TargetError as err:
        raise InvalidTarget(str(err)) from None


def options(module: ModuleOp) -> dict[str, str]:
    attr = module.attributes.get(OPTIONS_ATTR)
    if not isinstance(attr, DictionaryAttr):
        return {}
    return {k: v.data for k, v in attr.data.items() if isinstance(v, StringAttr)}


def record(module: ModuleOp, **values: str) -> None:
    """Record pipeline options on the module (a later value of the same option replaces it)."""
    merged = options(module) | values
    module.attributes[OPTIONS_ATTR] = DictionaryAttr(
        {k: StringAttr(v) for k, v in sorted(merged.items())}
    )


def parse_grid(text: str) -> tuple[int, int]:
    try:
        x, y = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise InvalidTarget(f"grid must be XxY (e.g. 4x4), got {text!r}") from None
    return x, y


_UNITS = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "PB": 10**15,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
    "PIB": 2**50,
}


def parse_bytes(text: str | int, option: str) -> int:
    """Bytes written as an integer or with a unit: 400GB (10^9), 12GiB (2^30), 1.5TB."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        s = str(text).strip().replace("_", "")
        # A number, then a unit of letters (not str.rstrip with a set: that reads as a suffix).
        split = re.fullmatch(r"([0-9.eE+-]*?)\s*([A-Za-z]*)", s)
        number, unit = (split.group(1), split.group(2).upper()) if split else (s, "?")
        try:
            value = int(float(number) * _UNITS[unit]) if unit in _UNITS else -1
        except ValueError:
            value = -1
        if unit not in _UNITS:
            value = -1
    if value <= 0:
        raise InvalidTarget(
            f"{option} must be a positive number of bytes, optionally with a unit "
            f"(B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB), got {text!r}"
        )
    return value


class DramExceeded(SpatialPassError):
    """A program whose DRAM tensors do not fit the target's device memory."""

    def __init__(self, target: str, needed: int, capacity: int, largest: list[tuple[str, int]]):
        self.target, self.needed, self.capacity, self.largest = target, needed, capacity, largest
        top = ", ".join(f"{name} {human_bytes(b)}" for name, b in largest)
        super().__init__(
            f"DramExceeded: needs {human_bytes(needed)}, {target} has {human_bytes(capacity)} "
            f"(largest: {top}); dram-mem=BYTES overrides the capacity"
        )


def human_bytes(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 10**8 else f"{n / 1e6:.1f} MB" if n >= 10**5 else f"{n} B"


DRAM_ALIGN = 64
"""Every DRAM tensor starts at a multiple of this many bytes (one NoC word on Blackhole)."""


@dataclass(frozen=True)
class DramTensor:
    name: str
    offset: int
    bytes: int
    storage: str


def dram_layout(module: ModuleOp, target: Target) -> list[DramTensor]:
    """The program's DRAM tensors (every sp.tensor of its sections, one per name: a tensor one
    section writes and another reads is one tensor), in order of first declaration, each at its
    own offset: no two share space, even where one is dead before the other is born (a
    conservative layout; docs/passes.md#link-dram-layout). A tensor's bytes are its tiles at its
    storage format's tile bytes. The DRAM is interleaved page by page over the target's channels,
    so every tensor spans all of them; the layout is offsets only. In a module of several
    functions (one deployment, link/deployment.py) a name two functions use is one tensor at the
    largest size either declares: the functions run one at a time, so a name they do not share
    (a prefill's activation and a decode's) is one space the later reuses."""
    seen: dict[str, tuple[int, str]] = {}
    for program in module.walk():
        if not isinstance(program, sp.ProgramOp):
            continue
        for t in program.ops_of(sp.TensorOp):
            tm, tn = t.tiles
            try:
                tile = target.tile_bytes(t.storage)
            except TargetError:
                tile = 0  # link refuses such a tensor by its op
            size, storage = seen.get(t.sym_name.data, (0, t.storage))
            seen[t.sym_name.data] = (max(size, tm * tn * tile), storage)
    layout, offset = [], 0
    for name, (size, storage) in seen.items():
        layout.append(DramTensor(name, offset, size, storage))
        offset += -(-size // DRAM_ALIGN) * DRAM_ALIGN
    return layout


def check_dram(module: ModuleOp, target: Target) -> None:
    """DramExceeded where the layout does not fit the target's DRAM (none declared: unchecked)."""
    if target.dram_bytes is None:
        return
    layout = dram_layout(module, target)
    needed = layout[-1].offset + layout[-1].bytes if layout else 0
    if needed > target.dram_bytes:
        largest = sorted(layout, key=lambda t: -t.bytes)[:3]
        raise DramExceeded(
            target.name, needed, target.dram_bytes, [(t.name, t.bytes) for t in largest]
        )


def recorded_target_name(module: ModuleOp) -> str | None:
    attr = module.attributes.get(TARGET_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


def module_target(module: ModuleOp, pass_name: str) -> Target:
    """The target the module was linked for, for a pass after link: one that still holds tg ops
    is refused at the first of them."""
    refuse_unlinked(module, pass_name)
    return recorded_target(module, pass_name)


def recorded_target(module: ModuleOp, pass_name: str) -> Target:
    """The target recorded on the module, restricted to the recorded sub-grid and budget."""
    name = recorded_target_name(module)
    if name is None:
        raise WrongPhase(
            pass_name, Phase.LINKED.value, "unlinked (no target recorded: run link first)"
        )
    target = _load(name)
    recorded = options(module)
    try:
        if "grid" in recorded:
            target = target.with_grid(*parse_grid(recorded["grid"]))
        if "local_mem" in recorded:
            target = target.with_local_mem(int(recorded["local_mem"]))
        if "dram_mem" in recorded:
            target = target.with_dram_bytes(parse_bytes(recorded["dram_mem"], "dram-mem"))
    except (TargetError, ValueError) as err:
        raise InvalidTarget(str(err)) from None
    return target


def choose_target(module: ModuleOp, requested: str | None) -> str:
    """The target link records: the one asked for, the one already recorded, or the default.
    Asking for another target than the module was linked for is refused."""
    recorded = recorded_target_name(module)
    name = requested or recorded or DEFAULT_TARGET
    _load(name)
    if recorded is not None and recorded != name:
        raise InvalidTarget(
            f"the module is linked for target {recorded}; it cannot be re-linked for {name}"
        )
    return name


# ── Phases ────────────────────────────────────────────────────────────────────────────────────


def programs(module: ModuleOp) -> Iterator[sp.ProgramOp]:
    for op in module.walk():
        if isinstance(op, sp.ProgramOp):
            yield op


def takes(program: sp.ProgramOp, pass_name: str, expected: Phase) -> bool:
    """Whether `pass_name` (which takes `expected` programs) has work to do on `program`: False
    when it already ran (the pass is the identity on its own output), WrongPhase when the program
    has not reached `expected` yet."""
    phase = program.phase_value
    if phase.rank > expected.rank:
        return False
    if phase.rank < expected.rank:
        raise WrongPhase(pass_name, expected.value, phase.value)
    return True


def refuse_unlinked(module: ModuleOp, pass_name: str) -> None:
    """A pass after link refuses a module that still holds tg ops, at the first of them."""
    from spatial_dialect.tg import TgOp

    for op in module.walk():
        if isinstance(op, TgOp):
            err = WrongPhase(
                pass_name,
                Phase.LINKED.value,
                f"unlinked ({op.name} has no section yet; run link first)",
            )
            op.emit_error(str(err), err)


@contextmanager
def refusals_at(program: sp.ProgramOp) -> Iterator[None]:
    """Report a refusal raised while a pass works on `program` at the section, with the module
    printed around it (a refusal is never a bare traceback)."""
    try:
        yield
    except Exception as err:
        program.emit_error(str(err), err)


def sections_taken(module: ModuleOp, pass_name: str, expected: Phase) -> list[sp.ProgramOp]:
    """The sections `pass_name` has work on, in module order (`takes`): a whole-section pass walks
    these, deciding and building each under `refusals_at`. A section in an earlier phase is
    refused at the section."""
    taken = []
    for program in programs(module):
        with refusals_at(program):
            if takes(program, pass_name, expected):
                taken.append(program)
    return taken


# ── A GEMM section ──────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class GemmView:
    """The matmul of a section with its operands: the stage, the loads of A and B, the store."""

    matmul: sp.MatmulTilesOp
    load_a: sp.LoadOp
    load_b: sp.LoadOp
    store: sp.StoreOp

    @staticmethod
    def of(program: sp.ProgramOp) -> GemmView:
        name = program.sym_name.data
        matmul = program.one(sp.MatmulTilesOp)
        if matmul is None:
            raise SpatialPassError(f"section @{name} has no matmul_tiles stage")
        loads = {ld.dst: ld for ld in program.ops_of(sp.LoadOp)}
        stores = {st.src: st for st in program.ops_of(sp.StoreOp)}
        if matmul.in0 not in loads or matmul.in1 not in loads or matmul.out not in stores:
            raise SpatialPassError(
                f"section @{name}: a GEMM section loads both operands of its matmul_tiles and stores its output"
            )
        return GemmView(matmul, loads[matmul.in0], loads[matmul.in1], stores[matmul.out])

    def tensor(self, stage: sp.LoadOp | sp.StoreOp) -> sp.TensorOp:
        return self.matmul.program.tensor(stage.tensor.root_reference.data)

    def shape(self) -> GemmShape:
        a, b, c = self.tensor(self.load_a), self.tensor(self.load_b), self.tensor(self.store)
        # A B read transposed (matmul_tiles transpose_b) is stored N x K: the same bytes.
        (m, k), n = a.shape2d, tg.b_dims(b.shape2d, self.matmul.transposes_b)[1]
        # The datatype the chip computes in: the operand FIFO's (an integer operand may convert
        # on load to the precision link chose from its interval), or for Q8_0 operands the type
        # the compute stage widens them to (link/quant.py; without one, the int8 dot).
        widened = self.matmul.dequantize
        in_dtype = str(widened or sp.buffer_of(self.matmul.in0).elt)
        b_fmt = b.format.data if b.format and b.format != a.format else None
        return GemmShape(
            m,
            k,
            n,
            in_dtype,
            str(c.element_type),
            fmt=a.format.data if a.format else None,
            b_fmt=b_fmt,
        )


def gemm_plan(program: sp.ProgramOp) -> GemmPlan:
    """The cost model's plan of a tiled section, exactly as tile priced it (an operand the plan does
    not multicast is read by each site; where no two sites share it the choice costs nothing)."""
    plan, work = program.one(sp.PlanOp), program.one(sp.WorkOp)
    assert plan is not None and work is not None
    grid = plan.grid
    if plan.streaming:
        return GemmPlan.streaming_plan(*grid)
    operands = plan.multicast_operands
    return GemmPlan(
        *grid,
        *work.block,
        *plan.sub_block,
        work.k_block,
        mcast_a="a" in operands,
        mcast_b="b" in operands,
        line=plan.is_line,
        split_k=work.k_slices,
        split_axis=work.split_axis or "y",
    )


ACCUMULATE = ("f32", "bf16")
"""The values of the `accumulate` option (docs/passes.md#tile-f32-accumulation-by-contract): `f32`,
the tg contract, is the default; `bf16` asks for the 16-bit accumulator where a chip has one."""


@dataclass(frozen=True)
class Numerics:
    """How a GEMM section accumulates: the accumulator's precision, and whether the output is
    accumulated in place.

    The tg contract (docs/tg.md#numerics-of-the-reference-semantics) says a float matmul
    accumulates in f32, and that is what every chip does by default: a register accumulator (GPU
    fragments, RDU pipeline registers) always, Tensix dest in its fp32 mode (tt-metal's
    fp32_dest_acc_en), which holds half the tiles of its 16-bit mode. Integer products
    accumulate in i32. `accumulate="bf16"` is the fast mode on a chip with a 16-bit accumulator
    (Tensix dest): a 16- or block-float-operand GEMM whose operands and result are not f32 then
    accumulates in the operands' 16-bit type, rounding after every tile-matmul, with twice the
    sub-block. Partial sums spill between K blocks at the accumulator's precision, and where that
    is the output's type they accumulate in the output FIFO itself (the interm and output
    circular buffers share memory when their formats agree), so no separate spill buffer exists.
    """

    acc: str
    in_place: bool

    @staticmethod
    def of(target: Target, in_dtype: str, out_dtype: str, accumulate: str = "f32") -> Numerics:
        if in_dtype.startswith("i"):
            acc = "i32"
        elif (
            accumulate == "bf16"
            and not target.acc_in_registers
            and "f32" not in (in_dtype, out_dtype)
        ):
            acc = in_dtype
        else:
            acc = "f32"
        return Numerics(acc, acc == out_dtype)

    @staticmethod
    def of_section(program: sp.ProgramOp) -> Numerics:
        """The numerics a GEMM section was planned with, read off its accumulator and its result."""
        view = GemmView.of(program)
        acc = str(sp.buffer_of(view.matmul.acc).elt)
        return Numerics(acc, acc == str(view.tensor(view.store).element_type))

    @property
    def narrow(self) -> bool:
        """A 16-bit accumulator (accumulate=bf16 on a chip that has one), where the contract's is
        32-bit (f32, i32)."""
        return self.acc not in ("f32", "i32")

    @property
    def exact(self) -> bool:
        # Where the output is not the accumulator's type, partial sums spill at the accumulator's
        # 32-bit precision (f32 or i32), which the footprint and the cost model call exact.
        return not self.in_place

    def cost(self, target: Target, shape: GemmShape, plan: GemmPlan, fidelity: str) -> GemmCost:
        return gemm_cost(target, shape, plan, fidelity, in_place=self.in_place, exact=self.exact)

    def fits(self, target: Target, shape: GemmShape, plan: GemmPlan) -> bool:
        return plan_fits(target, shape, plan, in_place=self.in_place, exact=self.exact)


def section_cost(program: sp.ProgramOp, target: Target, fidelity: str) -> GemmCost:
    """The cost model's prediction for a tiled section's plan, as tile ranked it (with the
    numerics its accumulator records)."""
    shape = GemmView.of(program).shape()
    return Numerics.of_section(program).cost(target, shape, gemm_plan(program), fidelity)


def dram_tile_bytes(target: Target, t: sp.TensorOp, storage: str | None = None) -> int:
    """The DRAM bytes one tile of `t` moves (`Target.dram_tile_bytes`), in its storage or in the
    `storage` a FIFO converts it to on load: a `rows` tensor of fewer rows than a tile moves its
    rows (a decode step's vectors, the split partials of flash decoding)."""
    rows = t.shape2d[0] if t.layout.data is sp.Layout.ROWS else None
    return target.dram_tile_bytes(storage or t.storage, rows)


# ── Footprints ────────────────────────────────────────────────────────────────────────────────


def memory_buffers(program: sp.ProgramOp) -> list[sp.MemoryBufferOp]:
    return [b for b in program.buffers() if isinstance(b, sp.MemoryBufferOp)]


def operand_fifos(program: sp.ProgramOp) -> list[sp.FifoOp]:
    """The FIFOs the section's loads fill (what size-buffers deepens), each once."""
    fifos = [sp.buffer_of(ld.dst) for ld in program.ops_of(sp.LoadOp)]
    return [f for f in dict.fromkeys(fifos) if isinstance(f, sp.FifoOp)]


def buffer_bytes(
    buffers: Sequence[sp.MemoryBufferOp],
    bindings: dict[str, int],
    depths: dict[sp.MemoryBufferOp, int] | None = None,
) -> int:
    """Bytes of a site's buffers (a section's `memory_buffers`) under the size symbols
    `bindings`: what size-buffers lays out, and what tile prices a candidate plan of a stream
    section with (one function for both)."""
    total = 0
    for buf in buffers:
        if buf.alias is None:
            depth = (depths or {}).get(buf) or buf.depth.resolve(bindings)[0]
            total += depth * buf.page_tiles(bindings) * buf.tile_bytes
    return total


def site_bytes(
    program: sp.ProgramOp, r: sp.SitesOp, depths: dict[sp.MemoryBufferOp, int] | None = None
) -> int:
    """Bytes of one site of range `r` (aliases share their target's), at `depths` where given,
    else at the range's own (`SitesOp.depth_of`)."""
    bindings = r.bindings(k_block(program))
    buffers = memory_buffers(program)
    if depths is None:
        depths = {buf: r.depth_of(buf, bindings) for buf in buffers}
    return buffer_bytes(buffers, bindings, depths)


def k_block(program: sp.ProgramOp) -> int:
    work = program.one(sp.WorkOp)
    assert work is not None, "a tiled section has its work"
    return work.k_block


def largest_divisor(n: int, at_most: int) -> int:
    """The largest d <= at_most that divides n."""
    if at_most * at_most > n:  # through the divisors: O(sqrt n)
        return max(d for d in divisors(n) if d <= at_most)
    return next(d for d in range(min(n, at_most), 0, -1) if n % d == 0)


# ── Engines ───────────────────────────────────────────────────────────────────────────────────


def partner_loads(program: sp.ProgramOp) -> set[sp.LoadOp]:
    """The loads the plan's packing moves off the loads' engine: a GEMM's B (tt-metal's in1,
    which pairs with the writer or has its own engine), a flash attention's queries and
    position (they join the store's engine, so the engine streaming K and V never waits)."""
    if program.kind is SectionKind.GEMM:
        return {GemmView.of(program).load_b}
    if program.kind is SectionKind.ATTENTION:
        attention = program.one(sp.AttentionOp)
        assert attention is not None
        joined = {v for v in (attention.q, attention.pos) if v is not None}
        return {ld for ld in program.ops_of(sp.LoadOp) if ld.dst in joined}
    return set()


def engines(target: Target, program: sp.ProgramOp) -> dict[sp.StageOp, EngineAttr]:
    """Each stage's engine and NoC: a compute stage on the compute engine; the store (and a
    scatter) on movement engine 0 with the writer NoC; loads (and a gather) on movement engine 1
    with the receiver NoC, except the packing's partner loads (`partner_loads`): on their own
    engine 2 under `split`, on the store's under `operand_with_store`. With one movement engine
    everything moves on it (`single`); a section that moves data on a target with none is
    refused (TooManyEngines)."""
    plan = program.one(sp.PlanOp)
    assert plan is not None
    n = target.movement_engines
    store_engine = EngineAttr.movement(0, target.writer_noc)
    load_engine = EngineAttr.movement(1, target.receiver_noc) if n >= 2 else store_engine
    partner_engine = {
        "split": EngineAttr.movement(2, target.receiver_noc),
        "operand_with_store": store_engine,
        "single": store_engine,
    }[plan.packing.data]
    partners = partner_loads(program)
    out: dict[sp.StageOp, EngineAttr] = {}
    for s in program.stages():
        if isinstance(s, (sp.MatmulTilesOp, *COMPUTE_STAGES)):
            out[s] = EngineAttr.compute()
        elif n == 0:
            raise TooManyEngines(s.stage_name(), "movement engine 0", 0)
        elif isinstance(s, sp.StoreOp | sp.ScatterOp):
            out[s] = store_engine
        else:
            out[s] = partner_engine if s in partners else load_engine
    return out
