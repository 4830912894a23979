"""The passes of spatial-dialect and the output targets that read their results.

`get_all_passes()` is the one registry of passes (spatial-opt and the xdsl.universe entry point
both read it); `get_all_output_targets()` the one registry of spatial-opt `-t` printers (they
live in spatial_dialect.tools.emit and .backend; this registry names them, so no pass imports tools). Both
import lazily, so listing the passes costs no import of the compiler.
"""

from collections.abc import Callable
from importlib import import_module
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

PASSES = {
    "link": ("link", "LinkPass"),
    "tile": ("tile", "TilePass"),
    "place": ("place", "PlacePass"),
    "fuse-operands": ("fuse_operands", "FuseOperandsPass"),
    "size-buffers": ("size_buffers", "SizeBuffersPass"),
    "resize-operand-fifos": ("size_buffers", "ResizeOperandFifosPass"),
    "spatial-pipeline": ("pipeline", "SpatialPipelinePass"),
    "tensor-parallel": ("tensor_parallel", "TensorParallelPass"),
}
"""Pass name -> (module under spatial_dialect.passes, class)."""

OUTPUT_TARGETS = {
    "report": ("emit.report", "print_report"),
    "memory-map": ("emit.memory_map", "print_memory_map"),
    "heatmap": ("emit.heatmap", "print_heatmap"),
    "ttlang": ("backend.ttlang.printer", "print_ttlang"),
    "triton": ("backend.triton.printer", "print_triton"),
}
"""spatial-opt `-t` name -> (module under spatial_dialect.tools, printer): the views of the IR in
tools/emit, the programs of other languages in tools/backend."""


def _lazy(module: str, name: str) -> Callable[[], type[ModulePass]]:
    return lambda: getattr(import_module(f"spatial_dialect.passes.{module}"), name)


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {pass_name: _lazy(module, cls) for pass_name, (module, cls) in PASSES.items()}


def _printer(module_name: str, name: str) -> Callable[[ModuleOp, IO[str]], None]:
    def emit(module: ModuleOp, stream: IO[str]) -> None:
        getattr(import_module(f"spatial_dialect.tools.{module_name}"), name)(module, stream)

    return emit


def get_all_output_targets() -> dict[str, Callable[[ModuleOp, IO[str]], None]]:
    """spatial-opt `-t NAME` printers: each writes the module's NAME view to the stream."""
    return {target: _printer(module, name) for target, (module, name) in OUTPUT_TARGETS.items()}
