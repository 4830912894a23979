"""The typed refusals of the sp dialect and of the passes that build it.

Every refusal is a DiagnosticException subclass that carries its numbers as fields and says them
in its message, so it reaches the user as a diagnostic at the op (the rewrite walker and
`op.emit_error` attach the op) and never as a traceback. A violation the verifier finds is a
VerifyException; a pass that refuses its input raises a PassFailedException. The violations a
pass can also meet on its way (a site over its budget, an engine the site lacks) are both, so one
class says one fact wherever it is found.
"""

from __future__ import annotations

import re

from xdsl.utils.exceptions import DiagnosticException, PassFailedException, VerifyException


class SpatialVerifyError(VerifyException):
    """An sp program that breaks an invariant of the IR or of its phase."""


class SpatialPassError(PassFailedException):
    """A pass that refuses its input."""


class InternalError(DiagnosticException):
    """What a pass built failing the sp verifier: a bug of the compiler, never a fault of the
    program, so it is told apart from a refusal (docs/passes.md#shared-the-compiler-never-refuses-its-own-output).

    Every program the tg verifier accepts either compiles or is refused by a named rule of link or
    of the target before sp is built; an sp verifier error on a pass's output therefore means the
    pass broke an sp invariant. It keeps the ops the verifier named (`spatial_ops`), so the
    drivers still point at the tg op whose section is wrong."""

    def __init__(self, after: str, error: VerifyException):
        self.after, self.error = after, error
        self.spatial_ops = list(getattr(error, "spatial_ops", []))
        found = re.search(r"Operation does not verify: (.*)", str(error))
        message = found.group(1) if found else (str(error).strip().splitlines() or [""])[0]
        super().__init__(
            f"internal error: the sp program after {after} fails the sp verifier: {message} "
            "(a compiler bug, not a refusal of the program; please report it)"
        )


class _Named(SpatialPassError):
    """A refusal whose message starts with its name, as the typed refusals with numbers do."""

    def __init__(self, message: str):
        super().__init__(f"{type(self).__name__}: {message}")


class PhaseViolation(SpatialVerifyError):
    """A program that lacks what its phase promises, or holds what a later phase adds."""


class UnresolvedReference(SpatialVerifyError):
    """A tensor, buffer or group named by a stage that the program does not declare."""


class TypeMismatch(SpatialVerifyError):
    """A stage whose buffers and tensors disagree on element type or storage format."""


class AccessOutOfBounds(SpatialVerifyError):
    """An access pattern that reaches a tile outside its tensor (docs/passes.md#place-boundary-sites-cover-their-real-block: a wrong stride)."""

    def __init__(self, stage: str, tensor: str, tile: tuple[int, int], tiles: tuple[int, int]):
        self.stage, self.tensor, self.tile, self.tiles = stage, tensor, tile, tiles
        super().__init__(
            f"{stage} reaches tile ({tile[0]}, {tile[1]}) of @{tensor}, which has "
            f"{tiles[0]}x{tiles[1]} tiles"
        )


class WorkNotCovered(SpatialVerifyError):
    """Site ranges that leave a work item unassigned, assign it twice, or give it a wrong block."""


class OverlappingOffsets(SpatialVerifyError):
    """Two buffers of one site whose memory overlaps (docs/passes.md#size-first-fit-layout-groups-first)."""

    def __init__(
        self,
        sites: str,
        first: str,
        first_span: tuple[int, int],
        second: str,
        second_span: tuple[int, int],
    ):
        self.sites, self.first, self.second = sites, first, second
        super().__init__(
            f"sites {sites}: buffer {first} [{first_span[0]}, {first_span[1]}) overlaps "
            f"{second} [{second_span[0]}, {second_span[1]})"
        )


class FixedDepthChanged(SpatialVerifyError):
    """A range's memory map giving its own depth to a buffer no load fills.

    Only an operand FIFO's depth is a rate choice, made per range from its page
    (docs/passes.md#size-depth-per-site-range): an output FIFO's producer is the compute
    engine, which never runs ahead, and a spill holds one page per sub-block."""

    def __init__(self, sites: str, buffer: str, depth: int, own: int):
        self.sites, self.buffer, self.depth, self.own = sites, buffer, depth, own
        super().__init__(
            f"sites {sites}: buffer {buffer} has depth {depth} here but {own} of its own; only "
            "an operand FIFO (one a load fills) takes a depth per range"
        )


class GroupMemberMismatch(SpatialVerifyError):
    """Members of one multicast group that disagree on depth, page size or offset, or on the
    blocks they are sent.

    A multicast lands at ONE local address on every receiver (docs/passes.md#size-group-members-share-one-depth), so the members of a
    group are one buffer replicated across a rectangle; and the sender sends each member the
    blocks of its own items, so a member's t-th item must read what the sender's t-th reads.
    """

    def __init__(
        self,
        group: str,
        what: str,
        site_a: tuple[int, int],
        a: int,
        site_b: tuple[int, int],
        b: int,
    ):
        self.group, self.what = group, what
        super().__init__(
            f"multicast group @{group}: member at site ({site_a[0]}, {site_a[1]}) has {what} {a} "
            f"but the member at ({site_b[0]}, {site_b[1]}) has {b}; a multicast lands at one "
            "local address, so members must agree on depth, page size and offset (and the sender "
            "sends each member the blocks its items read)"
        )


class LocalMemExceeded(SpatialVerifyError, SpatialPassError):
    """A site whose buffers need more local memory than its budget."""

    def __init__(self, site: tuple[int, int], needed: int, budget: int):
        self.site, self.needed, self.budget = site, needed, budget
        super().__init__(
            f"LocalMemExceeded: site ({site[0]}, {site[1]}) needs {needed} bytes of local memory "
            f"but its budget is {budget} bytes"
        )


class AccTilesExceeded(SpatialVerifyError, SpatialPassError):
    """A compute block that holds more tiles in the accumulator than the target has."""

    def __init__(self, needed: int, available: int, acc: str):
        self.needed, self.available, self.acc = needed, available, acc
        super().__init__(
            f"AccTilesExceeded: the block holds {needed} {acc} tiles in the accumulator but the "
            f"target has {available}"
        )


class TooManyEngines(SpatialVerifyError, SpatialPassError):
    """A stage on an engine (or NoC) the site does not have."""

    def __init__(self, stage: str, needed: str, available: int, what: str = "movement engines"):
        self.stage, self.needed, self.available = stage, needed, available
        super().__init__(
            f"TooManyEngines: {stage} needs {needed} but a site has {available} {what}"
        )


class WrongPhase(SpatialPassError):
    """A pass run on a program in a phase it does not take."""

    def __init__(self, pass_name: str, expected: str, found: str):
        self.pass_name, self.expected, self.found = pass_name, expected, found
        super().__init__(
            f"WrongPhase: {pass_name} takes a program in phase {expected}, this one is {found}"
        )


class NotLowered(_Named):
    """An op the link has no section form for."""


class Disagreement(_Named):
    """Two functions of one module (one deployment) that declare the tensor they share by name
    with different types (docs/passes.md#link-one-deployment-agreed-layouts)."""


class UnsupportedDatatype(_Named):
    """An op whose element type (or storage format) the target does not compute in."""


class NoLegalPlan(_Named):
    """A section for which no block plan fits the target."""


class InvalidTarget(_Named):
    """A target that cannot be used: unknown or unreadable, another than the one the module was
    linked for, or an option (grid, budget, fidelity) it cannot take."""
