"""Preset targets, every number with its public source.

Sources (cited below by their short name):

[ISA]     tenstorrent/tt-isa-documentation, WormholeB0/TensixTile: L1.md (L1 size, port bandwidths,
          NoC 256-bit links, "latency of each hop is at least 9 cycles"), MatrixUnit.md (4.096 TFLOP/s
          per FPU at 1 GHz, one MVMUL per fidelity phase; "an n150 board will have 1 ASIC with 72
          tiles"; instruction throughputs), Dst.md (dest register file), DRAM tiles page ("12x 1 GiB
          channels of GDDR6"); TensixCoprocessor/UNPACR_Regular.md "Performance" (x1/x2/x4 = 16/32/64
          B/cycle; both unpackers wanting x4 get x2 each), MOPExpander.md (one-cycle transition
          penalty), README.md (one instruction per thread per cycle). Commit 39304719.
[GEMM]    tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md (commit 06bd3735): "The matrix engine performs
          8x16 x 16x16 = 8x16 in a single cycle"; a 32x32x32 tile takes 16/32/48/64 cycles at
          LoFi/HiFi2/HiFi3/HiFi4; "shorter than 8x16 ... the engine will still perform 8x16 x 16x16";
          WH 1 GHz, BH 1.35 GHz; full grids 8x8 (WH) and 13x10 (BH).
[BENCH]   tt-metal tests/ttnn/unit_tests/benchmarks/test_benchmark.py: fp32_dest_acc_en caps a
          sub-block at 4 tiles, otherwise 8 (the half-sync dest).
[DRAM-WH] tt-metal tech_reports/Saturating_DRAM_bandwidth/Saturating_DRAM_bandwidth.md: 12 DRAM banks
          on Wormhole, 288 GB/s spec at 12 GT/s, 267 GB/s measured by the DRAM microbenchmark ("over
          92% of bandwidth utilization"); the DRAM-sharded matmuls of Llama3-70B decode reach 239-260.
[FLASHDEC] tt-metal tech_reports/FlashAttention/FlashDecode.md: 250 GB/s "maximum observed" on
          Wormhole (of 288), FlashDecode's KV-cache reads up to 180 GB/s.
[DRAM-BH] tt-metal tech_reports/Saturating_DRAM_bandwidth/Saturating_DRAM_bandwidth_Blackhole.md and
          bh_dram_read_microbenchmark.md: 8 banks, 512 GB/s, NoC payload 512 bits (64 B/word) on
          Blackhole vs 256 bits on Wormhole; one 16 KB read in flight per reader reaches 186 GB/s over 8
          readers; one bank-adjacent reader per bank with two reads in flight reaches 500 of 512 GB/s
          ("~98% of the theoretical peak"), 344 GB/s (67%) from arbitrarily placed readers.
[TILE]    tt-metal tt_metal/common tile_size(): bf16/f16 2048, f32 4096, bfp8_b 256*4 + 16*4 = 1088,
          bfp4_b 128*4 + 16*4 = 576, int8/uint8 1024, int32/uint32 4096 bytes per 32x32 tile.
[HAL]     tt-metal dev_mem_map / HAL: Wormhole L1 1464 KiB, Blackhole 1536 KiB (also [ISA] L1.md); the
          unreserved base differs between tt-metal releases (the project's founding table, [TABLE]).
[PLAST]   Prabhakar et al., "Plasticine: A Reconfigurable Architecture For Parallel Patterns", ISCA
          2017: 16x8 checkerboard of 64 PCUs and 64 PMUs, PCU 16 lanes x 6 stages, PMU 256 KB scratchpad
          in 16 banks, 1 GHz, 4 DDR3 channels, 12.3 single-precision TFLOPS; statically routed,
          pipelined (registered) scalar/vector/control networks, vector word 16 x 32 bit.
[AMP]     NVIDIA Ampere GA102 whitepaper and the RTX 3060 specification: GA106, 28 SMs, 1.777 GHz boost,
          192-bit GDDR6 at 15 Gbps = 360 GB/s; GA10x tensor cores: 512 dense FP16/BF16 FLOP per SM per
          clock with FP32 accumulate (RTX 3080: 59.5 TFLOPS over 68 SMs at 1.71 GHz), TF32 half that,
          INT8 4x; shared memory 100 KB per SM, 99 KB per block opt-in, 48 KB default; 64K 32-bit
          registers per SM.
[HOP]     NVIDIA H100 Tensor Core GPU Architecture whitepaper and the H100 / H200 datasheets: 132 SMs
          (SXM5), 4096 dense FP16/BF16 FLOP per SM per clock (989.4 TFLOPS at 1.83 GHz), TF32 half, INT8
          2x; 228 KB shared memory per SM, 227 KB per block opt-in; HBM3 3.35 TB/s (H100 SXM5, 5 stacks),
          HBM3e 4.8 TB/s (H200, 6 stacks).
[NOCMODEL] tt-metal tests/tt_metal/tt_metal/perf_microbenchmark (NoC analytical model scripts):
          read issue = NIU programming 6 + non-NIU programming 43 cycles, round trip ~95 cycles,
          NoC data width 32 B (Grayskull-era measurements).
[GPULAT]  PubMed Central article PMC10448217, Table 3 ("Hardware features of different Nvidia GPU
          architectures"): global memory latency 400 clock cycles on V100, A100
          and H100 (an unloaded round trip; uncertain under load, where queueing adds to it).
[GPUSTREAM] te42kyfo/gpu-benches (Ernst et al., FAU Erlangen; commit 1c36d509): measured streaming
          rates at full occupancy. gpu-stream "read" (one load stream): H100 PCIe 1942 GB/s, A40
          679 GB/s (peaks 2039 and 696 GB/s). gpu-small-kernels: back-to-back launch rates. Its
          device "h200" is a GH200 480GB (96 GB HBM3, 4.0 TB/s), not an H200: the successor
          repository RRZE-HPC/gpu-benches renamed its gpu-stream file h200.txt to gh200.txt
          (commit d0c041ed, 2024-09-12) and lists it as "NVIDIA GH200 480GB" (device_order.py);
          its stores saturate at 3898-3951 GB/s, 0.97-0.99 of 4.0 TB/s, as the H100 PCIe's do of
          its peak (2016 of 2039), and 0.81 of an H200's 4.8.
[BABEL]   Azure/AI-benchmarking-guide (commit 8fd0c6e1), Azure_Results/ND_H100_v5_results.md and
          ND_H200_v5_results.md, "HBM Bandwidth": BabelStream (CUDA, double, 2^25-element arrays,
          268 MB each) on an "NVIDIA H100 80GB HBM3" (the SXM5) and an "NVIDIA H200 141GB" (SXM),
          CUDA 12.6. Dot (two load streams, no store): H100 3.18 TB/s, H200 4.48 TB/s; Triad 2.97 and
          4.15; Copy 2.90 and 4.01. A later run on the same H200 machine type (CUDA 12.8, fork
          samuel-bohman/AI-benchmarking-guide at b408bf8) reads Dot 4.57, Triad 4.18.
[MAMF]    stas00/ml-engineering, compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS
          comparison table": the best torch.matmul rate over a sweep of large BF16 shapes (no
          sparsity), measured: NVIDIA H100 SXM 792.1 TFLOPS (80.1% of 989, CUDA 12.1, best shape
          6144x17920x2816), GH200 SXM 821.0 (83.0%, CUDA 12.5), A100 SXM 267.9 (85.9%).
[MEM]     Device memory: Tenstorrent n150 and p150 product pages (n150: 12 GB GDDR6; p150: 32 GB
          GDDR6), NVIDIA RTX 3060 specification (12 GB GDDR6), H100 SXM5 datasheet (80 GB HBM3),
          H200 datasheet (141 GB HBM3e). Plasticine [PLAST] gives 4 DDR3 channels but no capacity.
[NOCPARAM] tt-metal tt_metal/hw/inc/{wormhole,blackhole}/noc/noc_parameters.h: NOC_MAX_BURST_SIZE =
          NOC_MAX_BURST_WORDS (256) x NOC_WORD_BYTES (NOC_PAYLOAD_WIDTH / 8: 256 bits on Wormhole,
          512 on Blackhole), 8192 and 16384 bytes: the most one NoC read transaction carries.
[TTLCOPY] tt-lang test/ttlang/Pipelines/ttl_to_ttkernel_pipeline.mlir: ttl.copy of an interleaved
          tile-layout tensor lowers to ttkernel.noc_async_read_tile, one call a tile; the simulator's
          ttl/sim/dfb.py refuses a copy between a row-major and a tiled endpoint.
[TTLSPEC] tenstorrent/tt-lang docs/sphinx/specs/TTLangSpecification.md (0.15): a kernel slices a
          tensor by Python integers only; no scalar read of a tensor or block, no runtime argument.
[LLK]     tenstorrent/tt-llk @ 36b092e8 (the same loops since 2023): tt_llk_{wormhole_b0,blackhole}/
          llk_lib/llk_math_matmul.h (_llk_math_matmul_, matmul_configure_mop), common/inc/
          cunpack_common.h (both unpackers' Throttle_mode = 2).
[TABLE]   The project's founding preset table, kept in docs/targets.md#presets: numbers it took
          from tt-metal and vendor material without a finer citation; cross-checked above.
"""

