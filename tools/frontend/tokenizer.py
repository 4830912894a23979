"""A checkpoint's own tokenizer, built with Hugging Face's `tokenizers` package: text in and out
of `spatial-generate`.

- A Hugging Face directory carries its tokenizer as tokenizer.json: read as it is.
- A GGUF file carries it as `tokenizer.ggml.*` metadata, as llama.cpp's converter
  (convert_hf_to_gguf.py) writes it. Only the byte-level BPE model llama.cpp calls "gpt2" (GPT-2's
  scheme, which Llama 3 and Qwen use) is built: the vocabulary is `tokenizer.ggml.tokens` (the
  id is the position), the merges `tokenizer.ggml.merges` ("a b", in rank order), tokens of type
  CONTROL or USER_DEFINED are special (matched whole, before the model), and
  `tokenizer.ggml.add_bos_token` prepends `tokenizer.ggml.bos_token_id`. The text is split
  before the BPE by the regex of `tokenizer.ggml.pre`, llama.cpp's pre-tokenizer (the patterns
  of its llama-vocab.cpp for "llama-bpe", "qwen2" and "gpt-2"); another model ("llama": a
  SentencePiece vocabulary) or pre-tokenizer is refused by name, never approximated.

A checkpoint without a tokenizer gives None: spatial-generate then takes ids only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PRE_TOKENIZERS = {
    "llama-bpe": (
        r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+"
        r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    ),
    "qwen2": (
        r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+"
        r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    ),
    "gpt-2": r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
}
"""llama.cpp's pre-tokenizer regex of each `tokenizer.ggml.pre` this module builds."""

SPECIAL_TYPES = (3, 4)
"""`tokenizer.ggml.token_type` values of special tokens: CONTROL and USER_DEFINED (gguf's
TokenType)."""


class TokenizerError(Exception):
    """The checkpoint's tokenizer cannot be built (one line that says why)."""


def _tokenizers() -> Any:
    try:
        import tokenizers
    except ImportError:
        raise TokenizerError(
            "the 'tokenizers' package is not installed (pip install 'spatial-dialect[gguf]')"
        ) from None
    return tokenizers


def checkpoint_tokenizer(path: str | Path) -> Any | None:
    """The tokenizer of the checkpoint at `path` (a `tokenizers.Tokenizer`), or None when it has
    none."""
    p = Path(path)
    if p.is_dir():
        file = p / "tokenizer.json"
        if not file.is_file():
            return None
        try:
            return _tokenizers().Tokenizer.from_file(str(file))
        except Exception as e:  # noqa: BLE001 - the Rust side raises its own kinds
            raise TokenizerError(f"'{file}' is not a readable tokenizer: {e}") from None
    return gguf_tokenizer(p)


def _metadata(reader: Any, key: str, default: Any = None) -> Any:
    field = reader.fields.get(key)
    if field is None:
        return default
    try:
        return field.contents()
    except Exception as e:  # noqa: BLE001 - the reader raises many kinds on a bad field
        raise TokenizerError(f"the GGUF metadata '{key}' is malformed: {e}") from None


def gguf_tokenizer(path: Path) -> Any | None:
    """The byte-level BPE tokenizer a GGUF file's `tokenizer.ggml.*` metadata describes."""
    from spatial_dialect.tools.frontend.gguf_model import GGUFError, open_reader

    try:
        reader = open_reader(path)
    except GGUFError as e:
        raise TokenizerError(str(e)) from None
    model = _metadata(reader, "tokenizer.ggml.model")
    if model is None:
        return None
    if model != "gpt2":
        raise TokenizerError(
            f"tokenizer.ggml.model '{model}' is not built (only 'gpt2', byte-level BPE)"
        )
    pre = _metadata(reader, "tokenizer.ggml.pre")
    if pre is None:
        raise TokenizerError(
            "the GGUF metadata has no 'tokenizer.ggml.pre' (llama.cpp then splits with its "
            "'default' pre-tokenizer, which is not built)"
        )
    if pre not in PRE_TOKENIZERS:
        raise TokenizerError(
            f"tokenizer.ggml.pre '{pre}' is not built (one of {', '.join(PRE_TOKENIZERS)})"
        )
    tokens = _metadata(reader, "tokenizer.ggml.tokens")
    merges = _metadata(reader, "tokenizer.ggml.merges", [])
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        raise TokenizerError("the GGUF metadata has no list of strings 'tokenizer.ggml.tokens'")
    pairs = [tuple(m.split(" ", 1)) for m in merges if isinstance(m, str) and " " in m]
    if len(pairs) != len(merges):
        raise TokenizerError("tokenizer.ggml.merges holds an entry that is not 'a b'")
    types = _metadata(reader, "tokenizer.ggml.token_type", [1] * len(tokens))
    tk = _tokenizers()
    vocab = {t: i for i, t in enumerate(tokens)}
    try:
        bpe = tk.models.BPE(vocab, pairs, ignore_merges=pre == "llama-bpe")
    except Exception as e:  # noqa: BLE001 - the Rust side raises its own kinds
        raise TokenizerError(f"the GGUF tokenizer does not build: {e}") from None
    tok = tk.Tokenizer(bpe)
    tok.pre_tokenizer = tk.pre_tokenizers.Sequence(
        [
            tk.pre_tokenizers.Split(tk.Regex(PRE_TOKENIZERS[pre]), "isolated"),
            tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = tk.decoders.ByteLevel()
    special = [t for t, kind in zip(tokens, types, strict=False) if kind in SPECIAL_TYPES]
    tok.add_special_tokens([tk.AddedToken(t, special=True, normalized=False) for t in special])
    bos = _metadata(reader, "tokenizer.ggml.bos_token_id")
    if _metadata(reader, "tokenizer.ggml.add_bos_token", False) and bos is not None:
        tok.post_processor = tk.processors.TemplateProcessing(
            single=f"{tokens[bos]} $A", special_tokens=[(tokens[bos], int(bos))]
        )
    return tok
