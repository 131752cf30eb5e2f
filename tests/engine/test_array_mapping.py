"""The array kernel's host-IO mapping stages, called directly.

For every layout family (RAID 0, mirrors, parity RAID 5/6 and k+m erasure coding), with and
without failed members, random host IOs (offsets and sizes in 512-byte sectors, inside one unit or
spanning stripes, random or sequential) are mapped by ``array._map_io`` and the member IOs are
checked against the layout's definition, written out independently here:

* the data space is laid out stripe by stripe: stripe t holds host bytes ``[t sb, (t+1) sb)``
  (``sb`` = k units of u bytes), on group ``t % G`` at stripe row ``t // G`` (drive offset
  ``row * u``);
* parity (left-symmetric, as Linux md's default): in row s the parity units sit on local drives
  ``(p0 + i) % w`` for i < m with ``p0 = w - 1 - s % w``, data unit j on ``(p0 + m + j) % w``;
* mirrors: unit j of a group is held by local drives ``j * copies .. j * copies + copies - 1``.

Bytes are conserved (every host byte is written to each present drive that holds it, exactly
once, and read exactly once from a present holder unless its holder failed; parity writes cover
the stripe's columns the IO touches) and no member IO goes to a failed drive (a degraded read
reads k survivors of the stripe instead).
"""

from __future__ import annotations

import numpy as np
import pytest

from arrayplan_engine import array as arr
from arrayplan_engine import hdd
from arrayplan_engine.layout import Layout, make_layout
from arrayplan_engine.units import KiB
from arrayplan_engine.workload import Workload

UNIT = 64 * KiB
SECTOR = 512
DW = arr._R_UNITS + 2  # a drive row: the mirror read looks at its first unit's free time only
ROWS = 64  # stripe rows per drive in these tests (working set = ROWS * sb per group)
DISK = hdd.service_model("hdd-15k-sas-300gb")


def _geometry(layout: Layout, groups: int, failed_drives: int) -> tuple[np.ndarray, np.ndarray]:
    spec = arr.ArraySpec(layout=layout, drive_count=groups * layout.group_width, service_models=(DISK,),
                         workload=Workload(read_fraction=0.5), failed_drives=failed_drives,
                         drive_capacity_bytes=float(ROWS * layout.stripe_unit_bytes))
    lay, failed, _ = arr._layout_arrays(spec)
    return lay, failed


