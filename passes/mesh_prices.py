"""What the mesh dialect's IR means to the cost model: a `mesh.mesh` op's preset, and the price a
collective carries (docs/mesh.md#prices).

Decided here, and why: the dialect imports nothing of `targets` (docs/architecture.md#import-rules),
so the agreement of a `mesh.mesh` op with the preset it names, and the `#mesh.cost` of a
collective, are computed here, which the tensor-parallel pass calls as it inserts collectives. The price is targets/collectives.price's, on the bytes the op's types imply
(`CollectiveOp.priced_bytes`), so the IR and the report cannot disagree.
"""

from __future__ import annotations

from spatial_dialect.mesh import CollectiveOp, CostAttr, MeshOp, MeshVerifyError, StepOp
from spatial_dialect.targets.collectives import price
from spatial_dialect.targets.mesh import MESH_PRESETS, Mesh


def mesh_op_of(preset: str, name: str | None = None) -> MeshOp:
    """The `mesh.mesh` op of a preset (symbol `name`, default the preset's name)."""
    m = MESH_PRESETS[preset]
    topology = [a.topology.value for a in m.axes]
    return MeshOp(name or preset, m.shape, topology, [a.links for a in m.axes], preset)


def _axes(sizes, topology, links) -> str:
    return (
        f"shape {'x'.join(map(str, sizes))} topology [{', '.join(topology)}] "
        f"links [{', '.join(map(str, links))}]"
    )


def mesh_of(op: MeshOp) -> Mesh:
    """The preset `op` names, refused unless its numbers are the preset's. A mesh with no preset
    (one of a TOML file's [mesh] table) has no link speeds in the IR, so it cannot be priced here."""
    name = f"mesh @{op.sym_name.data}"
    if op.preset is None:
        raise MeshVerifyError(f"{name} names no preset: its links' speeds are not in the IR")
    m = MESH_PRESETS.get(op.preset.data)
    if m is None:
        raise MeshVerifyError(
            f"{name}: unknown preset {op.preset.data!r} (known: {', '.join(MESH_PRESETS)})"
        )
    want = (m.shape, tuple(a.topology.value for a in m.axes), tuple(a.links for a in m.axes))
    got = (op.sizes, op.topologies, op.link_counts)
    if got != want:
        raise MeshVerifyError(f"{name}: preset {m.name} is {_axes(*want)}, got {_axes(*got)}")
    return m


def cost_of(op: CollectiveOp | StepOp, mesh: Mesh, links: int | None = None) -> CostAttr:
    """The price of `op` (a collective, or a linked deployment's step) over `mesh`
    (targets/collectives.price) as the attribute it carries, over `links` of its axis's links
    (default all)."""
    nbytes = op.priced_bytes(mesh.shape)
    if nbytes is None:
        raise MeshVerifyError(f"{op.name}: cannot price it: its element type has no width")
    p = price(op.collective, mesh, nbytes, op.axis.value.data, links)
    return CostAttr(nbytes, p.links, p.hops, round(p.time_s * 1e9))
