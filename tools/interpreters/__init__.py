"""The reference interpreter of tg and what a run around it needs.

- numerics.py: element types, the one rounding, and each op's math in numpy (shared with the
  simulator);
- q8_0.py: ggml's Q8_0 numerics;
- tg_functions.py: `TgFunctions`, one xDSL `@impl` per tg op, and `REFUSED_OPS`;
- reference.py: evaluating a `func.func` of tg ops on xDSL's interpreter;
- inputs.py: drawing, loading and saving a run's inputs;
- compare.py: when a simulated output equals the reference (the tolerance rule);
- collectives.py: the mesh collectives over stacked per-chip arrays, `shard` and `unshard`;
- mesh_reference.py: a per-chip function run on every chip of a mesh in lockstep.

`TgFunctions` and `REFUSED_OPS` are exported here so that a test of every consumer's coverage of
tg reads the reference's table by name.
"""

from spatial_dialect.tools.interpreters.tg_functions import REFUSED_OPS, TgFunctions

__all__ = ["REFUSED_OPS", "TgFunctions"]
