"""Collective prices: exact values worked by hand from the published formulas, and properties.

The hand values use the CCL report's numbers directly (tt-metal tech_reports/CCLs/CCL_bandwidth.md):
Wormhole ethernet 12.5 GB/s per link per direction at 96% payload = 12.0 GB/s = 12,000 bytes per us;
one call 1.2 + 0.8 + 1.0 + 0.4 + 0.7 + 0.7 = 4.8 us; per hop 0.711 + 2 x 0.95 = 2.611 us;
bus bytes 2(n-1)/n (all_reduce), (n-1)/n (the others); all_to_all through a line's middle link
floor(n/2) ceil(n/2) / n; a ring halves the bytes per direction and has diameter floor(n/2).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatial_dialect.targets import MESH_PRESETS, Axis, Mesh, TargetError, Topology, load_mesh
from spatial_dialect.targets.collectives import (
    KINDS,
    all_gather,
    all_reduce,
    all_to_all,
    price,
    reduce_scatter,
)

RING8 = (
    Path(__file__).resolve().parents[2] / "examples" / "targets" / "meshes" / "wormhole_ring8.toml"
)


def us(p) -> float:
    return p.time_s * 1e6


def test_n300_all_reduce_of_512_kib():
    # 2 phases x (4.8 + 1 hop x 2.611) = 14.822 us; 2(1)/2 x 524288 = 524288 B / 12,000 B/us.
    p = all_reduce(MESH_PRESETS["n300"], 524288)
    assert (p.bus_bytes, p.link_bytes, p.hops, p.phases, p.links) == (524288, 524288, 1, 2, 1)
    assert us(p) == pytest.approx(14.822 + 524288 / 12_000, rel=1e-9)
    assert us(p) == pytest.approx(58.512667, rel=1e-6)
    assert p.latency_s * 1e6 == pytest.approx(14.822, rel=1e-9)


def test_t3k_all_gather_along_its_axis_of_four():
    # 3/4 x 16 MiB = 12582912 B; 4.8 + 3 x 2.611 = 12.633 us; 12582912 / 12,000 = 1048.576 us.
    p = all_gather(MESH_PRESETS["t3k"], 16 << 20, axis=1)
    assert (p.chips, p.bus_bytes, p.link_bytes, p.hops) == (4, 12582912, 12582912, 3)
    assert us(p) == pytest.approx(1061.209, rel=1e-9)


def test_t3k_all_to_all_relays_through_the_middle_link():
    # floor(4/2) ceil(4/2) / 4 = 1 x 4 MiB through the middle link; bus bytes 3/4 x 4 MiB.
    p = all_to_all(MESH_PRESETS["t3k"], 4 << 20, axis=1)
    assert (p.bus_bytes, p.link_bytes) == (3145728, 4194304)
    assert us(p) == pytest.approx(12.633 + 4194304 / 12_000, rel=1e-9)
    assert us(p) == pytest.approx(362.158333, rel=1e-6)


def test_galaxy_reduce_scatter_over_its_four_links_or_fewer():
    # 7/8 x 8 MiB = 7340032 B over 4 links: 1835008 B each; 4.8 + 7 x 2.611 = 23.077 us.
    p = reduce_scatter(MESH_PRESETS["galaxy"], 8 << 20, axis=0)
    assert (p.chips, p.links, p.link_bytes, p.hops) == (8, 4, 1835008, 7)
    assert us(p) == pytest.approx(23.077 + 1835008 / 12_000, rel=1e-9)
    assert us(p) == pytest.approx(175.994333, rel=1e-6)
    # Over 2 of them, as tt-metal's Llama on TG all-reduces: 3670016 B a link.
    two = reduce_scatter(MESH_PRESETS["galaxy"], 8 << 20, axis=0, links=2)
    assert (two.links, two.link_bytes) == (2, 3670016)
    assert us(two) == pytest.approx(328.911667, rel=1e-6)


def test_a_ring_of_eight_from_toml():
    # 2 x 7/8 x 1 MiB = 1835008 bus bytes, half per direction = 917504; diameter 4;
    # 2 x (4.8 + 4 x 2.611) = 30.488 us; 917504 / 12,000 = 76.458667 us.
    p = all_reduce(load_mesh(RING8), 1 << 20)
    assert (p.bus_bytes, p.link_bytes, p.hops) == (1835008, 917504, 4)
    assert us(p) == pytest.approx(106.946667, rel=1e-6)


def test_nvlink_switch():
    # 18 links x 25 GB/s x 0.9 = 405 GB/s a GPU; 2 x 7/8 x 1 GiB = 1879048192 B; one hop;
    # 2 x (5 + 1) = 12 us.
    p = all_reduce(MESH_PRESETS["h200x8"], 1 << 30)
    assert (p.hops, p.links, p.bus_bytes) == (1, 18, 1879048192)
    assert us(p) == pytest.approx(12 + 1879048192 / 405_000, rel=1e-9)


def test_one_chip_needs_no_collective():
    one = Mesh(
        "one", "", MESH_PRESETS["n300"].chip, (Axis(1, Topology.LINE, 1),), 12.5, 1.0, 711, 0, 4.8
    )
    for kind in KINDS:
        p = price(kind, one, 1 << 20)
        assert (p.bus_bytes, p.link_bytes, p.hops, p.time_s) == (0, 0, 0, 0)


def test_refusals_name_what_is_wrong():
    with pytest.raises(TargetError, match="unknown collective 'broadcast'"):
        price("broadcast", MESH_PRESETS["n300"], 1024)
    with pytest.raises(TargetError, match="axis 2 does not exist"):
        all_gather(MESH_PRESETS["t3k"], 1024, axis=2)
    with pytest.raises(
        TargetError, match="links must be 1 to the 4 of mesh galaxy's axis 0, got 5"
    ):
        all_gather(MESH_PRESETS["galaxy"], 1024, links=5)
    with pytest.raises(TargetError, match="non-negative integer, got -1"):
        all_gather(MESH_PRESETS["n300"], -1)


def test_why_names_bytes_links_hops_and_time():
    why = all_reduce(MESH_PRESETS["n300"], 524288).why()
    assert why == (
        "all_reduce of 524288 B over 2 chips (line, 1 link): 524288 bus bytes, 524288 B on the "
        "busiest link, 1 hop x 2 phases, 58.51 us (14.82 us latency)"
    )


def axes_meshes():
    """A mesh of one axis with any size, topology and links, from the Wormhole link constants."""
    base = MESH_PRESETS["n300"]
    return st.builds(
        lambda n, topo, links: Mesh(
            "m",
            "",
            base.chip,
            (Axis(n, topo, links),),
            base.link_gbps,
            base.link_efficiency,
            base.hop_ns,
            base.sync_hop_ns,
            base.call_us,
        ),
        st.integers(1, 64),
        st.sampled_from(list(Topology)),
        st.integers(1, 8),
    )


def with_axis(mesh: Mesh, **change) -> Mesh:
    a = mesh.axes[0]
    axis = Axis(
        change.get("size", a.size), change.get("topology", a.topology), change.get("links", a.links)
    )
    return Mesh(
        mesh.name,
        "",
        mesh.chip,
        (axis,),
        mesh.link_gbps,
        mesh.link_efficiency,
        mesh.hop_ns,
        mesh.sync_hop_ns,
        mesh.call_us,
    )


sizes = st.integers(0, 1 << 34)


@settings(max_examples=200, deadline=None)
@given(axes_meshes(), st.sampled_from(KINDS), sizes, sizes)
def test_monotone_in_bytes(mesh, kind, a, b):
    lo, hi = sorted((a, b))
    assert price(kind, mesh, lo).time_s <= price(kind, mesh, hi).time_s


@settings(max_examples=200, deadline=None)
@given(axes_meshes(), st.sampled_from(KINDS), sizes)
def test_monotone_in_chips(mesh, kind, nbytes):
    n = mesh.axes[0].size
    assert (
        price(kind, mesh, nbytes).time_s <= price(kind, with_axis(mesh, size=n + 1), nbytes).time_s
    )


@settings(max_examples=200, deadline=None)
@given(axes_meshes(), st.sampled_from(KINDS), sizes)
def test_a_ring_is_never_dearer_than_a_line_nor_more_links(mesh, kind, nbytes):
    line = price(kind, with_axis(mesh, topology=Topology.LINE), nbytes)
    ring = price(kind, with_axis(mesh, topology=Topology.RING), nbytes)
    assert ring.time_s <= line.time_s and ring.hops <= line.hops
    more = price(kind, with_axis(mesh, links=mesh.axes[0].links + 1), nbytes)
    assert more.time_s <= price(kind, mesh, nbytes).time_s


@settings(max_examples=200, deadline=None)
@given(axes_meshes(), sizes)
def test_formula_identities(mesh, nbytes):
    n = mesh.axes[0].size
    ag, rs, ar = all_gather(mesh, nbytes), reduce_scatter(mesh, nbytes), all_reduce(mesh, nbytes)
    # all_reduce is a reduce_scatter then an all_gather over the same links.
    assert ar.time_s == pytest.approx(rs.time_s + ag.time_s, rel=1e-12, abs=1e-18)
    assert ar.bus_bytes == pytest.approx(2 * ag.bus_bytes) and ag.bus_bytes == rs.bus_bytes
    # nccl-tests' bus bytes.
    assert ag.bus_bytes == pytest.approx((n - 1) / n * nbytes)
    assert ar.bus_bytes == pytest.approx(2 * (n - 1) / n * nbytes)
    # The bytes term is link bytes over the payload rate; the rest is latency.
    for p in (ag, rs, ar, all_to_all(mesh, nbytes)):
        assert p.time_s == pytest.approx(
            p.latency_s + p.link_bytes / mesh.payload_bytes_per_s(), rel=1e-12
        )
    # A line's end link carries all the bus bytes; a ring's directions half each.
    a = mesh.axes[0]
    split = {Topology.RING: 2}.get(a.topology, 1) * a.links
    assert ag.link_bytes == pytest.approx(ag.bus_bytes / split)
    a2a = all_to_all(mesh, nbytes)
    if a.topology is not Topology.SWITCH:
        assert a2a.link_bytes == pytest.approx(
            math.floor(n / 2) * math.ceil(n / 2) / n * nbytes / split
        )
