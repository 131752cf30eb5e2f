"""Warnings an answer carries beside its checks: RAID 5 over drives so large that an unrecoverable
read error during a rebuild is likely (``raid5_large_drive_warning``).

A RAID 5 group that loses a member rebuilds by reading every surviving member end to end, with no
redundancy left; one unrecoverable read error (URE) then leaves a stripe unreadable (Linux md
marks the sector bad and finishes; some controllers abort the rebuild). The chance grows with the
bytes read: at a nearline disk's 1 error in 10^15 bits, reading 3 x 8 TB hits one in 17.5 % of
rebuilds. The flag is read from the durability model's own figure, P(some data unreadable after a
rebuild over the service life) (``Evaluation.unreadable_after_rebuild_probability``), not from the
drive size alone: a large drive with a low UBER, or a short service life, is not flagged.
"""

from __future__ import annotations

from .candidates import candidate_layout
from .catalog import Catalog, Drive
from .evaluation import Evaluation
from .layout import LayoutKind
from .plan_request import PlanRequest, request_catalog
from .reliability import ure_probability

# P(some data unreadable after a rebuild over the service life) at or above which a RAID 5
# candidate is flagged: one array in a thousand (assumed; an order of magnitude above the default
# durability floor on losing the array, 1e-4, because the loss is a stripe, not the array).
RAID5_UNREADABLE_FLAG_PROBABILITY = 1e-3


def raid5_large_drive_warning(e: Evaluation, drive: Drive, *, service_life_years: int,
                              threshold: float = RAID5_UNREADABLE_FLAG_PROBABILITY) -> str | None:
    """The warning for a RAID 5 candidate whose P(unreadable data after a rebuild) over the
    service life is at least ``threshold``, with the numbers it rests on (drive size, bytes one
    rebuild reads, the URE chance per rebuild, both probabilities); None otherwise."""
    layout = candidate_layout(e.candidate)
    if layout.kind is not LayoutKind.RAID5 or not drive.uber:
        return None
    p = e.unreadable_after_rebuild_probability
    if not p >= threshold:
        return None
    member_bytes = drive.capacity_bytes * (1.0 - e.candidate.over_provisioning_fraction)
    read_bytes = (layout.group_width - 1) * member_bytes
    per_rebuild = ure_probability(uber=drive.uber, read_bytes=read_bytes)
    return (f"RAID 5 over {member_bytes / 1e12:.3g} TB drives: a rebuild reads the {layout.group_width - 1} surviving members "
            f"({read_bytes / 1e12:.3g} TB) with no redundancy left, and at {drive.uber:.2g} unrecoverable errors per bit read "
            f"{per_rebuild:.1%} of rebuilds meet one; P(some data unreadable after a rebuild over {service_life_years} years) is "
            f"{p:.2g} (flagged at >= {threshold:.2g}), beside P(losing the array) {e.array_loss_probability:.2g}. "
            "RAID 6, or RAID 5 in narrower groups, keeps the rebuild readable.")


def answer_warnings(req: PlanRequest, e: Evaluation, catalog: Catalog | None = None) -> tuple[str, ...]:
    """Every warning for one evaluated candidate of the request (the recommendation's
    ``warnings``; its explanation ends with them)."""
    drive = request_catalog(req, catalog).get(e.candidate.drive_model)
    flag = raid5_large_drive_warning(e, drive, service_life_years=req.service_life_years)
    return (flag,) if flag else ()
