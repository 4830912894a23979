"""Where the program's DRAM tensors live, whether they fit the device, and what a tile of one moves.

Link lays the tensors out once it has linked every section (`dram_layout`, `check_dram`) and
refuses a program that does not fit the target's device memory (`DramExceeded`), so nothing that
cannot run is tiled; the memory map prints the same layout. The bytes a tile of a tensor moves
through DRAM (`dram_tile_bytes`) are the tensor's storage format's, except that a `rows` tensor of
fewer rows than a tile moves only its rows: tile, fuse-operands and the report price DRAM traffic
with this one function.

On a mesh (docs/mesh.md#the-linked-deployment) every chip runs the same sections on its own shard,
so every chip holds the same local tensors: the check is one chip's, and a refusal names the chip
("chip 0 of t3k (every chip holds the same shards)"). A step's tensors are DRAM tensors too, laid
out beside the sections'.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp, TensorType

from spatial_dialect import sp
from spatial_dialect.mesh import StepOp
from spatial_dialect.sp.errors import SpatialPassError
from spatial_dialect.targets import Target, TargetError


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
        if isinstance(program, StepOp):
            for name, t in (
                (program.source.data, program.input_type),
                (program.tensor.data, program.result_type),
            ):
                size, storage = seen.get(name, (0, str(t.get_element_type())))
                seen[name] = (max(size, _step_tensor_bytes(t, target)), storage)
            continue
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


def _step_tensor_bytes(t: TensorType, target: Target) -> int:
    """A step's tensor as a section would declare it: whole tiles of its element type."""
    shape = t.get_shape()
    rows, cols = (1, shape[0]) if len(shape) == 1 else (shape[-2], shape[-1])
    lead = 1
    for d in shape[:-2]:
        lead *= d
    tiles = lead * -(-rows // target.tile_rows) * -(-cols // target.tile_cols)
    try:
        return tiles * target.tile_bytes(str(t.get_element_type()))
    except TargetError:
        return 0


def check_dram(module: ModuleOp, target: Target, mesh: str | None = None) -> None:
    """DramExceeded where the layout does not fit the target's DRAM (none declared: unchecked).
    `mesh`: the mesh preset a per-chip deployment runs on; every chip holds the same shards, so
    the check is chip 0's and the refusal says so."""
    if target.dram_bytes is None:
        return
    layout = dram_layout(module, target)
    needed = layout[-1].offset + layout[-1].bytes if layout else 0
    if needed > target.dram_bytes:
        largest = sorted(layout, key=lambda t: -t.bytes)[:3]
        where = (
            f"chip 0 of {mesh} (every chip holds the same shards; a {target.name})"
            if mesh is not None
            else target.name
        )
        raise DramExceeded(where, needed, target.dram_bytes, [(t.name, t.bytes) for t in largest])


def dram_tile_bytes(target: Target, t: sp.TensorOp, storage: str | None = None) -> int:
    """The DRAM bytes one tile of `t` moves (`Target.dram_tile_bytes`), in its storage or in the
    `storage` a FIFO converts it to on load: a `rows` tensor of fewer rows than a tile moves its
    rows (a decode step's vectors, the split partials of flash decoding)."""
    rows = t.shape2d[0] if t.layout.data is sp.Layout.ROWS else None
    return target.dram_tile_bytes(storage or t.storage, rows)
