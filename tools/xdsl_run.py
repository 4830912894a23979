"""xDSL's `xdsl-run` with tg's reference semantics added: evaluates a function of tg ops from the
command line, as xdsl-run evaluates arith or linalg.

    python -m spatial_dialect.tools.xdsl_run prog.mlir --symbol f --verbose \\
        --args 'dense<[[1.0, 2.0]]> : tensor<1x2xf32>, dense<[[3.0, 4.0]]> : tensor<1x2xf32>'

prints `result: [[4. 6.]]` for a function returning `tg.add` of its two arguments. Each `--args`
entry is a `dense<...> : tensor<...>` attribute, converted to an array of the argument's
element type (`TgFunctions.tensor_value`); a result prints as numpy prints it.

Why a module of our own rather than the stock `xdsl-run`: xdsl-run finds dialects through the
`xdsl.universe` entry point (tools/universe.py), so it already parses tg, but in xDSL 0.74 a
`Universe` carries dialects, passes and targets only, and xdsl-run registers the implementations
of xDSL's own dialects from a fixed list (`xdsl.interpreters.register_implementations`). Adding
`TgFunctions` therefore takes a subclass of `xDSLRunMain`, which is all this module is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.interpreter import Interpreter
from xdsl.tools.xdsl_run import xDSLRunMain

from spatial_dialect.tools.interpreters.tg_functions import TgFunctions


class TgRunMain(xDSLRunMain):
    """xdsl-run whose interpreter also knows every tg op."""

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="xDSL runner with tg's reference semantics", args=args)

    def register_implementations(self, interpreter: Interpreter) -> None:
        super().register_implementations(interpreter)
        interpreter.register_implementations(TgFunctions())

    def run(self) -> None:
        # As reference.evaluate: a float that overflows to inf is a result, not a warning.
        with np.errstate(over="ignore", under="ignore"):
            super().run()


def main(args: Sequence[str] | None = None) -> None:
    TgRunMain(args).run()


if __name__ == "__main__":
    main()
