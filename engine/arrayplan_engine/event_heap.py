"""The event queue the numba kernels share: a binary heap of events ordered by (time, id).

``ev_t`` holds the events' times and ``ev_id`` their ids, the first ``n`` places in use; ties in
time go to the smaller id, so the order is total and a run is the same on every machine. Inlined
into the kernels (``inline="always"``): a call in the event loop's hot path costs more than the
heap operation itself. Pure: no I/O.
"""

from __future__ import annotations

from numba import njit

__all__ = ["heap_pop", "heap_push", "heap_sift_down"]


@njit(cache=True, _nrt=False, inline="always")
def heap_push(ev_t, ev_id, n_ev, tp, ident):
    """Push event (tp, ident) onto the heap of ``n_ev`` events; returns the new event count."""
    i = n_ev
    while i > 0:
        parent = (i - 1) >> 1
        pt = ev_t[parent]
        if pt < tp or (pt == tp and ev_id[parent] < ident):
            break
        ev_t[i] = pt
        ev_id[i] = ev_id[parent]
        i = parent
    ev_t[i] = tp
    ev_id[i] = ident
    return n_ev + 1


@njit(cache=True, _nrt=False, inline="always")
def heap_sift_down(ev_t, ev_id, n, tp, ident):
    """Event (tp, ident) enters the heap of ``n`` events at the root and sifts down (a dropped
    top replaced by the last event, or a re-queued one by its new time)."""
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        r = child + 1
        if r < n and (ev_t[r] < ev_t[child] or (ev_t[r] == ev_t[child] and ev_id[r] < ev_id[child])):
            child = r
        ct = ev_t[child]
        if ct < tp or (ct == tp and ev_id[child] < ident):
            ev_t[i] = ct
            ev_id[i] = ev_id[child]
            i = child
        else:
            break
    ev_t[i] = tp
    ev_id[i] = ident


@njit(cache=True, _nrt=False, inline="always")
def heap_pop(ev_t, ev_id, n):
    """Drop the top of the heap of ``n`` events; returns the new count."""
    n -= 1
    if n == 0:
        return 0
    heap_sift_down(ev_t, ev_id, n, ev_t[n], ev_id[n])
    return n
