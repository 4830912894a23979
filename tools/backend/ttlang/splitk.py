"""Split-K in TT-Lang: the K slices of a GEMM (`sp.work ... split S along x|y`) and the partial
sums that pass from slice to slice (docs/sp.md#matmul_tiles, docs/backend-ttlang.md#split-k).

What is decided, and why:

- A range's sites run one K slice (place gives each slice's sites their own ranges), so every
  slice-dependent number is a constant of the range's code: its loads walk K tiles
  [s K / S, (s + 1) K / S) and its items' blocks are those of slice 0 (the item number
  less s x blocks, coord.py).
- The partials travel over the NoC core to core, as the cost model prices the hand-over
  (docs/targets.md#split-k): one PipeNet of unicast pipes, site (x, y) of slice s to the site
  one slice's grid further along the split axis, where slice s + 1 runs the same blocks in the
  same order. The store's movement kernel (the writer) carries them: on slice s > 0 it receives
  an item's sums (its whole block) into the IR's partials FIFO before its store; on slice s < S - 1
  it sends the compute's sums instead of storing. Pipe copies are movement-kernel work (the
  TT-Lang specification, section 6: a compute kernel never touches a pipe).
- The sender's sums need a DFB of their own (`<partials>_send`): a Tensix packer writes only its
  own core's L1, and one DFB cannot be filled by the writer (received sums) and by the compute
  (sums to send) on a middle slice: a DFB has one producer and one consumer (the specification's
  forwarding example declares one DFB to send and one to receive). The IR's partials FIFO holds
  both (depth `subs * 2`, sp.PARTIALS_RINGS rings of `subs` pages; tile prices it, size-buffers
  lays it out), so the receive and the send DFB are each one ring of it: same page and element
  type, `subs` blocks, the accumulator's, so f32 partial sums stay f32 (unrounded) from slice to
  slice.
- The compute adds the received page to its last K block's sums (the simulator's order:
  tools/simulator/matmul.py) and pushes the result to the send DFB (s < S - 1) or to the output
  FIFO, rounded once (the last slice).

A mixin of OperationWriter (section.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spatial_dialect import sp
from spatial_dialect.tools.backend.index import ix
from spatial_dialect.tools.backend.names import ident
from spatial_dialect.tools.backend.ttlang.text import Lines
from spatial_dialect.tools.backend.ttlang.unsupported import TTLangUnsupported

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter


def send_name(dfb: str) -> str:
    """The send DFB beside a partials DFB variant (`partials_dfb_2x1` -> `partials_send_dfb_2x1`)."""
    return dfb.replace("_dfb", "_send_dfb", 1)


class SplitKPartials:
    """The K slices and the partials hand-over of an `OperationWriter` (nothing where the work
    does not split K)."""

    @property
    def slices(self: OperationWriter) -> int:
        return self.work.k_slices

    def k_slice(self: OperationWriter, r: sp.SitesOp) -> int:
        """The K slice the range's sites run (each slice's sites form their own ranges)."""
        x0, _, y0, _ = r.rect.bounds
        return self.space.k_slice(r.first_item(x0, y0))

    def k_range(self: OperationWriter, r: sp.SitesOp, b: dict) -> str:
        """The K loop of an item of range `r`: its slice's K tiles."""
        lo = self.k_slice(r) * self.work.k_slice_tiles
        return f"range({lo}, {lo + self.work.k_slice_tiles}, {b['kw']})"

    def slice_base(self: OperationWriter, r: sp.SitesOp) -> int:
        """What an item number of range `r` exceeds slice 0's numbering by."""
        return self.k_slice(r) * self.space.blocks

    def partials_buf(self: OperationWriter) -> sp.BufferOp | None:
        for m in self.stages:
            if isinstance(m, sp.MatmulTilesOp) and m.partials is not None:
                return sp.buffer_of(m.partials)
        return None

    def check_splitk(self: OperationWriter) -> None:
        """Refuses a split-K range whose sites run items of several slices, by name and numbers
        (its code is printed for one slice)."""
        if self.slices == 1:
            return
        assert self.partials_buf() is not None  # the verifier: exactly where the work splits K
        for r in self.ranges:
            slices = {self.space.k_slice(i) for x, y in r.rect.sites() for i in r.items(x, y)}
            if len(slices) != 1:
                raise TTLangUnsupported(
                    self.name,
                    f"range {r.rect.bounds} runs items of K slices {sorted(slices)}: a split-K "
                    "range is printed for one slice",
                )

    def ring_depth(self: OperationWriter, label: str, depth: int) -> int:
        """The block count of a DFB printed for a buffer at `depth`: the partials FIFO's is two
        DFBs, received and sent, of one ring each; any other buffer's is its depth."""
        buf = self.partials_buf()
        if buf is None or label != buf.label.data:
            return depth
        assert depth % sp.PARTIALS_RINGS == 0  # the verifier: depth subs * PARTIALS_RINGS
        return depth // sp.PARTIALS_RINGS

    # Declarations ----------------------------------------------------------------------------

    def emit_partials_buffers(self: OperationWriter, out: Lines) -> None:
        """The send DFB of every variant of the partials FIFO: its other ring (`ring_depth`)."""
        buf = self.partials_buf()
        if buf is None or self.slices == 1:
            return
        like = self.like_tensor(buf)
        for (label, page, depth), name in self.variants.items():
            if label == buf.label.data:
                out(
                    f"{send_name(name)} = ttl.make_dataflow_buffer_like({like}, "
                    f"shape=({page[0]}, {page[1]}), block_count={self.ring_depth(label, depth)})"
                )

    def emit_partials_net(self: OperationWriter, out: Lines) -> None:
        """One unicast pipe from each site of slices 0 .. S - 2 to the site of the next slice
        that runs the same blocks: one slice's grid further along the split axis."""
        if self.slices == 1:
            return
        gx, gy = self.space.grid
        along_x = self.work.split_axis == sp.SplitAxis.X.value
        # the sources: slices 0 .. S - 2's grids, from slice 0's first site
        first = [r.rect.bounds for r in self.ranges if self.k_slice(r) == 0]
        ox, oy = min(b[0] for b in first), min(b[2] for b in first)
        xs, ys = ((self.slices - 1) * gx, gy) if along_x else (gx, (self.slices - 1) * gy)
        # a coordinate with one value is printed as that value, not a loop of one
        x = ix("x") if xs > 1 else ix(ox)
        y = ix("y") if ys > 1 else ix(oy)
        dst = f"({x + gx}, {y})" if along_x else f"({x}, {y + gy})"
        loops = "".join(
            f" for {v} in range({o}, {o + n})" if o else f" for {v} in range({n})"
            for v, n, o in (("x", xs, ox), ("y", ys, oy))
            if n > 1
        )
        pipe = f"ttl.Pipe(src=({x}, {y}), dst={dst})"
        out(f"{self.partials_net} = ttl.PipeNet([{pipe}{loops}])")

    @property
    def partials_net(self: OperationWriter) -> str:
        buf = self.partials_buf()
        return f"{ident(buf.label.data if buf else 'partials')}_net"

    # Compute ---------------------------------------------------------------------------------

    def partials_ends(self: OperationWriter, r: sp.SitesOp, o: str) -> tuple[str | None, str]:
        """(the DFB the last K block adds the previous slice's sums from, or None on slice 0;
        the DFB it pushes to: the output FIFO `o` on the last slice, else the send DFB)."""
        buf = self.partials_buf()
        if buf is None or self.slices == 1:
            return None, o
        dfb = self.dfb(buf, r)
        s = self.k_slice(r)
        return (dfb if s > 0 else None), (o if s == self.slices - 1 else send_name(dfb))

    # Movement --------------------------------------------------------------------------------

    def is_partials_store(self: OperationWriter, s: sp.StageOp) -> bool:
        """The store of the GEMM's output: the writer that carries the partials."""
        return (
            self.slices > 1
            and isinstance(s, sp.StoreOp)
            and any(
                isinstance(m, sp.MatmulTilesOp) and sp.buffer_of(m.out) is sp.buffer_of(s.src)
                for m in self.stages
            )
        )

    def emit_partials_receive(self: OperationWriter, out: Lines, r: sp.SitesOp, b: dict) -> None:
        """Slice s > 0, before its store or send: the item's sums of the previous slice (its
        whole block: `pages_per_item`), from the pipe into the partials FIFO (it holds them all,
        so the compute never waits on this kernel's later pages)."""
        if self.k_slice(r) == 0:
            return
        dfb = self.dfb(self.partials_buf(), r)
        with _repeat(out, self.pages_per_item(r, b)):
            out(f"with {dfb}.reserve() as blk:")
            with out.indent():
                out("def recv(pipe):")
                with out.indent():
                    out("txr = ttl.copy(pipe, blk)")
                    out("txr.wait()")
                out(f"{self.partials_net}.if_dst(recv)")

    def emit_partials_send(self: OperationWriter, out: Lines, r: sp.SitesOp, b: dict) -> bool:
        """Slice s < S - 1, in place of its store: the item's unrounded sums (`pages_per_item`),
        from the send DFB into the pipe to the next slice's site. False on the last slice (it
        stores)."""
        if self.k_slice(r) == self.slices - 1:
            return False
        dfb = send_name(self.dfb(self.partials_buf(), r))
        with _repeat(out, self.pages_per_item(r, b)):
            out(f"with {dfb}.wait() as blk:")
            with out.indent():
                out("def send(pipe):")
                with out.indent():
                    out("txp = ttl.copy(blk, pipe)")
                    out("txp.wait()")
                out(f"{self.partials_net}.if_src(send)")
        return True

    def pages_per_item(self: OperationWriter, r: sp.SitesOp, b: dict) -> int:
        """The partials pages of one item: one a sub-block (a GEMM is printed a sub-block at a
        time, matmul.py)."""
        return b["subs"]


class _repeat:  # noqa: N801  (a context manager read as a clause)
    """`for _ in range(n):` and one level deeper; nothing for one page."""

    def __init__(self, out: Lines, n: int):
        self.out, self.opens = out, n != 1
        if self.opens:
            out(f"for _ in range({n}):")

    def __enter__(self) -> None:
        self.out.depth += self.opens

    def __exit__(self, *exc: object) -> None:
        self.out.depth -= self.opens
