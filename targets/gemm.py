"""A GEMM's shape and a block plan for it: the two inputs of every cost function besides the target.

``GemmShape`` is in elements (what the program says); the model works in tiles (what the chip moves).
``GemmPlan`` is the tile pass's decision, in tt-metal's vocabulary: per_core_M/N = ``per_site_m/n``,
out_subblock_h/w = ``osh``/``osw``, in0_block_w = ``ibw``, on a ``grid_x`` x ``grid_y`` grid of sites.
"""

from __future__ import annotations

from dataclasses import dataclass

from .spec import Target, TargetError, normalize_dtype

TILE = 32  # GemmShape counts tiles of 32 x 32 (tt-metal's TILE layout; every preset uses it)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class GemmShape:
    """C[m, n] = A[m, k] @ B[k, n], sizes in elements.

    ``in_dtype`` is the operands' compute type, ``out_dtype`` the result's. ``fmt`` is the storage
    format of the operands where it differs (bf16 tensors kept as bfp8_b or bfp4_b on Tensix): it sets
    the bytes of a tile in DRAM, on the NoC and through the unpacker, not the matrix engine's cycles.
    ``a_local`` / ``c_local`` say A is already block-sharded in the sites' local memory / C is left
    there (tt-metal's L1-sharded in0 / output): no DRAM traffic for them."""

    m: int
    k: int
    n: int
    in_dtype: str = "bf16"
    out_dtype: str = "bf16"
    fmt: str | None = None
    a_local: bool = False
    c_local: bool = False

    def __post_init__(self) -> None:
        for name in ("m", "k", "n"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise TargetError(f"GemmShape.{name} must be a positive integer, got {v!r}")
        object.__setattr__(self, "in_dtype", normalize_dtype(self.in_dtype))
        object.__setattr__(self, "out_dtype", normalize_dtype(self.out_dtype))
        if self.fmt is not None:
            object.__setattr__(self, "fmt", normalize_dtype(self.fmt))

    @property
    def mt(self) -> int:
        return ceil_div(self.m, TILE)

    @property
    def kt(self) -> int:
        return ceil_div(self.k, TILE)

    @property
    def nt(self) -> int:
        return ceil_div(self.n, TILE)

    @property
    def operand_format(self) -> str:
        """The datatype operand tiles are stored and moved in."""
        return self.fmt or self.in_dtype

    @property
    def flops(self) -> int:
        return 2 * self.m * self.k * self.n

    def operand_tile_bytes(self, target: Target) -> int:
        return target.tile_bytes(self.operand_format)

    def out_tile_bytes(self, target: Target) -> int:
        return target.tile_bytes(self.out_dtype)


@dataclass(frozen=True)
class GemmPlan:
    """A block plan. ``per_site_m`` x ``per_site_n`` output tiles per block (a site may run several
    blocks when the grid does not cover the output in one round), processed as sub-blocks of ``osh`` x
    ``osw`` tiles held in the accumulator, over K blocks of ``ibw`` tiles. ``streaming`` is tt-metal's
    non-reuse matmul: each site walks single output tiles (all block fields 1). ``mcast_a`` /
    ``mcast_b``: a row of sites shares its A blocks / a column its B blocks by rectangle multicast
    (ignored on a target without multicast)."""

    grid_x: int
    grid_y: int
    per_site_m: int
    per_site_n: int
    osh: int
    osw: int
    ibw: int
    streaming: bool = False
    mcast_a: bool = True
    mcast_b: bool = True

    def __post_init__(self) -> None:
        for name in ("grid_x", "grid_y", "per_site_m", "per_site_n", "osh", "osw", "ibw"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise TargetError(f"GemmPlan.{name} must be a positive integer, got {v!r}")
        if self.streaming and (self.per_site_m, self.per_site_n, self.osh, self.osw, self.ibw) != (
            1,
            1,
            1,
            1,
            1,
        ):
            raise TargetError(
                "a streaming GemmPlan walks single tiles: per_site_m/n, osh, osw and ibw must all be 1"
            )

    def k_blocks(self, kt: int) -> int:
        return ceil_div(kt, self.ibw)

    @property
    def sub_blocks(self) -> int:
        """Sub-blocks per block (a partial sub-block still takes a whole accumulator pass)."""
        return ceil_div(self.per_site_m, self.osh) * ceil_div(self.per_site_n, self.osw)

    @property
    def acc_tiles_needed(self) -> int:
        return self.osh * self.osw

    @staticmethod
    def streaming_plan(grid_x: int, grid_y: int) -> GemmPlan:
        return GemmPlan(grid_x, grid_y, 1, 1, 1, 1, 1, streaming=True, mcast_a=False, mcast_b=False)
