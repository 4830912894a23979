"""The DRAM bandwidth a plan's traffic sustains: ONE function, priced by every section kind.

The roofline divides a program's compulsory bytes by the chip's peak bandwidth (`dram_gbps`). No
kernel reaches that peak, and a plan whose traffic does not spread over the DRAM channels reaches
less still. The cost model therefore moves every byte at :func:`sustained_dram_bytes_per_cycle`,
the product of two factors:

* **the sustained fraction**, `Target.dram_efficiency`: what a tuned streaming reader reaches on
  the chip, with its public source per preset (tt-metal's "Saturating DRAM bandwidth" reports:
  267 of 288 GB/s on Wormhole, 500 of 512 on Blackhole);
* **the channels the traffic keeps busy**, out of `dram_channels`. Tensors are interleaved page
  by page over the channels (docs/passes.md#link-dram-layout-and-capacity), so a plan that moves
  fewer pages than there are channels touches only that many ("one bank's pages"). And a site
  takes DRAM data only through its movement engines' links (`link_bytes_per_cycle` each), so
  ``r`` sites reading take at most ``r`` times that ("few sites reading"): one Wormhole site,
  two engines on 32 B/cycle NoC links, drains 64 B/cycle, 2.7 of the 12 channels' 24 each.

Both penalties only lower the rate; with every channel busy a plan runs at the sustained
fraction of the peak. The GEMM model (:mod:`.cost`), the stream model (:mod:`.stream_cost`) and
the broadcast-or-replicate decision (:mod:`.sharing`) all call this function, so one rule prices
DRAM everywhere; the rooflines (`roofline_cycles`, `stream_roofline_cycles`) keep the peak, so a
plan's ratio to its roofline includes what the DRAM cannot deliver.
"""

from __future__ import annotations

import math

from .spec import Target


def site_ingest_bytes_per_cycle(target: Target) -> float:
    """The most DRAM data one site takes in per cycle: each of its movement engines reads over its
    own link (a Tensix site's two data-movement cores on NoC 0 and NoC 1), as the movement model
    charges them."""
    return float(target.link_bytes_per_cycle * max(1, target.movement_engines))


def sustained_dram_bytes_per_cycle(
    target: Target, readers: int | None = None, pages: int | None = None
) -> float:
    """Bytes per cycle the DRAM serves a plan whose traffic comes from ``readers`` sites and spans
    ``pages`` interleaved pages: the sustained fraction of the peak, over the channels its pages
    occupy (page i on channel i mod channels), and never more than the sites' links take
    (``readers`` x :func:`site_ingest_bytes_per_cycle`). ``None``: no limit of that kind
    (traffic spread over the whole chip)."""
    rate = target.dram_bytes_per_cycle
    if pages is not None and pages < target.dram_channels:
        rate = rate * max(1, pages) / target.dram_channels
    if readers is not None:
        rate = min(rate, max(1, readers) * site_ingest_bytes_per_cycle(target))
    return target.dram_efficiency * rate


def dram_transfer_cycles(
    target: Target, nbytes: float, readers: int | None = None, pages: int | None = None
) -> float:
    """Cycles to move ``nbytes`` through the DRAM at :func:`sustained_dram_bytes_per_cycle`."""
    if nbytes <= 0:
        return 0.0
    return nbytes / sustained_dram_bytes_per_cycle(target, readers, pages)


def dram_cycles(target: Target, nbytes: int, rate: float | None = None) -> int:
    """Whole cycles to move ``nbytes`` at ``rate`` bytes per cycle (a plan's sustained rate), or
    spread over every channel when no rate is given: share_operand's currency for the DRAM reads a
    broadcast saves."""
    if nbytes <= 0:
        return 0
    return math.ceil(nbytes / (rate or sustained_dram_bytes_per_cycle(target)))
