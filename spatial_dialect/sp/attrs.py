"""Attributes of the sp dialect: phases and roles, site rectangles, engines, sizes and access patterns.

Shapes in a section are written once, as a template every site instantiates. The numbers that
differ between sites (the block a boundary site really covers, its sub-block, the K block width
the plan chose) are the SIZE SYMBOLS below; each site range binds them (`sp.sites`), so a page
size, a load extent, a store stride and a sub-block count are one expression evaluated in one
place and cannot disagree (docs/passes.md#place-boundary-sites-cover-their-real-block: an extent and the stride that walks it are one fact).

    h, w    the rows and columns of tiles of the work item's block (clipped at the tensor edge)
    sh, sw  the output sub-block (tiles held in the accumulator at once)
    kw      the K block width in tiles (the inner block width, tt-metal's in0_block_w)
    subs    sub-blocks per item: (h / sh) * (w / sw)

An access pattern maps the LOOP VARIABLES of a stage to the top-left tile it reads or writes,
with its extent in tiles:

    r0, c0  the origin tile (row, column) of the work item's block
    k0      the first K tile of the current K block: 0, kw, 2 kw, ... below the K extent
    ti, tj  the origin of the current sub-block inside the item: ti in 0, sh, ..., h - sh
    u, v    a tile inside the current sub-block: u in 0 .. sh - 1, v in 0 .. sw - 1

Sizes are affine in the symbols and origins affine in the loop variables (with constant
coefficients), and both print with these names: `[r0 + ti, c0 + tj] x [sh, sw]`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import AffineMapAttr, IntAttr, NoneAttr
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.parser.affine_parser import AffineParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.sp.enums import EngineKindAttr
from spatial_dialect.sp.item_space import ceil_div
from spatial_dialect.sp.kinds import (
    EngineKind,
)

LOOP_VARS = ("r0", "c0", "k0", "ti", "tj", "u", "v")
SIZE_SYMBOLS = ("h", "w", "sh", "sw", "kw", "subs")
SITE_VARS = ("x", "y")


# ── Pairs ─────────────────────────────────────────────────────────────────────────────────────


@irdl_attr_definition
class PairAttr(ParametrizedAttribute):
    """`#sp.pair<8x8>`: two non-negative integers, rows x cols (or x by y); ops print `8x8`."""

    name = "sp.pair"
    first: IntAttr
    second: IntAttr

    def __init__(self, first: int, second: int):
        super().__init__(IntAttr(first), IntAttr(second))

    @property
    def values(self) -> tuple[int, int]:
        return self.first.data, self.second.data

    def text(self) -> str:
        return f"{self.first.data}x{self.second.data}"

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            a, b = parse_pair(parser, "a pair AxB")
        return (IntAttr(a), IntAttr(b))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.text())


# ── The buffer type ───────────────────────────────────────────────────────────────────────────


@irdl_attr_definition
class BufferType(ParametrizedAttribute, TypeAttribute):
    """`!sp.buffer`: a buffer of a section (its shape lives on the op that declares it)."""

    name = "sp.buffer"


BUFFER = BufferType()


# ── Named affine expressions ──────────────────────────────────────────────────────────────────

_PRECEDENCE = {
    AffineBinaryOpKind.Add: 10,
    AffineBinaryOpKind.Mul: 20,
    AffineBinaryOpKind.FloorDiv: 20,
    AffineBinaryOpKind.CeilDiv: 20,
    AffineBinaryOpKind.Mod: 20,
}


def _precedence(e: AffineExpr) -> int:
    return _PRECEDENCE[e.kind] if isinstance(e, AffineBinaryOpExpr) else 100


def format_expr(e: AffineExpr, dims: Sequence[str], syms: Sequence[str] = ()) -> str:
    """An affine expression with named dimensions and symbols, in the syntax the parser reads.

    The printed form parses back to the same tree: xDSL keeps constants on the right of `*` and
    writes `a - b` as `a + b * -1`, so that is what is undone here.
    """

    def sub(child: AffineExpr, parent: int, right: bool = False) -> str:
        text = fmt(child)
        p = _precedence(child)
        return f"({text})" if p < parent or (right and p == parent) else text

    def fmt(x: AffineExpr) -> str:
        if isinstance(x, AffineConstantExpr):
            return str(x.value)
        if isinstance(x, AffineDimExpr):
            return dims[x.position]
        if isinstance(x, AffineSymExpr):
            return syms[x.position]
        assert isinstance(x, AffineBinaryOpExpr)
        if x.kind == AffineBinaryOpKind.Add:
            rhs = x.rhs
            if isinstance(rhs, AffineConstantExpr) and rhs.value < 0:
                return f"{sub(x.lhs, 10)} - {-rhs.value}"
            if (
                isinstance(rhs, AffineBinaryOpExpr)
                and rhs.kind == AffineBinaryOpKind.Mul
                and isinstance(rhs.rhs, AffineConstantExpr)
                and rhs.rhs.value < 0
            ):
                return f"{sub(x.lhs, 10)} - {sub(rhs.lhs * -rhs.rhs.value, 10, True)}"
            return f"{sub(x.lhs, 10)} + {sub(rhs, 10, True)}"
        token = {
            AffineBinaryOpKind.Mul: "*",
            AffineBinaryOpKind.FloorDiv: "floordiv",
            AffineBinaryOpKind.CeilDiv: "ceildiv",
            AffineBinaryOpKind.Mod: "mod",
        }[x.kind]
        return f"{sub(x.lhs, 20)} {token} {sub(x.rhs, 20, True)}"

    return fmt(e)


def parse_exprs(
    parser: AttrParser, dims: Sequence[str], syms: Sequence[str] = ()
) -> list[AffineExpr]:
    """`[e, e, ...]`: affine expressions over the named dimensions and symbols."""
    affine = AffineParser(parser._parser_state)  # pyright: ignore[reportPrivateUsage]
    ident = affine._get_parse_optional_bare_id(list(dims), list(syms))  # pyright: ignore[reportPrivateUsage]
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE,
        lambda: affine._parse_affine_expr(ident),  # pyright: ignore[reportPrivateUsage]
    )


def parse_pair(parser: AttrParser, what: str) -> tuple[int, int]:
    """`AxB`, two non-negative integers."""
    dims = parser.parse_dimension_list()
    if len(dims) != 2:
        parser.raise_error(f"expected {what} as AxB")
    return dims[0], dims[1]


def _interval(e: AffineExpr, ranges: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The least and greatest value of `e` over a box of dimension values (inclusive bounds)."""
    if isinstance(e, AffineConstantExpr):
        return e.value, e.value
    if isinstance(e, AffineDimExpr):
        return ranges[e.position]
    assert isinstance(e, AffineBinaryOpExpr), "sizes are resolved before bounds are taken"
    lo, hi = _interval(e.lhs, ranges)
    c = e.rhs
    if e.kind == AffineBinaryOpKind.Add:
        rlo, rhi = _interval(c, ranges)
        return lo + rlo, hi + rhi
    assert isinstance(c, AffineConstantExpr), "origins are affine: constant right operands"
    k = c.value
    if e.kind == AffineBinaryOpKind.Mul:
        return (lo * k, hi * k) if k >= 0 else (hi * k, lo * k)
    if e.kind == AffineBinaryOpKind.FloorDiv:
        return lo // k, hi // k
    if e.kind == AffineBinaryOpKind.CeilDiv:
        return ceil_div(lo, k), ceil_div(hi, k)
    # mod: exact while the operand stays inside one period, else the whole period
    return (lo % k, hi % k) if lo // k == hi // k else (0, k - 1)


