"""spatial-import: a GGUF or Hugging Face checkpoint's whole greedy step as a tg program.

    spatial-import MODEL.gguf|DIR --step decode|prefill|both [--tokens T] [--cache S]
                   [--layers N] [--dtype f32|f16|bf16] [--target NAME] [--dequantize]
                   [--logits] [--hidden] [--batch B [--paged BLOCK|auto]] -o OUT.mlir

A directory is a Hugging Face checkpoint (config.json, model.safetensors or a sharded index,
tokenizer.json): tools/frontend/hf_model.py reads its config and safetensors headers and
hf_program.py names the same step's arguments after its tensors (`hf.tensor`, `hf.layout`;
docs/tg.md#importing-hugging-face-checkpoints). The rest of this describes a GGUF file.

reads only the GGUF header (metadata and tensor infos, tools/frontend/gguf_model.py; no tensor
data) of a `llama`, `qwen3`, `qwen3moe` or `qwen3next` model (the last: Gated DeltaNet and gated
full attention layers, tools/frontend/next_model.py, docs/tg.md#qwen3-next-qwen3next) and writes
one func.func (`@ARCH_decode` or `@ARCH_prefill`; with `--step both`, one module of both, a
deployment, below): the embedding
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
--target; a mesh preset, `--target n300`, prefers its chip's: the program stays WHOLE, and
`spatial-pipeline{target=n300}` / `spatial-run --target n300` compile it as one deployment over
the mesh); the norm weights and the rope tables stay f32 beside them (GGUF stores norms F32).
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
ARCH_prefill,ARCH_decode` runs the prefill and then the decode on the caches it wrote. The
decode states what feeds it (tools/frontend/chaining.py): `%decode.ids {chain.fed_by = "token"}`,
the token the prefill chose at its last position, and `%decode.pos {chain.position = "next"}`,
the row after the prefill's; spatial-run and spatial-generate read the same attributes.

`--batch B [--paged BLOCK]` writes the batched decode (docs/tg.md#batched-decode): B users, one
token each at its own `%pos` entry, each layer's cache B x --cache rows (contiguous) or a pool of
blocks of BLOCK rows with the step's own `%block_table`; with `--step both` the prefill is one
user's admission into its slot of the same caches, so the two stay one deployment. The decode
carries the same `chain.` marks, per user: `spatial-run --chain` runs the admission once per
user (user b into slot b) and feeds the decode's user b the token its admission chose, at the
row after its prompt (tools/frontend/chaining.py). `--paged auto` prices the block size on
--target instead (tools/frontend/paging.py, targets/paging.py): whole tiles of rows up to the
cache, per-block DRAM round trips against the half block a user wastes and the pool's fit in
DRAM; the decode function records the choice and its runner-up (`tg.page_size`).

`--logits` and `--hidden` add `%logits` and the final norm's output `%final` (the last hidden
state) to each step's results, after the caches.

Errors (a malformed or truncated file or config.json, an unsupported architecture or weight type)
are one line on stderr and exit status 1; usage errors exit 2. A bug of ours is one line too
("internal error: ..."; SPATIAL_IMPORT_TRACEBACK=1 shows the traceback), never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from xdsl.dialects.func import FuncOp

from spatial_dialect.targets import MESH_PRESETS, Target, TargetError, load_target
from spatial_dialect.targets.paging import PagingError
from spatial_dialect.tools.frontend import paging
from spatial_dialect.tools.frontend.chaining import carries, follows
from spatial_dialect.tools.frontend.gguf_model import (
    SUPPORTED_TYPES,
    GGUFError,
    check_tensors,
)
from spatial_dialect.tools.frontend.gguf_program import (
    TABLES,
    checkpoint_step,
    program_dtype,
    program_dtype_dequantized,
    weight_types,
)
from spatial_dialect.tools.frontend.hf_model import HFError, read_header_dir
from spatial_dialect.tools.frontend.hf_model import weight_types as hf_weight_types
from spatial_dialect.tools.frontend.hf_program import checkpoint_step as hf_step
from spatial_dialect.tools.frontend.hf_program import program_dtype as hf_dtype
from spatial_dialect.tools.frontend.layers import Batch, also_return
from spatial_dialect.tools.frontend.next_model import (
    NextConfig,
    next_checkpoint_step,
    read_checkpoint,
)
from spatial_dialect.tools.frontend.tg_builder import print_functions

CHECKPOINT_ERRORS = (GGUFError, HFError)
"""What import_checkpoint raises on a checkpoint it cannot import (one line each)."""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="spatial-import", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument(
        "model",
        help="a GGUF file or a Hugging Face directory (llama, qwen3, qwen3moe or qwen3next)",
    )
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
    parser.add_argument(
        "--batch",
        type=int,
        metavar="B",
        help="a batched decode of B users, each at its own position in its own KV cache "
        "(tg.batch_set_rows, tg.batch_attention); with --step both the prefill is one user's "
        "admission into its slot of that cache",
    )
    parser.add_argument(
        "--paged",
        type=paged_arg,
        metavar="BLOCK|auto",
        help="with --batch: the KV cache is a pool of blocks of BLOCK rows and a block table per "
        "user (default: contiguous, B x cache rows); auto: the block size priced on --target",
    )
    parser.add_argument("--layers", type=int, help="the first N layers (default: all)")
    parser.add_argument("--dtype", choices=("f32", "f16", "bf16"), help="the compute type")
    parser.add_argument(
        "--target",
        help="the target whose preferred activation type a Q8_0 model computes in (a mesh "
        "preset: its chip's; the program is whole, compiled over the mesh as one deployment)",
    )
    parser.add_argument(
        "--dequantize",
        action="store_true",
        help="import Q8_0 weights dequantized to f32 (exact; twice the bytes of bf16)",
    )
    parser.add_argument(
        "--logits", action="store_true", help="the step also returns its logits (%%logits)"
    )
    parser.add_argument(
        "--hidden",
        action="store_true",
        help="the step also returns the final norm's output, the last hidden state (%%final)",
    )
    parser.add_argument("-o", "--output", required=True, help="the .mlir file to write")
    return parser.parse_args(argv)


def paged_arg(text: str) -> int | str:
    """--paged's value: a block's rows, or "auto"."""
    if text == AUTO:
        return AUTO
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"'{text}' is neither a number of rows nor 'auto'"
        ) from None


AUTO = "auto"
"""--paged auto: the page size priced on the target (tools/frontend/paging.py)."""


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
        extra=tuple(e for e, on in (("logits", args.logits), ("final", args.hidden)) if on),
        batch=args.batch,
        paged=args.paged,
    )


@dataclass(frozen=True)
class Checkpoint:
    """What the module needs of a checkpoint of either kind, once its header is read."""

    arch: str
    layers: int  # the model's
    d: int
    context: int
    note: str  # what the module's first line adds
    error: type[Exception]  # what a bad option is reported as
    types: Callable[[int], set[str]]  # the weights' types in the first N layers, checked
    # the compute type of weights of those types, given the target's preferred activations
    default_elt: Callable[[set[str], str], str]
    tables: str | None  # the norm weights' and rope tables' type where it is not the compute type
    # the step: (tokens, cache rows, layers, compute type, function name, own-input prefix,
    # a batched step's users and KV layout or None)
    step: Callable[[int, int, int, str, str, str, Batch | None], FuncOp]


def gguf_checkpoint(path: str, dequantize: bool) -> Checkpoint:
    _, h = read_checkpoint(path)
    if isinstance(h, NextConfig):  # every weight declared in the float type (tg.moe, tg.decay)

        def next_step(
            t: int, cache: int, layers: int, elt: str, name: str, own: str, batch: Batch | None
        ) -> FuncOp:
            if batch is not None:
                raise GGUFError(f"{h.arch}: --batch has no batched form of its recurrent layers")
            return next_checkpoint_step(h, t, cache, layers, elt, name, own)

        def next_elt(types: set[str], preferred: str) -> str:
            return program_dtype_dequantized(types)

        types = partial(weight_types, h)
        return Checkpoint(
            h.arch, h.layers, h.d, h.context, "", GGUFError, types, next_elt, TABLES, next_step
        )

    def types(layers: int) -> set[str]:
        check_tensors(h, layers)
        return weight_types(h, layers)

    def q8(types: set[str]) -> bool:  # Q8_0 weights stay Q8_0 unless --dequantize
        return "Q8_0" in types and not dequantize

    def elt(types: set[str], preferred: str) -> str:
        return program_dtype(types, preferred) if q8(types) else program_dtype_dequantized(types)

    def step(
        t: int, cache: int, layers: int, elt: str, name: str, own: str, batch: Batch | None
    ) -> FuncOp:
        quantized = q8(weight_types(h, layers))
        return checkpoint_step(h, t, cache, layers, elt, name, quantized, own, batch)

    return Checkpoint(h.arch, h.layers, h.d, h.context, "", GGUFError, types, elt, TABLES, step)


def hf_checkpoint(path: str) -> Checkpoint:
    h = read_header_dir(path)
    note = f"; tokenizer {h.tokenizer}" if h.tokenizer else ""

    def step(
        t: int, cache: int, layers: int, elt: str, name: str, own: str, batch: Batch | None
    ) -> FuncOp:
        return hf_step(h, t, cache, layers, elt, name, own, batch)

    def elt(types: set[str], preferred: str) -> str:  # no Q8_0 in a HF directory
        return hf_dtype(types)

    types = partial(hf_weight_types, h)
    return Checkpoint(
        h.arch.name, h.layers, h.d, h.context, note, HFError, types, elt, TABLES, step
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
    extra: tuple[str, ...] = (),
    batch: int | None = None,
    paged: int | str | None = None,
) -> str:
    """The text of the module spatial-import writes for the checkpoint at `path` (a GGUF file or
    a Hugging Face directory; `step`: "decode", "prefill" or "both"; None: the defaults the
    command line documents; `extra`: the outputs of layers.STEP_OUTPUTS each step returns after
    its caches; `batch`, `paged`: --batch and --paged, an int or "auto"). Raises one of
    CHECKPOINT_ERRORS."""
    if Path(path).name == "config.json" or Path(path).suffix == ".safetensors":
        raise HFError(f"'{path}' is one file of a Hugging Face checkpoint: give its directory")
    c = hf_checkpoint(path) if Path(path).is_dir() else gguf_checkpoint(path, dequantize)
    layers = c.layers if layers is None else layers
    if not 1 <= layers <= c.layers:
        raise c.error(f"--layers {layers}: the model has {c.layers} layer(s)")
    types = c.types(layers)
    elt = dtype or c.default_elt(types, preferred_activations(target))
    t = tokens if tokens is not None else (1 if step == "decode" else 8)
    cache = cache if cache is not None else min(256, c.context)
    if t <= 0 or cache < t:
        raise c.error(f"--tokens {t} and --cache {cache}: need 1 <= tokens <= cache")
    if cache > c.context:
        raise c.error(
            f"--cache {cache} exceeds the model's context_length {c.context}: positions past it "
            "were never trained"
        )
    steps = {"prefill": t, "decode": 1} if step == "both" else {step: t}
    own = (lambda s: f"{s}.") if step == "both" else (lambda s: "")
    priced = None
    if paged == AUTO:  # the block size, priced on the target from the step built contiguous
        if batch is None or "decode" not in steps:
            raise c.error("--paged auto needs --batch and a decode step: it prices a batch's pool")
        chip = pricing_target(target, c.error)
        contiguous = Batch.decode(batch, cache, None)
        build = c.step(1, cache, layers, elt, f"{c.arch}_decode", own("decode"), contiguous)
        try:
            priced = (*paging.choose(build, chip, batch, cache), chip)
        except PagingError as e:
            raise c.error(f"--paged auto: {e}") from None
        paged = priced[0].chosen.block
    assert not isinstance(paged, str)
    batches = batch_layouts(steps, cache, batch, paged, c.error)
    header = (
        f"// Imported by spatial-import from {Path(path).name}: {c.arch}, "
        f"{layers}/{c.layers} layer(s), d={c.d}, "
        f"{' and '.join(f'{s} of {n} token(s)' for s, n in steps.items())} over a "
        f"{cache}-row cache{batch_note(batch, paged)}"
        f"{'' if priced is None else paging.note(priced[0], priced[2])}, weights {', '.join(sorted(types))} "
        f"computed in {elt}{tables_note(c.tables, elt)}{c.note}.\n"
    )
    # One deployment: the steps share the weights and caches by name; their own inputs are theirs.
    functions = [
        c.step(n, cache, layers, elt, f"{c.arch}_{s}", own(s), batches[s]) for s, n in steps.items()
    ]
    if priced is not None:  # the decode (the last step) records the page size and its runner-up
        paging.record(functions[-1], *priced)
    for f in functions:  # --logits, --hidden
        also_return(f, extra)
    if step == "both":  # one deployment's steps: what carries from one to the next
        for f in functions:
            carries(f)
        # the decode: fed the token, at the row after the prefill (batched: per user, after
        # its admission; tools/frontend/chaining.py)
        follows(functions[1], "token")
    return header + print_functions(functions)


def batch_layouts(
    steps: dict[str, int],
    cache: int,
    batch: int | None,
    paged: int | None,
    error: type[Exception],
) -> dict[str, Batch | None]:
    """Each step's users and KV layout: None without --batch; the decode's B users; a prefill is
    one user's admission into its slot of the same cache (docs/tg.md#batched-decode)."""
    if batch is None:
        if paged is not None:
            raise error(f"--paged {paged} needs --batch: a paged cache is a batched step's")
        return dict.fromkeys(steps)
    if batch < 1:
        raise error(f"--batch {batch}: a batch has at least 1 user")
    if paged is not None and (paged < 1 or cache % paged):
        raise error(
            f"--paged {paged}: a block holds >= 1 rows and the cache's {cache} rows per user are "
            "a whole number of blocks"
        )
    return {
        s: Batch.decode(batch, cache, paged, n)
        if s == "decode"
        else Batch.admission(batch, cache, n, paged)
        for s, n in steps.items()
    }


