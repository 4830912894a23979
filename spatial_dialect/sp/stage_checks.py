"""Checks the stage verifiers share: an operand is a FIFO, buffers agree on their element type,
a carried state is an f32 sp.interm."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import Float32Type
from xdsl.ir import SSAValue

from spatial_dialect.sp.abstract_ops import BufferOp, StageOp, buffer_of
from spatial_dialect.sp.buffers import FifoOp, IntermOp
from spatial_dialect.sp.errors import TypeMismatch


def fifo_of(op: StageOp, value: SSAValue, role: str) -> FifoOp:
    buf = buffer_of(value)
    if not isinstance(buf, FifoOp):
        raise TypeMismatch(f"{op.stage_name()}: {role} is {buf.name}, expected sp.fifo")
    return buf


def same_elt(op: StageOp, bufs: Sequence[BufferOp], what: str) -> None:
    elts = {str(b.elt) for b in bufs}
    if len(elts) > 1:
        raise TypeMismatch(
            f"{op.stage_name()}: {what} hold {', '.join(sorted(elts))}; they must agree"
        )


def f32_state(op: StageOp, value: SSAValue, role: str) -> None:
    buf = buffer_of(value)
    if not isinstance(buf, IntermOp) or buf.elt != Float32Type():
        raise TypeMismatch(f"{op.stage_name()}: {role} is an sp.interm of f32")
