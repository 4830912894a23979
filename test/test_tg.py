"""tg from Python: building ops with their constructors, verifying, and the examples' generator."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import BFloat16Type, Float32Type, TensorType, i32
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from spatial_dialect.tg import AddOp, MatmulOp, SiluOp

ROOT = Path(__file__).resolve().parents[1]


def value(*shape: int, elt=None):
    return create_ssa_value(TensorType(elt or Float32Type(), shape))


def test_constructors_build_verified_ops():
    a, b = value(64, 128), value(128, 32)
    mm = MatmulOp(a, b, TensorType(Float32Type(), [64, 32]))
    mm.verify()
    silu = SiluOp(mm.res)
    silu.verify()
    assert silu.res.type == mm.res.type
    add = AddOp(silu.res, value(1, 32))  # a 1xC operand broadcasts over rows
    add.verify()


def test_matmul_inner_dimension_message_names_the_numbers():
    mm = MatmulOp(value(64, 100), value(128, 32), TensorType(Float32Type(), [64, 32]))
    with pytest.raises(VerifyException) as info:
        mm.verify()
    assert "tg.matmul: a is 64x100 and b is 128x32; the inner dimensions 100 and 128 differ" in str(
        info.value
    )


@given(
    m=st.integers(1, 300),
    k=st.integers(1, 300),
    k2=st.integers(1, 300),
    n=st.integers(1, 300),
    elt=st.sampled_from([BFloat16Type(), Float32Type()]),
)
def test_matmul_verifies_exactly_when_inner_dimensions_agree(m, k, k2, n, elt):
    mm = MatmulOp(value(m, k, elt=elt), value(k2, n, elt=elt), TensorType(elt, [m, n]))
    if k == k2:
        mm.verify()
    else:
        with pytest.raises(VerifyException, match=f"inner dimensions {k} and {k2} differ"):
            mm.verify()


@given(rows=st.integers(1, 64), cols=st.integers(1, 64), b_rows=st.integers(1, 64))
def test_binary_broadcast_rule(rows, cols, b_rows):
    add = AddOp(value(rows, cols), value(b_rows, cols))
    if b_rows in (1, rows):
        add.verify()
    else:
        with pytest.raises(VerifyException, match=f"b must be {rows}x{cols} or 1x{cols}"):
            add.verify()


def test_integer_matmul_needs_an_integer_result():
    a = create_ssa_value(TensorType(i32, [4, 8]))
    b = create_ssa_value(TensorType(i32, [8, 4]))
    MatmulOp(a, b, TensorType(i32, [4, 4])).verify()
    with pytest.raises(VerifyException, match="must be an integer type, got f32"):
        MatmulOp(a, b, TensorType(Float32Type(), [4, 4])).verify()


def test_examples_match_their_generator(tmp_path):
    """examples/*.mlir are generated; a hand edit or a stale file shows up here."""
    script = (ROOT / "examples" / "generate.py").read_text()
    copy = tmp_path / "generate.py"
    copy.write_text(script)
    subprocess.run([sys.executable, str(copy)], check=True)
    generated = sorted(p.name for p in tmp_path.glob("*.mlir"))
    assert generated, "the generator wrote nothing"
    for name in generated:
        assert (tmp_path / name).read_text() == (ROOT / "examples" / name).read_text(), name
