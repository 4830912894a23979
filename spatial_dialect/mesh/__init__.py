"""mesh: deployments over a mesh of chips (docs/mesh.md).

A mesh symbol (`mesh.mesh`), each tensor's sharding over it (`#mesh.sharding`, recorded by
`mesh.shard`), and the collectives that change a sharding along one mesh axis (`mesh.all_gather`,
`mesh.reduce_scatter`, `mesh.all_reduce`, `mesh.all_to_all`), each with its reason and its price
(`#mesh.cost`). Modelled on MLIR's mesh (now shard) dialect and Shardy; named `mesh` because xDSL
ships a partial `shard` dialect without all_gather, reduce_scatter, all_to_all or prices.
Between collectives, each chip runs an ordinary single-chip program.
"""

from xdsl.ir import Dialect

from spatial_dialect.mesh.attrs import (
    REDUCTIONS,
    REPLICATE,
    TOPOLOGIES,
    Collective,
    CostAttr,
    MeshVerifyError,
    ShardingAttr,
    Topology,
    check_sharding,
    entry_dim,
    is_partial,
    partial_entry,
    shard_entry,
)
from spatial_dialect.mesh.ops import (
    COLLECTIVE_OF,
    COLLECTIVES,
    AllGatherOp,
    AllReduceOp,
    AllToAllOp,
    ArgmaxGatherOp,
    CollectiveOp,
    MeshOp,
    ReduceScatterOp,
    ShardOp,
    StepOp,
    check_collective,
    priced_bytes,
)

MESH = Dialect("mesh", [MeshOp, ShardOp, *COLLECTIVES, StepOp], [ShardingAttr, CostAttr])

__all__ = [
    "COLLECTIVE_OF",
    "COLLECTIVES",
    "MESH",
    "REDUCTIONS",
    "REPLICATE",
    "TOPOLOGIES",
    "Collective",
    "Topology",
    "AllGatherOp",
    "AllReduceOp",
    "AllToAllOp",
    "ArgmaxGatherOp",
    "CollectiveOp",
    "CostAttr",
    "MeshOp",
    "MeshVerifyError",
    "ReduceScatterOp",
    "ShardOp",
    "StepOp",
    "check_collective",
    "priced_bytes",
    "ShardingAttr",
    "check_sharding",
    "entry_dim",
    "is_partial",
    "partial_entry",
    "shard_entry",
]
