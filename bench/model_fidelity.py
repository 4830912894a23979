"""Whole-model fidelity: predicted decode rates against tt-metal's published tokens/s/user.

    .venv/bin/python bench/model_fidelity.py           # the table, the breakdown, the misses
    .venv/bin/python bench/model_fidelity.py --json    # one JSON object per row
    .venv/bin/python bench/model_fidelity.py --only llama3_2_1b   # the rows of one model

Every row of PUBLISHED is a rate tt-metal publishes for a decoder LLM on a card or mesh this
compiler has a preset for (wormhole_n150, blackhole_p150; n300, t3k = QuietBox Wormhole, galaxy,
p150x4 = QuietBox Blackhole), with the file and commit it is read from. Rows whose card has no
preset (p100, 2 x p150 in data parallel) and models whose ops we do not have (Falcon's parallel
attention and GELU MLP, Mamba, vision) are left out; so are rows that repeat another row's model,
card and conditions under another name (Llama 3.3 70B and DeepSeek-R1-Distill-Llama-70B are the
Llama 3.1 70B decoder; Qwen2.5-Coder-32B is Qwen2.5-32B).

How a row is predicted, with bench/model_decode.py's machinery (nothing here is fitted):
- The program is the batched decode step `spatial-import --batch B` writes (model_decode.decode_step
  with `users`): B users, one token each, each with a KV cache of the row's context (128: the
  tables' "number of rows filled in the KV cache").
- Formats as tt-metal's demos run (tt_transformers PERF.md's performance configuration and its
  precision/fidelity table): attention weights and KV cache bfp8_b at HiFi2, FF1/FF3 weights
  bfp4_b at LoFi, FF2 bfp8_b at HiFi2 (FF2_SOURCE: tt_transformers' performance mode lowers FF1/FF3
  only), except where PERF.md says otherwise for a model (Qwen2.5-7B: bf16 attention, bfp8_b MLP;
  Llama-3.1-8B: the last layer's FF1/FF3 bfp8_b); the Galaxy demo's FF2 is its MLP's bfp4_b. The
  pipeline takes one storage format per module, so the step is compiled once per (format,
  fidelity) pair and each section is read from the compile in its own format: the FFN's sections
  (gate, up, swiglu, the MoE block) from the MLP's, FF2 (down) from its own, every other section
  and the collectives from the attention's.
- One decoder layer is compiled, not L: the layers are the same program with their own weights
  and cache, so a step is the sections outside the layers (embedding, final norm, LM head,
  arg-max) plus L times one layer's sections and collectives. This is model_decode's total (one
  chip's sections plus every collective, nothing overlapped), at a fraction of the compile time;
  test_model_fidelity checks the identity against a 2-layer compile.
- Mesh rows run `tensor-parallel{mesh=M prefer-sharded=true}` first: tt-metal's rows are tensor
  parallel over every chip (TP=2/4/8/32), so every op that can be split is.

Each row prints predicted and published tokens/s/user, their ratio, and the step's time by term:
the projections' weights (DRAM-bound matmuls), the LM head, the MoE block, attention (KV cache
reads and writes), the other per-op sections (norms, rope, residual adds, arg-max), the
collectives, and `ops`: the step's sections plus collectives. A row more than 20% off names the
term it is laid to (Prediction.responsible): predicted slower, its largest term; predicted faster,
the weights' DRAM time if the published step leaves the weights a rate tt-metal's own decode
matmuls reach (MEASURED_MATMUL_GBPS), else the per-op overheads, with the missing time per op set
against tt-metal's measured op-to-op latency (OP_TO_OP_US). bench/README.md#whole-model-fidelity-
issue-26 gives the evidence for each.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import model_decode  # noqa: E402  (bench/ is not a package)

sys.path.insert(0, str(BENCH.parent / "examples"))

# Where each published figure is read from (tenstorrent/tt-metal, file @ commit).
README = "tt-metal models/README.md @ 020681562ac1 (LLMs table, Last Update Nov 3, 2025)"
PERF_B32 = "tt-metal models/tt_transformers/PERF.md @ 040a27c12558 (Short-Context, Batch-32)"
# A row within this factor of the published rate is a hit (issue 26's goal).
GOAL = 0.20


def _models() -> dict:
    """The decoders of the published rows, from each checkpoint's config.json (Hugging Face);
    only the dimensions the step's cost depends on. Qwen2.5's q/k/v biases are not in our
    program (one row vector each a layer: under 0.1% of a layer's bytes)."""
    import generate

    from spatial_dialect.tools.frontend.layers import Model, MoeBlock

    def llama(name, d, heads, kv, hd, ffn, vocab, tied=False):
        return Model(name, d, heads, kv, hd, ffn, 1e-5, qk_norm=False, vocab=vocab, tied=tied)

    def qwen(name, d, heads, kv, ffn, vocab, qk_norm, eps=1e-6):
        return Model(name, d, heads, kv, 128, ffn, eps, qk_norm=qk_norm, vocab=vocab)

    return {
        # meta-llama/Llama-3.2-1B: hidden 2048, 32 heads, 8 kv, head_dim 64, intermediate 8192,
        # 16 layers, vocab 128256, tie_word_embeddings true.
        "llama3_2_1b": (llama("llama3_2_1b", 2048, 32, 8, 64, 8192, 128256, True), 16),
        # meta-llama/Llama-3.2-3B: hidden 3072, 24 heads, 8 kv, head_dim 128, intermediate 8192,
        # 28 layers, vocab 128256, tied.
        "llama3_2_3b": (llama("llama3_2_3b", 3072, 24, 8, 128, 8192, 128256, True), 28),
        "llama3_1_8b": (generate.LLAMA31_8B, 32),
        "llama3_1_70b": (generate.LLAMA31_70B, 80),
        # mistralai/Mistral-7B-Instruct-v0.3: hidden 4096, 32 heads, 8 kv, intermediate 14336,
        # 32 layers, vocab 32768 (the sliding window is past a 128-row cache).
        "mistral_7b": (llama("mistral_7b", 4096, 32, 8, 128, 14336, 32768), 32),
        # Qwen/Qwen2.5-7B-Instruct: hidden 3584, 28 heads, 4 kv, intermediate 18944, 28 layers,
        # vocab 152064, untied, no q/k norm.
        "qwen2_5_7b": (qwen("qwen2_5_7b", 3584, 28, 4, 18944, 152064, False), 28),
        # Qwen/Qwen3-32B: hidden 5120, 64 heads, 8 kv, head_dim 128, intermediate 25600, 64 layers,
        # vocab 151936, q/k norm.
        "qwen3_32b": (qwen("qwen3_32b", 5120, 64, 8, 25600, 151936, True), 64),
        # Qwen/QwQ-32B (the Qwen2.5-32B decoder): hidden 5120, 40 heads, 8 kv, intermediate 27648,
        # 64 layers, vocab 152064.
        "qwq_32b": (qwen("qwq_32b", 5120, 40, 8, 27648, 152064, False), 64),
        # Qwen/Qwen2.5-72B-Instruct: hidden 8192, 64 heads, 8 kv, intermediate 29568, 80 layers,
        # vocab 152064.
        "qwen2_5_72b": (qwen("qwen2_5_72b", 8192, 64, 8, 29568, 152064, False), 80),
        # mistralai/Mixtral-8x7B-v0.1: hidden 4096, 32 heads, 8 kv, 8 experts, 2 per token,
        # intermediate 14336, 32 layers, vocab 32000.
        "mixtral_8x7b": (
            replace(llama("mixtral_8x7b", 4096, 32, 8, 128, 0, 32000), moe=MoeBlock(8, 2, 14336)),
            32,
        ),
    }


@dataclass(frozen=True)
class Published:
    """One published decode rate and the conditions it was measured under."""

    model: str  # a key of _models()
    card: str  # our target or mesh preset
    tokens_per_s_user: float
    source: str
    batch: int = 32
    context: int = 128
    attention: str = "bfp8_b"  # attention weights and KV cache
    mlp: str = "bfp4_b"  # FFN weights
    mlp_last_layer: str | None = None  # the last layer's FFN, where PERF.md says it differs
    note: str = ""
    # FF2's weights (the `down` product), where they differ from `mlp`: tt_transformers' performance
    # mode makes only FF1/FF3 bfp4_b at LoFi and leaves FF2 at its default, bfp8_b at HiFi2
    # (FF2_SOURCE); None: as the MLP (the Galaxy demo, its own configuration).
    ff2: str | None = "bfp8_b"


PUBLISHED: tuple[Published, ...] = (
    Published("llama3_2_1b", "wormhole_n150", 80.5, README + ", v0.62.0-dev20251015"),
    Published("llama3_2_3b", "wormhole_n150", 46.6, README + ", v0.62.0-rc35"),
    Published(
        "llama3_1_8b", "wormhole_n150", 26.0, README + ", v0.62.0-rc35", mlp_last_layer="bfp8_b"
    ),
    Published(
        "llama3_1_8b",
        "blackhole_p150",
        33.1,
        README + ", v0.64.0-dev20251030",
        mlp_last_layer="bfp8_b",
    ),
    Published("mistral_7b", "wormhole_n150", 28.7, README + ", v0.64.0-dev20251030"),
    Published(
        "qwen2_5_7b", "n300", 22.1, README + ", v0.62.0-rc35 (TP=2)", attention="bf16", mlp="bfp8_b"
    ),
    Published("qwen3_32b", "t3k", 22.1, README + ", v0.59.0-rc52 (TP=8)"),
    Published("qwq_32b", "t3k", 25.2, README + ", v0.56.0-rc51 (TP=8)"),
    Published("llama3_1_70b", "t3k", 15.9, README + ", v0.59.0-rc53 (TP=8)"),
    Published(
        "llama3_1_70b",
        "galaxy",
        72.5,
        README + ", v0.62.0-dev20251015 (TP=32)",
        note="models/demos/llama3_70b_galaxy: its own demo (prefetcher, fused ops), not tt_transformers",
        ff2=None,
    ),
    Published("llama3_1_70b", "p150x4", 14.9, README + ", v0.62.0-dev20251015 (TP=4)"),
    Published("qwen2_5_72b", "t3k", 15.4, README + ", v0.62.0-rc25 (TP=8)"),
    Published("mixtral_8x7b", "t3k", 24.9, README + ", v0.62.0-dev20251015 (TP=8)"),
    Published("llama3_2_1b", "wormhole_n150", 54.7, PERF_B32),
    Published("llama3_2_1b", "n300", 64.2, PERF_B32),
    Published("llama3_2_1b", "t3k", 69.9, PERF_B32),
    Published("llama3_2_3b", "wormhole_n150", 36.5, PERF_B32),
    Published("llama3_2_3b", "n300", 45.8, PERF_B32),
    Published("llama3_2_3b", "t3k", 47.8, PERF_B32),
    Published("llama3_1_8b", "wormhole_n150", 22.3, PERF_B32),
    Published("llama3_1_8b", "n300", 33.5, PERF_B32),
    Published("llama3_1_8b", "t3k", 45.6, PERF_B32),
    Published("llama3_1_70b", "t3k", 14.8, PERF_B32),
)

# tt-metal's per-format math fidelity in decode (PERF.md, "Llama 3 model precision and math
# fidelity": li_ff1_3 / li_ff2 lofi with bfp4 weights, hifi2 for qkv, o, sdpa and bfp8 MLPs).
FIDELITY = {"bfp4_b": "lofi", "bfp8_b": "hifi2", "bf16": "hifi2"}
# The FFN's sections by name (the layer prefix dropped), read from the MLP's compile; FF2's from
# the compile in the row's `ff2` format.
FFN_SECTIONS = ("gate", "up", "act", "down")
FF2_SECTION = "down"
# Where the rows' FF2 format is read: tt_transformers' ModelOptimizations.performance sets
# TensorPrecision FF1_FF3 BFP4 and OpFidelity LI_FF1_FF3 LOFI only; FF2 keeps the default BFP8 at
# HIFI2_FP16 (models/tt_transformers/tt/model_config.py @ 0039cbf0861e); PERF.md's batch-32 section
# says "bfp4 MLP FF1+FF3"; Llama-3.1-8B's performance_decoder_config.json @ 3d60a88f7bd7 makes layer
# 31's FF1/FF3 BFP8 (still LoFi).
FF2_SOURCE = (
    "tt-metal models/tt_transformers/tt/model_config.py @ 0039cbf0861e169e6102f2cb9387a57833c30eba "
    "(ModelOptimizations.performance: FF1_FF3 BFP4 / LoFi; FF2 at the default BFP8 / HIFI2_FP16)"
)
# What tt-metal measures its DRAM-bound decode matmuls reach, GB/s (low, high): Wormhole,
# tech_reports/Saturating_DRAM_bandwidth/Saturating_DRAM_bandwidth.md @ 0c3eb94a7363, "Llama3-70
# decode" matmuls at 12 GBps DRAM (Mixtral8x7b: 243-261); Blackhole, no matmul figure: the
# Blackhole report's reads (Saturating_DRAM_bandwidth_Blackhole.md @ 7ffb007c3963), 344 with the
# readers placed anywhere, 500 bank-adjacent.
MEASURED_MATMUL_GBPS = {"wormhole_n150": (239.0, 260.0), "blackhole_p150": (344.0, 500.0)}
# tt-metal's measured op-to-op latency in a traced decode step, us: the Llama-3.1-70B Galaxy
# decoder's per-op targets (models/demos/llama3_70b_galaxy/tests/decoder_perf_targets_6u.json @
# 02cd859b857d: "op_to_op" 599-868 ns over its 16 decoder ops); the largest is taken.
OP_TO_OP_US = 0.87
TERMS = ("weights", "lm_head", "moe", "attention", "other", "collectives")


def is_ffn(name: str, op: str) -> bool:
    return name in FFN_SECTIONS or op == "tg.moe" or name.startswith("moe")


def ffn_format(row: Published, name: str, mlp: str) -> str:
    """The format an FFN section of a layer whose MLP is ``mlp`` is read in (an MoE block's
    experts keep the MLP's: their FF2 is inside the block)."""
    return row.ff2 if name == FF2_SECTION and row.ff2 else mlp


def term(name: str, op: str, layered: bool) -> str:
    """The breakdown term a section's time belongs to."""
    if op == "tg.moe" or (layered and name.startswith("moe")):
        return "moe"
    if op.startswith("tg.matmul"):
        return "weights" if layered else "lm_head"
    if op in ("tg.batch_attention", "tg.attention", "tg.batch_set_rows", "tg.set_rows"):
        return "attention"
    return "other"


@dataclass
class Prediction:
    row: Published
    layers: int
    predicted_us: float
    roofline_us: float
    terms: dict[str, float]
    ops: int
    weight_bytes: int  # one chip's bytes of the weights' sections (projections, LM head, MoE)
    chip: str
    plans: dict = field(default_factory=dict)

    @property
    def tokens_per_s_user(self) -> float:
        return 1e6 / self.predicted_us

    @property
    def ratio(self) -> float:
        """Predicted over published tokens/s/user."""
        return self.tokens_per_s_user / self.row.tokens_per_s_user

    @property
    def miss(self) -> bool:
        return abs(self.ratio - 1) > GOAL

    @property
    def gap_us(self) -> float:
        """Published step time less the predicted one."""
        return 1e6 / self.row.tokens_per_s_user - self.predicted_us

    @property
    def weight_terms_us(self) -> float:
        return self.terms["weights"] + self.terms["lm_head"] + self.terms["moe"]

    @property
    def implied_weight_gbps(self) -> float:
        """The DRAM rate one chip's weights would have to be read at for the published step, if
        every other term were as predicted: weight bytes over what the published step leaves
        them. Infinite where the other terms alone exceed the published step."""
        left_us = 1e6 / self.row.tokens_per_s_user - (self.predicted_us - self.weight_terms_us)
        return self.weight_bytes / left_us / 1e3 if left_us > 0 else float("inf")

    def responsible(self) -> str:
        """The term a miss is laid to (bench/README.md#whole-model-fidelity-issue-26 says why):
        - predicted slower: its largest term;
        - predicted faster, and the published step leaves the weights a rate within what
          tt-metal's DRAM-bound matmuls measure on the chip (MEASURED_MATMUL_GBPS): the weights'
          DRAM time (our matmuls are priced faster than tt-metal's run);
        - predicted faster, and that rate is below the measured one: not the weights; on one chip
          first the math tt-metal's DRAM-sharded matmuls do on their DRAM-reader cores alone
          (reader_math_us: its program's work per core, measured op by op in
          bench/op_fidelity_chip.py), then per-op time, and since tt-metal's measured op-to-op
          latency (OP_TO_OP_US) covers under a tenth of it, the ops' own overheads (kernel time
          past their DRAM and compute terms, and ops tt-metal runs that our program has not:
          reshards, typecasts)."""
        if not self.miss:
            return ""
        if self.ratio < 1:
            big = max(self.terms, key=self.terms.get)
            return f"{big}: {self.terms[big] / 1000:.2f} ms of {self.predicted_us / 1000:.2f}"
        low, high = MEASURED_MATMUL_GBPS[self.chip]
        gbps = self.implied_weight_gbps
        if gbps >= low:
            return f"weights' DRAM time: published step reads them at {gbps:.0f} GB/s"
        launch = OP_TO_OP_US * self.ops
        gap, math = self.gap_us, self.reader_math_us()
        lead = ""
        if math >= gap:
            return (
                f"tt-metal's matmul math on its {self.chip_dram_channels()} DRAM-reader cores:"
                f" {math / 1000:.2f} ms, the whole {gap / 1000:.2f} ms gap if none of it hid"
                f" behind the DRAM read"
            )
        if math:
            gap -= math
            lead = (
                f"tt-metal's matmul math on its {self.chip_dram_channels()} DRAM-reader cores:"
                f" {math / 1000:.2f} ms of the {self.gap_us / 1000:.2f} ms gap; then "
            )
        return (
            f"{lead}per-op overheads: {gap / 1000:.2f} ms missing, {gap / self.ops:.1f}"
            f" us/op over {self.ops} ops (launch at {OP_TO_OP_US} us/op: {launch / 1000:.2f} ms);"
            f" on the weights alone {gbps:.0f} GB/s, under the measured {low:.0f}-{high:.0f}"
        )

    def reader_math_us(self) -> float:
        """On one chip, the math of tt-metal's DRAM-sharded decode matmuls on the cores that read
        DRAM, not hidden behind the read (bench/op_fidelity_chip.py measures it op by op); 0 on a
        mesh (not estimated there)."""
        models = _models()
        if self.chip != self.row.card or self.row.model not in models:
            return 0.0
        import op_fidelity_chip

        model, layers = models[self.row.model]
        return op_fidelity_chip.reader_math_step_us(self.row, model, layers)

    def chip_dram_channels(self) -> int:
        from spatial_dialect.targets import load_target

        return load_target(self.chip).dram_channels


def _sections(report: dict, collectives: bool = True):
    """(unlayered name, op, predicted us, roofline us, layered, DRAM bytes) of each section, and each
    collective (kind, us, layered) of one compile."""
    secs = [
        (
            model_decode._unlayered(s["name"]),
            s["op"],
            s["predicted_us"],
            s["roofline_us"],
            s["name"] != model_decode._unlayered(s["name"]),
            s["dram_bytes"],
        )
        for s in report["sections"]
    ]
    coll = (
        [
            (c["kind"], c["us"], c["tensor"] != model_decode._unlayered(c["tensor"]))
            for c in report.get("collectives", [])
        ]
        if collectives
        else []
    )
    return secs, coll


def compile_one(model, row: Published, fmt: str):
    """One decoder layer's batched step in storage format ``fmt``, at that format's fidelity: the
    report and (on a mesh) tensor-parallel's plans."""
    from spatial_dialect.passes.target_choice import mesh_named
    from spatial_dialect.tools.emit.report import report
    from spatial_dialect.tools.spatial_opt import SpatialOptMain

    program = model_decode.decode_step(model, row.context, 1, "bf16", users=row.batch)
    tool = SpatialOptMain(args=[])
    options = f"format={fmt} fidelity={FIDELITY[fmt]}"
    if mesh_named(row.card) is None:
        module = model_decode.compile_step(tool, program, f"target={row.card} {options}")
        return report(module), {}
    module, plans = model_decode.compile_mesh(tool, program, row.card, options, True)
    return report(module), plans


def predict(row: Published, model_and_layers=None) -> Prediction:
    """``model_and_layers``: another (Model, layers) than the row's (the test's tiny model)."""
    from spatial_dialect.passes.target_choice import mesh_named

    model, layers = model_and_layers or _models()[row.model]
    fmts = {row.attention, row.mlp} | ({row.mlp_last_layer, row.ff2} - {None})
    compiled = {f: compile_one(model, row, f) for f in sorted(fmts)}
    attn, plans = compiled[row.attention]
    secs, coll = _sections(attn)
    mlp_secs = {
        f: {
            (n, op): (p, r, b) for n, op, p, r, lay, b in _sections(compiled[f][0], False)[0] if lay
        }
        for f in fmts
    }
    terms = dict.fromkeys(TERMS, 0.0)
    predicted = roofline = 0.0
    ops = weight_bytes = 0
    for name, op, p, r, layered, b in secs:
        for fmt, count in _layer_formats(row, layers) if layered else [(None, 1)]:
            if layered and is_ffn(name, op):
                p, r, b = mlp_secs[ffn_format(row, name, fmt)][name, op]
            t = term(name, op, layered)
            terms[t] += count * p
            predicted, roofline, ops = predicted + count * p, roofline + count * r, ops + count
            if t in ("weights", "lm_head", "moe"):
                weight_bytes += count * b
    for _, us, layered in coll:
        n = layers if layered else 1
        terms["collectives"] += n * us
        predicted, ops = predicted + n * us, ops + n
    chip = mesh.chip.name if (mesh := mesh_named(row.card)) else row.card
    return Prediction(row, layers, predicted, roofline, terms, ops, weight_bytes, chip, plans)


def _layer_formats(row: Published, layers: int) -> list[tuple[str, int]]:
    """(FFN format, layers) pairs over the decoder's layers."""
    if row.mlp_last_layer is None:
        return [(row.mlp, layers)]
    return [(row.mlp, layers - 1), (row.mlp_last_layer, 1)]


def card_label(card: str) -> str:
    from spatial_dialect.passes.target_choice import mesh_named

    mesh = mesh_named(card)
    return card if mesh is None else f"{card} ({mesh.chips})"


def table(preds: list[Prediction]) -> list[str]:
    lines = [
        "| model | card | B | ctx | attn/MLP | published t/s/u | predicted t/s/u | pred/pub "
        "| weights GB | weights ms | LM head ms | MoE ms | attention ms | other ms | collectives ms | ops "
        "| source |",
        "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for p in preds:
        r = p.row
        t = {k: f"{v / 1000:.2f}" for k, v in p.terms.items()}
        lines.append(
            f"| {r.model} | {card_label(r.card)} | {r.batch} | {r.context} | "
            f"{r.attention}/{r.mlp} | {r.tokens_per_s_user:.1f} | {p.tokens_per_s_user:.1f} | "
            f"{p.ratio:.2f} | {p.weight_bytes / 1e9:.2f} | {t['weights']} | {t['lm_head']} | {t['moe']} | {t['attention']} | "
            f"{t['other']} | {t['collectives']} | {p.ops} | {r.source} |"
        )
    return lines


def summary(preds: list[Prediction]) -> list[str]:
    within = sum(not p.miss for p in preds)
    err = statistics.median(abs(p.ratio - 1) for p in preds)
    return [
        f"{len(preds)} rows: {within} within {GOAL:.0%} of the published rate; median "
        f"|pred/pub - 1| {err:.1%}; median pred/pub {statistics.median(p.ratio for p in preds):.2f}"
    ]


def json_row(p: Prediction) -> dict:
    r = p.row
    return {
        "model": r.model,
        "card": r.card,
        "batch": r.batch,
        "context": r.context,
        "format": f"{r.attention}/{r.mlp}",
        "published_tokens_per_s_user": r.tokens_per_s_user,
        "tokens_per_s_user": round(p.tokens_per_s_user, 3),
        "ratio": round(p.ratio, 4),
        "step_over_roofline": round(p.predicted_us / p.roofline_us, 4),
        "terms_us": {k: round(v, 1) for k, v in p.terms.items()},
        "ops": p.ops,
        "weight_bytes": p.weight_bytes,
        "responsible": p.responsible(),
        "source": r.source,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="one JSON object per row")
    ap.add_argument("--only", help="the rows of this model alone (a key of the table)")
    args = ap.parse_args(argv)
    rows = [r for r in PUBLISHED if args.only in (None, r.model)]
    if not rows:
        known = ", ".join(sorted({r.model for r in PUBLISHED}))
        print(
            f"model_fidelity: no published row for {args.only!r} (known: {known})", file=sys.stderr
        )
        return 1
    preds = [predict(r) for r in rows]
    if args.json:
        for p in preds:
            print(json.dumps(json_row(p)))
        return 0
    print("\n".join(table(preds)))
    print()
    print("\n".join(summary(preds)))
    for p in preds:
        if p.miss:
            print(f"{p.row.model} {p.row.card} {p.ratio:.2f}: {p.responsible()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
