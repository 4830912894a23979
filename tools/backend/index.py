"""Index expressions of the printed programs, built and simplified in one place for both backends.

A printed program computes tile and element offsets from loop variables (`r0`, `c0`, `k0`, a
program id, an item number) and constants. Printed as f-strings, such offsets read `(0) * 32`,
`r0 + 0`, `kb * 1` or `0 <= i <= 0`: correct, and noise a person must see through. Here they are
values: `Ix` nodes whose operators fold constants and drop neutral elements as they are built,
and print with only the parentheses Python's precedence needs. The rules are the algebra of
integers (every variable is an integer, divisors are positive constants), so a simplified
expression computes what the unsimplified one did (test/backend/test_index.py draws both).

Conditions (`Cond`) fold the same way: a comparison of constants is `True` or `False`, `all_of`
drops `True` and collapses on `False`, and `lo <= x <= hi` with `lo == hi` is `x == lo`.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)

# Python's binding strength of each operator: a child binds looser than its parent needs
# parentheses; so does a right child of equal strength (a - (b + c), a // (b * c)).
_ADDITIVE, _MULTIPLICATIVE, _ATOM = 1, 2, 3
_STRENGTH = {
    "+": _ADDITIVE,
    "-": _ADDITIVE,
    "*": _MULTIPLICATIVE,
    "//": _MULTIPLICATIVE,
    "%": _MULTIPLICATIVE,
}

_OPERATORS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "//": operator.floordiv,
    "%": operator.mod,
}


def ix(value: Ix | int | str) -> Ix:
    """An int as a constant, a str as a variable, an Ix as itself."""
    if isinstance(value, Ix):
        return value
    if isinstance(value, bool):
        raise TypeError("an index is an int, not a bool")
    return Const(value) if isinstance(value, int) else Var(value)


class Ix:
    """An integer index expression. Build with + - * // % (ints mix in); print with str()."""

    strength = _ATOM

    def __add__(self, other: Ix | int) -> Ix:
        return _add(self, ix(other))

    def __radd__(self, other: int) -> Ix:
        return _add(ix(other), self)

    def __sub__(self, other: Ix | int) -> Ix:
        return _sub(self, ix(other))

    def __rsub__(self, other: int) -> Ix:
        return _sub(ix(other), self)

    def __mul__(self, other: Ix | int) -> Ix:
        return _mul(self, ix(other))

    def __rmul__(self, other: int) -> Ix:
        return _mul(ix(other), self)

    def __floordiv__(self, other: Ix | int) -> Ix:
        return _floordiv(self, ix(other))

    def __mod__(self, other: Ix | int) -> Ix:
        return _mod(self, ix(other))

    def ceildiv(self, other: Ix | int) -> Ix:
        """ceil(self / other), printed as Python's -(-a // b) is not: as (a + b - 1) // b."""
        other = ix(other)
        return _floordiv(_add(self, _sub(other, Const(1))), other)

    @property
    def constant(self) -> int | None:
        return self.value if isinstance(self, Const) else None

    def evaluate(self, env: dict[str, int]) -> int:
        raise NotImplementedError

    def __str__(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True, eq=True)
class Const(Ix):
    value: int

    def evaluate(self, env: dict[str, int]) -> int:
        return self.value

    def __str__(self) -> str:
        return str(self.value)

    @property
    def strength(self) -> int:  # type: ignore[override]
        return _ATOM if self.value >= 0 else _ADDITIVE


@dataclass(frozen=True, eq=True)
class Var(Ix):
    name: str

    def evaluate(self, env: dict[str, int]) -> int:
        return env[self.name]

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=True)
class Bin(Ix):
    op: str
    lhs: Ix
    rhs: Ix

    @property
    def strength(self) -> int:  # type: ignore[override]
        return _STRENGTH[self.op]

    def evaluate(self, env: dict[str, int]) -> int:
        return _OPERATORS[self.op](self.lhs.evaluate(env), self.rhs.evaluate(env))

    def __str__(self) -> str:
        left = str(self.lhs) if self.lhs.strength >= self.strength else f"({self.lhs})"
        right = str(self.rhs) if self.rhs.strength > self.strength else f"({self.rhs})"
        return f"{left} {self.op} {right}"


def _split_constant(e: Ix) -> tuple[Ix | None, int]:
    """e as (rest, c) with e == rest + c: the constant term of a sum taken out."""
    if isinstance(e, Const):
        return None, e.value
    if isinstance(e, Bin) and e.op in "+-" and isinstance(e.rhs, Const):
        return e.lhs, e.rhs.value if e.op == "+" else -e.rhs.value
    return e, 0


def _with_constant(rest: Ix | None, c: int) -> Ix:
    if rest is None:
        return Const(c)
    if c == 0:
        return rest
    return Bin("+", rest, Const(c)) if c > 0 else Bin("-", rest, Const(-c))


def _add(a: Ix, b: Ix) -> Ix:
    ra, ca = _split_constant(a)
    rb, cb = _split_constant(b)
    if ra is None or rb is None:
        return _with_constant(rb if ra is None else ra, ca + cb)
    return _with_constant(Bin("+", ra, rb), ca + cb)


