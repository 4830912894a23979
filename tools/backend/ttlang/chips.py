"""The host of a TT-Lang program for a deployment over several chips (issue 23), as functions.

A deployment is SPMD (docs/mesh.md): every chip runs the same sections on its own shard, and
the collectives between sections move data between chips. The printed program says so as a
program for a multi-chip box would: ttnn's mesh of the deployment (`ttnn.open_mesh_device`),
one device per chip, every chip's DRAM tensors allocated on its own device, each section launched
on every chip, and the collectives called between them in program order (`deployment`, printed
per program by printer.py). Decided here, and why:

- **One launch per chip.** tt-lang-sim 1.1.6's mesh APIs are stubs (ttl/sim/ttnnsim.py): a
  section launched on a mesh tensor would run once on the whole tensor, and no chip's partial
  result would ever exist. Launching each section on each chip's own shard is the honest check,
  and on a box it is what a mesh launch does.
- **all_reduce and all_gather are ttnn's.** On a chip the chips' tensors are one mesh tensor
  (`ttnn.aggregate_as_tensor`), reduced or gathered over the ttnn cluster axis in place and
  split back (`ttnn.get_device_tensors`). tt-lang-sim has neither: its collectives take the
  chips' tensors stacked along one dim of one host tensor (`_stacked`, tagged with the mesh
  mapper that says so) and return every chip's result stacked the same way, which is what
  ttnn's `ConcatMeshToTensor` reads back from a box. Each shim picks its branch by what ttnn
  offers, as host.py's `_embedding` does.
- **reduce_scatter and all_to_all on the host.** tt-lang-sim has neither: the host reads the
  group's tensors back, sums (in chip order) or re-splits them in torch and writes each chip's
  block to its device. On a chip `ttnn.reduce_scatter` runs instead; all_to_all stays a host
  step everywhere (its only ttnn form is MoE's dispatch/combine pair, a different contract).
- **Two-dimensional tensors.** Every DRAM tensor is stored as (rows, cols) (host.py `_as_2d`),
  so a collective gathers or splits dim 0 (the leading dim of the logical tensor: whole rows)
  or dim 1 (the last); printer.py refuses a sharded middle dim by name.

The program's tables (MESH and host.py's) are printed per program; they are declared below only
so that these functions read here as they run there.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np

from spatial_dialect.tools.backend.ttlang.host import (
    INPUTS,
    TENSORS,
    _allocate,
    _arg,
    _as_2d,
    _dtypes,
    _results,
    _seeded_inputs,
)

if TYPE_CHECKING:
    import torch
    import ttnn

MESH: tuple[int, int] = (1, 1)
"""ttnn's mesh shape (rows, cols) of the deployment: a 1-D mesh of n chips is (1, n)."""


def deployment(mesh, devices, drams):
    """Printed per program: every section on every chip's DRAM, the collectives between."""


def _open_chips():
    """ttnn's mesh of the deployment and one device per chip, in chip order (row-major)."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*MESH))
    if hasattr(mesh, "get_devices"):  # a box: the mesh's own devices
        return mesh, mesh.get_devices()
    # tt-lang-sim's mesh is a stub that holds no device: one simulated device per chip
    return mesh, [ttnn.open_device(device_id=c) for c in range(MESH[0] * MESH[1])]


def _close_chips(mesh, devices):
    if not hasattr(mesh, "get_devices"):
        for device in devices:
            ttnn.close_device(device)
    ttnn.close_mesh_device(mesh)


def _groups(axis):
    """The chips of each group a collective over ttnn cluster axis `axis` runs within."""
    ids = np.arange(MESH[0] * MESH[1]).reshape(MESH)
    return (ids.T if axis == 0 else ids).tolist()


def _logical(tensor, name):
    """A DRAM tensor's (rows, cols) on the host, its tile padding cut off."""
    rows, cols = _as_2d(TENSORS[name][0])
    return ttnn.to_torch(tensor)[:rows, :cols]


def _stacked(mesh, parts, name):
    """tt-lang-sim's form of a group's mesh tensor: the chips' tensors stacked along a new dim 0
    (row-major layout: no tile padding between them), tagged as sharded over it."""
    return ttnn.from_torch(
        torch.stack([_logical(p, name) for p in parts]),
        layout=ttnn.ROW_MAJOR_LAYOUT,
        mesh_mapper=ttnn.ShardTensor2dMesh(mesh, mesh_shape=(1, len(parts)), dims=(None, 0)),
    )


def _on_chip(value, device, name):
    """A host (rows, cols) value as the DRAM tensor `name` on `device`."""
    torch_dtype, ttnn_dtype = _dtypes(TENSORS[name][1])
    return ttnn.from_torch(
        value.contiguous().to(torch_dtype),
        dtype=ttnn_dtype,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.DRAM_MEMORY_CONFIG,
    )