def _check_map(m: AffineMap, dims: int, syms: int, results: int | None, what: str) -> None:
    if (
        m.num_dims != dims
        or m.num_symbols != syms
        or (results is not None and len(m.results) != results)
    ):
        raise VerifyException(
            f"{what}: expected a map of {dims} loop variables and {syms} symbols"
            + (f" with {results} results" if results is not None else "")
        )
    for r in m.results:
        if not r.is_pure_affine():
            raise VerifyException(f"{what}: {r} is not affine")


# ── Sizes ─────────────────────────────────────────────────────────────────────────────────────


SizeTerm = int | str | AffineExpr


def size_expr(term: SizeTerm) -> AffineExpr:
    """A size written as an integer, as one of SIZE_SYMBOLS, or as an expression of them
    (`size_expr("w") // 2`)."""
    if isinstance(term, AffineExpr):
        return term
    return (
        AffineExpr.constant(term)
        if isinstance(term, int)
        else AffineExpr.symbol(SIZE_SYMBOLS.index(term))
    )


@irdl_attr_definition
class SizesAttr(ParametrizedAttribute):
    """`#sp.sizes<[h, kw]>`: sizes in tiles (or pages), affine in the size symbols.

    A page shape is two sizes (rows x columns of tiles), a depth one. They are resolved against
    the symbols a site range binds (`SitesOp.bindings`).
    """

    name = "sp.sizes"
    map: AffineMapAttr

    @staticmethod
    def of(*terms: SizeTerm) -> SizesAttr:
        return SizesAttr(
            AffineMapAttr(AffineMap(0, len(SIZE_SYMBOLS), tuple(size_expr(t) for t in terms)))
        )

    def verify(self) -> None:
        _check_map(self.map.data, 0, len(SIZE_SYMBOLS), None, "sizes")

    @property
    def exprs(self) -> tuple[AffineExpr, ...]:
        return self.map.data.results

    def constant(self) -> tuple[int, ...] | None:
        """The sizes when none of them names a symbol."""
        values = [e.value for e in self.exprs if isinstance(e, AffineConstantExpr)]
        return tuple(values) if len(values) == len(self.exprs) else None

    def resolve(self, bindings: Mapping[str, int]) -> tuple[int, ...]:
        syms = [bindings.get(s, 0) for s in SIZE_SYMBOLS]
        return tuple(e.eval((), syms) for e in self.exprs)

    def text(self) -> str:
        return "[" + ", ".join(format_expr(e, (), SIZE_SYMBOLS) for e in self.exprs) + "]"

    def scalar_text(self) -> str:
        """A one-size attribute (a depth) without its brackets."""
        return format_expr(self.exprs[0], (), SIZE_SYMBOLS)

    @classmethod
    def parse_body(cls, parser: AttrParser) -> SizesAttr:
        return SizesAttr(
            AffineMapAttr(
                AffineMap(0, len(SIZE_SYMBOLS), tuple(parse_exprs(parser, (), SIZE_SYMBOLS)))
            )
        )

    @classmethod
    def parse_scalar(cls, parser: AttrParser) -> SizesAttr:
        affine = AffineParser(parser._parser_state)  # pyright: ignore[reportPrivateUsage]
        ident = affine._get_parse_optional_bare_id([], list(SIZE_SYMBOLS))  # pyright: ignore[reportPrivateUsage]
        expr = affine._parse_affine_expr(ident)  # pyright: ignore[reportPrivateUsage]
        return SizesAttr(AffineMapAttr(AffineMap(0, len(SIZE_SYMBOLS), (expr,))))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (cls.parse_body(parser).map,)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.text())


