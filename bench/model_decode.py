"""Predicted tokens per second of a whole greedy decode step: Llama-3.1-8B on one chip, and over
meshes of chips Llama-3.1-70B and Qwen3-30B-A3B.

    .venv/bin/python bench/model_decode.py            # the table (a few minutes on 2 cores)
    .venv/bin/python bench/model_decode.py --mesh     # the mesh rows alone (batch 1: ~2.5 CPU minutes;
                                                      # each Qwen3-30B-A3B batch-32 row several)
    .venv/bin/python bench/model_decode.py --batched  # the batched rows alone (~3 CPU minutes)
    .venv/bin/python bench/model_decode.py --smoke    # a 2-layer tiny model on n150 and n300 (CI)
    .venv/bin/python bench/model_decode.py --json     # one JSON object per row

One decode step is the whole program `examples/generate.py` writes for it: the embedding gather,
32 decoder layers (each with its own weights and a KV cache of S rows), the final norm, the LM
head and the greedy arg-max, batch 1. Each row compiles it with `spatial-pipeline{target=T
format=F}` and reads the `-t report` numbers: the step's predicted time is the sum of its
sections' predicted times (sections run one after another), its roofline the sum of their
rooflines (max(FLOPs / peak, compulsory DRAM bytes / peak DRAM bandwidth) each; every section of
a decode step is DRAM-bound, so this is the step's compulsory bytes at the DRAM's peak).
Tokens per second is 1 / step time.

Beside each row, tt-metal's published decode rate for Llama 3.1 8B on the same card (tt-metal
models/tt_transformers README: 26.0 tokens/s/user on n150, 33.1 on p150). Those run batch 32,
weights in bfp8_b (attention) and bfp4_b (MLP), with host dispatch and every gap between ops;
what differs is in bench/README.md#whole-model-decode.

A row's weights are one of:
- `bf16`;
- `bfp8_b`: `format=bfp8_b` stores every bf16 tensor (weights, KV cache and activations alike) as
  bfp8_b; the row to hold against tt-metal's bfp8/bfp4 weights;
- `q8_0`: the projections and the LM head as a Q8_0 checkpoint holds them (34 bytes per 32
  elements, tg.matmul_q8_0), activations and KV cache bf16; the embedding table stays bf16 (a
  decode step reads one row of it).

Batched rows (`--batched`, issue 24): the step `spatial-import --batch B` writes (each layer's
cache writes tg.batch_set_rows, its attention tg.batch_attention; B users, one token each, each
with its own contiguous cache of S rows) at B = 1, 8, 32 and S = 128, 4096, on n150 and p150
(bfp8_b, q8_0) and h100 (bf16, q8_0), and one h200 bf16 row at B = 8, S = 128; the h100 and
h200 rows at B = 8, S = 128 stand beside vLLM's nightly latency figure at that batch
(VLLM_BATCH_STEP_MS). Each row's step time is one step for all B users: t/s/u is
1 / step, total t/s B / step. Attention is priced as the report prices it (its words are printed
above the table): every user at the full capacity S, since the positions are known at run time
only. Beside them: tt-metal's rates (batch 32, context 128) and, on h100, NIM's Llama-3.1-8B
table (NIM_H100_ITL_MS). Each row names the sections furthest over their rooflines, so a step
past ROOFLINE_GOAL says where its time goes.

Mesh rows (`--mesh`, issue 23): a whole decode step of Llama-3.1-70B (80 layers) and Qwen3-30B-A3B
(48 layers) deployed over a mesh preset of chips. Each is compiled by `tensor-parallel{mesh=M}`
(the row lists its decisions: the `tp.plan` of each product and MoE block) and then
`spatial-pipeline{target=M format=F}`, and read from `-t report`. Every chip runs the same sections on its own shard in
lockstep, and each collective sits between the section that writes its input and the one that
reads its result, so nothing overlaps it: the step's predicted time is ONE chip's sections'
predicted times plus EVERY collective's priced time (the report's total), and the collectives'
share is their sum over that. Its roofline is one chip's sections' rooflines (its compulsory DRAM
bytes at peak bandwidth); the collectives are not in it, so predicted/roofline counts them as
overhead. Bytes per chip: what link's DRAM layout gives one chip (every chip holds the same
shards); a row whose bytes exceed the chip's DRAM says so and is priced as a what-if (dram-mem).

Beside them, tt-metal's published Llama 3.1 70B rates (tt-metal models/README.md, LLMs table,
"Last Update: Nov 3, 2025"): 15.9 tokens/s/user on QuietBox Wormhole (t3k, TP=8) and 72.5 on
Galaxy Wormhole (TP=32), both batch 32 with 128 rows in the KV cache (the table's notes), which is
the context the mesh rows use. Every mesh row is compiled at batch 1 (the single-user step) and at
batch 32 (the batched step `spatial-import --batch 32` writes, its cache writes and attention split
by heads as tensor-parallel decides), so the batch-32 rows compare with tt-metal's at equal batch
and context (bench/README.md#mesh-rows says what else differs). Attention is priced as in the
batched rows, every user at the full context (the bench prints the report's words). A row whose
shards do not fit a chip (70B bf16 on t3k; Qwen3-30B-A3B on n300 in either format) states link's
refusal and is priced as a what-if. tt-metal publishes no Qwen3-30B-A3B row.

`--json` prints one JSON object per row instead of the tables (issue 24): model, card, batch,
context, format, tokens_per_s_user, tokens_per_s (batch x tokens_per_s_user),
step_over_roofline, and fits (false: a what-if past the card's memory).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

TARGETS = ("wormhole_n150", "blackhole_p150")
WEIGHTS = ("bf16", "bfp8_b", "q8_0")
CACHES = (1024, 4096)
# tt-metal models/tt_transformers README, Llama 3.1 8B: tokens/s/user at batch 32 (bfp8_b
# attention weights, bfp4_b MLP weights).
TT_METAL_TOKENS_PER_S_USER = {"wormhole_n150": 26.0, "blackhole_p150": 33.1}


@dataclass(frozen=True)
class Row:
    model: str
    target: str
    weights: str
    cache: int
    layers: int
    sections: int
    predicted_us: float
    roofline_us: float
    dram_bytes: int
    compile_s: float
    # The device memory the program needs where it exceeds the card's ("16.4 GB"): the row is then
    # a what-if compiled with dram-mem; None where it fits.
    needs: str | None = None
    batch: int = 1  # users, one token each; above 1 the batched step (batched_rows_plan)
    # The sections that take most time past their rooflines, summed over the layers by name
    # (name, op, predicted us, roofline us): where the step loses to its roofline, and why.
    excess: tuple[tuple[str, str, float, float], ...] = ()
    # How the report prices the batched attention (the tg.batch_attention section's own words)
    attention: str | None = None

    @property
    def tokens_per_s(self) -> float:
        return 1e6 / self.predicted_us

    @property
    def roofline_tokens_per_s(self) -> float:
        return 1e6 / self.roofline_us

    @property
    def ratio(self) -> float:
        return self.predicted_us / self.roofline_us


def decode_step(
    model, cache: int, layers: int, weights: str = "bf16", users: int | None = None
) -> str:
    """The whole step; with `users`, the batched step `spatial-import --batch` writes."""
    import generate

    if weights == "q8_0":
        model = replace(model, q8_0=True)
    return generate.decode_step_program(model, 1, cache, layers, users)


def storage_format(weights: str) -> str:
    """The pipeline's `format` for a row: bfp8_b stores every bf16 tensor so; Q8_0 weights are
    Q8_0 in the program itself and leave the rest bf16."""
    return "bfp8_b" if weights == "bfp8_b" else "bf16"


def compile_step(tool, program: str, options: str):
    """Parse ``program`` and run `spatial-pipeline{options}` on it, in spatial-opt's context."""
    from xdsl.parser import Parser
    from xdsl.passes import PassPipeline

    module = Parser(tool.ctx, program).parse_module()
    module.verify()
    spec = f"spatial-pipeline{{{options}}}"
    PassPipeline.parse_spec(tool.available_passes, spec).apply(tool.ctx, module)
    return module


