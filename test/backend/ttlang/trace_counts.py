"""What a traced tt-lang-sim run did, per section, counted the way the cost model counts it, and
what the cost model prices for the same section (docs/backend-ttlang.md, "Traces against
prices").

- `operations(traced)`: the trace cut into the host program's operations; `traced_sections`
  pairs them with the sections (the printer prints one `ttl.operation` per section in the
  module's order, but a lone gather or scatter, a host step between operations: a ttnn op on a
  chip, torch on the tensors under tt-lang-sim, so nothing of it is traced).
- `counted(events)`: one operation's tiles read from DRAM per tensor (`copy_start` from a
  Tensor: its `dram`), tiles written per tensor, tiles through pipes per family (a rectangle
  destination is a multicast, one core a unicast: the printer's `line` groups and uneven members
  are unicast pipes; split-K's hand-over, slice to slice, is the family `partials`, named by
  `partials_pipes` from the plan), and its compute: `tile_matmul` (m x k x n tiles of each
  block product) and `tile_op` (the tiles of every other block expression; a reduction's input
  tiles) from runner.COMPUTE_HOOK. The printer's constant tables (`_eye_*`, `_rope_*`, ...:
  host tensors whose names start with `_`) are counted apart: no plan prices them.
- `price(module, section)`: the same quantities as the cost model has them for the plan the
  section records. A GEMM through gemm_quantities (passes/gemm_view.py gemm_plan); any other
  section through passes/stream_plans.py's StreamPlanner at the section's own block (its
  `tiles_per_item` per movement: the one count pricing sums).
- `node_buffers(traced, section, op)`: per node of the grid, the DataflowBuffers the operation
  declares and the bytes of those its kernels use, beside what size-buffers laid out for its
  site.
- `differences(...)`: the two compared, after the printer's own forms, each stated once below
  (`pipe_receipts`, `printed_matmuls`, `printed_selectors`, `printed_l1`, `splitk_l1`,
  `combine_selector_matmuls`, `combine_l1`): what the printed program does that no price
  includes, in its own function so that a printer change that removes it (e.g. the split-K
  rings and FIFOs a slice leaves unused) shows here.

Split-K (tools/backend/ttlang/splitk.py) is a GEMM priced by its GemmPlan, its hand-over the
model's one accumulator tile per output tile per slice after the first (`partials`). Flash
decoding's `sp.attention ... splits P` and `sp.attention_combine` are stream sections priced by
their stream plans; the combine's selector products (flash.py) are stated, not priced.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace

from spatial_dialect import sp


def sections(module) -> list[sp.ProgramOp]:  # noqa: ANN001
    return [op for op in module.walk() if isinstance(op, sp.ProgramOp)]


def operations(traced) -> list[list[dict]]:  # noqa: ANN001
    """The events of each operation the host ran, in order (an operation starts on every node at
    once and ends on every node before the next starts)."""
    ops: list[list[dict]] = []
    previous = None
    for e in traced.events:
        ev = e["event"]
        if ev == "operation_start" and previous != "operation_start":
            ops.append([])
        if ops:
            ops[-1].append(e)
        if ev in ("operation_start", "operation_end"):
            previous = ev
    return ops


def traced_sections(module, traced) -> list[tuple[sp.ProgramOp, int | None, list[dict]]]:  # noqa: ANN001
    """Each section with its operation's number (DFB_HOOK's) and events, or (None, []) for a host
    step (tools/backend/ttlang/indexed.py host_step: a lone gather or scatter, run between the
    operations by a ttnn op; the simulator's trace has nothing of it)."""
    from spatial_dialect.tools.backend.ttlang.indexed import host_step

    ops = operations(traced)
    out: list[tuple[sp.ProgramOp, int | None, list[dict]]] = []
    n = 0
    for i, sec in enumerate(sections(module)):
        if host_step(sec, i) is not None:
            out.append((sec, None, []))
            continue
        out.append((sec, n, ops[n]))
        n += 1
    assert n == len(ops), f"{len(ops)} operations traced, {n} sections print one"
    return out


@dataclass
class Counted:
    dram_read: dict[str, int]  # tensor name (without t_) -> tiles read from DRAM
    dram_written: dict[str, int]
    constants: dict[str, int]  # the printer's constant tables: tiles read
    pipe_sent: dict[str, int]  # family (multicast / unicast / partials) -> tiles sent
    pipe_received: dict[str, int]
    tile_matmuls: int  # products of the plan's operands
    selector_matmuls: int  # products with an operand from a constant table (selectors, ...)
    tile_ops: int

    @property
    def pipe_tiles(self) -> int:
        return sum(self.pipe_received.values())


def _family(pipe: str) -> str:
    """`pipe_(x,y)_to_(a:b,c)`: a slice in the destination is a rectangle (multicast)."""
    return "multicast" if ":" in pipe.split("_to_", 1)[1] else "unicast"


def constant_dfbs(events: list[dict]) -> set[str]:
    """The DFBs a kernel fills from one of the printer's constant tables (a tensor not named
    `t_*`): in a kernel, a copy fills the DFB it reserved last."""
    reserved: dict[str, str] = {}
    out = set()
    for e in events:
        if e["event"] == "dfb_reserve_end" and e.get("kernel"):
            reserved[e["kernel"]] = e["dfb"]
        elif e["event"] == "copy_start" and e.get("src") == "Tensor":
            if not e["tensor"].startswith("t_") and e["kernel"] in reserved:
                out.add(reserved[e["kernel"]])
    return out


def counted(events: list[dict], partials: set[str] = frozenset()) -> Counted:
    """`partials`: the trace's names of split-K's hand-over pipes (`partials_pipes`), counted as
    their own family."""
    constant = constant_dfbs(events)
    read: Counter[str] = Counter()
    written: Counter[str] = Counter()
    constants: Counter[str] = Counter()
    sent: Counter[str] = Counter()
    received: Counter[str] = Counter()
    matmuls = selectors = ops = 0
    for e in events:
        ev = e["event"]
        if ev == "copy_start" and e.get("src") == "Tensor":
            name = e["tensor"]
            if name.startswith("t_"):
                read[name.removeprefix("t_")] += e["dram"]
            else:
                constants[name] += e["dram"]
        elif ev == "copy_start" and e.get("dst") == "Tensor":
            written[e["tensor"].removeprefix("t_")] += e["dram"]
        elif ev in ("pipe_send", "pipe_recv"):
            family = "partials" if e["pipe"] in partials else _family(e["pipe"])
            (sent if ev == "pipe_send" else received)[family] += e["tiles"]
        elif ev == "tile_matmul" and constant.intersection(e["operands"]):
            selectors += e["tiles"]
        elif ev == "tile_matmul":
            matmuls += e["tiles"]
        elif ev == "tile_op":
            ops += e["tiles"]
    return Counted(
        dict(read),
        dict(written),
        dict(constants),
        dict(sent),
        dict(received),
        matmuls,
        selectors,
        ops,
    )


@dataclass
class Price:
    """What the cost model prices for one section's plan, in the trace's units."""

    kind: str
    dram_read: dict[str, int]
    dram_written: dict[str, int]
    pipe_received: dict[str, int]  # family -> tiles delivered through pipes (split-K: partials)
    tile_matmuls: float  # whole tiles
    vector_tiles: float  # vector instructions per element x the elements of whole tiles
    detail: dict = field(default_factory=dict)  # the model's own objects (GemmQuantities ...)


def _name(section: sp.ProgramOp, stage) -> str:  # noqa: ANN001
    return section.tensor(stage.tensor.root_reference.data).sym_name.data


def price(module, section: sp.ProgramOp) -> Price:  # noqa: ANN001
    """The target is the module's recorded one (its sub-grid and budget), as tile priced it."""
    from spatial_dialect.passes.target_choice import recorded_target

    # Whole tiles: the model charges a tile of few real rows its row passes only
    # (row_pass_fraction); the trace counts the tiles a kernel hands the engines.
    recorded = recorded_target(module, "trace counts")
    target = replace(recorded, matmul_row_pass=recorded.tile_rows)
    if section.one(sp.MatmulTilesOp) is not None:
        return _gemm_price(target, section)
    return _stream_price(target, section)


def _gemm_price(target, section: sp.ProgramOp) -> Price:  # noqa: ANN001
    from spatial_dialect.passes.gemm_view import GemmView, gemm_plan
    from spatial_dialect.passes.numerics import Numerics
    from spatial_dialect.targets.quantities import gemm_quantities

    view = GemmView.of(section)
    shape = view.shape()
    plan = gemm_plan(section)
    q = gemm_quantities(target, shape, plan)
    cost = Numerics.of_section(section).cost(target, shape, plan, "hifi4")
    a, b, c = _name(section, view.load_a), _name(section, view.load_b), _name(section, view.store)
    read = Counter({a: q.a_tiles_dram})
    read[b] += q.b_tiles_dram
    pipes = {"line" if q.line else "multicast": q.noc_tile_hops} if q.noc_tile_hops else {}
    if q.k_slices > 1:
        # the hand-over noc_tiles adds (targets/quantities.py gemm_quantities): every output
        # tile's partial sums, once per slice after the first
        pipes["partials"] = (q.k_slices - 1) * shape.mt * shape.nt
    return Price(
        "gemm",
        dict(read),
        {c: q.c_tiles_written},
        pipes,
        q.tile_matmuls,
        0.0,
        {
            "q": q,
            "cost": cost,
            "shape": shape,
            "plan": plan,
            "tile_bytes": shape.operand_tile_bytes(target),
            "out_tile_bytes": shape.out_tile_bytes(target),
        },
    )


def _stream_price(target, section: sp.ProgramOp) -> Price:  # noqa: ANN001
    from spatial_dialect.passes.stream_plans import Candidate, StreamPlanner
    from spatial_dialect.sp import IndexedStage
    from spatial_dialect.targets.stream_cost import VECTOR_OPS

    planner = StreamPlanner(section, target)
    r = section.ops_of(sp.SitesOp)[0]
    (h, w), (sh, sw) = r.block, r.sub_block
    c = Candidate(h, w, sh, sw, section.one(sp.WorkOp).k_block)
    items = planner.items(c)
    stages = [s for s in section.stages() if isinstance(s, sp.LoadOp | sp.StoreOp | IndexedStage)]
    read: Counter[str] = Counter()
    written: Counter[str] = Counter()
    for s, m in zip(stages, planner.movements, strict=True):
        (read if m.reads else written)[_name(section, s)] += items * planner.tiles_per_item(m, c)
    q = planner.quantities(c)
    tile_elems = planner.tile_elems
    return Price(
        planner.kind,
        dict(read),
        dict(written),
        {},
        items * q.tile_matmuls,
        items * q.elements * VECTOR_OPS[q.kind] / tile_elems,
        {"q": q, "candidate": c},
    )


@dataclass
class NodeBuffers:
    site: tuple[int, int]
    declared: int  # DFBs the operation declares on the node
    used_bytes: int  # bytes of the DFBs its kernels reserve or wait on (but the constants')
    constant_bytes: int  # bytes of the DFBs it fills from the printer's constant tables
    laid_out: int  # bytes size-buffers laid out for its site (memory map spans, aliases once)
    aliased: int  # bytes of buffers size-buffers laid over another (a spill in the output FIFO)


def node_buffers(traced, section: sp.ProgramOp, op: int = 0, events=None) -> list[NodeBuffers]:  # noqa: ANN001
    """Per site of the section: operation `op`'s DFBs (DFB_HOOK numbers operations from 0) and
    the bytes of those its kernels use (in `events`, the operation's; default all)."""
    mesh = section.one(sp.MeshOp)
    work = section.one(sp.WorkOp)
    gx, gy = mesh.size
    mine = [d for d in traced.dfbs if d["op"] == op]
    by_name = {d["dfb"]: d for d in mine}
    used: dict[int, set[str]] = defaultdict(set)
    for e in traced.events if events is None else events:
        if e.get("dfb") in by_name and e.get("kernel"):
            used[int(e["kernel"].split("-")[0].removeprefix("node"))].add(e["dfb"])
    declared = Counter(d["node"] for d in mine if d["node"] is not None)
    constants = constant_dfbs(traced.events if events is None else events)
    out = []
    for r in section.ops_of(sp.SitesOp):
        b = r.bindings(work.k_block)
        offsets = r.offsets()
        spans, aliased = set(), 0
        for buf in section.buffers():
            if isinstance(buf, sp.AccOp) or buf.label.data not in offsets:
                continue
            if buf.alias_of is not None:
                aliased += r.bytes_of(buf, b)
                continue
            spans.add((offsets[buf.label.data], r.bytes_of(buf, b)))
        laid_out = sum(n for _, n in spans)
        for x, y in r.rect.sites():
            node = x * gy + y  # the simulator's linear node index (ttl.node: y fastest)
            out.append(
                NodeBuffers(
                    (x, y),
                    declared[node],
                    sum(by_name[n]["bytes"] for n in used[node] - constants),
                    sum(by_name[n]["bytes"] for n in used[node] & constants),
                    laid_out,
                    aliased,
                )
            )
    return out


# ── What the printed program does beyond its plan, by kind (docs/backend-ttlang.md, "Traces
# against prices"): each difference between trace and price is one of these, stated here once.


def _count_at(section: sp.ProgramOp, site: tuple[int, int]) -> int:
    return next((r.count for r in section.ops_of(sp.SitesOp) if site in r.rect.sites()), 0)


def pipe_receipts(section: sp.ProgramOp) -> tuple[dict[str, int], int]:
    """(tiles received per pipe family as printed, the tiles the model's multicast delivers).
    The printer (section.py emit_pipes) prints a family as one rectangle multicast pipe per
    group where every group is a rectangle whose members all run as many items as the sender;
    otherwise (a line folded onto the mesh, members with fewer items) one unicast pipe per
    member, and a member receives only the blocks of the items it runs. The model multicasts
    each of the sender's blocks to every member (noc_tile_hops)."""
    work = section.one(sp.WorkOp)
    printed: Counter[str] = Counter()
    model = 0
    for g in section.ops_of(sp.GroupOp):
        a = g.buffer == section.one(sp.MatmulTilesOp).in0  # A shared along a row, else B
        families = list(g.groups())
        uniform = g.axis.data != sp.GroupAxis.LINE
        got = sent = 0
        for sender, members in families:
            r = next(r for r in section.ops_of(sp.SitesOp) if sender in r.rect.sites())
            b = r.bindings(work.k_block)
            # the shared operand's tiles of an item: its K slice's
            per_item = (b["h"] if a else b["w"]) * work.k_slice_tiles
            rest = [m for m in members if m != sender]
            uniform &= len({_count_at(section, m) for m in members}) == 1
            xs, ys = {m[0] for m in rest}, {m[1] for m in rest}
            rect = len(rest) == len(xs) * len(ys) and (
                not rest or (max(xs) - min(xs) + 1) * (max(ys) - min(ys) + 1) == len(rest)
            )
            uniform &= rect
            got += sum(_count_at(section, m) for m in rest) * per_item
            sent += r.count * len(rest) * per_item
        if got:
            printed["multicast" if uniform else "unicast"] += got
        model += sent
    if handed := partials_receipts(section):
        printed["partials"] = handed
    return dict(printed), model


def partials_receipts(section: sp.ProgramOp) -> int:
    """Split-K's hand-over as printed (splitk.py): every site of a slice s > 0 receives, per item
    it runs, the item's block of partial sums (`subs` pages of sh x sw: h x w tiles) from the
    site of slice s - 1 that runs the same block."""
    work = section.one(sp.WorkOp)
    if work.k_slices == 1:
        return 0
    space = section.item_space()
    total = 0
    for r in section.ops_of(sp.SitesOp):
        b = r.bindings(work.k_block)
        x0, _, y0, _ = r.rect.bounds
        if space.k_slice(r.first_item(x0, y0)) > 0:
            total += sum(len(r.items(x, y)) for x, y in r.rect.sites()) * b["h"] * b["w"]
    return total


def printed_matmuls(section: sp.ProgramOp, p: Price) -> float:
    """Tile-matmuls of the plan's operands the printed program performs. The delta rule's
    triangular solve is priced as C^3 tile-matmuls a chunk of C tile rows; the printer solves it
    by forward substitution, one C x C x C product per row after the first (32 C - 1 of them)."""
    if section.kind is sp.SectionKind.GATED_DELTA:
        c = p.detail["candidate"]
        q = p.detail["q"]
        rows = section.tile[0] * c.kw
        return p.tile_matmuls + q.items * q.steps * (rows - 2) * c.kw**3
    return p.tile_matmuls


# Kinds whose printed form multiplies by constant tables, work no price includes (counted apart
# by `counted`): rope's half-table duplication and rotation (cos @ D, sin @ D, x @ P),
# attention's head selectors (q @ C_j), the causal convolution's shift and tap selectors, the
# delta rule's row masks, flash decoding's combine (m and l moved out of a partials tile:
# `combine_selector_matmuls`). (A GEMM has none: a block of several sub-blocks is computed
# whole.)
SELECTOR_KINDS = {
    "rope",
    "attention",
    "attention_combine",
    "causal_conv",
    "gated_delta",
}


# Kinds whose printed form reads constant tables from DRAM (unpriced): those with selectors,
# and arg-max's and the router's column indices and padding masks (elementwise operands).
CONSTANT_KINDS = SELECTOR_KINDS | {"argmax", "route"}


def printed_selectors(section: sp.ProgramOp, p: Price) -> int | None:
    """The selector products the printed program performs, where stated exactly (None: some,
    of a kind in SELECTOR_KINDS)."""
    if section.kind is sp.SectionKind.ATTENTION_COMBINE:
        return combine_selector_matmuls(section)
    return None if section.kind.value in SELECTOR_KINDS else 0


def combine_selector_matmuls(section: sp.ProgramOp) -> int:
    """Flash decoding's combine (flash.py): per item, of a `[1, w]` page of partials, and per
    split, `U_m @ X` and `U_l @ X` (1 x 1 x w each: rows 2 and 3, where the split spreads m
    and l, into every row) and `Z @ X` (1 x 1 x w: row 0's O), 3 w tile products (a block of
    several sub-blocks is pushed whole: no selector). TT-Lang has no scalar read and no slice
    of a block, so the printer moves m
    and l with products; the model prices the combine's exp and sums (vector work) and no
    products. Exact (one nonzero term per sum)."""
    work = section.one(sp.WorkOp)
    splits = section.one(sp.AttentionCombineOp).splits
    total = 0
    for r in section.ops_of(sp.SitesOp):
        b = r.bindings(work.k_block)
        w = b["w"]
        items = sum(len(r.items(x, y)) for x, y in r.rect.sites())
        total += items * splits * 3 * w
    return total


def combine_l1(section: sp.ProgramOp, site: tuple[int, int]) -> int:
    """The combine's constant DFBs on a site (flash.py; f32, block_count 1, not in the sized IR):
    U_m, U_l and Z (a tile each, whatever the block's width)."""
    return 3 * 4096


def argmax_l1(section: sp.ProgramOp, site: tuple[int, int]) -> int:
    """arg-max's constant DFBs on a site (indexed.py; f32, block_count 1, held over an item):
    one K block's column indices (kw tiles), a tile of the block width where there are several
    K blocks, a tile of the last block's real columns where it has padding."""
    work = section.one(sp.WorkOp)
    r = next(r for r in section.ops_of(sp.SitesOp) if site in r.rect.sites())
    kw, cols = work.k_block, section.one(sp.ArgmaxOp).cols
    last = cols - (work.k_tiles // kw - 1) * 32 * kw
    return (kw + (work.k_tiles > kw) + (last < 32 * kw)) * 4096 if r.count else 0


def constant_l1(section: sp.ProgramOp, site: tuple[int, int]) -> int | None:
    """The bytes of constant DFBs a site holds, where stated (None: not stated for the kind)."""
    if section.one(sp.MatmulTilesOp) is not None:
        return 0  # a block of several sub-blocks is computed whole: no selector
    if section.kind is sp.SectionKind.ATTENTION_COMBINE:
        return combine_l1(section, site)
    if section.one(sp.ArgmaxOp) is not None:
        return argmax_l1(section, site)
    return None


def differences(traced, section: sp.ProgramOp, op: int, events: list[dict], p: Price) -> list[str]:  # noqa: ANN001
    """What operation `op`'s trace does that the price `p` and the printer's stated forms do not
    account for ([] when every count agrees)."""
    c = counted(events, partials_pipes(section))
    name = f"@{section.sym_name.data} ({p.kind})"
    out = []
    if c.dram_read != p.dram_read:
        out.append(f"{name}: DRAM reads {c.dram_read}, priced {p.dram_read}")
    if c.dram_written != p.dram_written:
        out.append(f"{name}: DRAM writes {c.dram_written}, priced {p.dram_written}")
    pipes, multicast = pipe_receipts(section)
    model = {f: n for f, n in p.pipe_received.items() if f != "partials"}
    if sum(model.values()) != multicast:
        out.append(f"{name}: the model's multicast {model}, the IR's {multicast}")
    if p.pipe_received.get("partials", 0) != pipes.get("partials", 0):
        out.append(
            f"{name}: split-K hand-over priced {p.pipe_received.get('partials', 0)} tiles, "
            f"the IR's {pipes.get('partials', 0)}"
        )
    if c.pipe_sent.get("partials", 0) != c.pipe_received.get("partials", 0):
        out.append(f"{name}: partials sent {c.pipe_sent}, received {c.pipe_received}")
    if c.pipe_received != pipes:
        out.append(f"{name}: pipe tiles {c.pipe_received}, printed form {pipes}")
    if c.tile_matmuls != printed_matmuls(section, p):
        out.append(f"{name}: tile-matmuls {c.tile_matmuls}, priced {printed_matmuls(section, p)}")
    selectors = printed_selectors(section, p)
    if selectors is not None and c.selector_matmuls != selectors:
        out.append(f"{name}: selector tile-matmuls {c.selector_matmuls}, stated {selectors}")
    if c.constants and not (selectors or section.kind.value in CONSTANT_KINDS):
        out.append(f"{name}: reads constant tables {c.constants}")
    local_mem = section.one(sp.MeshOp).local_mem
    for nb in node_buffers(traced, section, op, events):
        if nb.declared > 32:
            out.append(f"{name}: {nb.declared} DFBs on node {nb.site}")
        expected = nb.laid_out + nb.aliased + printed_l1(section, nb.site)
        if nb.used_bytes and nb.used_bytes != expected:
            out.append(
                f"{name}: node {nb.site} uses {nb.used_bytes} B of DFBs, laid out {expected}"
            )
        if nb.used_bytes + nb.constant_bytes > local_mem:
            out.append(
                f"{name}: node {nb.site} holds {nb.used_bytes} B of DFBs and "
                f"{nb.constant_bytes} B of constants, past the {local_mem}-byte local memory"
            )
        if (stated := constant_l1(section, nb.site)) is not None and nb.constant_bytes != stated:
            out.append(
                f"{name}: node {nb.site} holds {nb.constant_bytes} B of constants, stated {stated}"
            )
    return out


# IR buffers the printer keeps in no DFB: attention's running output and statistics (`o`, `ml`),
# the combine's running output (`o`: flash.py's `acc`, with m_run and l_run) and arg-max's
# running best (`best`) are block values carried across the K loop.
UNDECLARED = {"attention": ("o", "ml"), "attention_combine": ("o",), "argmax": ("best",)}


def printed_l1(section: sp.ProgramOp, site: tuple[int, int]) -> int:
    """Bytes of the printed DFBs a site's kernels use beyond size-buffers' layout (negative: IR
    buffers the printer does not declare; split-K's FIFOs: `splitk_l1`; blocks of several
    sub-blocks declared whole: `_whole_blocks_l1`)."""
    work = section.one(sp.WorkOp)
    r = next(r for r in section.ops_of(sp.SitesOp) if site in r.rect.sites())
    b = r.bindings(work.k_block)
    bufs = {buf.label.data: buf for buf in section.buffers() if not isinstance(buf, sp.AccOp)}
    extra = -sum(
        r.bytes_of(bufs[n], b) for n in UNDECLARED.get(section.kind.value, ()) if n in bufs
    )
    return extra + splitk_l1(section, r) + _whole_blocks_l1(section, r, b, bufs.values())


def _whole_blocks_l1(section: sp.ProgramOp, r: sp.SitesOp, b: dict, bufs) -> int:  # noqa: ANN001
    """A block of several sub-blocks is declared whole (docs/backend-ttlang.md#sub-blocks): a
    buffer of depth d [sh, sw] pages holds max(1, d // subs) [h, w] blocks; the bytes that
    differ from d pages (none where subs divides d). An attention whose sub-blocks are its heads
    keeps its pages, and a GEMM its sub-block pages (printed a sub-block at a time)."""
    att = section.one(sp.AttentionOp)
    if (
        b["subs"] == 1
        or section.one(sp.MatmulTilesOp) is not None
        or (att is not None and b["sh"] == b["h"] and 32 * b["sw"] == att.v_head_dim)
    ):
        return 0
    sub = sp.SizesAttr.of("sh", "sw")
    return sum(
        b["h"] * b["w"] * max(1, r.depth_of(x, b) // b["subs"]) * x.tile_bytes - r.bytes_of(x, b)
        for x in bufs
        if x.page == sub
    )


def splitk_l1(section: sp.ProgramOp, r: sp.SitesOp) -> int:
    """A split-K range's DFB bytes beyond size-buffers' layout (splitk.py): the partials FIFO is
    laid out as sp.PARTIALS_RINGS rings, printed as a receive and a send DFB of one ring each.
    Slices s < S - 1 store nothing (- the output FIFO, laid out, unused); slice 0 receives
    nothing and the last slice sends nothing (- one ring, laid out, unused)."""
    work = section.one(sp.WorkOp)
    if work.k_slices == 1:
        return 0
    x0, _, y0, _ = r.rect.bounds
    s = section.item_space().k_slice(r.first_item(x0, y0))
    b = r.bindings(work.k_block)
    mm = section.one(sp.MatmulTilesOp)
    ring = r.bytes_of(sp.buffer_of(mm.partials), b) // sp.PARTIALS_RINGS
    out = r.bytes_of(sp.buffer_of(mm.out), b)
    last = work.k_slices - 1
    return -(out if s < last else 0) - (ring if s in (0, last) else 0)


def partials_pipes(section: sp.ProgramOp) -> set[str]:
    """The trace's names of split-K's pipes (`pipe_(x,y)_to_(x2,y2)`): each site of slices
    0 .. S - 2 to the site one slice's grid further along the split axis (docs/passes.md#place-
    split-k-slices-side-by-side), derived from the plan, not from the printed program."""
    work = section.one(sp.WorkOp)
    gx, gy = section.item_space().grid
    s = work.k_slices
    dx, dy = (gx, 0) if work.split_axis == "x" else (0, gy)
    return {
        f"pipe_({x},{y})_to_({x + dx},{y + dy})"
        for x in range(gx * (s - 1) if dx else gx)
        for y in range(gy * (s - 1) if dy else gy)
    }