# ── Access patterns ───────────────────────────────────────────────────────────────────────────


def loop_var(name: str) -> AffineExpr:
    return AffineExpr.dimension(LOOP_VARS.index(name))


@irdl_attr_definition
class AccessAttr(ParametrizedAttribute):
    """`#sp.access<[r0 + ti, c0 + tj] x [sh, sw]>`: the block of tiles one iteration touches.

    The origin (row, column) is affine in the loop variables, the extent (rows, columns) in the
    size symbols. One iteration reads or writes one page: the extent's tiles in row-major order.
    A stage iterates exactly the loops whose variables its origin uses (module docstring).
    """

    name = "sp.access"
    origin: AffineMapAttr
    extent: SizesAttr

    @staticmethod
    def of(row: AffineExpr, col: AffineExpr, rows: SizeTerm, cols: SizeTerm) -> AccessAttr:
        return AccessAttr(
            AffineMapAttr(AffineMap(len(LOOP_VARS), 0, (row, col))), SizesAttr.of(rows, cols)
        )

    def verify(self) -> None:
        _check_map(self.origin.data, len(LOOP_VARS), 0, 2, "access origin")
        if len(self.extent.exprs) != 2:
            raise VerifyException("access extent: expected [rows, cols]")

    def loop_vars(self) -> set[str]:
        return {LOOP_VARS[d] for r in self.origin.data.results for d in r.used_dims()}

    def linear(self) -> bool:
        """Whether the origin is linear in the loop variables (no floordiv, ceildiv or mod), so
        its least and greatest values over a box of loop values lie at the box's corners."""
        nonlinear = (
            AffineBinaryOpKind.FloorDiv,
            AffineBinaryOpKind.CeilDiv,
            AffineBinaryOpKind.Mod,
        )
        return not any(
            isinstance(e, AffineBinaryOpExpr) and e.kind in nonlinear
            for r in self.origin.data.results
            for e in r.dfs()
        )

    def tile_bounds(
        self, ranges: Mapping[str, tuple[int, int]], bindings: Mapping[str, int]
    ) -> tuple[int, int, int, int]:
        """(first row, last row, first col, last col) of the tiles any iteration touches, given
        the inclusive range of each loop variable."""
        box = [ranges.get(v, (0, 0)) for v in LOOP_VARS]
        rows, cols = self.extent.resolve(bindings)
        (r_lo, r_hi), (c_lo, c_hi) = (_interval(e, box) for e in self.origin.data.results)
        return r_lo, r_hi + rows - 1, c_lo, c_hi + cols - 1

    def text(self) -> str:
        origin = ", ".join(format_expr(e, LOOP_VARS) for e in self.origin.data.results)
        return f"[{origin}] x {self.extent.text()}"

    @classmethod
    def parse_body(cls, parser: AttrParser) -> AccessAttr:
        origin = parse_exprs(parser, LOOP_VARS)
        if len(origin) != 2:
            parser.raise_error("expected an access origin [row, col]")
        parser.parse_keyword("x")
        extent = SizesAttr.parse_body(parser)
        if len(extent.exprs) != 2:
            parser.raise_error("expected an access extent [rows, cols]")
        return AccessAttr(AffineMapAttr(AffineMap(len(LOOP_VARS), 0, tuple(origin))), extent)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            a = cls.parse_body(parser)
        return (a.origin, a.extent)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.text())


