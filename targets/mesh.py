"""Meshes of chips: several chips of one kind joined by links, as data.

A :class:`Mesh` is what a deployment over several chips may know about the machine, and nothing it
may decide: its shape, per axis how the chips are joined (a line, a ring, or a switch) and over how
many links, the links' speed and latency, the fixed cost of one collective call, and each chip's
:class:`~.spec.Target`. The collective prices (:mod:`.collectives`) are functions of these numbers
only, so every price traces back to a number written here, and each number to a public source
(the bracketed names below, listed in docs/targets.md#meshes-of-chips).

Decided here, and why:

- **One kind of chip, one kind of link per mesh.** Every system described (N300, T3K, Galaxy, a p150
  QuietBox, an HGX board) is so; an axis differs from another only in its topology and its links.
- **A collective's latency is the CCL report's measured step costs, not a fit.** One call pays a
  fixed cost (launch, fabric connections, first packet, close, and the two barriers' bases,
  ``call_us``) and, per hop of the diameter, the forwarding latency ``hop_ns`` plus the entry and
  exit barriers' cost per hop (``2 x sync_hop_ns``) [CCL-STEPS]. The report's fitted kernel times
  are then a check of the model (bench/collectives.py), not its input.
- **Bandwidth is the line rate times the fabric's payload efficiency** (headers, FEC, CRC: about
  96% on Tenstorrent ethernet [CCL]). Blackhole links are rated 50 GB/s but run at 25 GB/s today
  [CCL], so the presets price what runs.
- **A switch** (NVLink through NVSwitch) joins every chip to every other in one hop: no relay and
  no line/ring diameter; a chip's links all go to the switch.
- **A mesh is not a chip:** ``load_target`` refuses a mesh by name or file with
  :class:`MeshNotAChip`, naming the mesh and its chip, rather than compiling for one chip
  silently; a deployment over a mesh preset is compiled by ``spatial-pipeline{target=MESH}``
  (the tensor-parallel pass, then link for the mesh's chip: docs/mesh.md).

Sources:

[CCL]       tt-metal tech_reports/CCLs/CCL_bandwidth.md: line rate per link per direction, Wormhole
            100 Gbps = 12.5 GB/s, Blackhole 400 Gbps = 50 GB/s (run at 25 GB/s today, "Blackhole
            links currently run at half their rated speed"); payload efficiency "near 96%"; per-hop
            forwarding latency (1D fabric) 711 ns Wormhole, 515 ns Blackhole; bottleneck bytes per
            collective and topology; a ring closes only across all eight LoudBox devices.
[CCL-STEPS] the same report at commit 5ac66c4a, "Per-invocation cost": launch 1.2 us (BH 1.4), open
            connections 0.8 (0.7), entry barrier 0.7 + 0.95 per hop (0.3 + 0.64), first packet 1.0
            (0.8), exit wait 0.7 + 0.95 per hop (0.3 + 0.64), close 0.4 (0.5) us.
[LLMS]      tt-metal tech_reports/LLMs/llms.md: section 3.3.1, all_gather's supported number of links,
            "N300, T3000: 1", "TG: 4 along cluster_axis=0, 3 along cluster_axis=1"; section 2.5.7.1,
            n300 and T3000 are 1D meshes and TG a 2D (8, 4) one. (The same document's Llama code
            all-reduces on TG over num_links=2: an op may use fewer links than the axis has, which
            ``collectives.price(..., links=)`` prices.)
[NVLINK]    NVIDIA H100 Tensor Core GPU Architecture whitepaper: NVLink 4, 18 links per GPU, 900 GB/s
            total bidirectional (450 GB/s each way, 25 GB/s per link per direction); HGX H100/H200
            8-GPU boards join the GPUs through NVSwitch. H200 keeps H100's NVLink 4.
"""

from __future__ import annotations

from dataclasses import dataclass

