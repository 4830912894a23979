"""Importing a multi-GB checkpoint: spatial-import reads the GGUF header and nothing else.

    .venv/bin/python bench/import_checkpoint.py            # Llama-3.1-8B Q8_0 (8.5 GB), two targets
    .venv/bin/python bench/import_checkpoint.py --smoke    # a 2-layer model of the same widths (CI)

No checkpoint is downloaded: the file is written with llama.cpp's `gguf` writer (its metadata
and tensor infos exactly as a Q8_0 conversion of Llama-3.1-8B carries them: 32 layers, d = 4096,
ffn 14336, 32 heads over 8 kv heads, vocab 128256, every matrix Q8_0, norms F32) and then
extended to its full length as a sparse file, so it has the size of the real checkpoint on a
disk that holds none of its tensor data. Each row times `spatial-import --step decode` (and
`--step both`) on it, then compiles the decode step with `spatial-pipeline{target=T}` and reads
its `-t report`: the predicted step time, its roofline and the Q8_0 weight bytes (which must be
the checkpoint's 2-D weights, 34 bytes per 32 elements).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TARGETS = ("wormhole_n150", "blackhole_p150")


@dataclass(frozen=True)
class Shape:
    layers: int
    d: int = 4096
    ffn: int = 14336
    heads: int = 32
    kv_heads: int = 8
    head_dim: int = 128
    vocab: int = 128256


LLAMA_3_1_8B = Shape(layers=32)
SMOKE = Shape(layers=2)


def q8_0_bytes(rows: int, cols: int) -> int:
    return rows * cols // 32 * 34


def write_sparse_gguf(path: Path, s: Shape) -> int:
    """A Q8_0 Llama GGUF of shape `s` whose tensor data is a hole; its size in bytes."""
    import gguf

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(s.layers)
    w.add_context_length(131072)
    w.add_embedding_length(s.d)
    w.add_feed_forward_length(s.ffn)
    w.add_head_count(s.heads)
    w.add_head_count_kv(s.kv_heads)
    w.add_rope_dimension_count(s.head_dim)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(5e5)
    w.add_vocab_size(s.vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    sizes: list[int] = []

    def matrix(name: str, rows: int, cols: int) -> None:
        nbytes = q8_0_bytes(rows, cols)
        shape = (rows, cols // 32 * 34)  # the writer takes a quantized tensor's shape in bytes
        w.add_tensor_info(
            name, shape, np.dtype(np.uint8), nbytes, raw_dtype=gguf.GGMLQuantizationType.Q8_0
        )
        sizes.append(nbytes)

    def norm(name: str, n: int) -> None:
        w.add_tensor_info(name, (n,), np.dtype(np.float32), 4 * n)
        sizes.append(4 * n)

    kv = s.kv_heads * s.head_dim
    matrix("token_embd.weight", s.vocab, s.d)
    for i in range(s.layers):
        b = f"blk.{i}."
        norm(b + "attn_norm.weight", s.d)
        matrix(b + "attn_q.weight", s.heads * s.head_dim, s.d)
        matrix(b + "attn_k.weight", kv, s.d)
        matrix(b + "attn_v.weight", kv, s.d)
        matrix(b + "attn_output.weight", s.d, s.heads * s.head_dim)
        norm(b + "ffn_norm.weight", s.d)
        matrix(b + "ffn_gate.weight", s.ffn, s.d)
        matrix(b + "ffn_up.weight", s.ffn, s.d)
        matrix(b + "ffn_down.weight", s.d, s.ffn)
    norm("output_norm.weight", s.d)
    matrix("output.weight", s.vocab, s.d)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    align = 32  # general.alignment's default: the data and every tensor start on it
    padded = lambda n: -(-n // align) * align  # noqa: E731
    size = padded(path.stat().st_size) + sum(padded(n) for n in sizes)
    os.truncate(path, size)
    return size


@dataclass(frozen=True)
class Row:
    target: str
    predicted_us: float
    roofline_us: float
    q8_0_weight_bytes: int
    compile_s: float


def import_step(path: Path, step: str, out: Path) -> float:
    """Seconds spatial-import takes (in this process: no interpreter start-up)."""
    from spatial_dialect.tools import spatial_import

    start = time.perf_counter()
    status = spatial_import.main([str(path), "--step", step, "-o", str(out)])
    seconds = time.perf_counter() - start
    if status:
        raise SystemExit(f"spatial-import --step {step} failed ({status})")
    return seconds


def measure(program: str, target: str) -> Row:
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.emit.report import report

    start = time.process_time()
    module = compile_module(program, target=target)
    r = report(module)
    seconds = time.process_time() - start
    total = r["total"]
    return Row(
        target,
        total["predicted_us"],
        total["roofline_us"],
        total["q8_0_weight_bytes"],
        seconds,
    )


def weight_bytes(s: Shape) -> int:
    """The Q8_0 bytes of the checkpoint's matrices (the table, the layers, the LM head)."""
    kv = s.kv_heads * s.head_dim
    q = s.heads * s.head_dim
    layer = q8_0_bytes(q, s.d) * 2 + q8_0_bytes(kv, s.d) * 2 + q8_0_bytes(s.ffn, s.d) * 3
    return 2 * q8_0_bytes(s.vocab, s.d) + s.layers * layer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="2 layers, wormhole_n150 only")
    args = parser.parse_args()
    shape, targets = (SMOKE, TARGETS[:1]) if args.smoke else (LLAMA_3_1_8B, TARGETS)
    with tempfile.TemporaryDirectory() as tmp:
        gguf_path = Path(tmp) / "model.gguf"
        size = write_sparse_gguf(gguf_path, shape)
        decode, both = Path(tmp) / "decode.mlir", Path(tmp) / "both.mlir"
        t_decode = import_step(gguf_path, "decode", decode)
        t_both = import_step(gguf_path, "both", both)
        print(
            f"{shape.layers}-layer Q8_0 checkpoint, {size / 1e9:.2f} GB on disk as a sparse file: "
            f"spatial-import --step decode {t_decode:.3f} s, --step both {t_both:.3f} s"
        )
        program = decode.read_text()
        print("| target | compile CPU s | predicted ms | tokens/s | predicted/roofline | Q8_0 GB |")
        print("|---|---:|---:|---:|---:|---:|")
        for target in targets:
            row = measure(program, target)
            assert row.q8_0_weight_bytes == weight_bytes(shape), row
            print(
                f"| {target} | {row.compile_s:.1f} | {row.predicted_us / 1000:.2f} | "
                f"{1e6 / row.predicted_us:.1f} | {row.predicted_us / row.roofline_us:.3f} | "
                f"{row.q8_0_weight_bytes / 1e9:.2f} |"
            )


if __name__ == "__main__":
    main()
