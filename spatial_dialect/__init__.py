"""spatial-dialect: the tg (tensor graph) and sp (spatial program) dialects on xDSL.

`get_all_dialects()` is the one registry of this package's dialects; spatial-opt and the
xdsl.universe entry point both read it.
"""

from collections.abc import Callable

from xdsl.ir import Dialect


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    def tg() -> Dialect:
        from spatial_dialect.tg import TG

        return TG

    def sp() -> Dialect:
        from spatial_dialect.sp import SP

        return SP

    def mesh() -> Dialect:
        from spatial_dialect.mesh import MESH

        return MESH

    return {"tg": tg, "sp": sp, "mesh": mesh}
