"""Names in printed programs: one rule for turning an IR name into a Python identifier.

Tensor and section names come from the IR (`@blk.0.attn_norm.weight`, `@l0_q`); a printed
program uses them as Python names. Both backends clean them by this one rule, so a tensor has the
same name in a TT-Lang program and a Triton program, and two printers cannot disagree on what a
dotted GGUF name becomes.
"""

from __future__ import annotations


def ident(name: str, prefix: str = "t_") -> str:
    """`name` with every character that is not a letter, digit or `_` replaced by `_`; `prefix`
    in front where the result would start with a digit or be empty (`blk.0.w` -> `blk_0_w`,
    `0a` -> `t_0a`)."""
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out if out and not out[0].isdigit() else f"{prefix}{out}"