def _sub(a: Ix, b: Ix) -> Ix:
    if a == b:
        return Const(0)
    if isinstance(b, Const):
        return _add(a, Const(-b.value))
    ra, ca = _split_constant(a)
    rb, cb = _split_constant(b)
    assert rb is not None
    if ra is None:  # c - (x + d) = (c - d) - x
        return Bin("-", Const(ca - cb), rb)
    return _with_constant(Bin("-", ra, rb), ca - cb)


def _mul(a: Ix, b: Ix) -> Ix:
    if isinstance(a, Const) and not isinstance(b, Const):
        a, b = b, a  # the constant on the right: r0 * 32
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value * b.value)
    if isinstance(b, Const):
        if b.value == 0:
            return Const(0)
        if b.value == 1:
            return a
        if isinstance(a, Bin) and a.op == "*" and isinstance(a.rhs, Const):
            return _mul(a.lhs, Const(a.rhs.value * b.value))
    return Bin("*", a, b)


def _floordiv(a: Ix, b: Ix) -> Ix:
    if isinstance(b, Const):
        if b.value <= 0:
            raise ValueError(f"an index divides by a positive constant, not {b.value}")
        if b.value == 1:
            return a
        if isinstance(a, Const):
            return Const(a.value // b.value)
        if (
            isinstance(a, Bin)
            and a.op == "*"
            and isinstance(a.rhs, Const)
            and a.rhs.value % b.value == 0
        ):
            return _mul(a.lhs, Const(a.rhs.value // b.value))
    return Bin("//", a, b)


def _mod(a: Ix, b: Ix) -> Ix:
    if isinstance(b, Const):
        if b.value <= 0:
            raise ValueError(f"an index is taken modulo a positive constant, not {b.value}")
        if b.value == 1:
            return Const(0)
        if isinstance(a, Const):
            return Const(a.value % b.value)
        if (
            isinstance(a, Bin)
            and a.op == "*"
            and isinstance(a.rhs, Const)
            and a.rhs.value % b.value == 0
        ):
            return Const(0)
    return Bin("%", a, b)


def from_affine(
    e: AffineExpr, dims: Sequence[Ix | int | str], syms: Sequence[Ix | int | str] = ()
) -> Ix:
    """An xDSL affine expression with its dimensions and symbols bound to index expressions."""
    if isinstance(e, AffineConstantExpr):
        return Const(e.value)
    if isinstance(e, AffineDimExpr):
        return ix(dims[e.position])
    if isinstance(e, AffineSymExpr):
        return ix(syms[e.position])
    assert isinstance(e, AffineBinaryOpExpr)
    a, b = from_affine(e.lhs, dims, syms), from_affine(e.rhs, dims, syms)
    if e.kind == AffineBinaryOpKind.Add:
        return a + b
    if e.kind == AffineBinaryOpKind.Mul:
        return a * b
    if e.kind == AffineBinaryOpKind.FloorDiv:
        return a // b
    if e.kind == AffineBinaryOpKind.Mod:
        return a % b
    return a.ceildiv(b)


# ── Conditions ────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Cond:
    """A condition on indices: `True`, `False`, or the text of a Python test."""

    text: str

    def __str__(self) -> str:
        return self.text


TRUE, FALSE = Cond("True"), Cond("False")


def _compare(a: Ix, op: str, b: Ix) -> Cond:
    if isinstance(a, Const) and isinstance(b, Const):
        x, y = a.value, b.value
        holds = {"<": x < y, "<=": x <= y, "==": x == y, "!=": x != y, ">": x > y, ">=": x >= y}[op]
        return TRUE if holds else FALSE
    if a == b:
        return TRUE if op in ("<=", "==", ">=") else FALSE
    return Cond(f"{a} {op} {b}")


def lt(a: Ix | int | str, b: Ix | int | str) -> Cond:
    return _compare(ix(a), "<", ix(b))


def le(a: Ix | int | str, b: Ix | int | str) -> Cond:
    return _compare(ix(a), "<=", ix(b))


def eq(a: Ix | int | str, b: Ix | int | str) -> Cond:
    return _compare(ix(a), "==", ix(b))


def between(lo: Ix | int | str, x: Ix | int | str, hi: Ix | int | str) -> Cond:
    """lo <= x <= hi, as one chained comparison; x == lo where the bounds agree."""
    lo, x, hi = ix(lo), ix(x), ix(hi)
    if lo == hi:
        return eq(x, lo)
    low, high = le(lo, x), le(x, hi)
    if FALSE in (low, high):
        return FALSE
    if low == TRUE or high == TRUE:
        return high if low == TRUE else low
    return Cond(f"{lo} <= {x} <= {hi}")


def all_of(*conds: Cond) -> Cond:
    """The conjunction: True terms dropped, False absorbing, each term parenthesized only if it
    holds an `or`."""
    if FALSE in conds:
        return FALSE
    kept = [c for c in conds if c != TRUE]
    if not kept:
        return TRUE
    return Cond(" and ".join(f"({c})" if " or " in c.text else c.text for c in kept))


def any_of(*conds: Cond) -> Cond:
    if TRUE in conds:
        return TRUE
    kept = [c for c in conds if c != FALSE]
    if not kept:
        return FALSE
    return Cond(" or ".join(c.text for c in kept))