def measure(
    program: str, model: str, target: str, weights: str, cache: int, layers: int, batch: int = 1
) -> Row:
    """Compile ``program`` (written with ``weights``, for ``batch`` users) through the pipeline and
    total its report."""
    from spatial_dialect.passes.dram_layout import DramExceeded
    from spatial_dialect.tools.emit.report import report
    from spatial_dialect.tools.spatial_opt import SpatialOptMain

    tool = SpatialOptMain(args=[])
    t0 = time.process_time()
    needs = None
    fmt = storage_format(weights)
    try:
        module = compile_step(tool, program, f"target={target} format={fmt}")
    except DramExceeded as e:
        # The weights do not fit the card (bf16 Llama-3.1-8B is 16 GB, an n150 has 12): price
        # the step as a what-if with room for them, and say so in the row.
        needs = str(e).split("needs ", 1)[1].split(",", 1)[0]
        module = compile_step(tool, program, f"target={target} format={fmt} dram-mem=1TB")
    r = report(module)
    return Row(
        model=model,
        target=target,
        weights=weights,
        cache=cache,
        layers=layers,
        sections=len(r["sections"]),
        predicted_us=r["total"]["predicted_us"],
        roofline_us=r["total"]["roofline_us"],
        dram_bytes=sum(s["dram_bytes"] for s in r["sections"]),
        compile_s=time.process_time() - t0,
        needs=needs,
        batch=batch,
        excess=excess(r["sections"]),
        attention=next(
            (s["batch"] for s in r["sections"] if s["op"] == "tg.batch_attention"), None
        ),
    )


