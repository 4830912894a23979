"""One sized sp section as one `@ttl.operation` (`OperationWriter`): its DFBs, pipes and the
three kernels, every number read from the sized IR. printer.py puts the sections of a module
into one program. See printer.py's docstring for what is printed and how it reads."""

from __future__ import annotations

import re

from spatial_dialect import sp
from spatial_dialect.sp.item_space import ItemSpace
from spatial_dialect.targets.gemm import TILE, writes_in_pairs
from spatial_dialect.tools.backend.index import (
    all_of,
    between,
    from_affine,
    ix,
)
from spatial_dialect.tools.backend.names import ident
from spatial_dialect.tools.backend.ttlang.checks import OperationChecks
from spatial_dialect.tools.backend.ttlang.compute import stage_constants
from spatial_dialect.tools.backend.ttlang.coord import origin_lines
from spatial_dialect.tools.backend.ttlang.fit import check_constants_fit
from spatial_dialect.tools.backend.ttlang.indexed import (
    INDEXED,
    emit_indexed,
    emit_indexed_buffers,
    extra_engines,
    head_selector_pages,
    head_sub_blocks,
    in_k_loop,
    indexed_constants,
)
from spatial_dialect.tools.backend.ttlang.matmul import MatmulCompute
from spatial_dialect.tools.backend.ttlang.moe import expert_picks, index_only
from spatial_dialect.tools.backend.ttlang.multicast import (
    MulticastLoads,
    PipeKind,
    copies,
    guarded_by,
    in_rect,
)
from spatial_dialect.tools.backend.ttlang.registry import printer_of
from spatial_dialect.tools.backend.ttlang.splitk import SplitKPartials
from spatial_dialect.tools.backend.ttlang.stage import engine_key, load_into, tname
from spatial_dialect.tools.backend.ttlang.text import Lines, plan_lines
from spatial_dialect.tools.backend.ttlang.unsupported import TTLangUnsupported

LOOP_NAMES = tuple(sp.LOOP_VARS)
# the page of a sub-block: a DFB of such pages holds whole blocks where a block holds several
# (OperationWriter.declared)
SUB_BLOCK_PAGE = sp.SizesAttr.of("sh", "sw")