# ── Site rectangles ───────────────────────────────────────────────────────────────────────────


@irdl_attr_definition
class RectAttr(ParametrizedAttribute):
    """`#sp.rect<[0, 7]x[0, 9]>`: the sites x0..x1 by y0..y1, both ends included.

    Its sites are walked y outer, x inner (x fastest), the order in which a range hands out
    consecutive work items (docs/passes.md#place-split-work-linearly-where-adjacency-means-nothing).
    """

    name = "sp.rect"
    x0: IntAttr
    x1: IntAttr
    y0: IntAttr
    y1: IntAttr

    @staticmethod
    def of(x0: int, x1: int, y0: int, y1: int) -> RectAttr:
        return RectAttr(IntAttr(x0), IntAttr(x1), IntAttr(y0), IntAttr(y1))

    @staticmethod
    def _check(x0: int, x1: int, y0: int, y1: int) -> str | None:
        if min(x0, y0) < 0 or x1 < x0 or y1 < y0:
            return f"a site rectangle needs 0 <= x0 <= x1 and 0 <= y0 <= y1, got [{x0}, {x1}]x[{y0}, {y1}]"
        return None

    def verify(self) -> None:
        if (msg := self._check(*self.bounds)) is not None:
            raise VerifyException(msg)

    @property
    def bounds(self) -> tuple[int, int, int, int]:
        return self.x0.data, self.x1.data, self.y0.data, self.y1.data

    @property
    def width(self) -> int:
        return self.x1.data - self.x0.data + 1

    @property
    def height(self) -> int:
        return self.y1.data - self.y0.data + 1

    def sites(self) -> list[tuple[int, int]]:
        x0, x1, y0, y1 = self.bounds
        return [(x, y) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)]

    def within(self, mesh_x: int, mesh_y: int) -> bool:
        return self.x1.data < mesh_x and self.y1.data < mesh_y

    def text(self) -> str:
        x0, x1, y0, y1 = self.bounds
        return f"[{x0}, {x1}]x[{y0}, {y1}]"

    @classmethod
    def parse_body(cls, parser: AttrParser) -> RectAttr:
        def interval() -> list[int]:
            return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)

        xs = interval()
        parser.parse_keyword("x")
        ys = interval()
        if len(xs) != 2 or len(ys) != 2:
            parser.raise_error("expected a site rectangle [x0, x1]x[y0, y1]")
        if (msg := cls._check(xs[0], xs[1], ys[0], ys[1])) is not None:
            parser.raise_error(msg)
        return RectAttr.of(xs[0], xs[1], ys[0], ys[1])

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            r = cls.parse_body(parser)
        return (r.x0, r.x1, r.y0, r.y1)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.text())