def excess(sections: list[dict], n: int = 3) -> tuple[tuple[str, str, float, float], ...]:
    """The `n` section names (layer prefix dropped, so a name sums over the layers) whose
    predicted time exceeds their roofline by the most: (name, op, predicted us, roofline us)."""
    total: dict[str, list] = {}
    for s in sections:
        t = total.setdefault(_unlayered(s["name"]), [s["op"], 0.0, 0.0])
        t[1] += s["predicted_us"]
        t[2] += s["roofline_us"]
    ranked = sorted(total.items(), key=lambda kv: kv[1][2] - kv[1][1])
    return tuple((name, op, p, r) for name, (op, p, r) in ranked[:n])


def table(rows: list[Row]) -> list[str]:
    lines = [
        "| target | weights | cache S | predicted ms | tokens/s | roofline ms | tokens/s at roofline "
        "| predicted/roofline | DRAM GB moved | tt-metal tokens/s/user (batch 32, bfp8/bfp4) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        published = TT_METAL_TOKENS_PER_S_USER.get(r.target)
        weights = r.weights if r.needs is None else f"{r.weights} (needs {r.needs}: what-if)"
        lines.append(
            f"| {r.target} | {weights} | {r.cache} | {r.predicted_us / 1000:.2f} | "
            f"{r.tokens_per_s:.1f} | {r.roofline_us / 1000:.2f} | {r.roofline_tokens_per_s:.1f} | "
            f"{r.ratio:.3f} | {r.dram_bytes / 1e9:.2f} | "
            f"{'-' if published is None else f'{published:.1f}'} |"
        )
    return lines


# --- batched rows (issue 24) --------------------------------------------------------------------

BATCHES = (1, 8, 32)
CONTEXTS = (128, 4096)
# The cards and formats of the batched rows: tt-metal's two cards in the formats to hold against
# its bfp8/bfp4 weights and a Q8_0 checkpoint; the GPU in bf16 (vLLM's and NIM's default) and Q8_0.
BATCHED = {
    "wormhole_n150": ("bfp8_b", "q8_0"),
    "blackhole_p150": ("bfp8_b", "q8_0"),
    "h100": ("bf16", "q8_0"),
}
# tt-metal's rates are at batch 32 with 128 rows of context (the tt_transformers README's table).
TT_METAL_BATCH, TT_METAL_CONTEXT = 32, 128
# NVIDIA NIM for LLMs benchmarking, Performance page (https://docs.nvidia.com/nim/benchmarking/
# llm/1.0.0/performance), "Llama-3.1-8b-instruct Results", NIM 1.8.0 (TensorRT-LLM or vLLM
# engines), measured with AIPerf on the page's H100 80G systems: inter-token latency (ms) by
# concurrency; a user's decode rate is 1000 / ITL. Concurrency 1, 5, 25, 50, ... are published:
# batch 1 is there, 8 and 32 are not (the row shows the two around it). The stored copy of the page
# did not show the 8B table's GPU count, precision or input/output lengths; README says so.
NIM_H100_ITL_MS = {1: 4.63, 5: 4.58, 25: 5.19, 50: 5.91}
# vLLM's nightly performance benchmark, "Latency tests" (latency_llama8B_tp1): Llama-3.1-8B, TP 1
# (vLLM's default dtype for it, bf16), batch fixed at 8, 32 input and 128 output tokens, mean
# end-to-end latency. On one H200 (https://buildkite.com/vllm/performance-benchmark/builds/9515):
# 833.421 ms; on one H100 of an 8 x H100 node (.../builds/9555, GPU column "8xH100"): 997.542 ms.
# Its 128 decode steps and one 32-token prefill take that long, so a step is at most mean / 128
# (h200 6.51 ms, >= 154 t/s/u; h100 7.79 ms, >= 128 t/s/u) at contexts 32 to 160, which holds
# 128: the rows at batch 8 and context 128 stand beside it. No H100 figure at batch 32 was found.
VLLM_BATCH = 8
VLLM_BATCH_STEP_MS = {"h200": 833.421 / 128, "h100": 997.542 / 128}
VLLM_CONTEXTS = range(32, 161)
# The step is within this factor of its roofline (issue 24's goal at batch 32).
ROOFLINE_GOAL = 1.15


def batched_rows_plan(smoke: bool) -> list[tuple[str, str, int, int]]:
    """(card, format, batch, context) of each batched row; the smoke's is 3 users of the tiny
    model on n150."""
    if smoke:
        return [("wormhole_n150", "bfp8_b", 3, 64)]
    return [
        (card, w, b, c)
        for card, ws in BATCHED.items()
        for w in ws
        for b in BATCHES
        for c in CONTEXTS
    ] + [("h200", "bf16", VLLM_BATCH, TT_METAL_CONTEXT)]


def published(r: Row) -> str:
    """The published rate beside a batched row, with its conditions where they differ."""
    if r.target in TT_METAL_TOKENS_PER_S_USER:
        if (r.batch, r.cache) == (TT_METAL_BATCH, TT_METAL_CONTEXT):
            return f"tt-metal {TT_METAL_TOKENS_PER_S_USER[r.target]:.1f}"
        return "-"
    cells = []
    if r.batch == VLLM_BATCH and r.cache in VLLM_CONTEXTS and r.target in VLLM_BATCH_STEP_MS:
        step = VLLM_BATCH_STEP_MS[r.target]
        cells.append(f"vLLM >= {1000 / step:.0f} (e2e, 32 in + 128 out)")
    if r.target == "h100":
        cells.append(nim_h100(r.batch))
    return "; ".join(cells) or "-"


def nim_h100(batch: int) -> str:
    """NIM's H100 rate at `batch`, or at the two concurrencies around it (never interpolated)."""
    if batch in NIM_H100_ITL_MS:
        return f"NIM {1000 / NIM_H100_ITL_MS[batch]:.0f}"
    lower = max(c for c in NIM_H100_ITL_MS if c < batch)
    upper = min((c for c in NIM_H100_ITL_MS if c > batch), default=None)
    between = f"NIM c={lower}: {1000 / NIM_H100_ITL_MS[lower]:.0f}"
    if upper is not None:
        between += f", c={upper}: {1000 / NIM_H100_ITL_MS[upper]:.0f}"
    return between


def batched_table(rows: list[Row]) -> list[str]:
    lines = [
        "| card | format | batch | context | predicted ms | t/s/u | total t/s | roofline ms "
        "| step/roofline | DRAM GB | published t/s/u |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        weights = r.weights if r.needs is None else f"{r.weights} (needs {r.needs}: what-if)"
        lines.append(
            f"| {r.target} | {weights} | {r.batch} | {r.cache} | {r.predicted_us / 1000:.2f} | "
            f"{r.tokens_per_s:.1f} | {r.batch * r.tokens_per_s:.0f} | "
            f"{r.roofline_us / 1000:.2f} | {r.ratio:.3f} | {r.dram_bytes / 1e9:.2f} | "
            f"{published(r)} |"
        )
    return lines


def batched_findings(r: Row) -> str:
    """Where a row past ROOFLINE_GOAL loses its time: the sections furthest over their roofline."""
    over = "; ".join(
        f"{name} ({op}) {p / 1000:.2f} ms vs {rf / 1000:.2f} ms roofline ({p / rf:.2f}x)"
        for name, op, p, rf in r.excess
    )
    verdict = "within" if r.ratio <= ROOFLINE_GOAL else "PAST"
    return (
        f"{r.target} {r.weights} B={r.batch} S={r.cache}: step/roofline {r.ratio:.3f} "
        f"({verdict} {ROOFLINE_GOAL}); most time over roofline: {over}"
    )


# --- mesh rows --------------------------------------------------------------------------------

# (model, mesh preset, weights). t3k bf16 is issue 23's refusal: 70B's weights in bf16 are over
# 17 GB a chip, past a Wormhole's 12 GiB; Qwen3-30B-A3B on n300 is refused in both formats (30.5B
# weights are more than two Wormholes hold even at 8 bits). Every row runs at each MESH_BATCHES.
MESH_PLAN = (
    ("llama3_1_70b", "t3k", "bfp8_b"),
    ("llama3_1_70b", "t3k", "bf16"),
    ("llama3_1_70b", "galaxy", "bfp8_b"),
    ("qwen3_30b_a3b", "n300", "bf16"),
    ("qwen3_30b_a3b", "n300", "bfp8_b"),
    ("qwen3_30b_a3b", "p150x4", "bf16"),
    ("qwen3_30b_a3b", "p150x4", "bfp8_b"),
)
MESH_LAYERS = {"llama3_1_70b": 80, "qwen3_30b_a3b": 48}
# tt-metal's table measures with 128 rows in the KV cache (its notes); so do the mesh rows.
MESH_CONTEXT = 128
# Batch 1 (the single-user step, issue 23's first rows) and tt-metal's batch 32: the batched step
# `spatial-import --batch 32` writes, split by heads as tensor-parallel splits tg.batch_attention.
MESH_BATCHES = (1, TT_METAL_BATCH)
# tt-metal models/README.md, LLMs table: Llama 3.1 70B tokens/s/user at batch 32.
TT_METAL_MESH_TOKENS_PER_S_USER = {("llama3_1_70b", "t3k"): 15.9, ("llama3_1_70b", "galaxy"): 72.5}


@dataclass(frozen=True)
class MeshRow:
    model: str
    card: str
    chips: int
    weights: str
    context: int
    layers: int
    sections: int
    sections_us: float
    # (kind, tensor without its layer prefix, us) per step, in execution order
    collectives: tuple[tuple[str, str, float], ...]
    roofline_us: float
    bytes_per_chip: int
    chip_bytes: int
    compile_s: float
    # tensor-parallel's plan of each product and MoE block, by its result's name without the
    # layer prefix ("o" -> {"row": 80}): where the Megatron pairs were chosen
    plans: dict[str, dict[str, int]]
    batch: int = 1
    # link's per-chip DRAM refusal, where one chip's shards do not fit it (the row is then a
    # what-if compiled with dram-mem)
    refusal: str | None = None
    # how the report prices the batched attention (the tg.batch_attention section's own words)
    attention: str | None = None

    @property
    def collectives_us(self) -> float:
        return sum(us for _, _, us in self.collectives)

    @property
    def predicted_us(self) -> float:
        return self.sections_us + self.collectives_us

    @property
    def tokens_per_s(self) -> float:
        return 1e6 / self.predicted_us

    @property
    def ratio(self) -> float:
        return self.predicted_us / self.roofline_us

    @property
    def collective_share(self) -> float:
        return self.collectives_us / self.predicted_us

    @property
    def fits(self) -> bool:
        return self.bytes_per_chip <= self.chip_bytes

    def dominant(self, n: int = 3) -> list[tuple[str, int, float]]:
        """The `n` collectives that take the most time in all: (kind and tensor, count, us)."""
        us: Counter[str] = Counter()
        count: Counter[str] = Counter()
        for kind, tensor, t in self.collectives:
            us[f"{kind} {tensor}"] += t
            count[f"{kind} {tensor}"] += 1
        return [(k, count[k], t) for k, t in us.most_common(n)]


def _unlayered(name: str) -> str:
    return re.sub(r"^l\d+_", "", name)


def product_plans(module) -> dict[str, dict[str, int]]:
    """Each product's, MoE block's and batched cache write's and attention's `tp.plan` (heads or
    replicated), counted over the layers by its result's name."""
    from spatial_dialect.tg import BatchAttentionOp, BatchSetRowsOp, MatmulOp, MatmulQ8_0Op, MoeOp

    decided = (MatmulOp, MatmulQ8_0Op, MoeOp, BatchSetRowsOp, BatchAttentionOp)
    plans: dict[str, Counter[str]] = {}
    for op in module.walk():
        if isinstance(op, decided):
            plan = op.attributes.get("tp.plan")
            name = _unlayered(op.results[0].name_hint or "?")
            plans.setdefault(name, Counter())[plan.data if plan else "?"] += 1
    return {k: dict(v) for k, v in plans.items()}


def compile_mesh(tool, program: str, mesh: str, options: str, prefer_sharded: bool = False):
    """The per-chip function `tensor-parallel{mesh}` makes of ``program``, its products' plans, and
    the deployment `spatial-pipeline{target=mesh options}` compiles of it. The pass is run on its
    own first to read its decisions before the pipeline lowers the products; run again inside the
    pipeline (once it runs it on a mesh target) it leaves a per-chip function alone.
    `prefer_sharded`: the pass's option of that name (a sharded plan wherever one runs)."""
    from xdsl.parser import Parser
    from xdsl.passes import PassPipeline

    module = Parser(tool.ctx, program).parse_module()
    module.verify()
    spec = f"tensor-parallel{{mesh={mesh}{' prefer-sharded=true' if prefer_sharded else ''}}}"
    PassPipeline.parse_spec(tool.available_passes, spec).apply(tool.ctx, module)
    plans = product_plans(module)
    spec = f"spatial-pipeline{{target={mesh} {options}}}"
    PassPipeline.parse_spec(tool.available_passes, spec).apply(tool.ctx, module)
    return module, plans


def measure_mesh(
    model,
    layers: int,
    mesh: str,
    weights: str,
    context: int,
    prefer_sharded: bool = False,
    batch: int = 1,
) -> MeshRow:
    """Compile a whole decode step of ``model`` over ``mesh`` and read its report; above batch 1
    the batched step of ``batch`` users. The smoke row takes ``prefer_sharded``: by price the tiny
    model runs whole on every chip (its collectives cost more than its products save), and the
    smoke is there to run a deployment's collectives through the pipeline and the report."""
    from spatial_dialect.passes.dram_layout import DramExceeded, dram_layout
    from spatial_dialect.passes.target_choice import mesh_named
    from spatial_dialect.tools.emit.report import report
    from spatial_dialect.tools.spatial_opt import SpatialOptMain

    program = decode_step(model, context, layers, weights, batch if batch > 1 else None)
    tool = SpatialOptMain(args=[])
    fmt = f"format={storage_format(weights)}"
    t0 = time.process_time()
    refusal = None
    try:
        module, plans = compile_mesh(tool, program, mesh, fmt, prefer_sharded)
    except DramExceeded as e:
        # One chip's shards do not fit its DRAM: the row states the refusal and prices the step
        # as a what-if with room for them; its bytes per chip say by how much.
        refusal = str(e)
        module, plans = compile_mesh(tool, program, mesh, f"{fmt} dram-mem=1TB", prefer_sharded)
    compile_s = time.process_time() - t0
    r = report(module)
    chip = mesh_named(mesh).chip
    layout = dram_layout(module, chip)
    steps = r.get("collectives", [])
    return MeshRow(
        model=model.name,
        card=mesh,
        chips=math.prod(r["mesh"]["shape"]),
        weights=weights,
        context=context,
        layers=layers,
        sections=len(r["sections"]),
        sections_us=sum(s["predicted_us"] for s in r["sections"]),
        collectives=tuple((s["kind"], _unlayered(s["tensor"]), s["us"]) for s in steps),
        roofline_us=r["total"]["roofline_us"],
        bytes_per_chip=layout[-1].offset + layout[-1].bytes if layout else 0,
        chip_bytes=chip.dram_bytes,
        compile_s=compile_s,
        plans=plans,
        batch=batch,
        refusal=refusal,
        attention=next(
            (s["batch"] for s in r["sections"] if s["op"] == "tg.batch_attention"), None
        ),
    )


def mesh_table(rows: list[MeshRow]) -> list[str]:
    lines = [
        "| model | card (chips) | weights | batch | context | predicted ms | tokens/s/user "
        "| total tokens/s | collectives ms (share) | roofline ms | predicted/roofline "
        "| GB per chip (of) | compile CPU s | tt-metal tokens/s/user (batch 32) |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        published = TT_METAL_MESH_TOKENS_PER_S_USER.get((r.model, r.card))
        weights = r.weights if r.refusal is None else f"{r.weights} (refused: what-if)"
        lines.append(
            f"| {r.model} | {r.card} ({r.chips}) | {weights} | {r.batch} | {r.context} | "
            f"{r.predicted_us / 1000:.2f} | {r.tokens_per_s:.1f} | "
            f"{r.batch * r.tokens_per_s:.0f} | "
            f"{r.collectives_us / 1000:.2f} ({100 * r.collective_share:.0f}%) | "
            f"{r.roofline_us / 1000:.2f} | {r.ratio:.3f} | "
            f"{r.bytes_per_chip / 1e9:.2f} ({r.chip_bytes / 1e9:.1f}) | {r.compile_s:.1f} | "
            f"{'-' if published is None else f'{published:.1f}'} |"
        )
    return lines


def mesh_findings(r: MeshRow) -> str:
    top = ", ".join(f"{k} x{n} {us / 1000:.2f} ms" for k, n, us in r.dominant())
    plans = ", ".join(
        f"{name} " + "/".join(f"{p}" + (f" x{n}" if len(c) > 1 else "") for p, n in c.items())
        for name, c in r.plans.items()
    )
    refused = "" if r.refusal is None else f"; refused: {r.refusal}"
    return (
        f"{r.model} {r.card} {r.weights} B={r.batch}: {len(r.collectives)} collectives; most "
        f"time: {top or 'none'}; products: {plans}{refused}"
    )


def json_row(r: Row | MeshRow) -> dict:
    """Issue 24's fields, for a single-chip row and a mesh row alike."""
    mesh = isinstance(r, MeshRow)
    batch = r.batch
    return {
        "model": r.model,
        "card": r.card if mesh else r.target,
        "batch": batch,
        "context": r.context if mesh else r.cache,
        "format": r.weights,
        "tokens_per_s_user": round(r.tokens_per_s, 3),
        "tokens_per_s": round(batch * r.tokens_per_s, 3),
        "step_over_roofline": round(r.ratio, 4),
        "fits": r.fits if mesh else r.needs is None,
    }


def mesh_rows_plan(smoke: bool) -> list[tuple]:
    """What `measure_mesh` is called with for each mesh row: (model, layers, mesh, weights,
    context, prefer_sharded, batch); the smoke's are the tiny model's 2 layers on n300, 1 user
    and 3."""
    import generate

    if smoke:
        return [(generate.TINY, 2, "n300", "bf16", 64, True, b) for b in (1, 3)]
    models = {"llama3_1_70b": generate.LLAMA31_70B, "qwen3_30b_a3b": generate.QWEN3_30B_A3B}
    return [
        (models[m], MESH_LAYERS[m], mesh, w, MESH_CONTEXT, False, b)
        for b in MESH_BATCHES
        for m, mesh, w in MESH_PLAN
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a 2-layer tiny model on wormhole_n150 (1 user and 3) and on n300, sharded (CI)",
    )
    parser.add_argument("--mesh", action="store_true", help="the mesh rows alone")
    parser.add_argument(
        "--batched", action="store_true", help="the batched rows alone (batch 1, 8, 32)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    args = parser.parse_args(argv)
    import generate

    if args.smoke:
        model, layers, plan = generate.TINY, 2, [("wormhole_n150", "bf16", 64)]
        mesh_plan = mesh_rows_plan(smoke=True)
        batched_plan = batched_rows_plan(smoke=True)
    else:
        model, layers = generate.LLAMA31_8B, 32
        alone = args.mesh or args.batched
        plan = [] if alone else [(t, w, s) for t in TARGETS for w in WEIGHTS for s in CACHES]
        mesh_plan = [] if args.batched else mesh_rows_plan(smoke=False)
        batched_plan = [] if args.mesh else batched_rows_plan(smoke=False)
    programs = {(w, s): decode_step(model, s, layers, w) for w, s in {(w, s) for _, w, s in plan}}
    rows = []
    for target, weights, cache in plan:
        rows.append(measure(programs[weights, cache], model.name, target, weights, cache, layers))
        print(
            f"# {target} {weights} S={cache}: {rows[-1].sections} sections, compiled in "
            f"{rows[-1].compile_s:.1f} CPU s",
            file=sys.stderr,
        )
    batched = []
    for card, weights, batch, context in batched_plan:
        program = decode_step(model, context, layers, weights, users=batch)
        batched.append(measure(program, model.name, card, weights, context, layers, batch))
        print(
            f"# {card} {weights} B={batch} S={context}: {batched[-1].sections} sections, "
            f"compiled in {batched[-1].compile_s:.1f} CPU s",
            file=sys.stderr,
        )
    mesh_rows = []
    for m, n, mesh, weights, context, prefer_sharded, batch in mesh_plan:
        mesh_rows.append(measure_mesh(m, n, mesh, weights, context, prefer_sharded, batch))
        print(
            f"# {m.name} {mesh} {weights} B={batch}: {mesh_rows[-1].sections} sections, "
            f"{len(mesh_rows[-1].collectives)} collectives, compiled in "
            f"{mesh_rows[-1].compile_s:.1f} CPU s",
            file=sys.stderr,
        )
    if args.json:
        for r in [*rows, *batched, *mesh_rows]:
            print(json.dumps(json_row(r)))
        return 0
    if rows:
        print(f"{model.name}: whole greedy decode step, {layers} layers, batch 1")
        print()
        print("\n".join(table(rows)))
        print()
        for r in rows:
            print(
                f"{r.target} {r.weights} S={r.cache}: whole step predicted/roofline {r.ratio:.3f}"
            )
    if batched:
        print()
        print(f"{model.name}: batched greedy decode step, {layers} layers, one token per user")
        print(f"attention: {batched[-1].attention}")
        print()
        print("\n".join(batched_table(batched)))
        print()
        for r in batched:
            print(batched_findings(r))
    if mesh_rows:
        print()
        batches = ", ".join(str(b) for b in sorted({r.batch for r in mesh_rows}))
        print(f"Over a mesh of chips: whole greedy decode step, batch {batches}, tensor-parallel")
        attention = next((r.attention for r in mesh_rows if r.attention), None)
        if attention:
            print(f"attention (batched rows, per chip): {attention}")
        print()
        print("\n".join(mesh_table(mesh_rows)))
        print()
        for r in mesh_rows:
            print(mesh_findings(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
