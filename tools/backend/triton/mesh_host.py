"""The host side of a printed Triton deployment over a mesh of chips: one SPMD program, one rank
per chip (docs/backend-triton.md#several-chips).

Every chip runs the same per-chip program on its own shard (docs/mesh.md), so the printed module
is host.py's program plus the process group and the collectives between its kernel launches. As
in host.py, these are real functions the printer copies in with `inspect.getsource`, only those a
program uses: one helper per collective its steps name.

Decided here, and why:

- **One text, two transports.** `torch.distributed` is initialised from the environment torchrun
  sets (RANK, WORLD_SIZE, MASTER_ADDR, ...) with gloo when the device is the CPU (Triton's
  interpreter) and NCCL on GPUs; nothing else in the program differs, so the program the
  interpreter checks is the one a GPU runs.
- **Rank r is chip `np.unravel_index(r, MESH)`** (row-major over the mesh axes, the order of
  docs/mesh.md's stacks), and a collective over axis a runs in the process group of the chips that
  differ only in coordinate a. Every rank creates every group, in the same order, as
  `dist.new_group` requires.
- **A collective acts on a DRAM tensor's held form** (host.py: a rank-1 tensor is one row), so the
  printer passes held dims. torch's collectives split and concatenate dim 0 only (gloo takes the
  concatenated form, not a stack), so a step on another dim moves its blocks to dim 0 and back,
  in chip order (tools/interpreters/collectives.py defines the order).
- **Each rank reads and writes its own files**: `--inputs` and `--out` name them with `{rank}`
  (the runner writes each chip's shard and reads each chip's outputs back); without `--inputs`,
  every rank draws the same seeded inputs, so replicas agree.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from spatial_dialect.mesh import Collective
from spatial_dialect.tools.backend.triton import host

if TYPE_CHECKING:
    import torch
    import torch.distributed as dist

# The printed module's tables (printer.py fills them from the IR), empty here.
MESH: tuple[int, ...] = ()
"""The mesh's shape; the printed module holds it."""
GROUPS: list[Any] = []
"""Per mesh axis, the process group of this rank's chips along it (filled by `_join`)."""
INPUTS: list[str] = []


# host.py's functions that `main` calls, printed beside these (declared here, so they lint).
def run(inputs, device="cuda", every=False) -> dict[str, Any]:
    raise NotImplementedError


def _draw(seed) -> dict[str, np.ndarray]:
    raise NotImplementedError


def _as_torch(value) -> Any:
    raise NotImplementedError


def _as_numpy(tensor) -> np.ndarray:
    raise NotImplementedError


def _join(device):
    """This process's rank, after joining the mesh's process group and its axes' groups."""
    if device == "cuda":
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("gloo" if device == "cpu" else "nccl")
    rank, chips = dist.get_rank(), int(np.prod(MESH))
    if dist.get_world_size() != chips:
        raise SystemExit(
            f"{chips} ranks run this program, one per chip, not {dist.get_world_size()}"
        )
    grid = np.arange(chips).reshape(MESH)
    for axis in range(len(MESH)):
        lines = np.moveaxis(grid, axis, -1).reshape(-1, MESH[axis])
        for line in lines:
            group = dist.new_group([int(r) for r in line])
            if rank in line:
                GROUPS.append(group)
    return rank


def _all_reduce(src, dst, group):
    dst.copy_(src)
    dist.all_reduce(dst, group=group)


def _all_gather(src, dst, group, dim):
    n = dist.get_world_size(group)
    blocks = torch.empty((n * src.shape[0], *src.shape[1:]), dtype=src.dtype, device=src.device)
    dist.all_gather_into_tensor(blocks, src.contiguous(), group=group)
    dst.copy_(torch.cat(blocks.chunk(n), dim))


def _reduce_scatter(src, dst, group, dim):
    n = dist.get_world_size(group)
    dist.reduce_scatter_tensor(dst, torch.cat(src.chunk(n, dim)), group=group)


def _all_to_all(src, dst, group, src_dim, dst_dim):
    n = dist.get_world_size(group)
    sent = torch.cat(src.chunk(n, dst_dim))
    got = torch.empty_like(sent)
    dist.all_to_all_single(got, sent, group=group)
    dst.copy_(torch.cat(got.chunk(n), src_dim))


def _argmax_gather(src, dst, group, dim):
    # MPI's MAXLOC over the group, chip i holding the i-th block of `dim`: each rank's first
    # maximum and its global index, one all_gather of the pairs (f64 holds both exactly), and
    # the first largest value in rank order (a tie goes to the lower columns).
    n = dist.get_world_size(group)
    index = src.argmax(dim)
    value = src.gather(dim, index.unsqueeze(dim)).squeeze(dim)
    index = index + dist.get_rank(group) * src.shape[dim]
    pairs = torch.empty((2 * n, *value.shape), dtype=torch.float64, device=src.device)
    mine = torch.stack([value.double(), index.double()])
    dist.all_gather_into_tensor(pairs, mine, group=group)
    values, indices = pairs[0::2], pairs[1::2]
    dst.copy_(indices.gather(0, values.argmax(0, keepdim=True))[0].view(dst.shape))


def main(argv=None):
    interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", help=".npz of this rank's shards by name, {rank} in the name")
    ap.add_argument("--out", default="outputs.{rank}.npz")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu" if interpreted else "cuda")
    args = ap.parse_args(argv)
    rank = _join(args.device)
    inputs = _draw(args.seed)
    if args.inputs:
        with np.load(args.inputs.format(rank=rank)) as f:
            inputs.update({k: f[k] for k in f.files if k in INPUTS})
    outs = run({k: _as_torch(v) for k, v in inputs.items()}, args.device)
    if args.device == "cuda":
        torch.cuda.synchronize()
    out = args.out.format(rank=rank)
    np.savez(out, **{k: _as_numpy(v) for k, v in outs.items()})
    print(f"rank {rank}: wrote {', '.join(outs)} to {out}")
    dist.destroy_process_group()
    return 0


COLLECTIVES = {
    Collective.ALL_REDUCE: _all_reduce,
    Collective.ALL_GATHER: _all_gather,
    Collective.REDUCE_SCATTER: _reduce_scatter,
    Collective.ALL_TO_ALL: _all_to_all,
    Collective.ARGMAX_GATHER: _argmax_gather,
}
"""The helper a step of each kind calls (test_triton_coverage.py: one per collective)."""


def always(used: list[Collective]) -> tuple:
    """The host functions of a deployment whose steps use the collectives `used`, in printed
    order: host.py's, its `main` replaced by this one, and the helper of each collective used."""
    helpers = dict.fromkeys(COLLECTIVES[kind] for kind in used)
    single = tuple(fn for fn in host.ALWAYS if fn is not host.main)
    return (*single, _join, *helpers, main)