from __future__ import annotations

from .spec import Multicast, Target, fidelity_table, make_target

# Tensix tile-matmul: 16 MVMULs (8x16 @ 16x16) per fidelity phase for a 32x32x32 tile [GEMM][ISA].
_TENSIX_FLOAT = fidelity_table(16, 32, 48, 64)
# Integer operands: "arbitrary 8-bit inputs require 4 fidelity phases" [ISA MatrixUnit.md], so every
# fidelity costs the HiFi4 time.
_TENSIX_INT = fidelity_table(64, 64, 64, 64)

_TENSIX_TILE_BYTES = {
    "bf16": 2048,
    "f16": 2048,
    "f32": 4096,
    "bfp8_b": 1088,
    "bfp4_b": 576,
    "i8": 1024,
    "u8": 1024,
    "i32": 4096,
    "u32": 4096,
}  # [TILE]

_TENSIX_MATMUL = {
    # Block-float and fp16 operands unpack to the same 19-bit source registers, so they take the
    # bf16 cycles; what the format changes is the bytes moved and unpacked [GEMM "Data Formats"].
    "bf16": _TENSIX_FLOAT,
    "f16": _TENSIX_FLOAT,
    "bfp8_b": _TENSIX_FLOAT,
    "bfp4_b": _TENSIX_FLOAT,
    # f32 operands are read as TF32 by the FPU (19-bit source registers) [ISA SrcASrcB.md]; same MVMUL
    # count per phase. Uncertain: full-precision f32 results need HiFi4, which the caller chooses.
    "f32": _TENSIX_FLOAT,
    "i8": _TENSIX_INT,
    "u8": _TENSIX_INT,
}

