"""The passes of spatial-dialect and the output targets that read their results.

`get_all_passes()` is the one registry of passes (spatial-opt and the xdsl.universe entry point
both read it); `get_all_output_targets()` the one registry of spatial-opt `-t` printers.
"""

from collections.abc import Callable
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {}


def get_all_output_targets() -> dict[str, Callable[[ModuleOp, IO[str]], None]]:
    """spatial-opt `-t NAME` printers: each writes the module's NAME view to the stream."""
    return {}
