"""The target description: what a spatial accelerator is, as data.

A :class:`Target` is everything the compiler may know about a chip, and nothing the compiler may decide
for it: the mesh of sites, each site's local memory and engines, its accumulator, the credit-loop
latencies its FIFOs must cover, the interconnect, the tile shape, the datatypes with their bytes per
tile, the matrix engine's cycles per tile-matmul for each datatype and fidelity, the clock and the
DRAM. Every pass decides from a Target and the program's shapes, so a decision can always be traced
back to a number written here (and, in :mod:`.presets`, to the public source of that number).

The dataclass is frozen and hashable (tables are tuples of pairs, not dicts) so a Target can key a
cache or ride along an IR attribute without anyone mutating it underneath a pass.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from xdsl.utils.exceptions import DiagnosticException

from spatial_dialect.sp.kinds import Q8_0_BLOCK, Q8_0_FORMATS

FIDELITIES: tuple[str, ...] = ("lofi", "hifi2", "hifi3", "hifi4")
"""Math fidelities of the Tensix matrix engine, cheapest first (1, 2, 3, 4 fidelity phases)."""
DEFAULT_FIDELITY = "hifi4"
"""The fidelity plans are priced at unless the pipeline's `fidelity` option says otherwise."""


class Multicast(enum.StrEnum):
    """How one site's send reaches many sites. A StrEnum, so it reads and compares as the string a
    TOML target writes (``multicast = "rectangle"``)."""

    # One send lands in every site of a rectangle of the mesh (Tensix NoC): a row or column of sites
    # shares an operand block that one of them read.
    RECTANGLE = "rectangle"
    # No on-chip multicast: an operand is shared by broadcast over a fabric (share_operand), through
    # a shared cache, or not at all.
    NONE = "none"


MULTICAST_KINDS: tuple[str, ...] = tuple(m.value for m in Multicast)

# Spellings users and tt-metal tables write, mapped to the one name the compiler uses.
_DTYPE_ALIASES: dict[str, str] = {
    "bfloat16": "bf16",
    "float16": "f16",
    "fp16": "f16",
    "half": "f16",
    "float32": "f32",
    "fp32": "f32",
    "float": "f32",
    "bfloat8_b": "bfp8_b",
    "bfp8": "bfp8_b",
    "bfloat4_b": "bfp4_b",
    "bfp4": "bfp4_b",
    "int8": "i8",
    "int32": "i32",
    "uint8": "u8",
    "uint32": "u32",
}

# Datatypes the compiler knows. A TOML target may only list these (an unknown name is a typo, and a
# typo in a datatype table would otherwise silently make a chip "lack" bf16).
KNOWN_DTYPES: tuple[str, ...] = ("bf16", "f16", "f32", "bfp8_b", "bfp4_b", "i8", "i32", "u8", "u32")

FLOAT_ACTIVATIONS: tuple[str, ...] = ("bf16", "f16", "f32")
"""The types an imported model's activations may compute in (`Target.activation_dtype`)."""

# Accumulation in a 16-bit destination: everything narrower than 32 bits accumulates there.
_SIXTEEN_BIT_ACC = {"bf16", "f16", "bfp8_b", "bfp4_b"}


def q8_0_bytes(elements: int) -> int:
    """Bytes of ``elements`` Q8_0 elements: 34 per block of 32 (32 int8 values and one f16 scale).
    The one definition the cost model, the DRAM layout and the buffers' tile bytes all read."""
    return elements // Q8_0_BLOCK * (Q8_0_BLOCK + 2)


class TargetError(DiagnosticException):
    """A target that cannot be used: an unknown preset, an unreadable or invalid TOML file, a datatype
    or fidelity the chip does not have. The message always names what is wrong and where (the file and
    the field for TOML targets), so a user never has to read a traceback to fix it. A diagnostic
    (xDSL's DiagnosticException): met inside a pass, it is reported at the op, never as an internal
    error."""


def normalize_dtype(dtype: str) -> str:
    """The compiler's name for a datatype spelled any of the usual ways (``BFLOAT8_B`` -> ``bfp8_b``,
    ``float32`` -> ``f32``). Unknown spellings come back lowercased, so the caller's error names them."""
    return _normalize_spelling(str(dtype))


# Memoized: the cost model reads tile bytes (so normalizes a datatype) several times per plan it
# prices, and the planner prices hundreds of thousands of plans; few spellings ever occur.
@functools.lru_cache(maxsize=256)
def _normalize_spelling(spelling: str) -> str:
    d = spelling.strip().lower()
    if d.startswith("datatype."):
        d = d[len("datatype.") :]
    return _DTYPE_ALIASES.get(d, d)