def _all_reduce(mesh, devices, drams, src, dst, axis):
    """dst = the sum of src over the chips along cluster axis `axis`, on every one of them."""
    if hasattr(ttnn, "aggregate_as_tensor"):  # a box: the tensors stay on their devices
        whole = ttnn.aggregate_as_tensor([dram[src] for dram in drams])
        summed = ttnn.all_reduce(whole, cluster_axis=axis, mesh_device=mesh)
        for dram, part in zip(drams, ttnn.get_device_tensors(summed), strict=True):
            dram[dst] = part
        return
    # tt-lang-sim's mesh is a stub: its collective takes each group stacked in one host tensor
    for group in _groups(axis):
        stack = _stacked(mesh, [drams[c][src] for c in group], src)
        summed = ttnn.to_torch(ttnn.all_reduce(stack, cluster_axis=1, mesh_device=mesh))
        for i, c in enumerate(group):
            drams[c][dst] = _on_chip(summed[i], devices[c], dst)


def _all_gather(mesh, devices, drams, src, dst, axis, dim):
    """dst = the chips' src along cluster axis `axis`, concatenated in chip order along `dim`."""
    if hasattr(ttnn, "aggregate_as_tensor"):  # a box: the tensors stay on their devices
        whole = ttnn.aggregate_as_tensor([dram[src] for dram in drams])
        gathered = ttnn.all_gather(whole, dim, cluster_axis=axis, mesh_device=mesh)
        for dram, part in zip(drams, ttnn.get_device_tensors(gathered), strict=True):
            dram[dst] = part
        return
    # tt-lang-sim's mesh is a stub: its collective takes each group stacked in one host tensor
    for group in _groups(axis):
        stack = _stacked(mesh, [drams[c][src] for c in group], src)
        gathered = ttnn.all_gather(stack, dim + 1, cluster_axis=1, mesh_device=mesh)
        every = ttnn.to_torch(gathered)
        for i, c in enumerate(group):
            drams[c][dst] = _on_chip(every[i], devices[c], dst)


def _reduce_scatter(mesh, devices, drams, src, dst, axis, dim):
    """dst = block i, along `dim`, of the sum of src over the chips along cluster axis `axis`,
    on chip i of the axis."""
    if hasattr(ttnn, "aggregate_as_tensor"):  # a box: ttnn's reduce_scatter
        whole = ttnn.aggregate_as_tensor([dram[src] for dram in drams])
        scattered = ttnn.reduce_scatter(whole, dim, cluster_axis=axis, mesh_device=mesh)
        for dram, part in zip(drams, ttnn.get_device_tensors(scattered), strict=True):
            dram[dst] = part
        return
    # tt-lang-sim has no reduce_scatter: the sum, in chip order, and its split on the host
    for group in _groups(axis):
        total = _logical(drams[group[0]][src], src).clone()
        for c in group[1:]:
            total += _logical(drams[c][src], src)
        for block, c in zip(torch.chunk(total, len(group), dim), group, strict=True):
            drams[c][dst] = _on_chip(block, devices[c], dst)


def _all_to_all(mesh, devices, drams, src, dst, axis, src_dim, dst_dim):
    """Chip j of cluster axis `axis` gets block j (along `dst_dim`) of every chip's src,
    concatenated in chip order along `src_dim`: a host step, read back and written again."""
    for group in _groups(axis):
        blocks = [torch.chunk(_logical(drams[c][src], src), len(group), dst_dim) for c in group]
        for j, c in enumerate(group):
            drams[c][dst] = _on_chip(torch.cat([b[j] for b in blocks], src_dim), devices[c], dst)


def run_chips(per_chip):
    """The program on every chip: `per_chip[c]` is chip c's inputs (name -> numpy array, its
    own shard); returns every chip's outputs by name, in chip order."""
    mesh, devices = _open_chips()
    try:
        drams = [
            _allocate(arrays, device) for arrays, device in zip(per_chip, devices, strict=True)
        ]
        deployment(mesh, devices, drams)
        return [_results(dram, arrays) for dram, arrays in zip(drams, per_chip, strict=True)]
    finally:
        _close_chips(mesh, devices)


def main():
    """`python PROGRAM.py [inputs.npz] [outputs.npz]`: chip c's input NAME is `NAME@c` in the
    file (else seeded normal draws, seed c), its outputs are saved the same way and listed."""
    args = [a for a in sys.argv[1:] if a != "--"]
    chips = range(MESH[0] * MESH[1])
    if args:
        arrays = np.load(args[0])
        per_chip = [{n: arrays[f"{n}@{c}"] for n in INPUTS} for c in chips]
    else:
        per_chip = [_seeded_inputs(c) for c in chips]
    outputs = run_chips(per_chip)
    saved = {
        f"{n}@{c}": v for c, values in zip(chips, outputs, strict=True) for n, v in values.items()
    }
    np.savez(args[1] if len(args) > 1 else "outputs.npz", **saved)
    for name, value in saved.items():
        print(f"{name}: {value.shape} {value.dtype}")


COLLECTIVES = (_all_gather, _reduce_scatter, _all_reduce, _all_to_all)
"""The host function of each collective, as printer.py calls them (one per `mesh` collective)."""

HOST = (
    _dtypes,
    _as_2d,
    _arg,
    _allocate,
    _results,
    _seeded_inputs,
    _groups,
    _logical,
    _stacked,
    _on_chip,
    *COLLECTIVES,
    _open_chips,
    _close_chips,
    run_chips,
    main,
)
"""Printed after the program's tables and `deployment`, each where the program uses it."""