# Dest in half-sync mode (one half computes while the packer drains the other): 16 tiles of 16-bit
# datums in all, 8 per half; fp32 accumulation halves it to 4 [TABLE][BENCH]. Int32 accumulates in
# 32-bit dest like fp32.
_TENSIX_ACC = {"bf16": 8, "f16": 8, "f32": 4, "i32": 4}


def _tensix(*, l1_bytes: int, local_mem_base: int, dram_round_trip: int, **chip) -> Target:
    """A Tensix chip: what Wormhole and Blackhole share, with the per-chip numbers given in ``chip``.
    Buffers may use the L1 above its reserved base; a DRAM read's round trip is both the latency a
    reader waits for and the time its credit takes to come back (the next read is issued when the page
    is freed)."""
    return make_target(
        local_mem_base=local_mem_base,
        local_mem_bytes=l1_bytes - local_mem_base,
        local_mem_max_bytes=l1_bytes - local_mem_base,
        credit_return_cycles=dram_round_trip,
        dram_latency_cycles=dram_round_trip,
        # Two data-movement RISC-Vs (BRISC, NCRISC), one per NoC by tt-metal convention [TABLE].
        movement_engines=2,
        acc_tiles=_TENSIX_ACC,  # same dest on both [TABLE]
        acc_in_registers=False,
        acc_lanes=1,
        # service_page: a declared nominal, not a measurement: an 8-tile page at the HiFi4 tile time
        # (8 x 64 cycles). Uncertain by construction; it only sets how deep size-buffers makes FIFOs.
        service_page_cycles=512,
        # Rectangle multicast on both NoCs; loads receive on NoC0, the default writer is NoC1 [TABLE].
        multicast=Multicast.RECTANGLE,
        receiver_noc=0,
        writer_noc=1,
        tile_rows=32,
        tile_cols=32,
        tile_bytes=_TENSIX_TILE_BYTES,
        matmul=_TENSIX_MATMUL,
        # One unpacker "can theoretically achieve four 128-bit reads from L1 per cycle" [ISA L1.md]
        # (x4 speed, 64 B/cycle [ISA UNPACR_Regular.md]); both together: per chip, below.
        unpack_bytes_per_cycle=64,
        # Issuing one NoC read: NIU programming 6 + non-NIU programming 43 cycles [NOCMODEL].
        # Uncertain: measured on Grayskull-era firmware; the data-movement API has changed since.
        noc_issue_cycles=49,
        # No noc_burst_bytes: one NoC read carries up to NOC_MAX_BURST_WORDS (256) NoC words, 8192 B
        # on Wormhole (32 B words) and 16384 B on Blackhole (64 B) [NOCPARAM], so a one-row A's row
        # segment could be one read; but the TT-Lang printer reads every tensor tile by tile
        # (ttl.copy lowers to one noc_async_read_tile a tile [TTLCOPY]), and the price must be what
        # the printed program does. examples/targets/*_row_bursts.toml are the what-ifs.
        matmul_row_pass=8,  # in0 is fed 8 rows at a time [GEMM]
        # The matmul LLK's math thread, per tile-matmul [LLK llk_math_matmul.h]: a SETC16 (the tile's
        # dest address), then the MOP (the 16 x phases MVMULs), after which the MOP expander loses
        # one cycle ("a one cycle transition penalty" when the next instruction is not a MOP [ISA
        # MOPExpander.md]); a thread issues one instruction a cycle [ISA README.md]. So 2 cycles a
        # tile-matmul, plus the MOP's closing SETRWC at more than one fidelity phase, plus the
        # SETRWC that releases a source bank (1 cycle each [ISA MatrixUnit.md]), once per row of
        # the reuse. Uncertain: instruction counts, not a measurement of the cycles.
        matmul_handover_cycles=2,
        matmul_phase_reset_cycles=1,
        matmul_release_cycles=1,
        # The SFPU is a 32-lane SIMD vector unit [ISA VectorUnit.md] (a Wormhole document; uncertain
        # for Blackhole). One element per lane per cycle is the simple-instruction rate.
        vector_lanes=32,
        # A TT-Lang kernel cannot address DRAM by a value it reads (no scalar read, no runtime
        # argument [TTLSPEC]): a paged cache is copied contiguous by a ttnn op first.
        kernel_reads_by_id=False,
        **chip,
    )