# ── Engines ───────────────────────────────────────────────────────────────────────────────────


@irdl_attr_definition
class EngineAttr(ParametrizedAttribute):
    """`#sp.engine<compute>` or `#sp.engine<movement 1 noc 0>`: where a stage instance runs.

    A site has one compute engine and the target's movement engines (Tensix: two data-movement
    RISC-Vs). A movement engine's NoC is absent where the target has no NoC to choose.
    """

    name = "sp.engine"
    kind: EngineKindAttr
    index: IntAttr
    noc: IntAttr | NoneAttr

    @staticmethod
    def compute() -> EngineAttr:
        return EngineAttr(EngineKindAttr(EngineKind.COMPUTE), IntAttr(0), NoneAttr())

    @staticmethod
    def movement(index: int, noc: int | None) -> EngineAttr:
        return EngineAttr(
            EngineKindAttr(EngineKind.MOVEMENT),
            IntAttr(index),
            NoneAttr() if noc is None else IntAttr(noc),
        )

    @property
    def is_movement(self) -> bool:
        return self.kind.data == EngineKind.MOVEMENT

    @property
    def noc_index(self) -> int | None:
        return self.noc.data if isinstance(self.noc, IntAttr) else None

    def text(self) -> str:
        if not self.is_movement:
            return "compute"
        noc = self.noc_index
        return f"movement {self.index.data}" + ("" if noc is None else f" noc {noc}")

    @classmethod
    def parse_body(cls, parser: AttrParser) -> EngineAttr:
        if parser.parse_optional_keyword("compute"):
            return EngineAttr.compute()
        parser.parse_keyword("movement", " (an engine is `compute` or `movement N [noc M]`)")
        index = parser.parse_integer(allow_negative=False)
        noc = (
            parser.parse_integer(allow_negative=False)
            if parser.parse_optional_keyword("noc")
            else None
        )
        return EngineAttr.movement(index, noc)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            e = cls.parse_body(parser)
        return (e.kind, e.index, e.noc)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.text())


# ── Per-site item maps ────────────────────────────────────────────────────────────────────────


def site_map_text(m: AffineMap) -> str:
    return format_expr(m.results[0], SITE_VARS)


def parse_site_map(parser: AttrParser) -> AffineMap:
    affine = AffineParser(parser._parser_state)  # pyright: ignore[reportPrivateUsage]
    ident = affine._get_parse_optional_bare_id(list(SITE_VARS), [])  # pyright: ignore[reportPrivateUsage]
    return AffineMap(2, 0, (affine._parse_affine_expr(ident),))  # pyright: ignore[reportPrivateUsage]


def linear_site_map(const: int, per_x: int, per_y: int) -> AffineMap:
    """const + per_x * x + per_y * y, without the terms whose coefficient is zero."""
    expr = AffineExpr.constant(const)
    for position, per in ((1, per_y), (0, per_x)):
        if per:
            expr = AffineExpr.dimension(position) * per + expr
    return AffineMap(2, 0, (expr,))
