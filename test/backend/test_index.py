"""tools/backend/index.py: a simplified index expression computes what the plain one does, and
prints without the noise (`(0) * 32`, `+ 0`, `* 1`, `0 <= x <= 0`, `and True`)."""

from __future__ import annotations

import operator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.ir.affine import AffineExpr

from spatial_dialect.tools.backend.index import (
    FALSE,
    TRUE,
    Const,
    Var,
    all_of,
    any_of,
    between,
    from_affine,
    ix,
    le,
    lt,
)
from spatial_dialect.tools.backend.names import ident

NAMES = ("r0", "c0", "k0")


def _tree():
    """Expressions over the names and small constants, as (Ix, the plain Python text)."""
    leaf = st.one_of(
        st.sampled_from(NAMES).map(lambda n: (Var(n), n)),
        st.integers(-3, 40).map(lambda c: (Const(c), f"({c})")),
    )

    def extend(children):
        binary = st.tuples(children, st.sampled_from(["+", "-", "*"]), children).map(
            lambda t: (_apply(t[0][0], t[1], t[2][0]), f"({t[0][1]} {t[1]} {t[2][1]})")
        )
        divided = st.tuples(children, st.sampled_from(["//", "%"]), st.integers(1, 33)).map(
            lambda t: (_apply(t[0][0], t[1], t[2]), f"({t[0][1]} {t[1]} {t[2]})")
        )
        return st.one_of(binary, divided)

    return st.recursive(leaf, extend, max_leaves=8)


def _apply(a, op, b):
    return getattr(
        operator, {"+": "add", "-": "sub", "*": "mul", "//": "floordiv", "%": "mod"}[op]
    )(a, b)


@given(_tree(), st.fixed_dictionaries({n: st.integers(-50, 50) for n in NAMES}))
def test_simplified_expressions_compute_what_the_plain_ones_do(tree, env):
    simplified, plain = tree
    expected = eval(plain, {}, dict(env))  # noqa: S307: the text is built above from names and ints
    assert simplified.evaluate(env) == expected
    assert eval(str(simplified), {}, dict(env)) == expected  # noqa: S307


@pytest.mark.parametrize(
    ("built", "printed"),
    [
        (Const(0) * 32 + Var("r0"), "r0"),
        (Var("r0") * 1 + 0, "r0"),
        (Var("k0") * 32 // 32, "k0"),
        (Var("k0") * 64 // 32, "k0 * 2"),
        (Var("c0") * 32 % 32, "0"),
        ((Var("r0") + 1) * 32, "(r0 + 1) * 32"),
        (Var("r0") - (Var("c0") + 3), "r0 - c0 - 3"),
        (Var("r0") + 2 + 3, "r0 + 5"),
        (5 - (Var("r0") + 2), "3 - r0"),
        (Var("a") // (Var("b") * 2), "a // (b * 2)"),
        (Var("a") - (Var("b") - Var("c")), "a - (b - c)"),
        (ix(7).ceildiv(2), "4"),
        (Var("n").ceildiv(32), "(n + 31) // 32"),
    ],
)
def test_printed_without_noise(built, printed):
    assert str(built) == printed


def test_conditions_fold():
    assert str(between(0, "i", 0)) == "i == 0"
    assert str(between(0, "i", "n")) == "0 <= i <= n"
    assert between(0, 3, 5) == TRUE and between(4, 3, 5) == FALSE
    assert str(all_of(TRUE, lt("k", 4))) == "k < 4"
    assert all_of(lt("k", 4), FALSE) == FALSE and all_of() == TRUE
    assert str(all_of(any_of(lt("a", 1), lt("b", 2)), le("c", 3))) == "(a < 1 or b < 2) and c <= 3"
    assert any_of(FALSE, lt(1, 2)) == TRUE


def test_affine_expressions_bind_their_dimensions():
    d0, d1 = AffineExpr.dimension(0), AffineExpr.dimension(1)
    assert str(from_affine(d0 * 32 + d1, ["r0", 0])) == "r0 * 32"
    assert str(from_affine(d0 // 4 + d1 % 3, ["i", "j"])) == "i // 4 + j % 3"
    assert str(from_affine(d0.ceil_div(32), ["n"])) == "(n + 31) // 32"


def test_division_by_a_non_positive_constant_is_refused():
    with pytest.raises(ValueError, match="positive constant"):
        Var("r0") // 0


def test_one_identifier_rule():
    assert ident("blk.0.attn_norm.weight") == "blk_0_attn_norm_weight"
    assert ident("0a") == "t_0a" and ident("") == "t_"
    assert ident("l0_q") == "l0_q"
