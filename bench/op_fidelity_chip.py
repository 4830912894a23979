"""Op-by-op fidelity on one chip: the single-chip rows of bench/op_fidelity.py.

No per-op kernel table of a single-chip tt_transformers decoder (n150, p150) is published (the
decoder device-perf tests with per-op targets are the Galaxy demo's; tt_transformers' own
test_device_perf.py writes its measurements without committing them). What is published and
measured on one chip:
- tt-metal PR #50662 (FIDELITY_PR): Llama-3.1-8B on one P150 at batch 1, the step after each of
  four changes, three of them one op's math fidelity. A change's saving is that op's measured
  time difference (FIDELITY_STEPS, fidelity_steps).
- tt-perf-report (READER_CORES): a DRAM-sharded decode matmul runs on the DRAM-interface worker
  cores, one per DRAM bank (12 on Wormhole, 8 on Blackhole P150), not on the grid.

Set beside each measured saving: the saving if the op's tile-matmuls run on those reader cores
alone at the target's cycles per tile and clock and are not hidden behind the DRAM read
(reader_math_us), and the saving in our priced sections at the two fidelities (our plan spreads
the math over the grid, so the DRAM read bounds it and the fidelity moves almost nothing). Then
for every single-chip row of bench/model_fidelity.py (single_chip): the published step less our
prediction (the gap) beside the reader-core math of tt-metal's projections and LM head at its
fidelities. Nothing is fitted. The reader-core math is tt-metal's program (the work its decode
matmuls give each core), not a term our plans pay: it names the cause of a miss and is not added
to the cost model (bench/README.md#op-by-op-fidelity-issue-26).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import model_fidelity as mf  # noqa: E402  (bench/ is not a package)

FIDELITY_PR = (
    "tenstorrent/tt-metal pull request #50662 (closed unmerged 2026-07; the same table in #50666): "
    "Llama-3.1-8B, one P150, batch 1, simple_text_demo performance-batch-1, decode t/s/u after each "
    "change: 40.2 baseline; 40.8 create-heads keeps QKV width-sharded; 45.4 FF2 HiFi2 -> LoFi; 49.7 "
    "QKV and WO HiFi2 -> LoFi; 51.5 LM head HiFi2 -> LoFi"
)
READER_CORES = (
    "tenstorrent/tt-perf-report README.md @ 09a833e8d276ff9adccc1e888ff183bb26b1a36f (DRAM-sharded "
    "matmuls run on the DRAM-interface workers: 12 on Wormhole, 8 on Blackhole P150)"
)


@dataclass(frozen=True)
class FidelityStep:
    """One published change: t/s/u before and after, the roles it touches, and the fidelities it
    moves them between (None: not a fidelity change)."""

    case: str
    roles: tuple[str, ...]
    change: str
    before: float
    after: float
    source: str
    fidelities: tuple[str, str] | None = None
    per_step: bool = False  # a tail op (once a step), else a layer op

    def saved_us(self, layers: int) -> float:
        """The measured saving: per layer for a layer op, per step for a tail op."""
        saved = 1e6 / self.before - 1e6 / self.after
        return saved if self.per_step else saved / layers


B1 = "llama8b_p150_b1"
FIDELITY_STEPS = (
    FidelityStep(
        B1,
        ("heads",),
        "create-heads reads QKV width-sharded (a reshard gone)",
        40.2,
        40.8,
        FIDELITY_PR,
    ),
    FidelityStep(B1, ("ff2",), "FF2 HiFi2 -> LoFi", 40.8, 45.4, FIDELITY_PR, ("hifi2", "lofi")),
    FidelityStep(
        B1, ("qkv", "wo"), "QKV and WO HiFi2 -> LoFi", 45.4, 49.7, FIDELITY_PR, ("hifi2", "lofi")
    ),
    FidelityStep(
        B1, ("lm_head",), "LM head HiFi2 -> LoFi", 49.7, 51.5, FIDELITY_PR, ("hifi2", "lofi"), True
    ),
)
# The LM head's fidelity in tt_transformers' decode: HiFi2 (#50662's baseline, which it moves to LoFi).
LM_HEAD_FIDELITY = "hifi2"


def tile_matmuls(model, role: str) -> int:
    """32x32x32 tile-matmuls of one role's product for one 32-row tile of activations (a decode
    step of up to 32 users)."""
    t = lambda n: -(-n // 32)  # noqa: E731
    q, kv = model.heads * model.head_dim, model.kv_heads * model.head_dim
    return {
        "qkv": t(model.d) * t(q + 2 * kv),
        "wo": t(q) * t(model.d),
        "ff1_ff3": 2 * t(model.d) * t(model.ffn),
        "ff2": t(model.ffn) * t(model.d),
        "lm_head": t(model.d) * t(model.vocab),
    }[role]


def reader_math_us(card: str, model, role: str, fidelity: str) -> float:
    """The role's tile-matmuls on the card's DRAM-reader cores alone (READER_CORES), at its clock."""
    from spatial_dialect.targets import load_target

    chip = load_target(card)
    cycles = tile_matmuls(model, role) * chip.matmul_tile_cycles("bf16", fidelity)
    return cycles / chip.dram_channels / (chip.clock_ghz * 1e3)


def reader_math_step_us(row: mf.Published, model, layers: int) -> float:
    """A step's projections and LM head on the reader cores, at tt-metal's fidelity for each:
    mf.FIDELITY of the row's attention format (QKV, WO), MLP format (FF1/FF3: a last layer's other
    format keeps LoFi, performance_decoder_config.json) and FF2 format; the LM head at
    LM_HEAD_FIDELITY."""
    fid = mf.FIDELITY
    layer = (
        sum(reader_math_us(row.card, model, r, fid[row.attention]) for r in ("qkv", "wo"))
        + reader_math_us(row.card, model, "ff1_ff3", fid[row.mlp])
        + reader_math_us(row.card, model, "ff2", fid[row.ff2 or row.mlp])
    )
    return layers * layer + reader_math_us(row.card, model, "lm_head", LM_HEAD_FIDELITY)


def fidelity_steps(cases: dict, layers: dict, lofi: dict) -> list[dict]:
    """Each published change's measured saving beside the reader-core math it moves and the saving
    in our priced sections (op_fidelity's cases and Layers by case: ``layers`` at the case's
    formats' fidelities, ``lofi`` compiled at LoFi)."""
    out = []
    for f in FIDELITY_STEPS:
        model, n = mf._models()[cases[f.case].model]
        card = cases[f.case].card
        math = ours_saved = None
        if f.fidelities:
            hi, lo = f.fidelities
            math = sum(
                reader_math_us(card, model, r, hi) - reader_math_us(card, model, r, lo)
                for r in f.roles
            )
            ours_saved = sum(layers[f.case].us[r] - lofi[f.case].us[r] for r in f.roles)
        out.append(
            {
                "case": f.case,
                "change": f.change,
                "roles": list(f.roles),
                "per": "step" if f.per_step else "layer",
                "measured_saved_us": f.saved_us(n),
                "reader_math_saved_us": math,
                "ours_saved_us": ours_saved,
                "ours_us": sum(layers[f.case].us[r] for r in f.roles),
                "source": f.source,
            }
        )
    return out


def single_chip() -> list[dict]:
    """Every single-chip published row of model_fidelity: the step's gap (published less
    predicted) beside the reader-core math of tt-metal's projections and LM head."""
    from spatial_dialect.passes.target_choice import mesh_named

    out, preds = [], {}
    for row in mf.PUBLISHED:
        if mesh_named(row.card) is not None:
            continue
        model, n = mf._models()[row.model]
        key = (row.model, row.card, row.attention, row.mlp, row.mlp_last_layer, row.ff2)
        pred = preds.get(key) or preds.setdefault(key, mf.predict(row))
        step = 1e6 / row.tokens_per_s_user
        math = reader_math_step_us(row, model, n)
        gap = step - pred.predicted_us
        out.append(
            {
                "model": row.model,
                "card": row.card,
                "published": row.tokens_per_s_user,
                "step_ms": step / 1e3,
                "ours_ms": pred.predicted_us / 1e3,
                "gap_ms": gap / 1e3,
                "reader_math_ms": math / 1e3,
                "rest_us_per_op": (gap - math) / pred.ops,
                "ops": pred.ops,
                "with_math_ratio": 1e6 / (pred.predicted_us + math) / row.tokens_per_s_user,
                "source": row.source.split(" (")[0].replace("tt-metal ", ""),
            }
        )
    return out


def report_single_chip(steps: list[dict], chips: list[dict]) -> list[str]:
    """The single-chip tables: the published fidelity changes, then every single-chip row's gap."""

    def num(v):
        return "" if v is None else f"{v:.1f}"

    lines = [
        "| case | change | per | measured saving us | reader-core math saving us | ours: saving us "
        "| ours: roles us | source |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for f in steps:
        lines.append(
            f"| {f['case']} | {f['change']} | {f['per']} | {f['measured_saved_us']:.1f} | "
            f"{num(f['reader_math_saved_us'])} | {num(f['ours_saved_us'])} | {f['ours_us']:.1f} | "
            f"{f['source'].split(' (')[0]} |"
        )
    lines += [
        "",
        "| model | card | published t/s/u | step ms | ours ms | gap ms | reader-core math ms | "
        "math / gap | rest us/op | pred/pub with the math | source |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for c in chips:
        lines.append(
            f"| {c['model']} | {c['card']} | {c['published']:.1f} | {c['step_ms']:.2f} | "
            f"{c['ours_ms']:.2f} | {c['gap_ms']:.2f} | {c['reader_math_ms']:.2f} | "
            f"{c['reader_math_ms'] / c['gap_ms']:.2f} | {c['rest_us_per_op']:.1f} | "
            f"{c['with_math_ratio']:.2f} | {c['source']} |"
        )
    return lines