class OperationWriter(MatmulCompute, MulticastLoads, SplitKPartials, OperationChecks):
    """One sized section as one `@ttl.operation`: its buffers, kernels and compute."""

    def __init__(self, program: sp.ProgramOp, index: int):
        self.p = program
        self.name = program.sym_name.data
        self.fn = f"section_{index}_{ident(self.name, prefix='')}"
        work, mesh = program.one(sp.WorkOp), program.one(sp.MeshOp)
        if work is None or mesh is None or not program.ops_of(sp.SitesOp):
            raise TTLangUnsupported(self.name, "the section is not sized (run spatial-pipeline)")
        self.work, self.mesh = work, mesh
        self.space: ItemSpace = program.item_space()
        self.k_tiles = work.k_tiles
        self.ranges = list(program.ops_of(sp.SitesOp))
        self.tensors = {t.sym_name.data: t for t in program.ops_of(sp.TensorOp)}
        self.groups = {g.sym_name.data: g for g in program.ops_of(sp.GroupOp)}
        self.stages = list(program.stages())
        if any(isinstance(s, sp.LoadOp) and s.table is not None for s in self.stages):
            raise TTLangUnsupported(
                self.name,
                "sp.load users table (the paged caches: a kernel cannot address DRAM by the "
                "block ids it reads)",
            )
        # ranges whose blocks hold several sub-blocks: the compute computes and pushes the whole
        # block (see `declared`; an attention whose sub-blocks are its heads pushes each head's
        # output as it is: head_sub_blocks), but a GEMM's, printed a sub-block at a time
        # (matmul.py)
        gemm = any(isinstance(s, sp.MatmulTilesOp) for s in self.stages)
        self.whole_blocks: set[int] = set()
        for i, r in enumerate(self.ranges):
            b = r.bindings(self.work.k_block)
            if b["subs"] != 1 and not head_sub_blocks(self, b) and not gemm:
                self.whole_blocks.add(i)
        self.check()
        # constant tensors the host allocates for this section (rope's permutation matrices, a
        # row reduction's column mask: compute.stage_constants): name -> (shape in elements,
        # numpy source); and the tiles each range reads of them
        self.consts: dict[str, tuple[tuple[int, int], str]] = {}
        self.const_pages: dict[str, dict[int, tuple[int, int]]] = {}
        self.const_engine: str | None = None
        # the constants read per item (Constant.per_item) -> the buffer whose load they follow
        self.item_consts: dict[str, sp.BufferOp] = {}
        for st in self.stages:
            consts = stage_constants(self, st)
            if any(not c.per_item for c in consts.values()):
                self.const_engine = engine_key(load_into(self.stages, st.ins[0]))
            for cname, c in consts.items():
                self.consts[cname] = (c.shape, c.source)
                self.const_pages.setdefault(cname, {}).update(c.pages)
                if c.per_item:
                    self.item_consts[cname] = sp.buffer_of(st.ins[0])
        # the identity an attention's head selectors are read from (indexed.head_selector_pages)
        sides = [max(p) for p in head_selector_pages(self)]
        if sides:
            n = TILE * max(sides)
            self.eye = f"_eye_{n}"
            self.consts[self.eye] = ((n, n), f"np.eye({n}, dtype=np.float32)")
        # constants of the indexed stages (one-hot tiles, the attention mask, argmax's indices):
        # their DFBs and reads are the indexed stages' own (indexed.py)
        self.consts.update(indexed_constants(self))
        # A DFB takes its dtype from a tensor: the f32 partial sums of a GEMM whose tensors are
        # all 16-bit (f32 accumulation by contract) take it from a zero f32 constant, never read.
        spill = next(
            (
                sp.buffer_of(m.spill)
                for m in self.stages
                if isinstance(m, sp.MatmulTilesOp) and m.spill is not None
            ),
            None,
        )
        if (
            spill is not None
            and str(spill.elt) == "f32"
            and all(str(t.element_type) != "f32" for t in self.tensors.values())
        ):
            self._zero_page(*self._largest_page(spill))
        for st in self.stages:
            if (pr := printer_of(st)) is not None:
                self.consts.update(pr.constants(self, st))
        # any other f32 state (the conv's window, ...) that no constant holds: a zero page too
        if all(str(t.element_type) != "f32" for t in self.tensors.values()):
            for buf in self.p.buffers():
                if isinstance(buf, sp.AccOp) or str(buf.elt) != "f32":
                    continue
                ph, pw = self._largest_page(buf)
                if not any(h >= 32 * ph and w >= 32 * pw for (h, w), _ in self.consts.values()):
                    self._zero_page(ph, pw)

    def _largest_page(self, buf: sp.BufferOp) -> tuple[int, int]:
        """The buffer's largest page over the ranges as its DFB declares it, in tiles (rows,
        cols)."""
        pages = [self.declared(buf, r)[0] for r in self.ranges]
        return max(p[0] for p in pages), max(p[1] for p in pages)

    def _zero_page(self, rows: int, cols: int) -> None:
        """A zero f32 constant of rows x cols tiles, never read: the likeness of an f32 DFB."""
        self.consts[f"_f32_page_{rows}x{cols}"] = (
            (TILE * rows, TILE * cols),
            f"np.zeros(({TILE * rows}, {TILE * cols}), dtype=np.float32)",
        )

    # Buffers ---------------------------------------------------------------------------------

    def declared(self, buf: sp.BufferOp, r: sp.SitesOp) -> tuple[tuple[int, int], int]:
        """(page, block count) of `buf`'s DFB on range `r`: the sized IR's page and depth, but
        where the range's block holds several sub-blocks and the page is the sub-block [sh, sw]
        (the output FIFO, the K-block spill, split-K's partials), the whole block [h, w] with
        depth // subs blocks. TT-Lang cannot slice a block, and its compiler splits a
        whole-block expression into dest-sized pieces itself (ttl-assign-dst), so the compute
        pushes each item's whole block once: no one-hot selector products, which no price
        includes. Size-buffers gives such a buffer at least `subs` pages (one per sub-block), so
        the DFB takes the bytes it laid out; a FIFO of fewer pages (a stream section's output
        FIFO, depth 2) holds one block, L1 beyond the layout that check_memory_map checks
        (`whole_block_excess`; docs/backend-ttlang.md#sub-blocks). A GEMM keeps its sub-block
        pages, and its operands' pages are cut into sub-block rows (A) or columns (B), one DFB a
        part (`operand_split`, matmul.py)."""
        b = r.bindings(self.work.k_block)
        page = buf.page.resolve(b)
        depth = r.depth_of(buf, b) if isinstance(buf, sp.MemoryBufferOp) else 1
        axis, parts = self.operand_split(buf, r)  # a GEMM operand in sub-block pages (matmul.py)
        if parts > 1:
            cut = (page[0] // parts, page[1]) if axis == 0 else (page[0], page[1] // parts)
            return cut, depth
        if self.ranges.index(r) not in self.whole_blocks or buf.page != SUB_BLOCK_PAGE:
            return (page[0], page[1]), depth
        return (b["h"], b["w"]), max(1, depth // b["subs"])

    def whole_block_excess(self, r: sp.SitesOp) -> int:
        """Bytes range `r`'s whole-block DFBs (`declared`) take beyond what size-buffers laid
        out for their sub-block pages: > 0 where a FIFO holds fewer pages than the block has
        sub-blocks (a stream section's output FIFO is 2 deep), < 0 where its depth is not a
        multiple of `subs` (the remainder pages go unused)."""
        b = r.bindings(self.work.k_block)
        excess = 0
        for buf in self.p.buffers():
            if isinstance(buf, sp.AccOp) or not self.whole_page(buf, r):
                continue
            (h, w), count = self.declared(buf, r)
            excess += h * w * count * buf.tile_bytes - r.bytes_of(buf, b)
        return excess

    def whole_page(self, buf: sp.BufferOp, r: sp.SitesOp) -> bool:
        """Whether `buf`'s IR page is a sub-block and its DFB's a whole block: regrouped
        (`declared`), or a block of one sub-block. A page moved whole is one copy, not a loop
        over the block's sub-blocks."""
        subs = r.bindings(self.work.k_block)["subs"]
        whole = subs == 1 or self.ranges.index(r) in self.whole_blocks
        return whole and buf.page == SUB_BLOCK_PAGE

    def buffer_variants(self) -> dict[tuple[str, tuple[int, int], int], str]:
        """(label, page, block count) -> DFB name; one variant per distinct declared page and
        count of a buffer (a TT-Lang DFB has one block shape and count per operation; an output
        FIFO differs between ranges whose blocks differ). A GEMM operand cut into sub-block
        pages is as many DFBs as its most parts on a range (`dfbs`); a GEMM output written
        two pages at a time is two DFBs of half the pages each (`paired`)."""
        out: dict[tuple[str, tuple[int, int], int], str] = {}
        self.variant_parts: dict[str, int] = {}
        self.paired: set[str] = set()
        for buf in self.p.buffers():
            if isinstance(buf, sp.AccOp):
                continue
            shapes: list[tuple[tuple[int, int], int]] = []
            for r in self.ranges:
                shape = self.declared(buf, r)
                if shape not in shapes:
                    shapes.append(shape)
            depths = len({d for _, d in shapes}) > 1
            for page, depth in shapes:
                label = buf.label.data
                name = f"{ident(label)}_dfb"  # a label may be a tensor name (dots)
                if len(shapes) > 1:
                    name += f"_{page[0]}x{page[1]}" + (f"x{depth}" if depths else "")
                out[(label, page, depth)] = name
                parts = [self.operand_split(buf, r)[1] for r in self.ranges]
                used = [
                    n
                    for r, n in zip(self.ranges, parts, strict=True)
                    if self.declared(buf, r) == (page, depth)
                ]
                self.variant_parts[name] = max(used)
                users = [r for r in self.ranges if self.declared(buf, r) == (page, depth)]
                if depth % 2 == 0 and all(self.out_pairs(buf, r) for r in users):
                    self.paired.add(name)
                    self.variant_parts[name] = 2
        return out

    def out_pairs(self, buf: sp.BufferOp, r: sp.SitesOp) -> bool:
        """Whether `buf` is a GEMM's output FIFO that range `r`'s writer stores two sub-block
        pages at a time (`writes_in_pairs`, targets/gemm.py: the cost model prices the same
        rule): pages alternate between two DFBs, since a DFB gives out one block at a time and
        a write in flight keeps its page. Not split-K's, whose writer also hands sums on."""
        if self.slices > 1 or self.whole_page(buf, r):
            return False
        b = r.bindings(self.work.k_block)
        if b["subs"] < 2 or not writes_in_pairs(b["h"], b["w"], b["sh"], b["sw"]):
            return False
        return any(
            isinstance(m, sp.MatmulTilesOp) and sp.buffer_of(m.out) is buf for m in self.stages
        )

    def dfb(self, buf: sp.BufferOp, r: sp.SitesOp) -> str:
        return self.variants[(buf.label.data, *self.declared(buf, r))]

    def dfbs(self, buf: sp.BufferOp, r: sp.SitesOp) -> list[str]:
        """The DFBs of `buf` on range `r`: one, or a GEMM operand's sub-block parts (matmul.py)."""
        name = self.dfb(buf, r)
        if name in self.paired:
            return [f"{name}_0", f"{name}_1"]
        if self.variant_parts[name] == 1:
            return [name]
        return [f"{name}_{i}" for i in range(self.operand_split(buf, r)[1])]

    # Emission --------------------------------------------------------------------------------

    def emit(self, out: Lines) -> None:
        plan = self.p.one(sp.PlanOp)
        gx, gy = self.mesh.size
        self.variants = self.buffer_variants()
        # the kernels first: what they use decides which DFBs and constants the section takes
        kernels = Lines()
        self.emit_pipes(kernels)
        self.emit_partials_net(kernels)
        engines = self.engine_stages()
        kernels()
        kernels("@ttl.compute()")
        kernels("def compute():")
        with kernels.indent():
            self.emit_kernel(kernels, engines.get("compute", []), "compute")
        for i in (0, 1):
            kernels()
            kernels("@ttl.datamovement()")
            kernels(f"def dm{i}():")
            with kernels.indent():
                self.emit_kernel(kernels, engines.get(f"movement {i}", []), f"movement {i}")
        decls = Lines()
        self.emit_buffers(decls)
        self.emit_const_buffers(decls)
        self.emit_partials_buffers(decls)
        emit_indexed_buffers(self, decls)
        for st in self.stages:
            if (pr := printer_of(st)) is not None:
                pr.buffers(self, st, decls)
        used = kernels.statement_text()
        # A DFB no kernel reserves or waits on is not declared: each takes L1 (attention's o and
        # ml state pages are the compute's temporaries, never a DFB's blocks).
        decls.entries = [(d, t) for d, t in decls.entries if names_in(t.split(" = ")[0], used)]
        used += "\n" + decls.statement_text()
        # likewise a constant no kept DFB is made like and no kernel reads
        self.consts = {n: c for n, c in self.consts.items() if names_in(n, used)}
        check_constants_fit(self, decls)
        out(f"# section @{self.name}: {self.p.source_op.data}")
        if plan is not None:
            for line in plan_lines(plan):
                out(f"#   {line}")
        # The dest registers in their fp32 mode where the section accumulates in 32 bits
        # (tt-lang-sim accepts the flag and computes in f32 either way).
        wide = any(
            isinstance(b, sp.AccOp) and str(b.elt) in ("f32", "i32") for b in self.p.buffers()
        ) or any(isinstance(s, sp.AttentionCombineOp) for s in self.stages)  # an f32 merge
        flag = ", fp32_dest_acc_en=True" if wide else ""
        out(f"@ttl.operation(grid=({gx}, {gy}){flag})")
        out(f"def {self.fn}({', '.join(self.tensor_args())}):")
        with out.indent():
            out.extend(decls)
            out.extend(kernels)
        out()
        out()

    def tensor_args(self) -> list[str]:
        skip = index_only(self.stages)
        return [tname(n) for n in self.tensors if n not in skip] + list(self.consts)

    def section_args(self) -> list[str | tuple[str, str]]:
        """SECTIONS' names for the host: an expert tensor as (experts, ids) (moe.py)."""
        picks, skip = expert_picks(self.stages), index_only(self.stages)
        names = [(n, picks[n]) if n in picks else n for n in self.tensors if n not in skip]
        return [*names, *self.consts]

    def const_dfb_name(self, name: str, page: tuple[int, int]) -> str:
        pages = set(self.const_pages[name].values())
        return f"{name}_dfb" if len(pages) == 1 else f"{name}_dfb_{page[0]}x{page[1]}"

    def emit_const_buffers(self, out: Lines) -> None:
        for name, pages in self.const_pages.items():
            count = 2 if name in self.item_consts else 1
            for page in sorted(set(pages.values())):
                out(
                    f"{self.const_dfb_name(name, page)} = ttl.make_dataflow_buffer_like({name}, "
                    f"shape=({page[0]}, {page[1]}), block_count={count})"
                )

    def open_consts(self, out: Lines, key: str, ri: int) -> int:
        """Before a range's items: the movement kernel reads the constant pages once; the
        compute kernel holds them over the items. Returns the indentation it opened."""
        self.const_dfb = {
            n: self.const_dfb_name(n, pages[ri])
            for n, pages in self.const_pages.items()
            if n not in self.item_consts
        }
        if not self.const_dfb:
            return 0
        if key == "compute":
            parts = [f"{d}.wait() as {n}_blk" for n, d in self.const_dfb.items()]
            out("with " + ", ".join(parts) + ":")
            out.depth += 1
            return 1
        if key == self.const_engine:
            for n, d in self.const_dfb.items():
                ph, pw = self.const_pages[n][ri]
                out(f"with {d}.reserve() as blk:")
                with out.indent():
                    out(f"tx = ttl.copy({n}[0:{ph}, 0:{pw}], blk)")
                    out("tx.wait()")
        return 0

    def engine_stages(self) -> dict[str, list[sp.StageOp]]:
        engines: dict[str, list[sp.StageOp]] = {}
        for s in self.stages:
            if s.engine is None:
                raise TTLangUnsupported(self.name, f"{s.stage_name()} has no engine")
            text = s.engine.text()
            key = engine_key(s)
            if key not in ("compute", "movement 0", "movement 1"):
                raise TTLangUnsupported(
                    self.name, f"engine {text}: TT-Lang has two movement kernels"
                )
            engines.setdefault(key, []).append(s)
            pr = printer_of(s)
            if isinstance(s, INDEXED) or pr is not None:
                for extra in pr.engines(self, s) if pr else extra_engines(self, s):
                    if s not in engines.setdefault(extra, []):
                        engines[extra].append(s)
        return engines

    def emit_buffers(self, out: Lines) -> None:
        by_label = {b.label.data: b for b in self.p.buffers()}
        for (label, page, depth), name in self.variants.items():
            like = self.like_tensor(by_label[label])
            parts = self.variant_parts[name]
            for part in [name] if parts == 1 else [f"{name}_{i}" for i in range(parts)]:
                out(
                    f"{part} = ttl.make_dataflow_buffer_like({like}, shape=({page[0]}, "
                    f"{page[1]}), block_count={self.ring_depth(label, depth) // (2 if name in self.paired else 1)})"
                )

    def like_tensor(self, buf: sp.BufferOp) -> str:
        """The tensor the buffer's pages come from or go to (the DFB takes its dtype and
        layout, and must fit a page); else the largest tensor of its element type."""
        for st in self.stages:
            if isinstance(st, sp.LoadOp) and sp.buffer_of(st.dst) is buf:
                return tname(st.tensor.root_reference.data)
            if isinstance(st, sp.StoreOp) and sp.buffer_of(st.src) is buf:
                return tname(st.tensor.root_reference.data)
        same = [t for t in self.tensors.values() if t.element_type == buf.elt]
        if not same and str(buf.elt) == "f32":
            # an f32 state page (attention's o / ml, argmax's best, a GEMM's f32 partial sums):
            # like an f32 constant (every constant is f32) that holds its largest page, the zero
            # page made for the partial sums first
            ph, pw = (TILE * n for n in self._largest_page(buf))
            fits = [n for n, ((h, w), _) in self.consts.items() if h >= ph and w >= pw]
            fits.sort(key=lambda n: not n.startswith("_f32_page"))
            if fits:
                return fits[0]
        if not same:
            raise TTLangUnsupported(
                self.name, f"buffer {buf.label.data} holds {buf.elt}, which no tensor of it has"
            )
        best = max(same, key=lambda t: tuple(t.type.get_shape()))
        return tname(best.sym_name.data)

    def emit_pipes(self, out: Lines) -> None:
        """One PipeNet per group family: a rectangle multicast per group where every member
        runs as many items as its sender; otherwise one unicast pipe per member (the sender
        then sends its t-th block only to members that run a t-th item)."""
        self.pipe_kind: dict[str, PipeKind] = {}
        for name, g in self.groups.items():
            rect_pipes, uni_pipes = [], []
            uniform = True
            for sender, members in g.groups():
                counts = {self.count_at(m) for m in members}
                uniform &= len(counts) == 1
                rest = [m for m in members if m != sender]
                if not rest:
                    continue
                xs, ys = sorted({m[0] for m in rest}), sorted({m[1] for m in rest})
                contiguous = len(rest) == len(xs) * len(ys) and (
                    xs == list(range(xs[0], xs[-1] + 1)) and ys == list(range(ys[0], ys[-1] + 1))
                )
                if contiguous and g.axis.data != sp.GroupAxis.LINE:
                    rect_pipes.append(
                        f"ttl.Pipe(src={sender}, dst=(slice({xs[0]}, {xs[-1] + 1}), "
                        f"slice({ys[0]}, {ys[-1] + 1})))"
                    )
                else:
                    uniform = False
                uni_pipes += [f"ttl.Pipe(src={sender}, dst={m})" for m in rest]
            pipes = rect_pipes if uniform else uni_pipes
            self.pipe_kind[name] = PipeKind.MULTICAST if uniform else PipeKind.UNICAST
            if not pipes:
                self.pipe_kind[name] = PipeKind.NONE
                continue
            out(f"{ident(name)}_net = ttl.PipeNet([")
            with out.indent():
                for p in pipes:
                    out(p + ",")
            out("])")

    def count_at(self, site: tuple[int, int]) -> int:
        for r in self.ranges:
            if site in r.rect.sites():
                return r.count
        return 0

    def emit_count_fn(self, out: Lines) -> None:
        out("def _count(sx, sy):")
        with out.indent():
            for r in self.ranges:
                x0, x1, y0, y1 = r.rect.bounds
                out(f"if {all_of(between(x0, 'sx', x1), between(y0, 'sy', y1))}:")
                with out.indent():
                    out(f"return {r.count}")
            out("return 0")

    def emit_kernel(self, out: Lines, stages: list[sp.StageOp], key: str = "") -> None:
        self.cur_key = key
        if not stages:
            out("pass")
            return
        # a unicast pipe sends to a site only while it has items left (`_count`); multicast
        # pipes and kernels without pipes never read it
        if any(
            isinstance(s, sp.LoadOp)
            and s.group is not None
            and self.pipe_kind[s.group.root_reference.data] is PipeKind.UNICAST
            for s in stages
        ):
            self.emit_count_fn(out)
        out("x, y = ttl.node(dims=2)")
        for ri, r in enumerate(self.ranges):
            b = r.bindings(self.work.k_block)
            with guarded_by(out, in_rect(r.rect.bounds)):
                first = from_affine(r.first.data.results[0], ("x", "y"))
                opened = self.open_consts(out, key, ri)
                item_lines = Lines()
                self.emit_item(item_lines, stages, r, b)
                # the item's block origin, where the item reads it (a compute kernel pops its
                # pages in order and never does), as integer statements (coord.py)
                text = item_lines.statement_text()
                need = {v for v in ("r0", "c0") if names_in(v, text)}
                site, origin = (
                    origin_lines(self.space, first - self.slice_base(r), need) if need else ([], [])
                )
                for line in site:
                    out(line)
                out(f"for t in range({r.count}):")
                with out.indent():
                    for line in origin:
                        out(line)
                    out.extend(item_lines)
                out.depth -= opened

    def emit_item(self, out: Lines, stages: list[sp.StageOp], r: sp.SitesOp, b: dict) -> None:
        k_stages = [
            s
            for s in stages
            if (isinstance(s, sp.LoadOp | sp.StoreOp) and "k0" in s.access.loop_vars())
            or in_k_loop(s, self.cur_key)
            or ((pr := printer_of(s)) is not None and pr.in_k_loop(s, self.cur_key))
        ]
        first = stages.index(k_stages[0]) if k_stages else len(stages)
        before = [s for s in stages[:first] if s not in k_stages]
        after = [s for s in stages[first:] if s not in k_stages]
        for s in before:
            self.emit_stage(out, s, r, b, in_k=False)
        if k_stages:
            out(f"for k0 in {self.k_range(r, b)}:")
            with out.indent():
                for s in k_stages:
                    self.emit_stage(out, s, r, b, in_k=True)
        for s in after:
            self.emit_stage(out, s, r, b, in_k=False)

    def emit_stage(self, out: Lines, s: sp.StageOp, r: sp.SitesOp, b: dict, in_k: bool) -> None:
        if isinstance(s, sp.MatmulTilesOp):
            self.emit_matmul(out, s, r, b)
            return
        if isinstance(s, INDEXED):
            emit_indexed(self, out, s, self.cur_key, r, b)
            return
        if (pr := printer_of(s)) is not None:
            pr.emit(self, out, s, self.cur_key, r, b)
            return
        if isinstance(s, sp.MapOp | sp.RowReduceOp | sp.RopeOp):
            from spatial_dialect.tools.backend.ttlang.compute import emit_compute

            emit_compute(self, out, s, r, b)
            return
        assert isinstance(s, sp.LoadOp | sp.StoreOp)
        if self.is_partials_store(s):  # split-K: the writer carries the partials (splitk.py)
            self.emit_partials_receive(out, r, b)
            if self.emit_partials_send(out, r, b):
                return
        used = s.access.loop_vars()
        ranges = {
            "k0": None if in_k else self.k_range(r, b),
            "ti": f"range(0, {b['h']}, {b['sh']})",
            "tj": f"range(0, {b['w']}, {b['sw']})",
            "u": f"range({b['sh']})",
            "v": f"range({b['sw']})",
        }
        opened = 0
        # a DFB of whole blocks where the IR's pages are sub-blocks (`declared`): one copy of
        # the block, at the access's origin for sub-block (0, 0)
        whole = self.whole_page(sp.buffer_of(s.src if isinstance(s, sp.StoreOp) else s.dst), r)
        if whole and used & {"k0", "u", "v"}:
            raise TTLangUnsupported(
                self.name,
                f"{s.stage_name()}: a sub-block page indexed by {sorted(used)} (expected ti, tj)",
            )
        # a GEMM output stored two pages at a time (`out_pairs`): the loop steps over pairs
        # of neighbours along the row, or down the column of a block one sub-block wide
        pair = None
        if isinstance(s, sp.StoreOp) and self.dfb(sp.buffer_of(s.src), r) in self.paired:
            pair = ("tj", "w", "sw") if (b["w"] // b["sw"]) % 2 == 0 else ("ti", "h", "sh")
            ranges[pair[0]] = f"range(0, {b[pair[1]]}, {2 * b[pair[2]]})"
        # a sub-block loop of one step (sub-blocks as wide or as tall as the block, or a pair
        # as the block) is its 0
        step = {"ti": b["sh"] * (2 if pair and pair[0] == "ti" else 1)}
        step["tj"] = b["sw"] * (2 if pair and pair[0] == "tj" else 1)
        once = {"ti"} if whole or step["ti"] == b["h"] else set()
        once |= {"tj"} if whole or step["tj"] == b["w"] else set()
        for v in LOOP_NAMES[2:]:
            if v in used and ranges[v] is not None and v not in once:
                out(f"for {v} in {ranges[v]}:")
                out.depth += 1
                opened += 1
        dims = [0 if v in once else v for v in LOOP_NAMES]
        row, col = (from_affine(e, dims) for e in s.access.origin.data.results)
        eh, ew = (b["h"], b["w"]) if whole else s.access.extent.resolve(b)
        tensor = tname(s.tensor.root_reference.data)
        view = f"{tensor}[{row}:{row + eh}, {col}:{col + ew}]"
        if isinstance(s, sp.LoadOp):
            # a GEMM operand in sub-block pages: one copy a part, all in flight at once
            dfbs = self.dfbs(sp.buffer_of(s.dst), r)
            blks = ["blk"] if len(dfbs) == 1 else [f"blk{i}" for i in range(len(dfbs))]
            axis, parts = self.operand_split(sp.buffer_of(s.dst), r)
            step = (eh if axis == 0 else ew) // parts
            views = [
                f"{tensor}[{row + i * step}:{row + (i + 1) * step}, {col}:{col + ew}]"
                if axis == 0
                else f"{tensor}[{row}:{row + eh}, {col + i * step}:{col + (i + 1) * step}]"
                for i in range(parts)
            ]
            reserves = ", ".join(f"{d}.reserve() as {k}" for d, k in zip(dfbs, blks, strict=True))
            out(f"with {reserves}:")
            with out.indent():
                if s.group is None:
                    copies(out, "tx", list(zip(views, blks, strict=True)))
                else:
                    self.emit_multicast(out, s, views, blks, r)
        elif pair is not None:
            # the second page's copy is issued before the first's write is waited: two writes
            # in flight, one round trip for both (targets/write_back.py `write_back_cycles`)
            v, _, sub = pair
            at = [
                b[sub] if d == 0 and n == v else ix(n) + b[sub] if n == v else d
                for n, d in zip(LOOP_NAMES, dims, strict=True)
            ]
            row2, col2 = (from_affine(e, at) for e in s.access.origin.data.results)
            view2 = f"{tensor}[{row2}:{row2 + eh}, {col2}:{col2 + ew}]"
            first, second = self.dfbs(sp.buffer_of(s.src), r)
            out(f"with {first}.wait() as blk0:")
            with out.indent():
                out(f"tx0 = ttl.copy(blk0, {view})")
                out(f"with {second}.wait() as blk1:")
                with out.indent():
                    out(f"tx1 = ttl.copy(blk1, {view2})")
                    out("tx0.wait()")
                    out("tx1.wait()")
        else:
            dfb = self.dfb(sp.buffer_of(s.src), r)
            out(f"with {dfb}.wait() as blk:")
            with out.indent():
                out(f"tx = ttl.copy(blk, {view})")
                out("tx.wait()")
        if isinstance(s, sp.LoadOp):  # the constants read at this item's columns, after it
            ri = self.ranges.index(r)
            for n, buf in self.item_consts.items():
                if buf is sp.buffer_of(s.dst):
                    ph, pw = self.const_pages[n][ri]
                    out(f"with {self.const_dfb_name(n, (ph, pw))}.reserve() as blk:")
                    with out.indent():
                        out(f"tx = ttl.copy({n}[0:{ph}, {col}:{col + pw}], blk)")
                        out("tx.wait()")
        out.depth -= opened


def names_in(name: str, text: str) -> bool:
    """Whether `text` names `name` (as a whole identifier)."""
    return re.search(rf"\b{re.escape(name.strip())}\b", text) is not None
