"""Collective prices: what all_gather, reduce_scatter, all_reduce and all_to_all cost over one axis
of a mesh, from the mesh's numbers alone (:mod:`.mesh`).

Each price is a :class:`CollectivePrice`: the payload, nccl-tests' bus bytes, the bytes through the
busiest link in one direction, the links and hops, the latency and the time, ready for a report.

Decided here, and why:

- **Bytes.** ``nbytes`` is the un-sharded tensor T (all_gather's output, reduce_scatter's input,
  all_reduce's input and output), or for all_to_all the B bytes each chip sends and receives, as in
  nccl-tests and the CCL report [CCL]. Bus bytes follow nccl-tests' bus-bandwidth factors: all_reduce
  2(n-1)/n, the others (n-1)/n. The bytes that set the time are those through the busiest link
  [CCL]: on a line the end chip receives through one link everything it lacks (the bus bytes); a
  ring splits them over its two directions; all_to_all relays chunks through the chips between, so
  the middle link of a line carries floor(n/2) ceil(n/2) / n of B; a switch relays nothing.
- **Time** = phases x (call + hops x per-hop cost) + link bytes / (payload rate x links): the
  floor-plus-ceiling model of the CCL report, with the per-invocation and per-hop costs it measured
  step by step (:class:`~.mesh.Mesh`). all_reduce is a reduce_scatter followed by an all_gather over
  the same links [CCL], so it is two phases: its price is exactly their sum.
- **Hops** are the diameter a phase crosses: n - 1 on a line, floor(n/2) on a ring, one through a
  switch.
- **One chip** needs no collective: zero bytes, hops and time.

The model is checked against the CCL report's published times by bench/collectives.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from spatial_dialect.mesh.attrs import Collective

from .mesh import Axis, Mesh, Topology
from .spec import TargetError

KINDS: tuple[str, ...] = tuple(c.value for c in Collective)

# nccl-tests' bus-bandwidth factor per collective, as (numerator coefficient, phases): bus bytes =
# coefficient x (n - 1) / n x bytes.
_BUS_FACTOR = {
    Collective.ALL_GATHER: 1,
    Collective.REDUCE_SCATTER: 1,
    Collective.ALL_REDUCE: 2,
    Collective.ALL_TO_ALL: 1,
    # MPI's MAXLOC: an all_gather of each chip's (value, index) pairs, then a pick on every chip.
    Collective.ARGMAX_GATHER: 1,
}
_PHASES = {
    Collective.ALL_GATHER: 1,
    Collective.REDUCE_SCATTER: 1,
    Collective.ALL_REDUCE: 2,  # a reduce_scatter, then an all_gather
    Collective.ALL_TO_ALL: 1,
    Collective.ARGMAX_GATHER: 1,
}


@dataclass(frozen=True)
class CollectivePrice:
    """What one collective over one mesh axis moves and costs."""

    kind: Collective
    chips: int
    topology: Topology
    links: int
    nbytes: int
    """T, or all_to_all's B (module docstring)."""
    bus_bytes: float
    """nccl-tests' bus bytes: 2(n-1)/n x T for all_reduce, (n-1)/n x the payload for the others."""
    link_bytes: float
    """Bytes through the busiest link in one direction."""
    hops: int
    """The diameter one phase crosses."""
    phases: int
    latency_s: float
    """The part of the time that does not depend on the bytes."""
    time_s: float

    def why(self) -> str:
        """One line for a report: ``all_reduce of 524288 B over 2 chips (line, 1 link): ...``."""
        plural = "s" if self.links != 1 else ""
        return (
            f"{self.kind.value} of {self.nbytes} B over {self.chips} chips ({self.topology.value}, "
            f"{self.links} link{plural}): {self.bus_bytes:.0f} bus bytes, {self.link_bytes:.0f} B on "
            f"the busiest link, {self.hops} hop{'s' if self.hops != 1 else ''} x {self.phases} phase{'s' if self.phases != 1 else ''}, "
            f"{self.time_s * 1e6:.2f} us ({self.latency_s * 1e6:.2f} us latency)"
        )


def hops(axis: Axis) -> int:
    """The diameter of an axis: the hops the farthest chip's data crosses."""
    if axis.size == 1:
        return 0
    if axis.topology is Topology.LINE:
        return axis.size - 1
    if axis.topology is Topology.RING:
        return axis.size // 2
    return 1


def bottleneck_bytes(kind: Collective, axis: Axis, nbytes: int) -> float:
    """Bytes through the busiest link in one direction, before dividing over parallel links."""
    n = axis.size
    if kind is Collective.ALL_TO_ALL and axis.topology is not Topology.SWITCH:
        # Chunks for far chips relay through the ones between: the middle link carries every chunk
        # that crosses it [CCL].
        through = (n // 2) * ((n + 1) // 2) / n * nbytes
    else:
        through = _BUS_FACTOR[kind] * (n - 1) / n * nbytes
    # A ring's closing link gives each chip two links on the axis: each direction carries half.
    return through / 2 if axis.topology is Topology.RING else through


def price(
    kind: Collective | str, mesh: Mesh, nbytes: int, axis: int = 0, links: int | None = None
) -> CollectivePrice:
    """The price of ``kind`` over ``mesh``'s axis ``axis`` for ``nbytes`` (module docstring), over
    ``links`` of the axis's links (default: all of them; an op may open fewer)."""
    try:
        kind = Collective(kind)
    except ValueError:
        raise TargetError(f"unknown collective {kind!r} (known: {', '.join(KINDS)})") from None
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise TargetError(f"{kind.value}: bytes must be a non-negative integer, got {nbytes!r}")
    ax = mesh.axis(axis)
    if links is not None:
        if isinstance(links, bool) or not isinstance(links, int) or not 1 <= links <= ax.links:
            raise TargetError(
                f"{kind.value}: links must be 1 to the {ax.links} of mesh {mesh.name}'s axis {axis}, "
                f"got {links!r}"
            )
        ax = Axis(ax.size, ax.topology, links)
    n = ax.size
    if n == 1:
        return CollectivePrice(kind, 1, ax.topology, ax.links, nbytes, 0.0, 0.0, 0, 0, 0.0, 0.0)
    phases = _PHASES[kind]
    h = hops(ax)
    per_hop_s = (mesh.hop_ns + 2 * mesh.sync_hop_ns) * 1e-9
    latency = phases * (mesh.call_us * 1e-6 + h * per_hop_s)
    link_bytes = bottleneck_bytes(kind, ax, nbytes) / ax.links
    time = latency + link_bytes / mesh.payload_bytes_per_s()
    bus = _BUS_FACTOR[kind] * (n - 1) / n * nbytes
    return CollectivePrice(
        kind, n, ax.topology, ax.links, nbytes, bus, link_bytes, h, phases, latency, time
    )


def all_gather(mesh: Mesh, nbytes: int, axis: int = 0, links: int | None = None) -> CollectivePrice:
    return price(Collective.ALL_GATHER, mesh, nbytes, axis, links)


def reduce_scatter(
    mesh: Mesh, nbytes: int, axis: int = 0, links: int | None = None
) -> CollectivePrice:
    return price(Collective.REDUCE_SCATTER, mesh, nbytes, axis, links)


def all_reduce(mesh: Mesh, nbytes: int, axis: int = 0, links: int | None = None) -> CollectivePrice:
    return price(Collective.ALL_REDUCE, mesh, nbytes, axis, links)


def all_to_all(mesh: Mesh, nbytes: int, axis: int = 0, links: int | None = None) -> CollectivePrice:
    return price(Collective.ALL_TO_ALL, mesh, nbytes, axis, links)