WORMHOLE_N150 = _tensix(
    name="wormhole_n150",
    description="Tenstorrent Wormhole n150: one WH ASIC, 8x8 Tensix compute grid at 1 GHz",
    # 72 Tensix tiles are enabled on an n150 [ISA MatrixUnit.md]; tt-metal's compute grid (and the
    # GEMM report's utilization denominator) is 8x8 [GEMM].
    mesh_x=8,
    mesh_y=8,
    # L1 is 1464 KiB = 1,499,136 B [ISA L1.md][HAL]; the first 103,712 B are firmware, mailboxes and
    # kernel config [TABLE]. Uncertain: the unreserved base moves between tt-metal releases.
    l1_bytes=1_499_136,
    local_mem_base=103_712,
    # Credit loop: one bf16 tile crosses a 32 B/cycle link in 2048 / 32 = 64 cycles [ISA L1.md]; the
    # credit comes back with the next DRAM read's round trip. Uncertain: 500 cycles (500 ns) carries
    # the Blackhole figure below over in nanoseconds; no Wormhole DRAM latency is public.
    fetch_tile_cycles=64,
    dram_round_trip=500,
    link_bytes_per_cycle=32,  # 256-bit NoC links [ISA L1.md] [DRAM-BH table]
    hop_cycles=9,  # "the latency of each hop is at least 9 cycles" [ISA L1.md]
    clock_ghz=1.0,  # [GEMM]
    dram_gbps=288.0,  # GDDR6 at 12 GT/s [DRAM-WH]
    # 267 of 288 GB/s from the tuned microbenchmark reader [DRAM-WH]; whole kernels reach less
    # (250 max observed [FLASHDEC], 239-260 in DRAM-bound matmuls [DRAM-WH]), which the channel
    # spread and the read round trips of the cost model add on their own.
    dram_efficiency=267 / 288,
    dram_channels=12,  # "12x 1 GiB channels of GDDR6" [ISA]; 12 banks [DRAM-WH]
    # Both unpackers run at x4 (Throttle_mode 2 [LLK cunpack_common.h]); when both want x4 each
    # gets x2, 32 B/cycle [ISA UNPACR_Regular.md "Performance"]: 64 B/cycle together.
    unpack_joint_bytes_per_cycle=64,
    # With a sub-block of at least 2x2 the LLK releases the streamed operand's bank with its own
    # SETRWC after every tile-matmul (t_dim > 1 in _llk_math_matmul_) [LLK].
    matmul_release_each_tile=True,
    dram_bytes=12 * 2**30,  # 12 GB GDDR6 [MEM]: 12 channels of 1 GiB [ISA]
)

