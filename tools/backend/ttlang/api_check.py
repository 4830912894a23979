"""What a printed TT-Lang program may do inside a kernel: the API the TT-Lang specification lists
(tenstorrent/tt-lang, docs/sphinx/specs/TTLangSpecification.md), Python control flow and integer
arithmetic, and nothing else (`kernel_violations`).

A kernel is a function decorated `@ttl.compute()` or `@ttl.datamovement()`; the TT-Lang compiler
translates its syntax tree, so a call it does not know (a host helper, `.to_torch()`, torch,
numpy, ttnn) has no form on a chip even where the simulator, which runs the kernel as Python,
accepts it. Inside a kernel this check allows:

- `ttl.node`, `ttl.grid_size`, `ttl.copy`, `ttl.GroupTransfer`, `ttl.signpost` (spec: Grid,
  Copy, Performance and debugging); the block functions of the spec's Appendix B under
  `ttl.math`, and those tt-lang 1.1.6 (its simulator and its compiler's tests) names under
  `ttl.block` (broadcast, fill, transpose, mask, mask_posinf, where, unsqueeze, squeeze; the
  spec text lists them under `ttl.math`);
- the methods of dataflow buffers, blocks, transfers, pipe nets and semaphores the spec lists;
- `range` for loops and `print` (debug printing); `if`, `for`, `while`, `with`, assignments,
  arithmetic and comparisons; a nested function (a pipe net's condition body);
- names of the operation's scope (its tensors, DFBs, pipe nets) and of the kernel's own locals.

Block comparisons (`ttl.math.gt`, `eq`) are in tt-lang-sim but not in the specification, so they
are refused too: the printers build them from `sign`, `relu` and `abs`.
"""

from __future__ import annotations

import ast

TTL = frozenset({"node", "grid_size", "copy", "GroupTransfer", "signpost"})
"""`ttl.X` calls of the specification (besides the operation-scope constructors)."""

MATH = frozenset(
    {
        # binary
        "max",
        "min",
        # basic unary
        "abs",
        "neg",
        "pow",
        "exp",
        "exp2",
        "expm1",
        "log",
        "logp1",
        "sqrt",
        "square",
        "rsqrt",
        "recip",
        "rsub",
        # trigonometric
        "tan",
        "tanh",
        "atan",
        "atanh",
        "sin",
        "asin",
        "asinh",
        "cos",
        "acos",
        "acosh",
        # activations
        "relu",
        "relu_max",
        "relu_min",
        "leaky_relu",
        "elu",
        "gelu",
        "sigmoid",
        "celu",
        "silu",
        "prelu",
        "softplus",
        "softsign",
        "hardsigmoid",
        "hardtanh",
        "selu",
        # reduction, broadcast, transpose
        "reduce_sum",
        "reduce_max",
        "broadcast",
        "transpose",
        "unsqueeze",
        # rounding
        "frac",
        "trunc",
        "round",
        "floor",
        "ceil",
        "clamp",
        "threshold",
        "sign",
        "signbit",
        # fill, mask, where
        "fill",
        "mask",
        "mask_posinf",
        "where",
    }
)
"""`ttl.math.X`: Appendix B of the specification."""

BLOCK = frozenset(
    {"broadcast", "fill", "transpose", "mask", "mask_posinf", "where", "unsqueeze", "squeeze"}
)
"""`ttl.block.X`: tt-lang 1.1.6's namespace for the spec's shape functions."""

METHODS = frozenset(
    {
        "wait",  # DataflowBuffer.wait, Transfer.wait
        "reserve",
        "push",
        "pop",
        "store",
        "add",  # GroupTransfer
        "wait_all",
        "if_src",  # PipeNet
        "if_dst",
        "wait_eq",  # Semaphore
        "wait_ge",
        "set",
        "inc",
        "get_remote",
        "get_remote_multicast",
    }
)
"""Methods of the spec's objects a kernel may call."""

BUILTINS = frozenset({"range", "print"})

