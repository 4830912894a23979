"""The passes of spatial-dialect. `get_all_passes()` is the one registry of them."""

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {}