BLACKHOLE_P150 = _tensix(
    name="blackhole_p150",
    description="Tenstorrent Blackhole p150: 13x10 Tensix compute grid at 1.35 GHz",
    # 13x10 is the GEMM report's full grid [GEMM]; its tables also run 11x10 (use with_grid(11, 10)).
    mesh_x=13,
    mesh_y=10,
    # L1 1536 KiB = 1,572,864 B [ISA L1.md][HAL]; usable from 98,304 [TABLE] (uncertain, as for WH).
    l1_bytes=1_572_864,
    local_mem_base=98_304,
    # 2048 B over a 64 B/cycle link = 32 cycles. DRAM round trip: one 16 KB read in flight per reader
    # gives 186 GB/s over 8 readers = 17.2 B/cycle each, i.e. 951 cycles per read, of which ~350 is
    # streaming 16 KB at the 46-47 B/cycle bank rate, leaving ~600 cycles of latency [DRAM-BH]. Derived,
    # so uncertain to perhaps +-20%.
    fetch_tile_cycles=32,
    dram_round_trip=600,
    link_bytes_per_cycle=64,  # 512-bit NoC payload [DRAM-BH]
    hop_cycles=9,  # uncertain: the Wormhole figure [ISA]; no Blackhole hop latency is public
    clock_ghz=1.35,  # [GEMM][DRAM-BH]
    dram_gbps=512.0,  # [DRAM-BH]
    # 500 of 512 GB/s from one bank-adjacent reader per bank [DRAM-BH]. Uncertain for the
    # compiler's own reads: arbitrarily placed readers reach 344 (67%) in the same report, and place
    # does not put readers next to their banks.
    dram_efficiency=500 / 512,
    dram_channels=8,  # [DRAM-BH]
    # Both unpackers together: "five 128-bit reads per cycle", sharing three ports [ISA L1.md] (a
    # Wormhole document; Blackhole's unpacker arbitration is not published: uncertain).
    unpack_joint_bytes_per_cycle=80,
    dram_bytes=32 * 2**30,  # 32 GB GDDR6 [MEM]: 8 channels of 4 GiB
)