def normalize_fidelity(fidelity: str) -> str:
    """``HiFi2`` / ``MathFidelity.HiFi2`` / ``hifi2`` -> ``hifi2``."""
    f = str(fidelity).strip().lower()
    if f.startswith("mathfidelity."):
        f = f[len("mathfidelity.") :]
    return f


def _pairs(mapping: Mapping[str, object] | Iterable[tuple[str, object]]) -> tuple:
    items = mapping.items() if isinstance(mapping, Mapping) else mapping
    return tuple(sorted((str(k), v) for k, v in items))


@dataclass(frozen=True)
class Target:
    """One spatial accelerator. Units: bytes, cycles of ``clock_ghz``, tiles of ``tile_rows`` x
    ``tile_cols`` elements. Fields set to ``None`` are ones the chip does not declare; the passes fall
    back to the documented default for each (e.g. FIFO depth 2 without credit-loop latencies)."""

    name: str
    # ── the mesh ─────────────────────────────────────────────────────────────────────────────────
    mesh_x: int
    mesh_y: int
    # ── per site ─────────────────────────────────────────────────────────────────────────────────
    # Local memory in bytes, NOT counting the reserved bottom: buffers live at
    # [local_mem_base, local_mem_base + budget). `local_mem_bytes` is the default budget,
    # `local_mem_max_bytes` what the site can be configured to give (a GPU block opts in to more
    # shared memory than its 48 KiB default; a Tensix L1 is the same either way).
    local_mem_bytes: int
    local_mem_max_bytes: int
    local_mem_base: int
    movement_engines: int
    # Accumulator tiles per accumulation precision, as ((precision, tiles), ...).
    acc_tiles_by_precision: tuple[tuple[str, int], ...]
    acc_in_registers: bool
    acc_lanes: int
    # ── credit loop (docs/passes.md#size-operand-depth-from-the-credit-loop): None where the chip does not declare them ─────────────────────────
    # fetch_tile: cycles to bring one tile into a FIFO page; credit_return: cycles from the consumer
    # freeing a page to the producer's next fetch arriving (the round trip); service_page: cycles
    # the consumer spends per page. size-buffers sizes an operand FIFO to
    # max(2, ceil((page_tiles * fetch_tile + credit_return) / service_page)) pages.
    fetch_tile_cycles: int | None
    credit_return_cycles: int | None
    service_page_cycles: int | None
    # ── interconnect ─────────────────────────────────────────────────────────────────────────────
    multicast: Multicast
    receiver_noc: int
    writer_noc: int
    link_bytes_per_cycle: int
    hop_cycles: int
    # ── tiles and datatypes ──────────────────────────────────────────────────────────────────────
    tile_rows: int
    tile_cols: int
    # ((dtype, bytes per tile), ...): the datatypes the chip has.
    dtype_tile_bytes: tuple[tuple[str, int], ...]
    # ((dtype, ((fidelity, cycles per 32x32x32 tile-matmul), ...)), ...).
    matmul_cycles: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]
    # ── clock and DRAM ───────────────────────────────────────────────────────────────────────────
    clock_ghz: float
    dram_gbps: float
    dram_channels: int
    # ── optional facts the cost model uses where present ───────────────────────────────────────────
    # RDU vector-network word: 4 bytes x PCU lanes (None elsewhere).
    fabric_word_bytes: int | None = None
    # Bytes per cycle the matrix engine's operand path (Tensix unpackers) reads from local memory.
    unpack_bytes_per_cycle: int | None = None
    # ... and both operand paths together, where they share local-memory ports.
    unpack_joint_bytes_per_cycle: int | None = None
    # Round trip of one DRAM read as a movement engine sees it, request to last byte landed.
    dram_latency_cycles: int | None = None
    # A last-level cache shared by all sites (a GPU's L2), in bytes; None where there is none.
    l2_bytes: int | None = None
    # Cycles a movement engine spends issuing one NoC transaction (one tile of an interleaved tensor).
    noc_issue_cycles: int | None = None
    # The most bytes one NoC read transaction carries, where the program reads a row-major tensor's
    # contiguous row segment as ONE transaction (docs/targets.md#one-transaction-per-tile): a one-row
    # GEMM's A then costs ceil(bytes / this) transactions a step, not one a tile. None: one a tile,
    # what the TT-Lang printer does (ttl.copy reads tile by tile), so no preset declares it.
    noc_burst_bytes: int | None = None
    # Rows the matrix engine processes per pass; a tile with fewer real rows still costs whole passes.
    matmul_row_pass: int = 8
    # Cycles per tile-matmul the matrix engine's issuing thread spends on instructions other than the
    # tile's own passes (docs/targets.md#tile-matmul-issue): on every tile-matmul...
    matmul_handover_cycles: int = 0
    # ... more at more than one fidelity phase (the loop's closing instruction) ...
    matmul_phase_reset_cycles: int = 0
    # ... and releasing a source-register bank, once per row of a sub-block's reuse ...
    matmul_release_cycles: int = 0
    # ... or on every tile-matmul where the sub-block is at least 2x2 (Wormhole's LLK).
    matmul_release_each_tile: bool = False
    # Elements a site's vector unit (Tensix SFPU, an SM's FP32 lanes, a PCU's SIMD lanes) retires
    # per cycle: the rate of every stream section's pointwise and reduction work.
    vector_lanes: int = 32
    # Device memory (DRAM) in bytes: what the program's tensors (weights, activations, caches) must
    # fit in (docs/targets.md#dram-capacity). None: not declared, nothing is checked.
    dram_bytes: int | None = None
    # The fraction of the peak DRAM bandwidth (`dram_gbps`) that a streaming reader sustains: what
    # the chip's own tuned DRAM microbenchmark reaches (docs/targets.md#achievable-dram-bandwidth).
    # The cost model's DRAM time runs at it (targets/dram.py); rooflines stay at the peak.
    dram_efficiency: float = 1.0
    description: str = ""
    # The float type an imported model's activations compute in by default (`spatial-import
    # --target`; docs/tg.md#precision-llamacpps): bf16, f16 or f32, one of the chip's datatypes.
    # None: `activations` decides (bf16 where the chip has it, else f32).
    activation_dtype: str | None = None
    # Whether a kernel can address DRAM by a value it has read (a block id of a paged KV cache's
    # block table): a GPU thread loads from any address it computes; a TT-Lang kernel cannot (the
    # specification has no scalar read of a tensor into a kernel and no runtime argument, so
    # tt-metal moves such rows with ttnn ops between its operations). Link reads a paged cache
    # directly where True, else copies the users' blocks into a contiguous scratch first, a
    # section of its own that the report prices (docs/passes.md#link-the-batched-decode-step).
    # Default False: the copy runs everywhere.
    kernel_reads_by_id: bool = False
    # Whether the target's kernels carry a batched attention's flash-decoding partials (several
    # query rows' outputs and statistics in one page, docs/sp.md#attention): a Triton program
    # stores any row; TT-Lang's flash.py moves one query row's (its m and l spread over rows 2
    # and 3 of a tile), so link does not choose that split there (kv-splits still forces it).
    batched_kv_splits: bool = False
    # Cycles from one kernel's launch to the next's where the second depends on the first and both
    # are launched back to back from one stream: what a program that hands values from one kernel
    # to another through DRAM (a GPU's split-K: its partial sums, then the kernel that adds them)
    # pays for the extra kernel however little it does. None: the target's programs are priced as
    # one launch and no plan adds a kernel (docs/targets.md#kernel-launches).
    kernel_launch_cycles: int | None = None

    def __post_init__(self) -> None:
        # Targets built in code (presets, tests) may spell the multicast kind as a string.
        try:
            multicast = Multicast(self.multicast)
        except ValueError:
            raise TargetError(
                f"target {self.name}: multicast must be one of {', '.join(MULTICAST_KINDS)}, "
                f"got {self.multicast!r}"
            ) from None
        object.__setattr__(self, "multicast", multicast)
        act = self.activation_dtype
        if act is not None and (act not in self.datatypes or act not in FLOAT_ACTIVATIONS):
            raise TargetError(
                f"target {self.name}: activation_dtype {act!r} must be one of "
                f"{', '.join(FLOAT_ACTIVATIONS)} and a datatype of the chip "
                f"({', '.join(self.datatypes)})"
            )

    # ── derived facts ─────────────────────────────────────────────────────────────────────────────
    @property
    def sites(self) -> int:
        return self.mesh_x * self.mesh_y

    @property
    def multicasts_rectangles(self) -> bool:
        """One send reaches a whole rectangle of sites: a row (column) of the grid shares the A (B)
        blocks one of its sites reads, and blocks are dealt by the 2-D map, not split_work_to_cores."""
        return self.multicast is Multicast.RECTANGLE

    @property
    def tile_elems(self) -> int:
        return self.tile_rows * self.tile_cols

    @property
    def dram_bytes_per_cycle(self) -> float:
        """DRAM bandwidth in bytes per core clock cycle: GB/s divided by GHz."""
        return self.dram_gbps / self.clock_ghz

    @property
    def datatypes(self) -> tuple[str, ...]:
        return tuple(d for d, _ in self.dtype_tile_bytes)

    @property
    def local_mem_end(self) -> int:
        """One past the last byte a buffer may occupy under the configurable maximum."""
        return self.local_mem_base + self.local_mem_max_bytes

    @property
    def activations(self) -> str:
        """The float type an imported model's activations default to: `activation_dtype` where
        declared, else bf16 where the chip has it (Tensix computes in bf16), else f32."""
        if self.activation_dtype is not None:
            return self.activation_dtype
        return "bf16" if "bf16" in self.datatypes else "f32"

    @property
    def q8_0_storage(self) -> str:
        """The format a Q8_0 tensor is stored in on this chip, the one fact that `tile_bytes`
        prices and `-t ttlang` prints: bfp8_b where the chip has it (Tensix: ttnn has no Q8_0
        tile; bfp8_b keeps 32 values in the same 34 bytes, a sign-and-7-bit value each and an
        exponent per 16, and is the format tt-metal stores Llama weights in;
        docs/backend-ttlang.md#q8_0-weights), else Q8_0 itself (ggml's blocks, 34 bytes per 32)."""
        return "bfp8_b" if "bfp8_b" in self.datatypes else "q8_0"

    def has_dtype(self, dtype: str) -> bool:
        return normalize_dtype(dtype) in self.datatypes

    def tile_bytes(self, dtype: str) -> int:
        """Bytes of one tile of ``dtype`` on this chip (block-float formats carry their shared
        exponents: bfp8_b is 1024 mantissa bytes + 64 exponent bytes = 1088)."""
        d = normalize_dtype(dtype)
        if d in Q8_0_FORMATS:  # what the chip stores and moves (targets/quant.py: computes)
            storage = self.q8_0_storage
            return (
                q8_0_bytes(self.tile_elems) if storage in Q8_0_FORMATS else self.tile_bytes(storage)
            )
        for name, b in self.dtype_tile_bytes:
            if name == d:
                return b
        raise TargetError(
            f"target {self.name} has no datatype {dtype!r}; it has {', '.join(self.datatypes)}"
        )

    def dram_tile_bytes(self, dtype: str, rows: int | None = None) -> int:
        """The DRAM bytes one tile of a tensor of ``dtype`` moves: a whole tile, except in a
        row-major (`rows`) tensor of fewer ``rows`` than a tile, whose rows are all a tile of it
        holds (a one-row tensor moves one row per tile, not the padding a tiled tensor stores).
        ``rows`` None: a tiled tensor. The one rule the stream and the GEMM models both price."""
        tile = self.tile_bytes(dtype)
        if rows is not None and rows < self.tile_rows:
            return -(-tile * rows // self.tile_rows)
        return tile

    def matmul_tile_cycles(self, dtype: str, fidelity: str = "hifi4") -> int:
        """Cycles one site's matrix engine takes for a 32x32x32 tile-matmul of ``dtype`` operands at
        ``fidelity``. Targets without fidelity phases (GPUs, Plasticine) list the same number for
        every fidelity, so the argument is accepted and ignored there."""
        d = normalize_dtype(dtype)
        f = normalize_fidelity(fidelity)
        if f not in FIDELITIES:
            raise TargetError(
                f"unknown math fidelity {fidelity!r} (target {self.name}); use one of {', '.join(FIDELITIES)}"
            )
        for name, table in self.matmul_cycles:
            if name == d:
                for fid, cycles in table:
                    if fid == f:
                        return cycles
                raise TargetError(f"target {self.name} has no {f} matmul for {d}")
        have = ", ".join(n for n, _ in self.matmul_cycles)
        raise TargetError(
            f"target {self.name} cannot matmul datatype {dtype!r}; it can matmul {have}"
        )

    def peak_flops_per_cycle(self, dtype: str = "bf16", fidelity: str = "hifi4") -> float:
        """Whole-mesh FLOPs per cycle: every site running tile-matmuls back to back."""
        return self.sites * 2.0 * 32 * 32 * 32 / self.matmul_tile_cycles(dtype, fidelity)

    def acc_tiles(self, precision: str = "bf16") -> int:
        """Tiles the accumulator holds at once for ``precision`` (Tensix dest in half-sync: 8 tiles
        of 16-bit, 4 of fp32). A 16-bit or block-float operand type accumulating in a 16-bit
        destination reads the bf16 entry."""
        p = normalize_dtype(precision)
        table = dict(self.acc_tiles_by_precision)
        if p in table:
            return table[p]
        if p in _SIXTEEN_BIT_ACC and "bf16" in table:
            return table["bf16"]
        raise TargetError(
            f"target {self.name} declares no accumulator for precision {precision!r} "
            f"(field acc_tiles.{p}); it declares {', '.join(table)}"
        )

    def acc_lane_grid(self, osh: int, osw: int) -> tuple[int, int] | None:
        """How the accumulator's lanes tile an ``osh`` x ``osw`` sub-block, as (rows, cols) of lanes,
        or None when they cannot (no split of the lanes divides both sides). On a register
        accumulator each lane (a warp) owns whole tiles and writes them itself; the epilogue then
        needs one tile-sized slot per lane and no output ring (docs/passes.md#tile-a-register-accumulator-holds-its-whole-block)."""
        lanes = max(1, self.acc_lanes)
        best: tuple[int, int] | None = None
        for a in range(1, lanes + 1):
            if lanes % a:
                continue
            b = lanes // a
            if osh % a == 0 and osw % b == 0:
                # Prefer the squarest split: it is how a warp grid is laid out over a block tile.
                if best is None or abs(a - b) < abs(best[0] - best[1]):
                    best = (a, b)
        return best

    # ── modified copies ───────────────────────────────────────────────────────────────────────────
    def with_local_mem(self, budget_bytes: int) -> Target:
        """The same chip with a local-memory budget of ``budget_bytes`` (default and maximum), the
        pipeline's configurable budget. Refuses a non-positive budget."""
        if isinstance(budget_bytes, bool) or not isinstance(budget_bytes, int) or budget_bytes <= 0:
            raise TargetError(
                f"local-memory budget for {self.name} must be a positive integer of bytes, got {budget_bytes!r}"
            )
        return dataclasses.replace(
            self, local_mem_bytes=budget_bytes, local_mem_max_bytes=budget_bytes
        )

    def with_grid(self, x: int, y: int) -> Target:
        """The same chip using only an ``x`` by ``y`` sub-grid of its mesh (tt-metal's
        compute_with_storage_grid_size). A grid larger than the mesh is a different chip: refused."""
        for axis, v, most in (("x", x, self.mesh_x), ("y", y, self.mesh_y)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise TargetError(
                    f"grid {axis} for {self.name} must be a positive integer, got {v!r}"
                )
            if v > most:
                raise TargetError(
                    f"grid {x}x{y} does not fit {self.name}'s {self.mesh_x}x{self.mesh_y} mesh"
                )
        return dataclasses.replace(self, mesh_x=x, mesh_y=y)

    def with_dram_bytes(self, capacity: int) -> Target:
        """The same chip with ``capacity`` bytes of DRAM (the pipeline's `dram-mem` option:
        what-if compiles, programs larger than one card)."""
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:
            raise TargetError(
                f"DRAM capacity for {self.name} must be a positive integer of bytes, got {capacity!r}"
            )
        return dataclasses.replace(self, dram_bytes=capacity)

    def with_dram_gbps(self, gbps: float) -> Target:
        """The same chip with another DRAM bandwidth (what-if studies; property tests)."""
        if not gbps > 0:
            raise TargetError(f"DRAM bandwidth for {self.name} must be positive, got {gbps!r}")
        return dataclasses.replace(self, dram_gbps=float(gbps))


def fidelity_table(
    lofi: int, hifi2: int | None = None, hifi3: int | None = None, hifi4: int | None = None
):
    """A matmul row: cycles at each fidelity. With only ``lofi`` given the engine has no fidelity
    phases and every fidelity costs the same."""
    h2 = lofi if hifi2 is None else hifi2
    h3 = lofi if hifi3 is None else hifi3
    h4 = lofi if hifi4 is None else hifi4
    return (("hifi2", h2), ("hifi3", h3), ("hifi4", h4), ("lofi", lofi))


def make_target(**fields) -> Target:
    """Build a Target from plain mappings (``acc_tiles``, ``tile_bytes``, ``matmul``) as presets and
    the TOML loader write them; the tables become sorted tuples of pairs."""
    acc = fields.pop("acc_tiles")
    tiles = fields.pop("tile_bytes")
    matmul = fields.pop("matmul")
    return Target(
        acc_tiles_by_precision=_pairs(acc),
        dtype_tile_bytes=_pairs(tiles),
        matmul_cycles=tuple(sorted((d, tuple(sorted(t))) for d, t in matmul.items())),
        **fields,
    )
