"""The deployment: the functions of one module are the programs of one served model, and the
tensors they share are laid out once for all of them
(docs/passes.md#link-one-deployment-agreed-layouts).

A served model is several programs over the same tensors: a prefill writes the KV cache that a
decode reads, and both read the same weights. Decided function by function, the two could lay
the cache out differently (the prefill's ops alone want it in rows, the decode's in tiles) and
the decode would read rows as tiles, with nothing to say so. So link first decides the module's
**agreed set**: every argument name that two or more functions of tg ops take is ONE tensor of
the deployment.

- Each function must declare it with the same type: otherwise `Disagreement`, at the first op of
  the later function that reads it (one name cannot be two tensors of one deployment).
- Its layout is decided once over every reader and writer in every function: tiled where any
  function's ops (with the prelude's ties) want it tiled, and then tiled in all of them. The
  agreement feeds back into each function's ties (a block of rows written into an agreed tiled
  cache is tiled too), and may tile another shared tensor, so it runs to a fixed point. A
  one-row tensor is the same bytes either way and stays rows.
- The decision and its reason are recorded on the module, one entry per agreed tensor:
  `sp.agreed = {cache = "tiled: @write, @read; alone, @write would lay it out rows"}`.

Each function's prelude then starts from the agreed tiled arguments (Prelude.of), so no section of
any function sees an agreed tensor in a layout the others do not, and no bridge sits between the
programs: what one writes, the next reads as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import BlockArgument, Operation

from spatial_dialect.passes.link.context import value_names
from spatial_dialect.passes.link.prelude import rows_of, tg_ops, tiled_values
from spatial_dialect.sp import Layout
from spatial_dialect.sp.errors import Disagreement

AGREED_ATTR = "sp.agreed"
"""The module attribute that records the agreed set: tensor name -> its layout and why."""


@dataclass(frozen=True)
class Shared:
    """One tensor of the deployment: the arguments that are it, by function, in module order."""

    name: str
    args: tuple[tuple[func.FuncOp, BlockArgument], ...]


def tg_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The functions link lowers (those holding tg ops): the programs of the deployment."""
    return [f for f in module.walk() if isinstance(f, func.FuncOp) and tg_ops(f)]


def shared_tensors(functions: list[func.FuncOp]) -> list[Shared]:
    """Every tensor argument name (its DRAM tensor name) that two or more functions take, checked
    to have one type; `Disagreement` at the later function's first reader where it does not."""
    uses: dict[str, list[tuple[func.FuncOp, BlockArgument]]] = {}
    for f in functions:
        names = value_names(f, tg_ops(f))
        for a in f.body.block.args:
            if isinstance(a.type, TensorType):
                uses.setdefault(names[a], []).append((f, a))
    shared = [Shared(n, tuple(args)) for n, args in uses.items() if len(args) > 1]
    for s in shared:
        (first, a0), *rest = s.args
        for f, a in rest:
            if a.type != a0.type:
                err = Disagreement(
                    f"%{s.name} is {a.type} in @{f.sym_name.data} but {a0.type} in "
                    f"@{first.sym_name.data}: the functions of one module are one deployment, and "
                    "an argument name they share is one tensor of it; rename one of them"
                )
                first_reader(f, a).emit_error(str(err), err)
    return shared


def first_reader(f: func.FuncOp, a: BlockArgument) -> Operation:
    """The first op of `f` that reads `a` (the function itself when none does)."""
    readers = {use.operation for use in a.uses}
    return next((op for op in f.body.walk() if op in readers), f)


def agree(module: ModuleOp) -> frozenset[str]:
    """The agreed set's tiled tensors, by name, recorded with every agreed tensor's reason on the
    module (module docstring). A module of one function has no agreed set and is left as it is."""
    functions = tg_functions(module)
    shared = shared_tensors(functions)
    if not shared:
        return frozenset()
    ops = {f: tg_ops(f) for f in functions}
    alone = {f: tiled_values(ops[f]) for f in functions}

    def tiled_in(f: func.FuncOp, tiled: set) -> set[str]:
        args = [(s.name, a) for s in shared for g, a in s.args if g is f]
        return {name for name, a in args if a in tiled and rows_of(a) > 1}

    agreed: set[str] = set().union(*(tiled_in(f, alone[f]) for f in functions))
    while True:
        before = len(agreed)
        for f in functions:
            seeds = [a for s in shared if s.name in agreed for g, a in s.args if g is f]
            agreed |= tiled_in(f, tiled_values(ops[f], seeds))
        if len(agreed) == before:
            break
    reasons = {}
    for s in shared:
        layout = Layout.TILED if s.name in agreed else Layout.ROWS
        why = f"{layout.value}: {', '.join(f'@{f.sym_name.data}' for f, _ in s.args)}"
        moved = [
            f"@{f.sym_name.data}"
            for f, _ in s.args
            if layout == Layout.TILED and s.name not in tiled_in(f, alone[f])
        ]
        if moved:
            why += f"; alone, {', '.join(moved)} would lay it out {Layout.ROWS.value}"
        reasons[s.name] = StringAttr(why)
    module.attributes[AGREED_ATTR] = DictionaryAttr(reasons)
    return frozenset(agreed)