PLASTICINE = make_target(
    name="plasticine",
    description="Plasticine (ISCA 2017): 64 PCU + 64 PMU checkerboard at 1 GHz",
    # The 16x8 checkerboard pairs each PCU with a PMU; a site here is one PCU and its PMU, so the
    # sites form an 8x8 mesh [PLAST]. One fabric hop in this mesh is one switch, registered.
    mesh_x=8,
    mesh_y=8,
    local_mem_base=0,
    local_mem_bytes=256 * 1024,  # PMU scratchpad, 16 banks x 16 KB [PLAST]
    local_mem_max_bytes=256 * 1024,
    # A PMU has separate read and write address datapaths [PLAST]; uncertain as a count of engines.
    movement_engines=2,
    # Partial sums live in the PCU's pipeline registers [TABLE]; 16 lanes x 6 stages hold about one
    # 32x32 fp32 tile (uncertain).
    acc_tiles={"f32": 1, "i32": 1},
    acc_in_registers=True,
    acc_lanes=1,
    fetch_tile_cycles=None,
    credit_return_cycles=None,
    service_page_cycles=None,
    # No rectangle multicast: sharing an operand is share_operand's broadcast-or-replicate decision
    # over the vector network (docs/passes.md#fuse-broadcast-or-replicate-on-the-rdu).
    multicast=Multicast.NONE,
    receiver_noc=0,
    writer_noc=0,
    link_bytes_per_cycle=64,  # vector network: 16 lanes x 32 bit per cycle per link [PLAST]
    hop_cycles=1,  # registered switch: one cycle per hop (docs/passes.md#fuse-pipelined-links-cost-words-plus-hops-minus-one)
    tile_rows=32,
    tile_cols=32,
    tile_bytes={"f32": 4096, "i32": 4096},  # 32-bit datapath only [PLAST]
    # 12.3 TFLOPS / 64 PCUs / 1 GHz = 192 FLOP per cycle = 96 FMA (16 lanes x 6 stages) [PLAST]:
    # 32*32*32 FMA / 96 = 341.3 -> 342 cycles. No fidelity phases.
    matmul={"f32": fidelity_table(342), "i32": fidelity_table(342)},
    clock_ghz=1.0,  # [PLAST]
    # 4 DDR3 channels, ~49 GB/s [TABLE][PLAST]; uncertain (DDR3-1600 x 4 would be 51.2 GB/s peak).
    dram_gbps=49.0,
    dram_channels=4,
    # Assumed, no source: the paper gives no measured DRAM bandwidth. Uncertain.
    dram_efficiency=0.9,
    # 4 DDR3 channels [PLAST]; the paper gives no capacity. Uncertain: one 8 GiB DDR3 DIMM per
    # channel (the largest unbuffered DDR3 module), 32 GiB.
    dram_bytes=32 * 2**30,
    fabric_word_bytes=4 * 16,  # 4 bytes x 16 PCU lanes [PLAST]
    unpack_bytes_per_cycle=None,
    dram_latency_cycles=None,
    matmul_row_pass=1,  # a PCU streams rows through its lanes; no row-pass granularity
    # A PCU is a 16-lane SIMD pipeline [PLAST]: one 16-wide vector enters per cycle (its 6 stages
    # can chain ops, which this rate does not count: conservative).
    vector_lanes=16,
)


