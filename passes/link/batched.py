"""The batched decode ops (tg.batch_set_rows, tg.batch_attention) have no section form yet.

They are refused by name, each with its reason, rather than linked as their single-user
counterparts: a batched op read as tg.set_rows / tg.attention would write at one position only
and attend over other users' keys, a silent wrong answer. Their meaning is the reference's
(docs/tg.md#batched-decode); a linker that gives them sections replaces its entry here.
"""

from __future__ import annotations

from xdsl.ir import Operation

from spatial_dialect import tg

REFUSED: dict[type[Operation], str] = {
    tg.BatchSetRowsOp: (
        "the batched KV-cache write (each user's rows at its own positions, contiguous or "
        "through a block table) has no section form yet; spatial-run --reference-only evaluates it"
    ),
    tg.BatchAttentionOp: (
        "batched decode attention (each user over its own cache, contiguous or paged) has no "
        "section form yet; spatial-run --reference-only evaluates it"
    ),
}
"""The tg ops link refuses, each with its reason (test/test_coverage.py reads this table)."""