from spatial_dialect.mesh.attrs import TOPOLOGIES, Topology

from .presets import PRESETS
from .spec import Target, TargetError


class MeshNotAChip(TargetError):
    """A mesh of chips where a single chip is needed (load_target): a mesh is compiled for as a
    deployment (spatial-pipeline{target=MESH}), never as one of its chips silently. A TargetError,
    so every CLI that loads targets reports it as one line and exits 1."""


@dataclass(frozen=True)
class Axis:
    """One axis of a mesh: how many chips, how they are joined, and over how many links per
    direction between neighbours (the weakest hop's count: a collective can use no more)."""

    size: int
    topology: Topology
    links: int

    def describe(self) -> str:
        plural = "s" if self.links != 1 else ""
        return f"{self.size} in a {self.topology.value} of {self.links} link{plural}"


@dataclass(frozen=True)
class Mesh:
    """Chips of one kind (``chip``) joined along ``axes`` by links of one kind."""

    name: str
    description: str
    chip: Target
    axes: tuple[Axis, ...]
    link_gbps: float
    """Line rate of one link in one direction, GB/s (10^9 bytes per second)."""
    link_efficiency: float
    """The fraction of the line rate that carries payload (framing, FEC, CRC)."""
    hop_ns: float
    """Forwarding latency of one hop, ns."""
    sync_hop_ns: float
    """What one barrier (a collective has an entry and an exit one) costs per hop it crosses, ns."""
    call_us: float
    """The fixed cost of one collective call, us: launch, connections, first packet, close, and the
    two barriers' bases."""

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.size for a in self.axes)

    @property
    def chips(self) -> int:
        n = 1
        for a in self.axes:
            n *= a.size
        return n

    def axis(self, index: int) -> Axis:
        if not 0 <= index < len(self.axes):
            raise TargetError(
                f"mesh {self.name}: axis {index} does not exist (the mesh has {len(self.axes)} "
                f"axes, shape {'x'.join(map(str, self.shape))})"
            )
        return self.axes[index]

    def payload_bytes_per_s(self) -> float:
        """Payload bytes one link carries per second in one direction."""
        return self.link_gbps * 1e9 * self.link_efficiency

    def describe(self) -> str:
        """One line: ``2 wormhole_n150 chips, 2 in a line of 1 link``."""
        axes = " x ".join(a.describe() for a in self.axes)
        return f"{self.chips} {self.chip.name} chips, {axes}"

    def not_a_chip(self, asked: str) -> MeshNotAChip:
        """The refusal for a mesh given where one chip is needed."""
        deploy = (
            f"spatial-pipeline{{target={self.name}}} (tensor-parallel, then link)"
            if MESH_PRESETS.get(self.name) is self
            else f"spatial-pipeline{{target=PRESET}} on a mesh preset ({', '.join(MESH_PRESETS)})"
        )
        return MeshNotAChip(
            f"target {asked!r} is a mesh of {self.describe()}, not one chip: compile a deployment "
            f"over it with {deploy}, or use one chip's target ({self.chip.name})"
        )


# Link constants per kind of link, with their sources (module docstring).
_WH_ETH = {  # Wormhole ethernet, 1D fabric [CCL] [CCL-STEPS]
    "link_gbps": 12.5,
    "link_efficiency": 0.96,
    "hop_ns": 711.0,
    "sync_hop_ns": 950.0,
    "call_us": 1.2 + 0.8 + 1.0 + 0.4 + 0.7 + 0.7,
}
_BH_ETH = {  # Blackhole ethernet at today's 25 GB/s, 1D fabric [CCL] [CCL-STEPS]
    "link_gbps": 25.0,
    "link_efficiency": 0.96,
    "hop_ns": 515.0,
    "sync_hop_ns": 640.0,
    "call_us": 1.4 + 0.7 + 0.8 + 0.5 + 0.3 + 0.3,
}
# NVLink 4 through NVSwitch [NVLINK]: 25 GB/s per link per direction, 18 links. Latency and payload
# efficiency: no public source found; assumed (docs/targets.md#meshes-of-chips says so): a 1 us hop
# through the switch, 5 us fixed per call, 90% of the line rate.
_NVLINK4 = {
    "link_gbps": 25.0,
    "link_efficiency": 0.90,
    "hop_ns": 1000.0,
    "sync_hop_ns": 0.0,
    "call_us": 5.0,
}


