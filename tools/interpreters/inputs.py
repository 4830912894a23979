"""The inputs of a run: drawn from a seed, or read from an .npz file; and saving a run.

Drawn inputs must make the program meaningful, not merely well-typed, so each input is drawn
for the ops that read it (the first reader in program order decides a float's distribution):

- an integer read as an index is drawn uniformly inside the range every reader accepts:
  `tg.gather_rows` ids in [0, V); a `tg.set_rows` or `tg.attention` pos in [0, S - T], so that
  pos + T <= S; a batched op's positions in [0, S - T] (no idle user) and its block table as
  distinct blocks of the pool (shuffled; uniform in [0, NB) where the pool is too small), so
  that no two users share a slot. A Q8_0 weight's int8 values are uniform in [-127, 127], the range ggml's
  quantizer fills. Other integers are uniform in [-16, 16].
- a matmul's right operand (K x N) ~ N(0, 1/K), and each weight of a `tg.moe` likewise with K its
  product's inner dimension (the model width, or the FFN width for the down projections), so a product stays of the order of its inputs
  through a chain of layers; a Q8_0 weight's f16 block scales ~ sqrt(3) / (127 sqrt(K)) (1 +
  N(0, 0.1^2)), so that its dequantized values have that same spread (uniform int8 values have a
  standard deviation of 127 / sqrt(3)) and the activations of a Q8_0 model do not blow up (a
  Q8_0 table whose rows are gathered before they are dequantized likewise, K its rows'
  length: `stored`); a norm's weight ~ 1 + N(0, 0.1^2), a layer norm's bias ~ N(0, 0.1^2);
  the cos and sin tables of a rope are cos and sin of one uniform angle per entry;
  a `tg.gated_delta`'s q and k ~ N(0, 1/Dk) (about unit length per head, as after the model's
  l2_norm), its g (a log decay) uniform in [-1, 0] and its beta uniform in [0, 1], so the delta
  rule contracts as the model's does instead of growing without bound over the rows;
  everything else ~ N(0, 1).

Floats are drawn in f32 and rounded to the element type. The same seed gives the same inputs.
A float's first reader gives it a `Role` (`float_roles`); each role has one drawer, registered
with `@draws(Role.X)` next to its code, so adding a distribution is one enum member and one
function, with no chain of name tests to extend.

In .npz files bf16 arrays are stored as f32 (numpy's format has no bf16; the widening is exact)
and read back by rounding to the declared element type. A run saved with `--save` holds the
inputs under their names and the outputs under `reference/NAME` and `simulated/NAME`; as
`--inputs` it reproduces the run (keys with a `/` are not inputs and are skipped). Inputs missing
from the file are drawn from `--seed`.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import ml_dtypes
import numpy as np
from xdsl.dialects import func
from xdsl.ir import BlockArgument, SSAValue

from spatial_dialect import tg
from spatial_dialect.tools.interpreters.numerics import EvaluationError, is_float_dtype, value_type
from spatial_dialect.tools.interpreters.reference import input_names

INT_DATA_RANGE = (-16, 16)
"""Inclusive range of an integer input that no op reads as an index."""


def stored(value: SSAValue) -> SSAValue:
    """The tensor a value's elements come from as they are: a gathered row's table (a Q8_0
    table's rows are gathered, values and scales, before they are dequantized), else itself."""
    owner = value.owner
    return owner.table if isinstance(owner, tg.GatherRowsOp) else value


def index_ranges(fn: func.FuncOp) -> dict[BlockArgument, tuple[int, int, list[str]]]:
    """Inclusive [lo, hi] of each integer argument its readers bound (an index, Q8_0 values), with
    the readers that set it."""
    ranges: dict[BlockArgument, tuple[int, int, list[str]]] = {}

    def limit(value: SSAValue | None, lo: int, hi: int, why: str) -> None:
        if not isinstance(value, BlockArgument):
            return  # computed at runtime: the reference checks it when it is used
        old_lo, old_hi, whys = ranges.get(value, (lo, hi, []))
        ranges[value] = (max(lo, old_lo), min(hi, old_hi), [*whys, why])

    for op in fn.body.block.ops:
        if isinstance(op, tg.GatherRowsOp):
            rows = op.shape(op.table)[0]
            limit(op.ids, 0, rows - 1, f"{op.name} ids in [0, {rows})")
        elif isinstance(op, tg.SetRowsOp | tg.AttentionOp):
            cache, new = (op.cache, op.rows) if isinstance(op, tg.SetRowsOp) else (op.k, op.q)
            s, t = op.shape(cache)[0], op.shape(new)[0]
            limit(op.pos, 0, s - t, f"{op.name} pos in [0, {s - t}]")
        elif isinstance(op, tg.MatmulQ8_0Op | tg.DequantizeQ8_0Op):
            limit(stored(op.values), -127, 127, f"{op.name} values in [-127, 127]")
        elif isinstance(op, tg.BatchedCacheOp):
            s, t = op.capacity(), op.tokens()
            limit(op.pos, 0, s - t, f"{op.name} pos in [0, {s - t}]")
            if op.table is not None:
                blocks = pool_blocks(op)
                limit(op.table, 0, blocks - 1, f"{op.name} block ids in [0, {blocks})")
    return ranges


def pool_blocks(op: tg.BatchedCacheOp) -> int:
    return op.shape(getattr(op, op.CACHE_FIELD))[0] // op.block_size_value()


def block_tables(fn: func.FuncOp) -> dict[BlockArgument, int]:
    """Each block-table argument of the batched ops with the fewest blocks of a pool it
    addresses: drawn as distinct blocks where the pool has enough, so no two users share a slot."""
    tables: dict[BlockArgument, int] = {}
    for op in fn.body.block.ops:
        if isinstance(op, tg.BatchedCacheOp) and isinstance(op.table, BlockArgument):
            tables[op.table] = min(tables.get(op.table, pool_blocks(op)), pool_blocks(op))
    return tables


class Role(Enum):
    """How a float input is first read, which decides how it is drawn (the module docstring),
    with the detail its drawer needs."""

    DATA = "data"
    MATMUL_B = "matmul_b"  # detail: K, the product's inner dimension
    Q8_0_SCALE = "q8_0_scale"  # detail: K, the fan-in of the product that reads the weight
    NORM_WEIGHT = "norm_weight"
    NORM_BIAS = "norm_bias"
    COS = "cos"  # detail: the rope (its cos and sin share one angle table)
    SIN = "sin"  # detail: the rope
    DELTA_KEY = "delta_key"  # detail: Dk, the delta rule's head dimension
    LOG_DECAY = "log_decay"
    UNIT_GATE = "unit_gate"


def float_roles(fn: func.FuncOp) -> dict[BlockArgument, tuple[Role, int]]:
    """How each float argument is first read, with its role's detail (`Role`)."""
    roles: dict[BlockArgument, tuple[Role, int]] = {}

    def role(value: SSAValue | None, kind: Role, detail: int = 0) -> None:
        if isinstance(value, BlockArgument) and value not in roles:
            roles[value] = (kind, detail)

    for op in fn.body.block.ops:
        if isinstance(op, tg.MatmulOp):
            role(op.b, Role.MATMUL_B, op.shape(op.b)[0])
        elif isinstance(op, tg.MatmulQ8_0Op):
            role(op.scales, Role.Q8_0_SCALE, op.shape(op.values)[op.block_axis()])
        elif isinstance(op, tg.DequantizeQ8_0Op):
            # the fan-in of the product that reads it: its blocks run along K
            role(stored(op.scales), Role.Q8_0_SCALE, op.shape(op.values)[op.block_axis()])
        elif isinstance(op, tg.RmsNormOp | tg.LayerNormOp):
            role(op.weight, Role.NORM_WEIGHT)
            if isinstance(op, tg.LayerNormOp):
                role(op.bias, Role.NORM_BIAS)
        elif isinstance(op, tg.MoeOp):
            _, d, _, f = op.sizes()
            inner_d = ("shared_gate", "shared_up", "shared_weight")
            for value in (op.router, op.w_gate, op.w_up, *map(op.shared_operand, inner_d)):
                role(value, Role.MATMUL_B, d)
            role(op.w_down, Role.MATMUL_B, f)
            shared_down = op.shared_operand("shared_down")
            if shared_down is not None:
                role(shared_down, Role.MATMUL_B, op.shape(shared_down)[0])
        elif isinstance(op, tg.RopeOp):
            role(op.cos, Role.COS, id(op))
            role(op.sin, Role.SIN, id(op))
        elif isinstance(op, tg.GatedDeltaOp):
            head_dim = op.head_dim.value.data
            role(op.q, Role.DELTA_KEY, head_dim)
            role(op.k, Role.DELTA_KEY, head_dim)
            role(op.g, Role.LOG_DECAY)
            role(op.beta, Role.UNIT_GATE)
    return roles


@dataclass
class Drawing:
    """The state of one `draw_inputs`: the generator, and each rope's angle table, drawn when
    its cos or its sin is drawn first and read by both."""

    rng: np.random.Generator
    angles: dict[int, np.ndarray] = field(default_factory=dict)

    def rope_angles(self, rope: int, shape: tuple[int, ...]) -> np.ndarray:
        if rope not in self.angles:
            self.angles[rope] = self.rng.uniform(0, 2 * np.pi, size=shape)
        return self.angles[rope]


Drawer = Callable[[Drawing, tuple[int, ...], int], np.ndarray]
"""(drawing, shape, the role's detail) -> the values in f32 or f64, before rounding."""

DRAWERS: dict[Role, Drawer] = {}
"""How each role is drawn, filled by `@draws` (test/interpreters/test_inputs.py checks that every
role has one). The order of the generator's calls is part of what a seed means: a drawer draws
exactly what it did when the seed's runs were recorded (bench/results/snapshot.json)."""


def draws(role: Role) -> Callable[[Drawer], Drawer]:
    def register(drawer: Drawer) -> Drawer:
        DRAWERS[role] = drawer
        return drawer

    return register


@draws(Role.DATA)
def _standard_normal(d: Drawing, shape: tuple[int, ...], _: int) -> np.ndarray:
    return d.rng.standard_normal(shape, np.float32)


@draws(Role.MATMUL_B)
@draws(Role.DELTA_KEY)
def _unit_fan_in(d: Drawing, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
    """N(0, 1/K): a product's output, or a delta key's length, stays of the order of one."""
    return d.rng.standard_normal(shape, np.float32) / np.float32(np.sqrt(fan_in))


@draws(Role.Q8_0_SCALE)
def _q8_0_scale(d: Drawing, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
    spread = np.float32(np.sqrt(3) / (127 * np.sqrt(fan_in)))
    return spread * (1 + np.float32(0.1) * d.rng.standard_normal(shape, np.float32))


@draws(Role.NORM_WEIGHT)
def _norm_weight(d: Drawing, shape: tuple[int, ...], _: int) -> np.ndarray:
    return 1 + np.float32(0.1) * d.rng.standard_normal(shape, np.float32)


@draws(Role.NORM_BIAS)
def _norm_bias(d: Drawing, shape: tuple[int, ...], _: int) -> np.ndarray:
    return np.float32(0.1) * d.rng.standard_normal(shape, np.float32)


@draws(Role.COS)
def _cos(d: Drawing, shape: tuple[int, ...], rope: int) -> np.ndarray:
    return np.cos(d.rope_angles(rope, shape))


@draws(Role.SIN)
def _sin(d: Drawing, shape: tuple[int, ...], rope: int) -> np.ndarray:
    return np.sin(d.rope_angles(rope, shape))


@draws(Role.LOG_DECAY)
def _log_decay(d: Drawing, shape: tuple[int, ...], _: int) -> np.ndarray:
    return -d.rng.uniform(0, 1, size=shape)


@draws(Role.UNIT_GATE)
def _unit_gate(d: Drawing, shape: tuple[int, ...], _: int) -> np.ndarray:
    return d.rng.uniform(0, 1, size=shape)


def draw_inputs(
    fn: func.FuncOp, seed: int, shapes: Mapping[str, tuple[int, ...]] | None = None
) -> dict[str, np.ndarray]:
    """Every input of `fn`, drawn from `seed` as the module docstring says. `shapes`: the shape
    to draw an input in where it is not its argument's (a per-chip function's whole tensors,
    tools/interpreters/deployment.py), drawn in the role its argument's readers give it."""
    if seed < 0:  # numpy's generators take seeds >= 0 only
        raise EvaluationError(f"the seed {seed} is negative; a seed is an integer >= 0")
    drawing = Drawing(np.random.default_rng(seed))
    ranges, roles, tables = index_ranges(fn), float_roles(fn), block_tables(fn)
    drawn: dict[str, np.ndarray] = {}
    for name, arg in zip(input_names(fn), fn.body.block.args, strict=True):
        shape, dtype = value_type(arg)
        shape = tuple((shapes or {}).get(name, shape))
        size = int(np.prod(shape))
        if arg in tables and tables[arg] >= size:
            blocks = drawing.rng.permutation(tables[arg])[:size]
            drawn[name] = blocks.reshape(shape).astype(dtype)
            continue
        if not is_float_dtype(dtype):
            lo, hi = INT_DATA_RANGE
            if arg in ranges:
                lo, hi, whys = ranges[arg]
                if lo > hi:
                    raise EvaluationError(
                        f"no value of %{name} suits every op that reads it: {'; '.join(whys)}"
                    )
            drawn[name] = drawing.rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
            continue
        role, detail = roles.get(arg, (Role.DATA, 0))
        values = DRAWERS[role](drawing, shape, detail)
        drawn[name] = values.astype(np.float32).astype(dtype)
    return drawn


def load_inputs(
    path: str | Path, fn: func.FuncOp, chain: Sequence[func.FuncOp] = ()
) -> dict[str, np.ndarray]:
    """The inputs of `fn` an .npz file holds, each converted to its declared element type. With
    `chain` (spatial-run --chain) the file may also hold the other chained functions' inputs."""
    names = input_names(fn)
    others = {n for f in chain for n in input_names(f)}
    loaded: dict[str, np.ndarray] = {}
    for key, array in _read_npz(path).items():
        if "/" in key:
            continue  # a saved output
        if key not in names and key in others:
            continue  # another chained function's
        if key not in names:
            whose = ", ".join(f"@{f.sym_name.data}" for f in chain or [fn])
            known = (
                f"their inputs: {', '.join(sorted(others))}"
                if chain
                else (f"its inputs: {', '.join(names)}")
            )
            raise EvaluationError(f"{path} holds '{key}', which is no input of {whose} ({known})")
        arg = fn.body.block.args[names.index(key)]
        loaded[key] = _convert(key, array, *value_type(arg))
    return loaded


NPZ_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip's first entry, or an empty zip's directory
NPY_MAGIC = b"\x93NUMPY"


def _read_npz(path: str | Path) -> dict[str, np.ndarray]:
    """Every array of the .npz at `path` by name, or one EvaluationError saying why it cannot be
    read: a missing file, another kind of file, a damaged zip, a member that is not an array."""
    try:
        with open(path, "rb") as f:
            head = f.read(6)
    except FileNotFoundError:
        raise EvaluationError(f"cannot open '{path}': no such file") from None
    except OSError as e:
        raise EvaluationError(f"cannot open '{path}': {e.strerror}") from None
    if head.startswith(NPY_MAGIC):
        raise EvaluationError(
            f"cannot read inputs from '{path}': it holds one array (.npy), not an .npz of named "
            "inputs"
        )
    if not head:
        raise EvaluationError(f"cannot read inputs from '{path}': it is empty, not an .npz")
    if not head.startswith(NPZ_MAGIC):
        raise EvaluationError(
            f"cannot read inputs from '{path}': it is not an .npz file (a zip of .npy arrays, "
            f"as --save writes); it starts with {head!r}"
        )
    arrays: dict[str, np.ndarray] = {}
    try:
        with np.load(path, allow_pickle=False) as data:
            for key in data.files:
                arrays[key] = data[key]
    # What numpy and zipfile raise on damaged bytes: a bad zip or CRC, a bad .npy header, a
    # deflate error, an unsupported compression or an encrypted member, a short read.
    except (
        OSError,
        ValueError,
        EOFError,
        zipfile.BadZipFile,
        zlib.error,
        NotImplementedError,
        RuntimeError,
    ) as e:
        raise EvaluationError(
            f"cannot read inputs from '{path}' (an .npz of arrays): {e}"
        ) from None
    for key, array in arrays.items():
        if not isinstance(array, np.ndarray):  # np.load returns a member without .npy magic raw
            raise EvaluationError(
                f"cannot read inputs from '{path}': its member '{key}' is not a .npy array"
            )
    return arrays


def _convert(name: str, array: np.ndarray, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if array.shape != shape:
        raise EvaluationError(
            f"input '{name}' has shape {array.shape}; the function declares {shape}"
        )
    if is_float_dtype(dtype):
        if not (is_float_dtype(array.dtype) or array.dtype.kind in "iu"):
            raise EvaluationError(f"input '{name}' holds {array.dtype}; it must be numbers")
        return array.astype(np.float32).astype(dtype)
    if array.dtype.kind not in "iu":
        raise EvaluationError(f"input '{name}' holds {array.dtype}; it must hold integers")
    info = np.iinfo(dtype)
    if array.size and (array.min() < info.min or array.max() > info.max):
        raise EvaluationError(f"input '{name}' has values outside {dtype}")
    return array.astype(dtype)


def storable(array: np.ndarray) -> np.ndarray:
    """The array as .npz can hold it: bf16 widened (exactly) to f32."""
    return array.astype(np.float32) if array.dtype == ml_dtypes.bfloat16 else array


def save_run(
    path: str | Path,
    inputs: Mapping[str, np.ndarray],
    outputs: Mapping[str, Mapping[str, np.ndarray]],
) -> None:
    """Inputs under their names, each output under `<kind>/<name>` (kind: reference, simulated)."""
    arrays = {name: storable(a) for name, a in inputs.items()}
    for kind, values in outputs.items():
        arrays.update({f"{kind}/{name}": storable(a) for name, a in values.items()})
    # Written through an open file: np.savez given a name appends ".npz" when it lacks it, so
    # --save /dev/full wrote /dev/full.npz and --save DIR wrote DIR.npz, both with exit 0.
    with open(path, "wb") as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]
