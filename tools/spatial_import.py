"""spatial-import: a GGUF checkpoint's whole greedy step as a tg program.

    spatial-import MODEL.gguf --step decode|prefill|both [--tokens T] [--cache S] [--layers N]
                   [--dtype f32|f16|bf16] [--dequantize] -o OUT.mlir

reads only the GGUF header (metadata and tensor infos, tools/frontend/gguf_model.py; no tensor data) of a
`llama`, `qwen3` or `qwen3moe` model and writes one func.func (`@ARCH_decode` or `@ARCH_prefill`;
with `--step both`, one module of both, a deployment, below): the embedding gather of the token
ids; per layer the attention rms norm, q/k/v (Qwen3: the per-head q/k rms norms), rope with the
model's rope.freq_base, the KV-cache writes at `pos` and attention over the updated cache, o, the
residual, the ffn rms norm, the SwiGLU MLP (qwen3moe: a tg.moe over the router and the experts,
"experts" layout: GGUF's E x out x in, each expert transposed, stacked along K) and its residual; the final norm, the LM head (the
embedding table when the file has no output.weight) and the arg-max.

Arguments are named as the GGUF tensors they hold (`%blk.0.attn_q.weight`) and carry
`gguf.tensor` (the tensor's name) and `gguf.layout` ("kn": the transpose of ggml's out x in, the
right operand of tg.matmul; "rows": as stored). The rope tables `%cos` and `%sin` carry
`gguf.rope_freq_base` (and `gguf.rope_freqs` when the file has rope_freqs.weight): they are the
cos and sin of (pos + i) * base^(-2j/D) (/ freq factor j), filled by `spatial-run --weights`.

Element types: the program computes in one float type, --dtype (default: that of the
matmul weights: f16, bf16 (also for Q8_0 weights), or f32 when they are F32 or mixed);
`spatial-run --weights` rounds each tensor to it (norm weights are F32 in GGUF files). Q8_0
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
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from spatial_dialect.tools.frontend.gguf_model import (
    SUPPORTED_TYPES,
    GGUFError,
    ModelHeader,
    check_tensors,
    read_header,
)
from spatial_dialect.tools.frontend.tg_writer import Writer, tensor


def weight_types(h: ModelHeader, layers: int) -> set[str]:
    """The GGML types of the 2-D weights the step reads."""
    names = [n for n in h.tensors if n.startswith("blk.") and int(n.split(".")[1]) < layers]
    names += ["token_embd.weight", "output.weight"]
    return {h.tensors[n].type for n in names if n in h.tensors and len(h.tensors[n].shape) == 2}


def program_dtype(types: set[str]) -> str:
    """Q8_0 weights stay Q8_0 and take the type of the others (bf16 where all are Q8_0)."""
    floats = types - {"Q8_0"}
    if floats == {"F16"}:
        return "f16"
    if floats in (set(), {"BF16"}):
        return "bf16"
    return "f32"


def program_dtype_dequantized(types: set[str]) -> str:
    """With --dequantize a Q8_0 weight is f32 (exact), so the program is."""
    return "f32" if "Q8_0" in types else program_dtype(types)


def step_program(
    h: ModelHeader,
    t: int,
    cache: int,
    layers: int,
    elt: str,
    name: str,
    q8: bool = False,
    own: str = "",
) -> str:
    """The whole greedy step of `layers` layers for t tokens over a `cache`-row KV cache; `q8`:
    Q8_0 weights stay Q8_0 (else they are declared `elt`); `own`: the prefix of the step's own
    inputs (its tokens, their position and rope tables), which in a deployment are no other
    step's, while the weights and the caches keep their names and are shared."""
    ten = lambda *s: tensor(*s, elt=elt)  # noqa: E731
    d, hd, nh, nkv = h.d, h.head_dim, h.heads, h.kv_heads
    w = Writer()

    def is_q8(gname: str) -> bool:
        return q8 and h.tensors[gname].type == "Q8_0"

    def q8_args(gname: str, shape: tuple[int, int], layout: str) -> tuple[str, str]:
        """The values and the scales of a Q8_0 weight (blocks along ggml's ne0: K for "kn")."""
        axis = 0 if layout == "kn" else 1
        scales = (shape[0] // 32, shape[1]) if axis == 0 else (shape[0], shape[1] // 32)
        attrs = f'gguf.tensor = "{gname}", gguf.layout = "{layout}", gguf.q8_0 ='
        v = w.arg(gname, tensor(*shape, elt="i8"), f'{attrs} "values"')
        sc = w.arg(f"{gname}.scales", tensor(*scales, elt="f16"), f'{attrs} "scales"')
        return v, sc

    def weight(gname: str, shape: tuple[int, ...], layout: str):
        """A weight argument: its name, or (values, scales) for a Q8_0 weight kept Q8_0."""
        if is_q8(gname):
            return q8_args(gname, (shape[0], shape[1]), layout)
        return w.arg(gname, ten(*shape), f'gguf.tensor = "{gname}", gguf.layout = "{layout}"')

    def norm_weight(gname: str, width: int) -> str:
        return w.arg(gname, ten(1, width), f'gguf.tensor = "{gname}", gguf.layout = "rows"')

    ids_t, pos_t = tensor(t, elt="i32"), tensor(1, elt="i32")
    ids = w.arg(f"{own}ids", ids_t)
    pos = w.arg(f"{own}pos", pos_t)
    rope_attrs = f"gguf.rope_freq_base = {h.rope_base:.8e} : f64"
    if "rope_freqs.weight" in h.tensors:
        rope_attrs += ', gguf.rope_freqs = "rope_freqs.weight"'
    cs = ten(t, hd // 2)
    cos = w.arg(f"{own}cos", cs, f'gguf.rope = "cos", {rope_attrs}')
    sin = w.arg(f"{own}sin", cs, f'gguf.rope = "sin", {rope_attrs}')
    table = weight("token_embd.weight", (h.vocab, d), "rows")
    act, qt, kt = ten(t, d), ten(t, nh * hd), ten(t, nkv * hd)
    ct = ten(cache, nkv * hd)

    def gather(r: str, tbl: str, elt_: str, cols: int) -> str:
        row_t = f"({tensor(h.vocab, cols, elt=elt_)}, {ids_t}) -> {tensor(t, cols, elt=elt_)}"
        return w.op(r, f"tg.gather_rows {tbl}, {ids} : {row_t}")

    if isinstance(table, tuple):  # a Q8_0 table: the ids' rows of its values and scales, widened
        gv, gs = gather("x.values", table[0], "i8", d), gather("x.scales", table[1], "f16", d // 32)
        qtypes = f"({tensor(t, d, elt='i8')}, {tensor(t, d // 32, elt='f16')})"
        x = w.op("x", f"tg.dequantize_q8_0 {gv}, {gs} axis 1 : {qtypes} -> {act}")
    else:
        x = gather("x", table, elt, d)
    eps = f"{h.eps:.6e}"
    caches: list[tuple[str, str]] = []

    def mm(r: str, a: str, b, at: str, k: int, n: int, transpose_b: bool = False) -> str:
        """a @ b, b K x N; `transpose_b`: b is N x K (the tied head's table), a @ b^T."""
        tb = " transpose_b true" if transpose_b else ""
        bk, bn = (n, k) if transpose_b else (k, n)
        if isinstance(b, tuple):  # Q8_0: ggml quantizes the activation of every such product
            # blocks along K: down b's columns when it is N x K (ggml's layout), else its rows
            scales = (bk, bn // 32) if transpose_b else (bk // 32, bn)
            vt, st = tensor(bk, bn, elt="i8"), tensor(*scales, elt="f16")
            return w.op(
                r,
                f'tg.matmul_q8_0 {a}, {b[0]}, {b[1]} activation "q8_0"{tb} : ({at}, {vt}, {st}) '
                f"-> {ten(t, n)}",
            )
        return w.op(r, f"tg.matmul {a}, {b}{tb} : ({at}, {ten(bk, bn)}) -> {ten(t, n)}")

    def moe(b: str, p: str, x: str, at: str) -> str:
        """A qwen3moe layer's FFN: tg.moe over the router and the experts, declared in the
        program's float type (tg.moe has no Q8_0 form: --weights dequantizes a Q8_0 expert
        exactly). llama.cpp's qwen3moe: softmax over every expert, the top experts_used,
        their weights renormalized to sum to 1."""
        e, f = h.experts, h.ffn

        def arg(name: str, shape: tuple[int, int], layout: str) -> str:
            attrs = f'gguf.tensor = "{b}{name}", gguf.layout = "{layout}"'
            return w.arg(b + name, ten(*shape), attrs)

        router = arg("ffn_gate_inp.weight", (d, e), "kn")
        gate = arg("ffn_gate_exps.weight", (e * d, f), "experts")
        up = arg("ffn_up_exps.weight", (e * d, f), "experts")
        down = arg("ffn_down_exps.weight", (e * f, d), "experts")
        types = f"({at}, {ten(d, e)}, {ten(e * d, f)}, {ten(e * d, f)}, {ten(e * f, d)})"
        return w.op(
            f"{p}moe",
            f'tg.moe {x}, {router}, {gate}, {up}, {down} top_k {h.experts_used} scores "softmax" '
            f"renormalize true : {types} -> {at}",
        )

    for i in range(layers):
        b, p = f"blk.{i}.", f"l{i}_"
        attn_norm = norm_weight(b + "attn_norm.weight", d)
        wq = weight(b + "attn_q.weight", (d, nh * hd), "kn")
        wk = weight(b + "attn_k.weight", (d, nkv * hd), "kn")
        wv = weight(b + "attn_v.weight", (d, nkv * hd), "kn")
        wo = weight(b + "attn_output.weight", (nh * hd, d), "kn")
        ffn_norm = norm_weight(b + "ffn_norm.weight", d)
        kc0 = w.arg(f"{p}k_cache", ct)
        vc0 = w.arg(f"{p}v_cache", ct)
        hn = w.op(
            f"{p}h", f"tg.rms_norm {x}, {attn_norm} eps {eps} : ({act}, {ten(1, d)}) -> {act}"
        )
        q = mm(f"{p}q", hn, wq, act, d, nh * hd)
        k = mm(f"{p}k", hn, wk, act, d, nkv * hd)
        v = mm(f"{p}v", hn, wv, act, d, nkv * hd)
        if h.qk_norm:
            qn = norm_weight(b + "attn_q_norm.weight", hd)
            kn = norm_weight(b + "attn_k_norm.weight", hd)
            q = w.op(
                f"{p}qn",
                f"tg.rms_norm {q}, {qn} eps {eps} width {hd} : ({qt}, {ten(1, hd)}) -> {qt}",
            )
            k = w.op(
                f"{p}kn",
                f"tg.rms_norm {k}, {kn} eps {eps} width {hd} : ({kt}, {ten(1, hd)}) -> {kt}",
            )
        rope = f'head_dim {hd} style "{h.rope_style}"'
        q = w.op(f"{p}qr", f"tg.rope {q}, {cos}, {sin} {rope} : ({qt}, {cs}, {cs}) -> {qt}")
        k = w.op(f"{p}kr", f"tg.rope {k}, {cos}, {sin} {rope} : ({kt}, {cs}, {cs}) -> {kt}")
        kc = w.op(f"{p}kc", f"tg.set_rows {kc0}, {k}, {pos} : ({ct}, {kt}, {pos_t}) -> {ct}")
        vc = w.op(f"{p}vc", f"tg.set_rows {vc0}, {v}, {pos} : ({ct}, {kt}, {pos_t}) -> {ct}")
        attn = f"heads {nh} kv_heads {nkv} head_dim {hd} causal true scale {1 / math.sqrt(hd):.8e}"
        a = w.op(
            f"{p}attn",
            f"tg.attention {q}, {kc}, {vc}, {pos} {attn} : ({qt}, {ct}, {ct}, {pos_t}) -> {qt}",
        )
        o = mm(f"{p}o", a, wo, qt, nh * hd, d)
        h2 = w.op(f"{p}h2", f"tg.add {x}, {o} : ({act}, {act}) -> {act}")
        n2 = w.op(
            f"{p}n2", f"tg.rms_norm {h2}, {ffn_norm} eps {eps} : ({act}, {ten(1, d)}) -> {act}"
        )
        if h.experts:
            dn = moe(b, p, n2, act)
        else:
            wg = weight(b + "ffn_gate.weight", (d, h.ffn), "kn")
            wu = weight(b + "ffn_up.weight", (d, h.ffn), "kn")
            wd = weight(b + "ffn_down.weight", (h.ffn, d), "kn")
            ft = ten(t, h.ffn)
            g = mm(f"{p}gate", n2, wg, act, d, h.ffn)
            u = mm(f"{p}up", n2, wu, act, d, h.ffn)
            s = w.op(f"{p}act", f"tg.swiglu {g}, {u} : ({ft}, {ft}) -> {ft}")
            dn = mm(f"{p}down", s, wd, ft, h.ffn, d)
        x = w.op(f"{p}out", f"tg.add {h2}, {dn} : ({act}, {act}) -> {act}")
        caches += [(kc, ct), (vc, ct)]
    final_norm = norm_weight("output_norm.weight", d)
    n = w.op("final", f"tg.rms_norm {x}, {final_norm} eps {eps} : ({act}, {ten(1, d)}) -> {act}")
    if h.tied:  # the LM head is the embedding table itself, [vocab, d], read transposed
        logits = mm("logits", n, table, act, d, h.vocab, transpose_b=True)
    else:
        logits = mm("logits", n, weight("output.weight", (d, h.vocab), "kn"), act, d, h.vocab)
    token = w.op("token", f"tg.argmax {logits} : ({ten(t, h.vocab)}) -> {ids_t}")
    return w.func(name, [(token, ids_t), *caches])


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
        "--dequantize",
        action="store_true",
        help="import Q8_0 weights dequantized to f32 (exact; twice the bytes of bf16)",
    )
    parser.add_argument("-o", "--output", required=True, help="the .mlir file to write")
    return parser.parse_args(argv)


def import_model(args: argparse.Namespace) -> str:
    _, h = read_header(args.model)
    layers = h.layers if args.layers is None else args.layers
    if not 1 <= layers <= h.layers:
        raise GGUFError(f"--layers {layers}: the model has {h.layers} layer(s)")
    check_tensors(h, layers)
    types = weight_types(h, layers)
    q8 = "Q8_0" in types and not args.dequantize
    elt = args.dtype or (program_dtype(types) if q8 else program_dtype_dequantized(types))
    t = args.tokens or (1 if args.step == "decode" else 8)
    cache = args.cache or min(256, h.context)
    if t <= 0 or cache < t:
        raise GGUFError(f"--tokens {t} and --cache {cache}: need 1 <= tokens <= cache")
    steps = {"prefill": t, "decode": 1} if args.step == "both" else {args.step: t}
    header = (
        f"// Imported by spatial-import from {Path(args.model).name}: {h.arch}, "
        f"{layers}/{h.layers} layer(s), d={h.d}, "
        f"{' and '.join(f'{step} of {n} token(s)' for step, n in steps.items())} over a "
        f"{cache}-row cache, weights {', '.join(sorted(types))} computed in {elt}.\n"
    )
    # One deployment: the steps share the weights and caches by name; their own inputs are theirs.
    own = (lambda step: f"{step}.") if args.step == "both" else (lambda step: "")
    return header + "\n".join(
        step_program(h, n, cache, layers, elt, f"{h.arch}_{step}", q8, own(step))
        for step, n in steps.items()
    )


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


__all__ = ["main", "step_program", "SUPPORTED_TYPES"]

if __name__ == "__main__":
    sys.exit(main())