def _mesh(name: str, description: str, chip: str, axes, link: dict) -> Mesh:
    return Mesh(
        name=name,
        description=description,
        chip=PRESETS[chip],
        axes=tuple(Axis(size, Topology(topo), links) for size, topo, links in axes),
        **link,
    )


MESH_PRESETS: dict[str, Mesh] = {
    m.name: m
    for m in (
        # One user ethernet link between the card's two chips [LLMS] (num_links=1).
        _mesh(
            "n300",
            "Wormhole n300: two chips on one card",
            "wormhole_n150",
            [(2, "line", 1)],
            _WH_ETH,
        ),
        # Four n300s as a 2x4 mesh; 1 link [LLMS]. The 1x8 ring closes only across all eight chips
        # [CCL], which is not an axis of the 2x4 mesh: both axes are lines.
        _mesh(
            "t3k",
            "Wormhole T3K (QuietBox/LoudBox): four n300s as a 2x4 mesh",
            "wormhole_n150",
            [(2, "line", 1), (4, "line", 1)],
            _WH_ETH,
        ),
        # TG: an (8, 4) mesh (tt-metal's MeshShape, so axis i is its cluster_axis i); all_gather
        # supports 4 links along cluster_axis 0 and 3 along cluster_axis 1 [LLMS 3.3.1]. Whether
        # either axis closes into a ring on Wormhole was not found: lines (the dearer assumption).
        _mesh(
            "galaxy",
            "Wormhole Galaxy (TG): 32 chips as an 8x4 mesh",
            "wormhole_n150",
            [(8, "line", 4), (4, "line", 3)],
            _WH_ETH,
        ),
        # A ring of four p150s (issue 23). Links between neighbouring cards: not found; one assumed.
        _mesh(
            "p150x4",
            "Blackhole p150 QuietBox: a ring of four chips",
            "blackhole_p150",
            [(4, "ring", 1)],
            _BH_ETH,
        ),
        _mesh("h100x2", "two H100 SXM5 joined by NVLink 4", "h100", [(2, "switch", 18)], _NVLINK4),
        _mesh(
            "h100x8",
            "HGX H100: eight H100 SXM5 through NVSwitch",
            "h100",
            [(8, "switch", 18)],
            _NVLINK4,
        ),
        _mesh(
            "h200x8",
            "HGX H200: eight H200 SXM through NVSwitch",
            "h200",
            [(8, "switch", 18)],
            _NVLINK4,
        ),
    )
}

# The fields of a [mesh] table, with their kinds and ranges (docs/targets.md#validation). Wide on
# purpose: a what-if machine of 10^4 chips or links ten times any shipping one is fine; a mesh of 10^8
# chips or a link of a petabyte per second is a typo.
MESH_FIELDS: dict[str, tuple[str, bool]] = {
    "shape": ("int_list", True),
    "topology": ("topology_list", True),
    "links": ("int_list", True),
    "link_gbps": ("num", True),
    "link_efficiency": ("num", False),
    "hop_ns": ("num", True),
    "sync_hop_ns": ("num", False),
    "call_us": ("num", False),
}
MESH_RANGES: dict[str, tuple[float, float]] = {
    "shape": (1, 4096),
    "links": (1, 64),
    "link_gbps": (0.01, 100_000.0),
    "link_efficiency": (0.05, 1.0),
    "hop_ns": (0.0, 1e7),
    "sync_hop_ns": (0.0, 1e7),
    "call_us": (0.0, 1e6),
}
MESH_DEFAULTS = {"link_efficiency": 1.0, "sync_hop_ns": 0.0, "call_us": 0.0}
MAX_MESH_AXES = 4
MAX_MESH_CHIPS = 1 << 16