def map_host_io(lay: np.ndarray, failed: np.ndarray, *, is_write: bool, is_seq: bool, o: int,
                b: int) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """The member reads and writes ``_map_io`` gives for one host IO, as (drive, bytes, offset)."""
    kind, w, k, m, copies, G, u = (int(lay[i]) for i in (arr._L_KIND, arr._L_W, arr._L_K, arr._L_M, arr._L_COPIES,
                                                           arr._L_G, arr._L_U))
    sb = k * u
    mmh = (b // sb + 2) * 2 * w + 2 * w
    s_d, s_b, s_o = (np.full(2 * mmh, -7, np.int64) for _ in range(3))
    dr = np.zeros(len(failed) * DW)
    nr, nw, rbytes, wbytes = arr._map_io(is_write, is_seq, o, b, mmh, kind, w, k, m, copies, G, u, 1.0 / u, 1.0 / G,
                                         1.0 / w, sb, 1.0 / sb, bool(lay[arr._L_FAILED] > 0), failed, dr, DW,
                                         s_d, s_b, s_o)
    reads = [(int(s_d[i]), int(s_b[i]), int(s_o[i])) for i in range(nr)]
    writes = [(int(s_d[i]), int(s_b[i]), int(s_o[i])) for i in range(mmh, mmh + nw)]
    assert rbytes == sum(x[1] for x in reads) and wbytes == sum(x[1] for x in writes)
    return reads, writes


def _holders(layout: Layout, groups: int, a: int) -> tuple[list[int], int, int]:
    """Drives holding host byte ``a`` (every copy), its stripe row and offset within its unit."""
    u, k, w = layout.stripe_unit_bytes, layout.data_drives, layout.group_width
    t, within = divmod(a, k * u)
    s, g = divmod(t, groups)
    j, col = divmod(within, u)
    if layout.kind.value == "raid0":
        return [g * w + j], s, col
    if layout.is_mirror:
        c = layout.mirror_copies
        return [g * w + j * c + i for i in range(c)], s, col
    m = layout.parity_units
    p0 = w - 1 - s % w
    return [g * w + (p0 + m + j) % w], s, col


def _parity_drives(layout: Layout, g: int, s: int) -> list[int]:
    w, m = layout.group_width, layout.parity_units
    p0 = w - 1 - s % w
    return [g * w + (p0 + i) % w for i in range(m)]


def _data_byte(layout: Layout, groups: int, d: int, off: int) -> int | None:
    """The host byte a member byte (drive d, drive offset off) holds, None for parity."""
    u, k, w = layout.stripe_unit_bytes, layout.data_drives, layout.group_width
    g, dl = divmod(d, w)
    s, col = divmod(off, u)
    if layout.kind.value == "raid0":
        j = dl
    elif layout.is_mirror:
        j = dl // layout.mirror_copies
    else:
        m = layout.parity_units
        p0 = w - 1 - s % w
        j = (dl - p0 - m) % w
        if j >= k:
            return None
    return (s * groups + g) * k * u + j * u + col


def _member_bytes(ios: list[tuple[int, int, int]]) -> dict[tuple[int, int], int]:
    """(drive, drive byte) -> how many member IOs cover it, byte by 512-byte sector."""
    out: dict[tuple[int, int], int] = {}
    for d, nb, off in ios:
        assert nb > 0 and nb % SECTOR == 0 and off % SECTOR == 0, (d, nb, off)
        for x in range(off, off + nb, SECTOR):
            out[(d, x)] = out.get((d, x), 0) + 1
    return out


CASES = [  # (layout, groups, failed members of group 0)
    (make_layout("raid0", 4, stripe_unit_bytes=UNIT), 2, 0),
    (make_layout("raid10", 4, stripe_unit_bytes=UNIT), 2, 0),
    (make_layout("raid10", 6, stripe_unit_bytes=UNIT), 1, 1),
    (make_layout("raid1", 3, stripe_unit_bytes=UNIT), 2, 2),
    (make_layout("raid5", 5, stripe_unit_bytes=UNIT), 2, 0),
    (make_layout("raid5", 5, stripe_unit_bytes=UNIT), 2, 1),
    (make_layout("raid6", 6, stripe_unit_bytes=UNIT), 1, 0),
    (make_layout("raid6", 6, stripe_unit_bytes=UNIT), 2, 1),
    (make_layout("raid6", 6, stripe_unit_bytes=UNIT), 1, 2),
    (make_layout("ec:4+3", stripe_unit_bytes=UNIT), 2, 3),
    (make_layout("ec:8+2", stripe_unit_bytes=UNIT), 1, 1),
]


def _random_ios(rng: np.random.Generator, layout: Layout, groups: int, n: int) -> list[tuple[bool, bool, int, int]]:
    sb = layout.data_drives * layout.stripe_unit_bytes
    space = groups * ROWS * sb
    ios = []
    for _ in range(n):
        kind = rng.integers(3)
        if kind == 0:  # inside one unit
            b = SECTOR * int(rng.integers(1, UNIT // SECTOR + 1))
        elif kind == 1:  # a few units
            b = SECTOR * int(rng.integers(1, 3 * UNIT // SECTOR))
        else:  # up to three stripes
            b = SECTOR * int(rng.integers(1, 3 * sb // SECTOR))
        o = SECTOR * int(rng.integers(0, (space - b) // SECTOR + 1))
        ios.append((bool(rng.integers(2)), bool(rng.random() < 0.2), o, b))
    return ios


@pytest.mark.parametrize(("layout", "groups", "n_failed"), CASES, ids=lambda c: getattr(c, "name", str(c)))
def test_mapping_conserves_bytes_and_spares_failed_drives(layout: Layout, groups: int, n_failed: int) -> None:
    lay, failed = _geometry(layout, groups, n_failed)
    assert int(failed.sum()) == n_failed
    dead = {d for d in range(len(failed)) if failed[d]}
    rng = np.random.default_rng(1000 + len(CASES) * n_failed + layout.group_width)
    k, u = layout.data_drives, layout.stripe_unit_bytes
    for is_write, is_seq, o, b in _random_ios(rng, layout, groups, 150):
        reads, writes = map_host_io(lay, failed, is_write=is_write, is_seq=is_seq, o=o, b=b)
        ctx = (layout.name, n_failed, is_write, is_seq, o, b)
        # no member IO to a failed drive, none outside the array
        assert all(0 <= d < len(failed) and d not in dead for d, _, _ in reads + writes), ctx
        host = range(o, o + b, SECTOR)
        if not is_write:
            assert not writes, ctx
            got = _member_bytes(reads)
            assert all(c == 1 for c in got.values()), ctx  # nothing read twice
            for a in host:
                drives, s, col = _holders(layout, groups, a)
                live = [d for d in drives if d not in dead]
                off = s * u + col
                if live:  # read once, from one present holder
                    assert sum((d, off) in got for d in live) == 1, (ctx, a)
                else:  # reconstructed: the same column of k survivors of the stripe
                    g = drives[0] // layout.group_width
                    group = range(g * layout.group_width, (g + 1) * layout.group_width)
                    assert sum((d, off) in got for d in group) == k, (ctx, a)
            continue
        data = [(d, nb, off) for d, nb, off in writes if _data_byte(layout, groups, d, off) is not None]
        got = _member_bytes(data)
        # every host byte written to each present drive that holds it, exactly once, in place
        want: dict[tuple[int, int], int] = {}
        for a in host:
            drives, s, col = _holders(layout, groups, a)
            for d in drives:
                if d not in dead:
                    want[(d, s * u + col)] = 1
        assert got == want, ctx
        for d, _, off in data:
            assert _data_byte(layout, groups, d, off) in host, ctx
        if layout.parity_units:
            # parity: each stripe the IO touches gets its surviving parity units written over the
            # columns it changes (the whole unit when a full or sequential write completes it)
            parity = _member_bytes([x for x in writes if x not in data])
            want = {}
            sb = k * u
            for t in range(o // sb, (o + b - 1) // sb + 1):
                s, g = divmod(t, groups)
                lo, hi = max(o, t * sb) - t * sb, min(o + b, (t + 1) * sb) - t * sb
                if hi - lo == sb or is_seq:
                    cols = range(0, u) if hi == sb else range(0)
                elif lo // u == (hi - 1) // u:
                    cols = range(lo % u, lo % u + hi - lo)
                else:
                    cols = range(0, u)
                for d in _parity_drives(layout, g, s):
                    if d not in dead:
                        for c in range(cols.start, cols.stop, SECTOR):
                            want[(d, s * u + c)] = 1
            assert parity == want, ctx
        # the reads a small write makes come from present drives of the stripes it touches
        for _, _, off in reads:
            assert off // u in {(t // groups) for t in range(o // (k * u), (o + b - 1) // (k * u) + 1)}, ctx


@pytest.mark.parametrize("layout", [make_layout("raid5", 5, stripe_unit_bytes=UNIT),
                                    make_layout("raid6", 8, stripe_unit_bytes=UNIT),
                                    make_layout("ec:10+4", stripe_unit_bytes=UNIT)], ids=lambda x: x.name)
def test_parity_fast_path_maps_as_the_general_stage(layout: Layout) -> None:
    # ``_unit_geometry`` + ``_map_parity_unit`` (random IOs inside one unit, all members
    # present) must give the member IOs ``_map_io`` gives
    groups = 3
    lay, failed = _geometry(layout, groups, 0)
    w, k, m, u = layout.group_width, layout.data_drives, layout.parity_units, layout.stripe_unit_bytes
    sb = k * u
    rng = np.random.default_rng(7)
    rec = np.zeros((1, arr._RC_COUNT), np.int64)
    hits = 0
    for _ in range(300):
        b = SECTOR * int(rng.integers(1, UNIT // SECTOR + 8))  # mostly inside one unit, some across two
        o = SECTOR * int(rng.integers(0, (groups * ROWS * sb - b) // SECTOR + 1))
        u_shift = u.bit_length() - 1
        ok = arr._unit_geometry(o, b, sb, 1.0 / sb, groups, 1.0 / groups, u, u_shift, 1.0 / u, w, 1.0 / w, m, rec, 0)
        assert ok == ((o % u) + b <= u), (o, b)  # inside one unit (u is a multiple of the sector)
        if not ok:
            continue
        hits += 1
        for is_write in (False, True):
            s_d, s_b, s_o = (np.full(4 * w, -7, np.int64) for _ in range(3))
            nr, nw, rb, wb = arr._map_parity_unit(is_write, b, k, m, w, *(int(rec[0, c]) for c in (
                arr._RC_BASE, arr._RC_RO, arr._RC_P0, arr._RC_D0, arr._RC_J0)), s_d, s_b, s_o, 2 * w)
            fast = ([(int(s_d[i]), int(s_b[i]), int(s_o[i])) for i in range(nr)],
                    [(int(s_d[i]), int(s_b[i]), int(s_o[i])) for i in range(2 * w, 2 * w + nw)])
            assert fast == map_host_io(lay, failed, is_write=is_write, is_seq=False, o=o, b=b), (o, b, is_write)
            assert rb == sum(x[1] for x in fast[0]) and wb == sum(x[1] for x in fast[1])
    assert 100 < hits < 300
