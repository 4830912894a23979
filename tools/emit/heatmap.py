"""`-t heatmap`: per sized section, the mesh as a grid of numbers: the output tiles each site
computes and the local bytes it uses (rows y, columns x; 0 where a site runs nothing).

The same grids as a PNG (needs matplotlib, `pip install 'spatial-dialect[plot]'`):
`python -m spatial_dialect.tools.emit.heatmap SIZED.mlir OUT.png`.
"""

from __future__ import annotations

from typing import IO

from xdsl.dialects.builtin import ModuleOp

from spatial_dialect import sp
from spatial_dialect.passes.site_footprint import site_bytes
from spatial_dialect.tools.emit.report import sized_sections


def site_load(program: sp.ProgramOp) -> tuple[list[list[int]], list[list[int]]]:
    """Per site of the mesh (rows y, columns x): output tiles it computes and local bytes it uses."""
    mesh, work = program.one(sp.MeshOp), program.one(sp.WorkOp)
    assert mesh is not None and work is not None
    space = program.item_space()
    tiles = [[0] * mesh.size[0] for _ in range(mesh.size[1])]
    used = [[0] * mesh.size[0] for _ in range(mesh.size[1])]
    for r in program.ops_of(sp.SitesOp):
        nbytes = site_bytes(program, r)
        for x, y in r.rect.sites():
            tiles[y][x] = sum(space.rect(i).h * space.rect(i).w for i in r.items(x, y))
            used[y][x] = nbytes
    return tiles, used


def print_heatmap(module: ModuleOp, stream: IO[str]) -> None:
    """The per-site grids as text: one block per section and quantity, one line per row of sites."""
    for program in sized_sections(module, "-t heatmap"):
        for grid, what in zip(site_load(program), ("output tiles", "local bytes"), strict=True):
            stream.write(f"section @{program.sym_name.data}: {what} per site (rows y, columns x)\n")
            width = max(len(str(v)) for row in grid for v in row)
            for row in grid:
                stream.write("  " + " ".join(f"{v:>{width}}" for v in row) + "\n")


def write_heatmap(module: ModuleOp, path: str) -> None:
    """A PNG per sized module: for each section, the mesh coloured by the output tiles each site
    computes and by the local memory it uses (needs matplotlib: `pip install .[plot]`)."""
    # The phase check first: a user without matplotlib still learns that the file is not sized.
    sections = sized_sections(module, "heatmap")
    try:
        import matplotlib
    except ImportError:
        raise ImportError(
            "the heat map needs matplotlib: pip install 'spatial-dialect[plot]'"
        ) from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(sections), 2, figsize=(10, 4 * len(sections)), squeeze=False)
    for row, program in zip(axes, sections, strict=True):
        for ax, grid, what in zip(
            row, site_load(program), ("output tiles", "local bytes"), strict=True
        ):
            image = ax.imshow(grid, cmap="viridis", origin="upper")
            ax.set_title(f"@{program.sym_name.data}: {what} per site")
            ax.set_xlabel("x")
            ax.set_ylabel("y")
            fig.colorbar(image, ax=ax)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """`python -m spatial_dialect.tools.emit.heatmap SIZED.mlir OUT.png`: the heat map of a sized file."""
    import argparse
    import sys

    from xdsl.parser import Parser
    from xdsl.utils.exceptions import DiagnosticException, ParseError

    from spatial_dialect.passes.pipeline import default_context

    parser = argparse.ArgumentParser(description="heat map of a sized spatial program")
    parser.add_argument("input")
    parser.add_argument("output")
    ns = parser.parse_args(argv)
    try:
        with open(ns.input) as f:
            module = Parser(default_context(), f.read(), ns.input).parse_module()
        write_heatmap(module, ns.output)
    except (DiagnosticException, ParseError, OSError, ImportError) as err:
        print(f"heatmap: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