def mesh_from_table(
    table: object, *, chip: Target, where: str, name: str, description: str = ""
) -> Mesh:
    """Validate a TOML ``[mesh]`` table into a Mesh of ``chip``; every refusal names the field."""
    if not isinstance(table, dict):
        raise TargetError(f"{where}: field 'mesh': expected a table [mesh], got {table!r}")
    unknown = sorted(set(table) - set(MESH_FIELDS))
    if unknown:
        raise TargetError(
            f"{where}: field 'mesh.{unknown[0]}' is not a mesh field (known: {', '.join(MESH_FIELDS)})"
        )
    values: dict[str, object] = {}
    for field, (kind, required) in MESH_FIELDS.items():
        if field not in table:
            if required:
                raise TargetError(f"{where}: missing field 'mesh.{field}'")
            values[field] = MESH_DEFAULTS[field]
            continue
        values[field] = _check(where, field, kind, table[field])
    shape, topology, links = values["shape"], values["topology"], values["links"]
    assert isinstance(shape, list) and isinstance(topology, list) and isinstance(links, list)
    if len(shape) > MAX_MESH_AXES:
        raise TargetError(
            f"{where}: field 'mesh.shape': {len(shape)} axes, more than {MAX_MESH_AXES}"
        )
    for field, per_axis in (("topology", topology), ("links", links)):
        if len(per_axis) != len(shape):
            raise TargetError(
                f"{where}: field 'mesh.{field}': {len(per_axis)} entries for a mesh of {len(shape)} "
                f"axes (shape {shape}); give one per axis"
            )
    chips = 1
    for size in shape:
        chips *= size
    if chips > MAX_MESH_CHIPS:
        raise TargetError(f"{where}: field 'mesh.shape': {chips} chips, more than {MAX_MESH_CHIPS}")
    return Mesh(
        name=name,
        description=description,
        chip=chip,
        axes=tuple(Axis(s, Topology(t), n) for s, t, n in zip(shape, topology, links, strict=True)),
        **{f: float(values[f]) for f in MESH_RANGES if f not in ("shape", "links")},  # type: ignore[arg-type]
    )


def _check(where: str, field: str, kind: str, v: object) -> object:
    """One [mesh] field checked for its kind and range."""
    lo, hi = MESH_RANGES.get(field, (0, 0))
    if kind == "topology_list":
        if not isinstance(v, list) or not v:
            raise TargetError(
                f"{where}: field 'mesh.topology': expected a list of {', '.join(TOPOLOGIES)} (one per "
                f"axis), got {v!r}"
            )
        for i, t in enumerate(v):
            if t not in TOPOLOGIES:
                raise TargetError(
                    f"{where}: field 'mesh.topology[{i}]': expected one of {', '.join(TOPOLOGIES)}, got {t!r}"
                )
        return list(v)
    if kind == "int_list":
        if not isinstance(v, list) or not v:
            raise TargetError(
                f"{where}: field 'mesh.{field}': expected a list of positive integers (one per axis), got {v!r}"
            )
        for i, n in enumerate(v):
            if not isinstance(n, int) or isinstance(n, bool) or not lo <= n <= hi:
                raise TargetError(
                    f"{where}: field 'mesh.{field}[{i}]': expected an integer in [{lo:g}, {hi:g}], got {n!r}"
                )
        return list(v)
    if isinstance(v, bool) or not isinstance(v, int | float) or v != v or not lo <= v <= hi:
        raise TargetError(
            f"{where}: field 'mesh.{field}': expected a number in [{lo:g}, {hi:g}], got {v!r}"
        )
    return v
