"""The xdsl.universe entry point: lets the stock `xdsl-opt` parse tg and sp and run our passes."""

from xdsl.universe import Universe

from spatial_dialect import get_all_dialects
from spatial_dialect.passes import get_all_output_targets, get_all_passes

SPATIAL_UNIVERSE = Universe(
    all_dialects=get_all_dialects(),
    all_passes=get_all_passes(),
    # xdsl-opt calls a target factory with (module, stream) when it takes parameters.
    all_targets=get_all_output_targets(),  # type: ignore[arg-type]
)
