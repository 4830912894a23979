"""spatial-import: a GGUF checkpoint's whole greedy step as a tg program.

    spatial-import MODEL.gguf --step decode|prefill|both [--tokens T] [--cache S] [--layers N]
                   [--dtype f32|f16|bf16] [--target NAME] [--dequantize] -o OUT.mlir

reads only the GGUF header (metadata and tensor infos, tools/frontend/gguf_model.py; no tensor
data) of a `llama`, `qwen3` or `qwen3moe` model and writes one func.func (`@ARCH_decode` or
`@ARCH_prefill`; with `--step both`, one module of both, a deployment, below): the embedding
gather of the token ids; per layer the attention rms norm, q/k/v (Qwen3: the per-head q/k rms
norms), rope with the model's rope.freq_base, the KV-cache writes at `pos` and attention over the
updated cache, o, the residual, the ffn rms norm, the SwiGLU MLP (qwen3moe: a tg.moe over the
router and the experts, "experts" layout: GGUF's E x out x in, each expert transposed, stacked
along K) and its residual; the final norm, the LM head (the embedding table when the file has no
output.weight) and the arg-max. The program is the examples' step (tools/frontend/layers.py,
built once for both); tools/frontend/gguf_program.py names its arguments after the checkpoint.

Arguments are named as the GGUF tensors they hold (`%blk.0.attn_q.weight`) and carry
`gguf.tensor` (the tensor's name) and `gguf.layout` ("kn": the transpose of ggml's out x in, the
right operand of tg.matmul; "rows": as stored). The rope tables `%cos` and `%sin` carry
`gguf.rope_freq_base` (and `gguf.rope_freqs` when the file has rope_freqs.weight): they are the
cos and sin of (pos + i) * base^(-2j/D) (/ freq factor j), filled by `spatial-run --weights`.

Element types, llama.cpp's precision (tools/frontend/gguf_program.py): the weights stay in their
stored format; the activations compute in one float type, --dtype (default: that of the matmul
weights, f16 or bf16, or f32 when they are F32 or mixed; over Q8_0 weights alone the type the
--target prefers, `Target.activations`: bf16 on Tensix, f16 on the GPU presets, bf16 without
--target); the norm weights and the rope tables stay f32 beside them (GGUF stores norms F32).
`--dtype f32` is the exact mode. `spatial-run --weights` rounds each tensor to its argument's
type. Q8_0
weights stay Q8_0: each is two arguments, `%NAME` (the i8 values, `gguf.q8_0 = "values"`) and
`%NAME.scales` (f16, `gguf.q8_0 = "scales"`), read by `tg.matmul_q8_0 ... activation "q8_0"`
(ggml quantizes the activation of every Q8_0 product); from a Q8_0 embedding table the gather
takes the ids' rows of its values and of its scales and dequantizes only those
(`tg.dequantize_q8_0` of T rows, never the whole table). --dequantize declares Q8_0 weights f32
instead (exact, twice the bytes of bf16).

Tied embeddings (no output.weight: Qwen3's small models, Llama 3.2 1B/3B): the LM head is the
table itself, ONE argument `%token_embd.weight` of [vocab, d] as GGUF stores it, which the gather
reads rows of and the head multiplies by transposed (`tg.matmul ... transpose_b true`, or
`tg.matmul_q8_0 ... transpose_b true` over the Q8_0 table's values and scales, blocked along d as
stored); no transposed copy.

`--step both` writes the prefill (of --tokens T, default 8) and then the decode (1 token) as one
module, one deployment: the weights and the KV caches keep their names in both functions, so link
lays each out once for both (passes/link/deployment.py) and the cache the prefill writes is the
one the decode reads, with no bridge between them; each step's own inputs (its tokens, position
and rope tables) are prefixed by the step (`%prefill.ids`, `%decode.pos`), since the two steps'
differ in shape and one name in a deployment is one tensor. `spatial-run OUT.mlir --chain
ARCH_prefill,ARCH_decode` runs the prefill and then the decode on the caches it wrote.

Errors (a malformed or truncated file, an unsupported architecture or weight type) are one line
on stderr and exit status 1; usage errors exit 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from spatial_dialect.targets import TargetError, load_target
from spatial_dialect.tools.frontend.gguf_model import (
    SUPPORTED_TYPES,
    GGUFError,
    check_tensors,
    read_header,
)
from spatial_dialect.tools.frontend.gguf_program import (
    TABLES,
    checkpoint_step,
    program_dtype,
    program_dtype_dequantized,
    weight_types,
)
from spatial_dialect.tools.frontend.tg_builder import print_functions


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="spatial-import", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("model", help="a GGUF file (llama, qwen3 or qwen3moe architecture)")
    parser.add_argument(
        "--step",
        choices=("decode", "prefill", "both"),
        required=True,
        help="both: one module of the prefill and the decode function (one deployment)",
    )
    parser.add_argument(
        "--tokens", type=int, help="tokens of the step (decode 1, prefill 8; with both, prefill's)"
    )
    parser.add_argument(
        "--cache", type=int, help="rows of the KV cache (default min(256, context_length))"
    )
    parser.add_argument("--layers", type=int, help="the first N layers (default: all)")
    parser.add_argument("--dtype", choices=("f32", "f16", "bf16"), help="the compute type")
    parser.add_argument(
        "--target", help="the target whose preferred activation type a Q8_0 model computes in"
    )
    parser.add_argument(
        "--dequantize",
        action="store_true",
        help="import Q8_0 weights dequantized to f32 (exact; twice the bytes of bf16)",
    )
    parser.add_argument("-o", "--output", required=True, help="the .mlir file to write")
    return parser.parse_args(argv)


def import_model(args: argparse.Namespace) -> str:
    return import_checkpoint(
        args.model,
        args.step,
        tokens=args.tokens,
        cache=args.cache,
        layers=args.layers,
        dtype=args.dtype,
        dequantize=args.dequantize,
        target=args.target,
    )


def import_checkpoint(
    path: str,
    step: str,
    tokens: int | None = None,
    cache: int | None = None,
    layers: int | None = None,
    dtype: str | None = None,
    dequantize: bool = False,
    target: str | None = None,
) -> str:
    """The text of the module spatial-import writes for the checkpoint at `path` (`step`:
    "decode", "prefill" or "both"; None: the defaults the command line documents)."""
    _, h = read_header(path)
    layers = h.layers if layers is None else layers
    if not 1 <= layers <= h.layers:
        raise GGUFError(f"--layers {layers}: the model has {h.layers} layer(s)")
    check_tensors(h, layers)
    types = weight_types(h, layers)
    q8 = "Q8_0" in types and not dequantize
    preferred = preferred_activations(target)
    elt = dtype or (program_dtype(types, preferred) if q8 else program_dtype_dequantized(types))
    t = tokens if tokens is not None else (1 if step == "decode" else 8)
    cache = cache if cache is not None else min(256, h.context)
    if t <= 0 or cache < t:
        raise GGUFError(f"--tokens {t} and --cache {cache}: need 1 <= tokens <= cache")
    if cache > h.context:
        raise GGUFError(
            f"--cache {cache} exceeds the model's context_length {h.context}: positions past it "
            "were never trained"
        )
    steps = {"prefill": t, "decode": 1} if step == "both" else {step: t}
    header = (
        f"// Imported by spatial-import from {Path(path).name}: {h.arch}, "
        f"{layers}/{h.layers} layer(s), d={h.d}, "
        f"{' and '.join(f'{s} of {n} token(s)' for s, n in steps.items())} over a "
        f"{cache}-row cache, weights {', '.join(sorted(types))} computed in {elt} "
        f"(norm weights and rope tables {TABLES}).\n"
    )
    # One deployment: the steps share the weights and caches by name; their own inputs are theirs.
    own = (lambda s: f"{s}.") if step == "both" else (lambda s: "")
    return header + print_functions(
        checkpoint_step(h, n, cache, layers, elt, f"{h.arch}_{s}", q8, own(s))
        for s, n in steps.items()
    )


def preferred_activations(target: str | None) -> str:
    """The activation type `target` prefers (bf16 without one)."""
    if target is None:
        return "bf16"
    try:
        return load_target(target).activations
    except TargetError as e:
        raise GGUFError(f"--target: {e}") from None


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parse_args(argv)
    except SystemExit as e:
        return 0 if e.code in (0, None) else 2
    try:
        text = import_model(args)
        Path(args.output).write_text(text)
    except GGUFError as e:
        print(f"spatial-import: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"spatial-import: error: cannot write '{args.output}': {e.strerror}", file=sys.stderr)
        return 1
    return 0


__all__ = ["main", "SUPPORTED_TYPES"]

if __name__ == "__main__":
    sys.exit(main())