def batch_note(batch: int | None, paged: int | None) -> str:
    """What the module's first line says of a batched step's users and cache."""
    if batch is None:
        return ""
    layout = "contiguous" if paged is None else f"paged in blocks of {paged} rows"
    return f" per user, {batch} user(s), {layout}"


def tables_note(tables: str | None, elt: str) -> str:
    """What the module's first line says of the norm weights and rope tables."""
    return f" (norm weights and rope tables {tables})" if tables and tables != elt else ""


def pricing_target(target: str | None, error: type[Exception]) -> Target:
    """The chip --paged auto prices on: --target's, which must name one chip."""
    if target is None:
        raise error("--paged auto prices the block size on a target: give --target")
    if target.lower() in MESH_PRESETS:
        raise error(
            f"--paged auto prices one chip's DRAM; --target {target} is a mesh: give --paged BLOCK"
        )
    try:
        return load_target(target)
    except TargetError as e:
        raise error(f"--target: {e}") from None


def preferred_activations(target: str | None) -> str:
    """The activation type `target` prefers (bf16 without one); a mesh preset's is its chip's
    (the program stays whole: spatial-pipeline{target=MESH} makes it one deployment)."""
    if target is None:
        return "bf16"
    mesh = MESH_PRESETS.get(target.lower())
    if mesh is not None:
        return mesh.chip.activations
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
    except CHECKPOINT_ERRORS as e:
        print(f"spatial-import: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"spatial-import: error: cannot write '{args.output}': {e.strerror}", file=sys.stderr)
        return 1
    except MemoryError:
        print("spatial-import: error: out of memory", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - a bug must still not greet the user with a traceback
        if os.environ.get("SPATIAL_IMPORT_TRACEBACK"):
            traceback.print_exc()
        print(
            f"spatial-import: error: internal error: {type(e).__name__}: {e} "
            "(please report it; SPATIAL_IMPORT_TRACEBACK=1 shows where)",
            file=sys.stderr,
        )
        return 1
    return 0


__all__ = ["main", "SUPPORTED_TYPES", "CHECKPOINT_ERRORS"]

if __name__ == "__main__":
    sys.exit(main())
