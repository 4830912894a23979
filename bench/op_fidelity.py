"""Op-by-op fidelity: one decoder layer's predicted sections against tt-metal's measured kernels.

    .venv/bin/python bench/op_fidelity.py           # per-op table, the rate rows, the step split
    .venv/bin/python bench/op_fidelity.py --json    # one JSON object per compared row

bench/model_fidelity.py predicts whole decode steps and misses most rows by 1.3-3.3x; it can only
lay a miss to a term by elimination. This bench compares the same decoder layer op by op with
what tt-metal measured for its ops, so a miss names the op and the term.

What is compared (nothing here is fitted):
- Ours: one decoder layer of the batched decode step model_fidelity compiles (the same program,
  batch, context, formats and tensor-parallel plan; model_fidelity.compile_one), each section laid
  to the role of the op tt-metal runs for it (ROLE_OF_MATMUL, ROLE_OF_OP: the QKV projections, SDPA
  decode, WO, FF1/FF3, FF2, the norms, rope, the cache update, the SwiGLU multiply, the residual
  adds, the layer's collectives). The FFN's sections are read from the MLP format's compile, the
  rest from the attention format's, as model_fidelity does.
- Measured: MEASURED, each a tt-metal device kernel duration (DEVICE KERNEL DURATION, the kernel
  alone, no dispatch or op-to-op gap) per decoder layer or a measured DRAM rate, with the file and
  commit (or the pull request) it is read from. A measured op that fuses several of our roles
  (tt-metal's RMSAllGather carries the residual add; its FF1 matmul carries FF1's reduce-scatter)
  names all of them, and ours is their sum.
- Each compared row prints ours, measured, ours/measured and our per-chip DRAM bytes and rate, and
  tt-metal's per-chip weight bytes where its shapes are published (TT_BYTES), so a ratio splits
  into work (how many bytes each chip is given: the plan) and rate (what a byte costs: the term).

Rate rows: a published DRAM utilisation of tt-metal's DRAM-sharded decode matmuls is set against
the rate our matmul sections are priced at. Step rows (step_split): a published step time less the
weights at the measured rate leaves what every other op takes; set against ours.
Single-chip rows (bench/op_fidelity_chip.py, printed after these): no per-op kernel table of a
single-chip decoder is published; tt-metal PR #50662's one-op fidelity changes on one P150 are, and
they are set against the math of tt-metal's DRAM-sharded matmuls on their reader cores, which then
names most of each single-chip row's gap.
bench/README.md#op-by-op-fidelity-issue-26 records the result and what each miss is laid to.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import model_decode  # noqa: E402  (bench/ is not a package)
import model_fidelity as mf  # noqa: E402
import op_fidelity_chip as chip  # noqa: E402

# tenstorrent/tt-metal sources, file @ commit (or pull request).
GALAXY_TARGETS = (
    "tt-metal models/demos/llama3_70b_galaxy/tests/decoder_perf_targets_6u.json @ "
    "02cd859b857d6f03107c831e180a7d7cc8d1b059 (decoder, kernel_duration ns; measured by "
    "test_decoder_device_perf.py: batch 32, start_pos 127, 8x4 mesh, the slowest chip per op)"
)
GALAXY_UNIT = (
    "tt-metal models/demos/llama3_70b_galaxy/tests/tg_perf_unit_tests/test_llama_ops_perf_TG_llama.py @ "
    "06bd3735f7df2921d8195d732c14eba433e4a32d (expected_kernel_duration_6u_us: one Galaxy chip's op)"
)
TG_UNIT_OLD = (
    "tt-metal tests/tt_eager/python_api_testing/unit_testing/misc/test_TG_llama_ops_perf.py @ "
    "42004fde2492d119c23b64b4bdeefd098dde3013 (expected_kernel_duration_us: one TG chip's op)"
)
BH_READERS = (
    "tenstorrent/tt-metal pull request #54242 (merged 2026-08): Blackhole DRAM-sharded decode "
    "matmul, one reader per DRAM bank 55% of DRAM bandwidth, 2-3 readers 90%; Llama 3.1 8B P150 "
    "33 -> 42 t/s/u"
)
BH_STEP = (
    "tenstorrent/tt-metal pull request #55080 (merged 2026-09): Llama 3.1 8B, batch 32, one P150, "
    "simple_text_demo average decode time 30.53 ms (one reader) -> 23.76 ms (two readers)"
)
# The ring rate of Blackhole's DRAM (targets/presets.py, DRAM-BH), GB/s.
BH_DRAM_GBPS = 512.0

# Roles: the ops tt-metal's decoders run, and what each of our sections is laid to.
ROLES = (
    "qkv",
    "sdpa",
    "wo",
    "ff1_ff3",
    "ff2",
    "norm",
    "residual",
    "rope",
    "kv_update",
    "mul_silu",
    "ccl",
    "heads",  # tt-metal's create-heads / concat-heads; our program has no such op
    "other",
    # once a step, after the layers
    "lm_head",
    "sampling",
)
TAIL_ROLES = ("lm_head", "sampling")
# The step's sections outside the layers that a tail role names (the rest are not compared).
ROLE_OF_TAIL = {("logits", "tg.matmul"): "lm_head", ("token", "tg.argmax"): "sampling"}
ROLE_OF_MATMUL = {
    "q": "qkv",
    "k": "qkv",
    "v": "qkv",
    "o": "wo",
    "gate": "ff1_ff3",
    "up": "ff1_ff3",
    "down": "ff2",
}
ROLE_OF_OP = {
    "tg.batch_attention": "sdpa",
    "tg.attention": "sdpa",
    "tg.batch_set_rows": "kv_update",
    "tg.set_rows": "kv_update",
    "tg.rope": "rope",
    "tg.rms_norm": "norm",
    "tg.add": "residual",
    "tg.swiglu": "mul_silu",
}
WEIGHT_ROLES = ("qkv", "wo", "ff1_ff3", "ff2")


def role_of(name: str, op: str) -> str:
    """The role of one layer section (its layer prefix dropped)."""
    if op.startswith("tg.matmul"):
        return ROLE_OF_MATMUL.get(name, "other")
    return ROLE_OF_OP.get(op, "other")


@dataclass(frozen=True)
class Case:
    """A decoder layer as tt-metal measured it: model (a key of model_fidelity's models), card, batch,
    rows of KV cache, formats."""

    model: str
    card: str
    batch: int = 32
    context: int = 128
    attention: str = "bfp8_b"
    mlp: str = "bfp4_b"
    ff2: str | None = "bfp8_b"  # as model_fidelity's rows (Published.ff2)

    def row(self) -> mf.Published:
        """The model_fidelity row this layer is compiled as (its rate is not used here)."""
        return mf.Published(
            self.model,
            self.card,
            0.0,
            "",
            self.batch,
            self.context,
            self.attention,
            self.mlp,
            ff2=self.ff2,
        )


CASES = {
    # Galaxy: Llama-3.1-70B at TP=32 on the 8x4 mesh, batch 32, 128 rows of cache (start_pos 127),
    # the demo's performance mode (bfp8_b attention, bfp4_b MLP).
    "llama70b_galaxy": Case("llama3_1_70b", "galaxy", ff2=None),
    # One P150, Llama-3.1-8B, batch 32 (the published 33.1 t/s/u row and PR #55080's runs).
    "llama8b_p150": Case("llama3_1_8b", "blackhole_p150"),
    # One N150, Llama-3.1-8B, batch 32: no per-op measurement is published; the step split only.
    "llama8b_n150": Case("llama3_1_8b", "wormhole_n150"),
    # One P150, Llama-3.1-8B, batch 1 (PR #50662's runs: QKV, WO, FF2 and the LM head bfp8_b at
    # HiFi2 in its baseline, FF1/FF3 bfp4_b at LoFi).
    "llama8b_p150_b1": Case("llama3_1_8b", "blackhole_p150", batch=1),
}


@dataclass(frozen=True)
class Measured:
    """One measured kernel (us per decoder layer: its duration times how often a layer runs it) or
    one measured DRAM rate (GB/s) of the ops in ``roles``."""

    case: str
    roles: tuple[str, ...]
    op: str  # the op as tt-metal names it
    source: str
    us: float | None = None
    per_layer: int = 1
    gbps: float | None = None
    note: str = ""

    @property
    def layer_us(self) -> float:
        return self.us * self.per_layer


G, U, T = "llama70b_galaxy", GALAXY_UNIT, TG_UNIT_OLD
MEASURED: tuple[Measured, ...] = (
    # Galaxy decoder, per layer, the demo's own ops (ns in the file, us here).
    Measured(
        G,
        ("norm", "residual"),
        "RMSAllGather_0 (RMS_0)",
        GALAXY_TARGETS,
        16.720,
        note="distributed RMS norm with its stats all-gather; the residual add is fused (no add op in the layer)",
    ),
    Measured(G, ("norm", "residual"), "RMSAllGather_1 (RMS_1)", GALAXY_TARGETS, 16.346),
    Measured(
        G,
        ("qkv",),
        "Matmul_0 (QKV_MM)",
        GALAXY_TARGETS,
        7.082,
        note="weights prefetched into L1 by the prefetcher sub-device: DRAM time overlaps other ops",
    ),
    Measured(G, ("wo",), "Matmul_1 (DO_MM)", GALAXY_TARGETS, 7.701),
    Measured(
        G,
        ("ff1_ff3",),
        "Matmul_RS_0 (Matmul_FF3_ReduceScatter_FF1)",
        GALAXY_TARGETS,
        17.498,
        note="FF1 and FF3 with FF1's reduce-scatter fused",
    ),
    Measured(G, ("ff2",), "Matmul_2 (FF2_MM)", GALAXY_TARGETS, 13.973),
    Measured(
        G,
        ("sdpa",),
        "ScaledDotProductAttentionDecode_0 (SDPA)",
        GALAXY_TARGETS,
        9.184,
        note="per chip 8 users x 8 q heads / 1 kv head (the unit test's shape)",
    ),
    Measured(
        G,
        ("kv_update",),
        "PagedUpdateCacheDeviceOperation_0",
        GALAXY_TARGETS,
        4.452,
        note="K and V in one fused op",
    ),
    Measured(G, ("rope",), "RotaryEmbeddingLlamaFusedQK_0", GALAXY_TARGETS, 2.234),
    Measured(G, ("mul_silu",), "BinaryDeviceOperation_0 (Binary_Mult_Silu)", GALAXY_TARGETS, 2.374),
    Measured(G, ("ccl",), "AllGatherConcat_0", GALAXY_TARGETS, 8.412),
    Measured(G, ("ccl",), "AllGatherAsync_0 (AllGatherAsync_Binary_Mult)", GALAXY_TARGETS, 7.084),
    Measured(G, ("ccl",), "LlamaReduceScatterCreateHeads_0", GALAXY_TARGETS, 8.011),
    Measured(G, ("ccl",), "AllReduceAsync_0 (AllReduceAsync_DO)", GALAXY_TARGETS, 13.300),
    Measured(G, ("ccl",), "AllReduceAsync_1 (AllReduceAsync_FF2)", GALAXY_TARGETS, 13.441),
    Measured(
        G,
        ("ccl",),
        "LlamaReduceScatterDeviceOperation_0 (ReduceScatter_FF3)",
        GALAXY_TARGETS,
        7.219,
    ),
    # The step's tail, once a step (model_tail of the same file).
    Measured(
        G,
        ("lm_head",),
        "Matmul_0 (LM head)",
        GALAXY_TARGETS,
        142.717,
        note="DRAM-bound: the prefetcher does not serve the LM head",
    ),
    Measured(
        G,
        ("sampling",),
        "TopK_0; Sampling_0",
        GALAXY_TARGETS,
        288.709 + 67.651,
        note="on-device top-k sampling (ours: a greedy arg-max)",
    ),
    # The same chip's ops alone (unit perf tests, 6U Galaxy): a second measurement of each.
    Measured(
        G, ("norm",), "LayerNorm (distributed RMS, width 2048 per chip)", U, 10.9, per_layer=2
    ),
    Measured(G, ("sdpa",), "ScaledDotProductAttentionDecode", U, 8.18),
    Measured(G, ("kv_update",), "PagedUpdateCacheDeviceOperation", U, 3.67),
    Measured(G, ("rope",), "RotaryEmbeddingLlamaFusedQK", U, 3.58),
    # Ops tt-metal's decoders run that our program has none of (older TG unit tests, one chip).
    Measured(
        G,
        ("heads",),
        "NLPCreateHeadsDecodeDeviceOperation",
        T,
        8.64,
        note="split QKV into heads (tt_transformers runs it every layer; Galaxy fuses it into the reduce-scatter)",
    ),
    Measured(G, ("heads",), "NLPConcatHeadsDecodeDeviceOperation", T, 5.7),
    # Blackhole: what tt-metal's DRAM-sharded decode matmuls reach, of the DRAM's 512 GB/s.
    Measured(
        "llama8b_p150",
        WEIGHT_ROLES,
        "DRAM-sharded matmul, one reader per bank",
        BH_READERS,
        gbps=0.55 * BH_DRAM_GBPS,
        note="the published 33.1 t/s/u row (v0.64.0) ran this",
    ),
    Measured(
        "llama8b_p150",
        WEIGHT_ROLES,
        "DRAM-sharded matmul, 2-3 readers per bank",
        BH_READERS,
        gbps=0.90 * BH_DRAM_GBPS,
    ),
)

# tt-metal's per-chip weight bytes for a role, where its shapes are published: the Galaxy's 2-D
# split of Llama-3.1-70B (tt-metal issue #11063, cglagovichTT 2024-08-08: FF1/FF3 [2048, 3584] and
# FF2 [3584, 2048] per chip; QKV [8192/4, 10240/8] and WO [8192/8, 8192/4] by the same 8x4 split),
# QKV/WO at bfp8_b (1088 B per 1024 elements) and FF1/FF3/FF2 at bfp4_b (576 B) as the demo's
# performance mode stores them.
# SDPA: the KV cache rows it reads per chip, 8 users x 1 kv head x 128 rows x 128 x (K, V) at
# bfp8_b (TG_UNIT_OLD's SDPA shape b=8, nh=8, nkv=1, d=128, bfp8_b cache; 128 rows at start_pos
# 127). The collectives' sizes are not all published (bench/README.md gives the all-reduces').
TT_BYTES = {
    (G, "sdpa"): 8 * 128 * 128 * 2 * 1088 // 1024,
    (G, "qkv"): 2048 * 1280 * 1088 // 1024,
    (G, "wo"): 1024 * 2048 * 1088 // 1024,
    (G, "ff1_ff3"): 2 * 2048 * 3584 * 576 // 1024,
    (G, "ff2"): 3584 * 2048 * 576 // 1024,
}

# Published steps set against the weights at a measured rate (step_split): case, step ms, source,
# the weights' measured rate GB/s (low, high) and its source.
STEPS = (
    ("llama8b_p150", 30.53, BH_STEP, (0.55 * BH_DRAM_GBPS,) * 2, BH_READERS),
    ("llama8b_p150", 23.76, BH_STEP, (0.90 * BH_DRAM_GBPS,) * 2, BH_READERS),
    (
        "llama8b_n150",
        1e3 / 26.0,
        mf.README + ", v0.62.0-rc35",
        mf.MEASURED_MATMUL_GBPS["wormhole_n150"],
        "tt-metal tech_reports/Saturating_DRAM_bandwidth/Saturating_DRAM_bandwidth.md @ "
        "0c3eb94a7363898f9253087ee9eb0cb09c823308 (Llama3-70 decode matmuls, 239-260 GB/s)",
    ),
)


@dataclass
class Layer:
    """One decoder layer of ours by role: us and per-chip DRAM bytes; the step's parts."""

    us: dict[str, float]
    bytes: dict[str, int]
    step_us: float  # model_fidelity's predicted step
    weights_us: float  # its weights' sections (projections, LM head, MoE), every layer
    weight_bytes: int


def _compile(model, case: Case, fmt: str, fidelity: str | None) -> dict:
    """model_fidelity's compile of the case in ``fmt`` (a single chip: at ``fidelity`` if given)."""
    if fidelity is None:
        return mf.compile_one(model, case.row(), fmt)[0]
    from spatial_dialect.tools.emit.report import report
    from spatial_dialect.tools.spatial_opt import SpatialOptMain

    program = model_decode.decode_step(model, case.context, 1, "bf16", users=case.batch)
    options = f"target={case.card} format={fmt} fidelity={fidelity}"
    return report(model_decode.compile_step(SpatialOptMain(args=[]), program, options))


def ours(case: Case, model_and_layers=None, fidelity: str | None = None) -> Layer:
    """One decoder layer's sections by role, with model_fidelity's compile of the case;
    ``model_and_layers``: another (Model, layers) than the case's (the test's tiny model);
    ``fidelity``: every format at this fidelity (the step terms are then not computed: 0)."""
    model, layers = model_and_layers or mf._models()[case.model]
    row = case.row()
    fmts = sorted({case.attention, case.mlp} | ({case.ff2} - {None}))
    compiled = {f: _compile(model, case, f, fidelity) for f in fmts}
    us, nbytes = dict.fromkeys(ROLES, 0.0), dict.fromkeys(ROLES, 0)
    secs, _ = mf._sections(compiled[case.attention], False)
    mlp = {
        f: {(n, op): (p, b) for n, op, p, _, lay, b in mf._sections(compiled[f], False)[0] if lay}
        for f in fmts
    }
    for name, op, p, _, layered, b in secs:
        if not layered:
            if (name, op) in ROLE_OF_TAIL:
                us[ROLE_OF_TAIL[name, op]] += p
                nbytes[ROLE_OF_TAIL[name, op]] += b
            continue
        if mf.is_ffn(name, op):
            p, b = mlp[mf.ffn_format(row, name, case.mlp)][name, op]
        role = role_of(name, op)
        us[role] += p
        nbytes[role] += b
    for c in compiled[case.attention].get("collectives", []):
        # a layer's collectives are the layer's; the tail's (the logits' gather, the vocab
        # arg-max's mesh.argmax_gather, which is the arg-max itself) are its sampling's
        role = "ccl" if c["tensor"] != model_decode._unlayered(c["tensor"]) else "sampling"
        us[role] += c["us"]
        nbytes[role] += c["bytes"]
    if fidelity is not None:
        return Layer(us, nbytes, 0.0, 0.0, 0)
    pred = mf.predict(row, (model, layers))
    return Layer(us, nbytes, pred.predicted_us, pred.weight_terms_us, pred.weight_bytes)


@dataclass
class Compared:
    case: str
    roles: tuple[str, ...]
    ours_us: float
    measured_us: float
    ours_bytes: int
    tt_bytes: int | None
    ops: tuple[Measured, ...]

    @property
    def ratio(self) -> float:
        return self.ours_us / self.measured_us if self.measured_us else float("inf")

    @property
    def work_ratio(self) -> float | None:
        """Our per-chip bytes over tt-metal's: the plan's share of the ratio."""
        return self.ours_bytes / self.tt_bytes if self.tt_bytes else None


def compare(layers: dict[str, Layer]) -> list[Compared]:
    """Measured kernel rows grouped by (case, roles, source), each set against our roles' sum."""
    groups: dict[tuple, list[Measured]] = {}
    for m in MEASURED:
        if m.us is not None:
            groups.setdefault((m.case, m.roles, m.source), []).append(m)
    out = []
    for (case, roles, _), ms in groups.items():
        lay = layers[case]
        tt = [TT_BYTES.get((case, r)) for r in roles]
        out.append(
            Compared(
                case,
                roles,
                sum(lay.us[r] for r in roles),
                sum(m.layer_us for m in ms),
                sum(lay.bytes[r] for r in roles),
                sum(tt) if all(t is not None for t in tt) else None,
                tuple(ms),
            )
        )
    return out


def rates(layers: dict[str, Layer]) -> list[tuple[Measured, float]]:
    """Each measured rate row beside the rate our sections of its roles are priced at, GB/s."""
    out = []
    for m in MEASURED:
        if m.gbps is not None:
            lay = layers[m.case]
            b = sum(lay.bytes[r] for r in m.roles)
            out.append((m, b / sum(lay.us[r] for r in m.roles) / 1e3))
    return out


def step_split(layers: dict[str, Layer]) -> list[dict]:
    """A published step less its weights at the measured rate: what every other op takes, against
    ours (our step less our weights' sections)."""
    out = []
    for case, step_ms, source, (lo, hi), rate_source in STEPS:
        lay = layers[case]
        w_slow, w_fast = lay.weight_bytes / lo / 1e6, lay.weight_bytes / hi / 1e6
        rest_ours = (lay.step_us - lay.weights_us) / 1e3
        out.append(
            {
                "case": case,
                "step_ms": step_ms,
                "weights_ms_at_measured": (w_fast, w_slow),
                "rest_ms_measured": (step_ms - w_slow, step_ms - w_fast),
                "weights_ms_ours": lay.weights_us / 1e3,
                "rest_ms_ours": rest_ours,
                "source": source,
                "rate_source": rate_source,
            }
        )
    return out


def _range(a: float, b: float) -> str:
    return f"{a:.2f}" if abs(a - b) < 0.005 else f"{min(a, b):.2f}-{max(a, b):.2f}"


def report(layers: dict[str, Layer]) -> list[str]:
    lines = [
        "| case | roles | tt-metal op(s) | ours us | measured us | ours/measured | ours MB/chip | "
        "tt MB/chip | work ratio | source |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for c in compare(layers):
        ops = "; ".join(f"{m.op}" + (f" x{m.per_layer}" if m.per_layer > 1 else "") for m in c.ops)
        tt = f"{c.tt_bytes / 1e6:.2f}" if c.tt_bytes else ""
        work = f"{c.work_ratio:.1f}" if c.work_ratio else ""
        lines.append(
            f"| {c.case} | {'+'.join(c.roles)} | {ops} | {c.ours_us:.1f} | {c.measured_us:.1f} | "
            f"{c.ratio:.2f} | {c.ours_bytes / 1e6:.2f} | {tt} | {work} | {c.ops[0].source.split(' (')[0]} |"
        )
    if G in layers:
        ours_layer = sum(v for r, v in layers[G].us.items() if r not in TAIL_ROLES)
        measured = sum(
            m.layer_us
            for m in MEASURED
            if m.source == GALAXY_TARGETS and not set(m.roles) & set(TAIL_ROLES)
        )
        lines += [
            "",
            f"{G}: one layer, ours {ours_layer:.1f} us (every section and collective), tt-metal "
            f"{measured:.1f} us (its 16 decoder kernels); ours/measured {ours_layer / measured:.2f}",
        ]
    lines += [
        "",
        "| case | tt-metal matmuls | measured GB/s | ours GB/s | ours/measured | source |",
        "|---|---|---:|---:|---:|---|",
    ]
    for m, g in rates(layers):
        lines.append(
            f"| {m.case} | {m.op} | {m.gbps:.0f} | {g:.0f} | {g / m.gbps:.2f} | {m.source.split(':')[0]} |"
        )
    lines += [
        "",
        "| case | published step ms | weights ms at measured rate | rest ms (measured) | "
        "ours: weights ms | ours: rest ms | rest measured/ours |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for s in step_split(layers):
        lo, hi = s["rest_ms_measured"]
        lines.append(
            f"| {s['case']} | {s['step_ms']:.2f} | {_range(*s['weights_ms_at_measured'])} | "
            f"{_range(lo, hi)} | {s['weights_ms_ours']:.2f} | {s['rest_ms_ours']:.2f} | "
            f"{_range(lo / s['rest_ms_ours'], hi / s['rest_ms_ours'])} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="one JSON object per compared row")
    args = ap.parse_args(argv)
    layers = {name: ours(case) for name, case in CASES.items()}
    steps = chip.fidelity_steps(CASES, layers, {chip.B1: ours(CASES[chip.B1], fidelity="lofi")})
    chips = chip.single_chip()
    if args.json:
        for row in steps + chips:
            print(json.dumps(row))
        for c in compare(layers):
            print(
                json.dumps(
                    {
                        "case": c.case,
                        "roles": list(c.roles),
                        "ours_us": round(c.ours_us, 2),
                        "measured_us": round(c.measured_us, 2),
                        "ratio": round(c.ratio, 3),
                        "ours_bytes": c.ours_bytes,
                        "tt_bytes": c.tt_bytes,
                        "ops": [m.op for m in c.ops],
                        "notes": [m.note for m in c.ops if m.note],
                        "source": c.ops[0].source,
                    }
                )
            )
        for m, g in rates(layers):
            print(
                json.dumps(
                    {
                        "case": m.case,
                        "op": m.op,
                        "measured_gbps": m.gbps,
                        "ours_gbps": round(g, 1),
                        "source": m.source,
                    }
                )
            )
        for s in step_split(layers):
            print(json.dumps(s))
        return 0
    print("\n".join(report(layers)))
    print()
    print("\n".join(chip.report_single_chip(steps, chips)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
