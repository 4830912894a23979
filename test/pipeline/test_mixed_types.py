"""The compiler never refuses its own output, shown over every tg op with mixed element types.

Each tg op, as the tiny examples use it (shapes link lowers) or else as the builders' program
builds it (test/tg/test_tg_builders.py, which holds every op of the dialect), becomes a one-op
function whose arguments are the op's operands; hypothesis then redraws
the element type of every operand and result among its class (bf16, f16, f32 for a float, i8 and
i32 for an integer). Each such function ends one of three ways, and only these:
  * the tg verifier refuses it (the op's own contract, docs/tg.md);
  * it compiles on a Tensix preset and a GPU preset;
  * a named rule of link or of the target refuses it (a `SpatialPassError` that is not an sp
    verifier error: `NotLowered`, `UnsupportedDatatype`, `NoLegalPlan`, ...).
Never an sp verifier error on what link built (`InternalError`), never a plan refused by the
compiler's own size-buffers, never a crash (docs/passes.md#shared-the-compiler-never-refuses-its-own-output).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerType,
    ModuleOp,
    TensorType,
    i8,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from spatial_dialect import tg
from spatial_dialect.passes.pipeline import compile_module, default_context
from spatial_dialect.sp.errors import SpatialPassError, SpatialVerifyError

TARGETS = ("wormhole_n150", "h100")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FLOATS = (BFloat16Type(), Float16Type(), Float32Type())
INTEGERS = (i8, i32)


def _builders_program() -> list[Operation]:
    path = Path(__file__).resolve().parents[1] / "tg" / "test_tg_builders.py"
    spec = importlib.util.spec_from_file_location("tg_builders_program", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _, built = module.build_program()
    return [op for op, _ in built.values()]


def _example_ops() -> list[Operation]:
    """The ops of the tiny examples, in shapes link lowers (whole-tile heads, real layers)."""
    ctx = default_context()
    ops: list[Operation] = []
    for path in sorted(EXAMPLES.glob("tiny_*.mlir")):
        module = Parser(ctx, path.read_text()).parse_module()
        ops += [op for op in module.walk() if op.name.startswith("tg.")]
    return ops


def _one_of_each() -> dict[str, Operation]:
    """Each tg op once: as the tiny examples use it where they do (shapes link lowers), else as
    the builders' program builds it (which holds every op)."""
    ops: dict[str, Operation] = {}
    for op in [*_example_ops(), *_builders_program()]:
        ops.setdefault(op.name, op)
    return ops


OPS = _one_of_each()


def _alternatives(t: Attribute) -> tuple[Attribute, ...]:
    if isinstance(t, TensorType):
        elt = t.get_element_type()
        if isinstance(elt, IntegerType):
            return INTEGERS
        return FLOATS
    return ()


def one_op_function(op: Operation, elts: list[Attribute]) -> func.FuncOp:
    """`op` alone in a function of its operands, with operand and result element types `elts`
    (operands first, then results)."""
    types = [v.type for v in op.operands] + [r.type for r in op.results]
    retyped = [
        TensorType(e, t.get_shape()) if isinstance(t, TensorType) else t
        for t, e in zip(types, elts, strict=True)
    ]
    n = len(op.operands)
    block = Block(arg_types=retyped[:n])
    new = type(op).create(
        operands=list(block.args),
        result_types=retyped[n:],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    block.add_ops([new, func.ReturnOp(*new.results)])
    return func.FuncOp.from_region("f", retyped[:n], retyped[n:], Region(block))


@st.composite
def mixed(draw, name: str) -> list[Attribute]:
    """Element types for the operands and results of op `name`: one float and one integer type
    for the op, then each position kept at it or moved to another of its class (so most
    programs mix a few positions, the ones a verifier might let through)."""
    op = OPS[name]
    types = [v.type for v in op.operands] + [r.type for r in op.results]
    base = {FLOATS: draw(st.sampled_from(FLOATS)), INTEGERS: draw(st.sampled_from(INTEGERS))}
    elts = []
    for t in types:
        choices = _alternatives(t)
        if not choices:
            elts.append(t.get_element_type())
        elif draw(st.booleans()):
            elts.append(draw(st.sampled_from(choices)))
        else:
            elts.append(base[choices])
    return elts


def outcome(function: func.FuncOp, target: str) -> str:
    """'tg' (the tg verifier refuses), 'ok', or the named refusal of link or the target."""
    try:
        ModuleOp([function.clone()]).verify()
    except VerifyException:
        return "tg"
    try:
        compile_module(function, target)
    except SpatialPassError as e:
        if isinstance(e, SpatialVerifyError):  # LocalMemExceeded et al.: the compiler's own plan
            raise AssertionError(f"{target}: self-refusal: {e}") from e
        return type(e).__name__
    return "ok"


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_tg_op_with_mixed_types_compiles_or_is_refused_by_name(name):
    @settings(
        max_examples=4,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(elts=mixed(name))
    def check(elts):
        function = one_op_function(OPS[name], elts)
        for target in TARGETS:
            outcome(function, target)

    check()


def single_mixes(name: str) -> list[list[Attribute]]:
    """Every program that moves ONE operand or result of op `name` to another type of its class:
    the mixes a verifier is likeliest to let through, each tried (hypothesis draws the rest)."""
    op = OPS[name]
    types = [v.type for v in op.operands] + [r.type for r in op.results]
    base = [t.get_element_type() if isinstance(t, TensorType) else t for t in types]
    mixes = []
    for i, t in enumerate(types):
        for alt in _alternatives(t):
            if alt != base[i]:
                mixes.append([*base[:i], alt, *base[i + 1 :]])
    return mixes


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_single_mix_compiles_or_is_refused_by_name(name):
    ends = [outcome(one_op_function(OPS[name], e), t) for e in single_mixes(name) for t in TARGETS]
    assert ends  # every op has a typed operand to move


def test_the_builders_types_compile_unmixed():
    """The check can fail: the programs as built (no mixing) compile on both presets, so an op
    whose every drawn program ends in 'tg' is not hiding behind the verifier."""
    ends = {}
    for name, op in OPS.items():
        elts = [v.type.get_element_type() for v in op.operands] + [
            r.type.get_element_type() for r in op.results
        ]
        ends[name] = outcome(one_op_function(op, elts), "h100")
    assert len(OPS) == len(list(tg.TG.operations))
    assert [n for n, end in ends.items() if end == "tg"] == []
