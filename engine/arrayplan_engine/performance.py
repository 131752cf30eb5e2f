"""The planner's pruning screen: an upper bound on the host IOPS the array simulation can reach.

Every figure of an answer comes from the array simulation (``simulation.py``). This module only
decides which candidates are not worth simulating: ``iops_upper_bound`` is the host IOPS the
array would carry if every member served IO back to back on all its parallel units at its
*fresh* per-command cost (no cleaning, no positioning beyond what no disk avoids), and the layout
turned host IOs into the fewest member IOs and bytes it can. Work is conserved, so the simulation
at saturation cannot complete more host IOs per second than the members' total capacity divided
by the member work per host IO; cleaning, seeks, queueing and fork-join imbalance only lower it.
``candidates.prune`` drops a candidate only when this bound, with ``SCREEN_MARGIN`` on top for
the finite simulated window, is below the required IOPS (tests/engine/test_simulation.py checks
that it never drops a candidate the simulation accepts).

Member work per host IO (``k`` data and ``m`` parity units per stripe, stripe unit ``U``):

* read of ``s`` bytes: ``ceil(s / U)`` member reads (at least one), ``s`` bytes;
* random write of ``s`` bytes below a full stripe, touching ``j = ceil(s / U)`` units: writes of
  the data and every parity unit (``j + m`` IOs, ``s + m * min(s, U)`` bytes) plus the reads of
  read-modify-write or reconstruct-write, whichever needs fewer (``min(j + m, k - j)``, counted
  at their fixed cost only); mirrors write every copy; RAID 0 writes once;
* sequential (or full-stripe) writes: ``(k + m) / k`` member bytes and IOs per data unit, no reads.

Mechanical members: a sequential IO can find its sector under the head, so only the fixed cost
and the transfer count; a random IO waits on average at least half a rotation (the simulation
draws the rotational delay uniformly over a turn, on top of a seek that is never negative).
"""

from __future__ import annotations

import functools
import math

from . import hdd, ssd
from .catalog import Drive
from .layout import Layout, LayoutKind, group_count
from .service_time import ServiceModel
from .workload import Workload

# The simulation's window is finite: IOs in flight at its start complete inside it, and a window
# of a few hundred IOs of a size mix can draw more small ones than their share (measured: up to
# +4 % over the bound in 80 runs of random drives, layouts and mixes). A candidate is pruned
# only when the bound is this much below the requirement.
SCREEN_MARGIN = 0.10


@functools.lru_cache(maxsize=256)
def fresh_service_model(drive: Drive) -> ServiceModel:
    """The drive's per-command costs with no cleaning (the service model's fixed and per-byte
    times; its cleaning multipliers are ignored by the bound)."""
    if drive.kind != "ssd":
        return hdd.service_model(drive)
    return ssd.service_model(drive, simulate=False)


def _member_work_s(model: ServiceModel, layout: Layout, workload: Workload) -> float:
    """A lower bound on the member service seconds (summed over members) one host IO costs."""
    unit = float(layout.stripe_unit_bytes)
    k, m = layout.data_drives, layout.parity_units
    rot_half = 0.5 * model.full_rotation_s if model.mechanical else 0.0
    rf = workload.random_fraction
    total_weight = sum(w for _, w in workload.io_size_mix)
    read_s = write_s = 0.0
    for size, weight in workload.io_size_mix:
        share = weight / total_weight
        s = float(size)
        j = max(1, math.ceil(s / unit))
        # reads
        rd = j * model.read_fixed_s + s * model.read_per_byte_s + rf * j * rot_half
        # writes: sequential streams coalesce (at least s / U member IOs); random ones do not
        seq_ios = s / unit
        if layout.is_mirror:
            copies = float(layout.mirror_copies)
            seq_w = copies * (seq_ios * model.write_fixed_s + s * model.write_per_byte_s)
            rnd_w = copies * (j * (model.write_fixed_s + rot_half) + s * model.write_per_byte_s)
        elif layout.kind is LayoutKind.RAID0:
            seq_w = seq_ios * model.write_fixed_s + s * model.write_per_byte_s
            rnd_w = j * (model.write_fixed_s + rot_half) + s * model.write_per_byte_s
        else:
            factor = (k + m) / k
            seq_w = factor * (seq_ios * model.write_fixed_s + s * model.write_per_byte_s)
            if s >= k * unit:
                rnd_w = factor * (seq_ios * (model.write_fixed_s + rot_half) + s * model.write_per_byte_s)
            else:
                jj = min(j, k)
                reads = min(jj + m, k - jj)
                rnd_w = ((jj + m) * model.write_fixed_s + (s + m * s / jj) * model.write_per_byte_s
                         + reads * model.read_fixed_s + (jj + m + reads) * rot_half)
        wr = rf * rnd_w + (1.0 - rf) * seq_w
        read_s += share * rd
        write_s += share * wr
    r = workload.read_fraction
    return r * read_s + (1.0 - r) * write_s


def iops_upper_bound(drive: Drive, layout: Layout, drive_count: int, workload: Workload) -> float:
    """Host IOPS no simulation of this array under this workload exceeds (see the module text)."""
    members = group_count(layout, drive_count) * layout.group_width
    if members == 0:
        return 0.0
    model = fresh_service_model(drive)
    work = _member_work_s(model, layout, workload)
    return members * model.parallel_units / work if work > 0 else math.inf
