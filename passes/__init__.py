"""The passes of spatial-dialect and the output targets that read their results.

`get_all_passes()` is the one registry of passes (spatial-opt and the xdsl.universe entry point
both read it); `get_all_output_targets()` the one registry of spatial-opt `-t` printers.
"""

from collections.abc import Callable
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    def link() -> type[ModulePass]:
        from spatial_dialect.passes.link import LinkPass

        return LinkPass

    def tile() -> type[ModulePass]:
        from spatial_dialect.passes.tile import TilePass

        return TilePass

    def place() -> type[ModulePass]:
        from spatial_dialect.passes.place import PlacePass

        return PlacePass

    def fuse_operands() -> type[ModulePass]:
        from spatial_dialect.passes.fuse_operands import FuseOperandsPass

        return FuseOperandsPass

    def size_buffers() -> type[ModulePass]:
        from spatial_dialect.passes.size_buffers import SizeBuffersPass

        return SizeBuffersPass

    def resize_operand_fifos() -> type[ModulePass]:
        from spatial_dialect.passes.size_buffers import ResizeOperandFifosPass

        return ResizeOperandFifosPass

    def spatial_pipeline() -> type[ModulePass]:
        from spatial_dialect.passes.pipeline import SpatialPipelinePass

        return SpatialPipelinePass

    return {
        "link": link,
        "tile": tile,
        "place": place,
        "fuse-operands": fuse_operands,
        "size-buffers": size_buffers,
        "resize-operand-fifos": resize_operand_fifos,
        "spatial-pipeline": spatial_pipeline,
    }


def get_all_output_targets() -> dict[str, Callable[[ModuleOp, IO[str]], None]]:
    """spatial-opt `-t NAME` printers: each writes the module's NAME view to the stream."""

    def report(module: ModuleOp, stream: IO[str]) -> None:
        from spatial_dialect.passes.report import print_report

        print_report(module, stream)

    def memory_map(module: ModuleOp, stream: IO[str]) -> None:
        from spatial_dialect.passes.report import print_memory_map

        print_memory_map(module, stream)

    return {"report": report, "memory-map": memory_map}
