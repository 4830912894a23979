"""`-t memory-map`: per site range of every sized section, each buffer's offset, bytes, depth and
page, and each site's use against its budget (all read off the sized IR).

A deployment over a mesh prints one chip's map under a first line saying that every chip's is the
same: every chip runs the same sections on its own shard (docs/mesh.md#the-linked-deployment)."""

from __future__ import annotations

from typing import IO

from xdsl.dialects.builtin import ModuleOp

from spatial_dialect import sp
from spatial_dialect.passes.dram_layout import dram_layout
from spatial_dialect.passes.site_footprint import memory_buffers, site_bytes
from spatial_dialect.passes.target_choice import module_target, recorded_mesh
from spatial_dialect.tools.emit.report import sized_sections


def print_memory_map(module: ModuleOp, stream: IO[str]) -> None:
    sections = sized_sections(module, "-t memory-map")
    target = module_target(module, "-t memory-map")
    on_mesh = recorded_mesh(module)
    if on_mesh is not None:
        stream.write(
            f"mesh {on_mesh.name}: {on_mesh.chips} {target.name} chips; every chip's map is this "
            "one (every chip runs the same sections on its own shard)\n"
        )
    for program in sections:
        mesh, work = program.one(sp.MeshOp), program.one(sp.WorkOp)
        assert mesh is not None and work is not None
        budget = mesh.local_mem
        stream.write(
            f"section @{program.sym_name.data} ({program.source_op.data}) on {target.name}: "
            f"{mesh.size[0]}x{mesh.size[1]} sites, {budget} bytes each from address {target.local_mem_base}\n"
        )
        for r in program.ops_of(sp.SitesOp):
            b = r.bindings(work.k_block)
            used = site_bytes(program, r)
            sites = r.rect.width * r.rect.height
            stream.write(
                f"  sites {r.rect.text()} ({sites} site{'s' if sites > 1 else ''}, block {b['h']}x{b['w']}, "
                f"sub_block {b['sh']}x{b['sw']}): {used} of {budget} bytes ({100.0 * used / budget:.1f}%)\n"
            )
            offsets = r.offsets()
            for buf in memory_buffers(program):
                rows, cols = buf.page.resolve(b)
                depth = r.depth_of(buf, b)
                label = buf.label.data
                where = (
                    f"alias of {buf.alias_of.label.data}"
                    if buf.alias_of
                    else f"offset {offsets[label]:>8}"
                )
                stream.write(
                    f"    {label:<6} {where}  bytes {r.bytes_of(buf, b):>8}  depth {depth:>3}  page {rows}x{cols} tiles "
                    f"({rows * cols * buf.tile_bytes} bytes, {buf.storage})\n"
                )
    print_dram_map(module, target, stream)


def print_dram_map(module: ModuleOp, target, stream: IO[str]) -> None:
    """The DRAM layout link checked (passes.dram_layout.dram_layout): every tensor's offset and
    bytes, against the device memory (the target's, or dram-mem's)."""
    layout = dram_layout(module, target)
    used = layout[-1].offset + layout[-1].bytes if layout else 0
    capacity = target.dram_bytes
    share = f" of {capacity} bytes ({100.0 * used / capacity:.1f}%)" if capacity else ""
    stream.write(
        f"dram on {target.name}: {used} bytes{share}, {len(layout)} tensors, "
        f"interleaved over {target.dram_channels} channels, no tensor sharing space\n"
    )
    for t in layout:
        stream.write(f"  {t.name:<24} offset {t.offset:>14}  bytes {t.bytes:>14}  {t.storage}\n")
