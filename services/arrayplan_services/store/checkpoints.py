"""Checkpoints of a running plan: finished candidate evaluations, encoded for the run store.

A batch's ``evaluation.Evaluation``s are stored as zlib-compressed JSON. JSON writes every float
with Python's shortest round-tripping ``repr`` (NaN and the infinities as ``NaN``/``Infinity``),
so a decoded evaluation equals the evaluated one exactly and a resumed plan ranks the very same
numbers. Each checkpoint carries the run's ``fingerprint``: a hash of the engine's code and data
files, the request and the catalog the plan searched. A server whose engine, catalog or request
reading differs from the one that wrote the checkpoint ignores it and evaluates those candidates
again, so a checkpoint never mixes two versions of the models into one answer.
"""

from __future__ import annotations

import functools
import hashlib
import json
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from arrayplan_engine import candidates, evaluation, plan_request
from arrayplan_engine.catalog import Drive
from arrayplan_engine.interval import Interval

# The encoding itself; bump when the layout of the payload changes.
FORMAT = "evaluations-json-zlib-v3"  # v2: simulated figures as Interval mappings (value, low, high); v3: checks' predicted too


class CheckpointFormatError(ValueError):
    """A stored checkpoint that does not decode into evaluations (damaged or from another layout)."""


@functools.cache
def engine_code_digest() -> str:
    """SHA-256 over the engine package's files (code and data, sorted by path): a checkpoint is
    reused only by a server running the very same models."""
    import arrayplan_engine

    root = Path(arrayplan_engine.__file__).parent
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".py", ".toml", ".json", ".csv")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def fingerprint(req: plan_request.PlanRequest, drives: Iterable[Drive]) -> str:
    """What a checkpoint's evaluations depend on besides the candidate: the encoding, the evaluation
    record's fields, the engine's code, the request and the drives searched (dataclass reprs are
    exact: floats by shortest round-tripping repr)."""
    h = hashlib.sha256()
    for part in (FORMAT, ",".join(_field_names()), engine_code_digest(), repr(req), repr(tuple(drives))):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


@functools.cache
def _field_names() -> tuple[str, ...]:
    out: list[str] = []
    for cls in (evaluation.Evaluation, candidates.Candidate, evaluation.ConstraintCheck, evaluation.YearPerformance):
        out.append(cls.__name__ + ":" + ",".join(f.name for f in fields(cls)))
    return tuple(out)


def encode(evaluations: Sequence[evaluation.Evaluation]) -> bytes:
    """The evaluations of one batch as compressed JSON."""
    rows = [asdict(e) for e in evaluations]
    return zlib.compress(json.dumps(rows, allow_nan=True, separators=(",", ":")).encode(), 6)


def decode(payload: bytes) -> list[evaluation.Evaluation]:
    """The evaluations ``encode`` wrote; raises CheckpointFormatError for anything else."""
    try:
        rows = json.loads(zlib.decompress(payload))
        return [_evaluation(r) for r in rows]
    except (zlib.error, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise CheckpointFormatError(f"not a checkpoint of format {FORMAT}: {type(exc).__name__}: {exc}") from None


@functools.cache
def _interval_fields(cls: type) -> frozenset[str]:
    """The fields of ``cls`` that hold an ``Interval`` (``asdict`` wrote each as a mapping)."""
    return frozenset(f.name for f in fields(cls) if f.type in ("Interval", Interval))


def _with_intervals(cls: type, row: dict[str, Any]) -> dict[str, Any]:
    return {k: Interval(**v) if k in _interval_fields(cls) else v for k, v in row.items()}


def _evaluation(row: dict[str, Any]) -> evaluation.Evaluation:
    row = _with_intervals(evaluation.Evaluation, row)
    row["candidate"] = candidates.Candidate(**row["candidate"])
    row["checks"] = tuple(evaluation.ConstraintCheck(**_with_intervals(evaluation.ConstraintCheck, k)) for k in row["checks"])
    row["years"] = tuple(evaluation.YearPerformance(**_with_intervals(evaluation.YearPerformance, y)) for y in row["years"])
    return evaluation.Evaluation(**row)