def _gpu(
    name: str,
    description: str,
    sms: int,
    clock_ghz: float,
    dram_gbps: float,
    dram_channels: int,
    smem_default: int,
    smem_max: int,
    bf16_cycles: int,
    acc_tiles: int,
    acc_lanes: int,
    i8_speedup: int,
    l2_bytes: int,
    dram_bytes: int,
    dram_efficiency: float,
    launch_us: float,
) -> Target:
    """A GPU seen as a line of SMs: no on-chip multicast between SMs, registers as the accumulator,
    shared memory as the local memory. Tensor-core cycles per 32x32x32 bf16 tile-matmul given;
    f16 the same, TF32 twice, INT8 ``i8_speedup`` times faster [AMP][HOP]."""
    matmul = {
        "bf16": fidelity_table(bf16_cycles),
        "f16": fidelity_table(bf16_cycles),
        "f32": fidelity_table(2 * bf16_cycles),
        "i8": fidelity_table(max(1, bf16_cycles // i8_speedup)),
    }
    return make_target(
        name=name,
        description=description,
        mesh_x=sms,
        mesh_y=1,
        local_mem_base=0,
        local_mem_bytes=smem_default,
        local_mem_max_bytes=smem_max,
        # A load path (cp.async / TMA) and the epilogue's stores. Uncertain as an engine count.
        movement_engines=2,
        acc_tiles={"f32": acc_tiles, "bf16": acc_tiles, "f16": acc_tiles, "i32": acc_tiles},
        acc_in_registers=True,
        acc_lanes=acc_lanes,
        fetch_tile_cycles=None,
        credit_return_cycles=None,
        service_page_cycles=None,
        multicast=Multicast.NONE,
        receiver_noc=0,
        writer_noc=0,
        # L2 -> SM load bandwidth per SM. Uncertain: 64 B/cycle per SM is the commonly quoted
        # L1 fill rate; NVIDIA does not publish an L2-to-SM figure per SM.
        link_bytes_per_cycle=64,
        hop_cycles=0,
        tile_rows=32,
        tile_cols=32,
        tile_bytes={"bf16": 2048, "f16": 2048, "f32": 4096, "i8": 1024, "i32": 4096},
        matmul=matmul,
        clock_ghz=clock_ghz,
        dram_gbps=dram_gbps,
        dram_channels=dram_channels,
        unpack_bytes_per_cycle=None,
        # One DRAM round trip as an SM's load path sees it: 400 cycles on Ampere and Hopper
        # [GPULAT] (unloaded; uncertain under load). With it, a site's reads are a chain of round
        # trips, so by Little's law one SM streams only the bytes it keeps in flight per round
        # trip, and a flat deal needs enough SMs to reach the DRAM's rate.
        dram_latency_cycles=400,
        # The fraction of the peak a streaming read reaches, measured per preset [GPUSTREAM][BABEL].
        dram_efficiency=dram_efficiency,
        l2_bytes=l2_bytes,
        dram_bytes=dram_bytes,
        matmul_row_pass=16,  # mma.m16n8k16: 16 rows per tensor-core instruction
        # 128 FP32 lanes per SM on GA10x [AMP] and on Hopper [HOP].
        vector_lanes=128,
        # f16 where bf16 runs at the same rate: 3 more significand bits, and the type llama.cpp's
        # CUDA backend converts activations to for its cuBLAS GEMMs.
        activation_dtype="f16",
        # A thread loads from any address it computes: a paged cache is read through its block
        # table in the attention kernel itself (vLLM's PagedAttention).
        kernel_reads_by_id=True,
        batched_kv_splits=True,
        # The interval between two dependent kernels launched back to back from one stream
        # (``launch_us``, measured per preset [GPUSTREAM]): what split-K's second kernel costs
        # at least, so the planner splits only where that saves more.
        kernel_launch_cycles=round(launch_us * clock_ghz * 1000),
    )


# GA106: 512 dense BF16 FLOP/SM/clock with FP32 accumulate -> 65536 / 512 = 128 cycles per tile;
# INT8 is 4x the fp16-with-fp32-acc rate on GA10x [AMP]. Accumulator: a 128x128 fp32 block tile =
# 16 tiles = 64 KB of the 256 KB register file, held by 4 warps (2x2) [AMP]; uncertain as a limit.
RTX3060 = _gpu(
    "rtx3060",
    "NVIDIA GeForce RTX 3060 (GA106) as a line of 28 SMs",
    sms=28,
    clock_ghz=1.777,  # boost [AMP]; the founding table rounds to 1.78
    dram_gbps=360.0,  # [AMP]
    dram_channels=6,  # 192-bit bus = 6 x 32-bit GDDR6 channels [AMP]
    smem_default=48 * 1024,
    smem_max=99 * 1024,  # [AMP]
    bf16_cycles=128,
    acc_tiles=16,
    acc_lanes=4,
    i8_speedup=4,
    l2_bytes=3 * 1024 * 1024,  # GA106: 3 MB L2 [AMP]
    dram_bytes=12 * 2**30,  # 12 GB GDDR6 [MEM]
    # A40's read stream, 679 of 696 GB/s [GPUSTREAM]: GA102, the same GA10x GDDR6 controller.
    # Uncertain: no GA106 measurement was found.
    dram_efficiency=679 / 696,
    # An A40's: 10000 SCALE kernels over 64 KiB back to back, 65536 B / 31.5 GB/s = 2.08 us a
    # kernel (gpu-small-kernels/a40.txt [GPUSTREAM]). Uncertain: GA102, not GA106.
    launch_us=65536 / 31.5e3,
)

# GH100: 4096 dense BF16 FLOP/SM/clock -> 16 cycles per tile at 1.83 GHz [HOP], a rate no dense
# BF16 matmul sustains at 700 W: the best measured is 792.1 TFLOPS [MAMF] (cuBLAS 797.5 at 8192^3,
# targets/data/gpu_gemm_throughput.csv), 132 x 65536 FLOP x 1.83 GHz / 792.1 TFLOPS = 19.99 -> 20
# cycles per tile. The SMs slow their clock under tensor load (the CUTLASS row needed vboost to
# reach 780; H200 runners cannot hold 1830 MHz at 700 W, tile-ai/TileOPs#1587), while memory-bound
# kernels run at the 1.98 GHz boost (gpu-benches' gpu-roofline at 1980 MHz throughout [GPUSTREAM]):
# so the sustained rate is the tile-matmul's, and the clock that converts DRAM, link and latency
# cycles stays the datasheet's. Accumulator: two consumer warpgroups (8 warps) hold a 128x256
# fp32 tile = 32 tiles = 128 KB of registers; uncertain as a limit.
H100 = _gpu(
    "h100",
    "NVIDIA H100 SXM5 as a line of 132 SMs",
    sms=132,
    clock_ghz=1.83,  # the clock of the 989.4 TFLOPS dense BF16 figure [HOP]
    dram_gbps=3350.0,  # HBM3 [HOP]
    dram_channels=5,  # HBM3 stacks [HOP]
    smem_default=48 * 1024,
    smem_max=227 * 1024,  # [HOP]
    bf16_cycles=20,  # the sustained rate [MAMF]: 16 at the datasheet's 989.4 TFLOPS [HOP]
    acc_tiles=32,
    acc_lanes=8,
    i8_speedup=2,
    l2_bytes=50 * 1024 * 1024,  # 50 MB L2 [HOP]
    dram_bytes=80 * 2**30,  # 80 GB HBM3 [MEM]: 5 stacks of 16 GiB
    # BabelStream's Dot (a read-only stream) on an H100 80GB HBM3, 3.18 of 3.35 TB/s [BABEL]. An
    # H100 PCIe's read stream agrees: 1942 of 2039 GB/s = 0.952 [GPUSTREAM].
    dram_efficiency=3180 / 3350,
    # A GH200's (the same GH100 and launch path; no H100 measurement found: uncertain).
    launch_us=65536 / 26e3,
)

# H200: the same GH100 compute (989 TFLOPS dense BF16 at the datasheet's clock, 792 sustained, as
# H100 above) with 141 GB HBM3e at 4.8 TB/s [HOP].
# Uncertain: the founding table lists 1.98 GHz, the maximum boost; the dense-BF16 datasheet figure implies 1.83 GHz
# at 4096 FLOP/SM/clock, which is what the roofline must agree with, so 1.83 is used here.
H200 = _gpu(
    "h200",
    "NVIDIA H200 SXM as a line of 132 SMs",
    sms=132,
    clock_ghz=1.83,
    dram_gbps=4800.0,
    dram_channels=6,
    smem_default=48 * 1024,
    smem_max=227 * 1024,
    bf16_cycles=20,  # H100 SXM's sustained rate, the same GH100 at the same 700 W [MAMF]
    acc_tiles=32,
    acc_lanes=8,
    i8_speedup=2,
    l2_bytes=50 * 1024 * 1024,  # same GH100 die, 50 MB L2 [HOP]
    dram_bytes=141 * 10**9,  # 141 GB HBM3e [MEM]
    # BabelStream's Dot (a read-only stream) on an H200 SXM, 4.48 of 4.8 TB/s [BABEL] (4.57 in a
    # later run of the same benchmark). Not gpu-benches' 3780 GB/s: that device is a GH200 with
    # 4.0 TB/s of HBM3 [GPUSTREAM].
    dram_efficiency=4480 / 4800,
    # 10000 SCALE kernels over 64 KiB back to back from one stream, 65536 B / 26 GB/s = 2.52 us a
    # kernel, the median of the six block sizes (gpu-small-kernels/h200.txt [GPUSTREAM], a GH200:
    # the same GH100 and launch path; 1.3 us under a CUDA graph, which the Triton host does not use).
    launch_us=65536 / 26e3,
)

PRESETS: dict[str, Target] = {
    t.name: t for t in (WORMHOLE_N150, BLACKHOLE_P150, PLASTICINE, RTX3060, H100, H200)
}