_KERNEL_DECORATORS = frozenset({"compute", "datamovement"})

_NODES = (
    ast.FunctionDef,
    ast.arguments,
    ast.arg,
    ast.Return,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.For,
    ast.While,
    ast.If,
    ast.With,
    ast.withitem,
    ast.Expr,
    ast.Pass,
    ast.Break,
    ast.Continue,
    ast.BoolOp,
    ast.BinOp,
    ast.UnaryOp,
    ast.Compare,
    ast.IfExp,
    ast.Call,
    ast.keyword,
    ast.Constant,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    ast.Name,
    ast.List,
    ast.Tuple,
    ast.expr_context,
    ast.boolop,
    ast.operator,
    ast.unaryop,
    ast.cmpop,
)
"""The syntax a kernel may use; anything else (raise, try, lambda, comprehensions, f-strings,
imports, dicts, sets) is refused by its node type."""


def _is_kernel(fn: ast.FunctionDef) -> bool:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if (
            isinstance(target, ast.Attribute)
            and target.attr in _KERNEL_DECORATORS
            and isinstance(target.value, ast.Name)
            and target.value.id == "ttl"
        ):
            return True
    return False


def _dotted(node: ast.expr) -> list[str] | None:
    """`a.b.c` as ['a', 'b', 'c']; None where the chain does not start at a name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _call_violation(call: ast.Call, local_fns: set[str]) -> str | None:
    f = call.func
    if isinstance(f, ast.Name):
        if f.id in BUILTINS or f.id in local_fns:
            return None
        return f"a call of {f.id}(), which is no TT-Lang API"
    chain = _dotted(f)
    if chain is not None and chain[0] == "ttl":
        allowed = (
            (len(chain) == 2 and chain[1] in TTL)
            or (len(chain) == 3 and chain[1] == "math" and chain[2] in MATH)
            or (len(chain) == 3 and chain[1] == "block" and chain[2] in BLOCK)
        )
        return None if allowed else f"{'.'.join(chain)}, which the TT-Lang specification lacks"
    if isinstance(f, ast.Attribute):
        if f.attr in METHODS and not (chain and chain[0] in _HOST_MODULES):
            return None
        return f".{f.attr}(), which is no method of a TT-Lang object"
    return "a call of a computed function"


_HOST_MODULES = frozenset({"torch", "np", "numpy", "ttnn", "sys", "os", "math"})


def kernels(program: str) -> list[ast.FunctionDef]:
    """The kernel functions of `program`: those its operations define, decorated as kernels."""
    return [
        kernel
        for op in ast.walk(ast.parse(program))
        if isinstance(op, ast.FunctionDef)
        for kernel in op.body
        if isinstance(kernel, ast.FunctionDef) and _is_kernel(kernel)
    ]


def kernel_violations(program: str) -> list[str]:
    """Every construct inside a kernel of `program` that the check above refuses, as
    'line N, kernel K: what'. Empty: every kernel is TT-Lang the specification lists."""
    return [what for kernel in kernels(program) for what in _kernel(kernel)]


def _kernel(kernel: ast.FunctionDef) -> list[str]:
    local_fns = {n.name for n in ast.walk(kernel) if isinstance(n, ast.FunctionDef)}
    found: list[str] = []

    def say(node: ast.AST, what: str) -> None:
        found.append(f"line {getattr(node, 'lineno', '?')}, kernel {kernel.name}: {what}")

    body = [n for stmt in kernel.body for n in ast.walk(stmt)]
    for node in body:
        if isinstance(node, ast.FunctionDef) and node.decorator_list:
            say(node, f"a decorated function {node.name} inside a kernel")
        if not isinstance(node, _NODES):
            say(node, f"{type(node).__name__}, a Python construct TT-Lang does not compile")
        elif isinstance(node, ast.Call):
            if (why := _call_violation(node, local_fns)) is not None:
                say(node, why)
        elif isinstance(node, ast.Name) and node.id in _HOST_MODULES:
            say(node, f"the host module {node.id}")
    return found
