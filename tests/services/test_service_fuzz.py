"""A seeded fuzz of every PlannerService RPC: 10,000 generated requests, from
valid ones with a few fields mutated to hostile values (NaN, 1e308, 2^62, nanos 2e9, "ec:99..+1",
non-ASCII digits, trailing newlines, 10,000 repeated entries, 5,000-character names) to random
messages and undecodable bytes.

Asserted for every answer: no INTERNAL (or UNKNOWN) except for an undecodable body; every
INVALID_ARGUMENT carries a BadRequest whose field paths exist in the request message; the status
fits the client's metadata limit and carries no traceback or server path. At the end the server
is alive, healthy and its memory has not grown without bound.

The server runs a real local Ray with no CPUs: plans that pass validation are admitted (and queue,
then RESOURCE_EXHAUSTED) but never burn the machine's CPU.
"""

from __future__ import annotations

import asyncio
import math
import random
import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor, duration_pb2
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from google.rpc import error_details_pb2, status_pb2

from arrayplan.v1 import planner_pb2 as pb
from conftest import ServerProcess, start_server

SEED = 20261124
REQUESTS = 10_000
CONCURRENCY = 24
SERVICE = pb.DESCRIPTOR.services_by_name["PlannerService"]
DRIVES = ["intel-dc-s3500-480gb", "intel-dc-s3700-400gb", "hdd-15k-sas-300gb", "micron-p320h-700gb"]
STRINGS = ["", "raid0", "raid10", "raid6", "RAID5 ", "ec:8+3", "ec:0+2", "ec:" + "9" * 40 + "+1", "ec:\u0663+\u0661", "plans/abcd",
           "plans/abcd\n", "plans/ABCD", "plans/" + "a" * 70, "\u00b2", "8000000000000000", "ffffffffffffffffff", "-1", "0",
           "x" * 5000, "\x00", "../../etc/passwd", "oracle-swingbench", "no-such-preset", "intel-ssd-999", *DRIVES,
           "\u202e\u0644\u0627", "12\n", " 3", "zz-not-a-token"]
DOUBLES = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 0.999999, 1e308, -1e308, math.nan, math.inf, -math.inf, 5e-324, 2.0**63, 1e12, 20.0,
           # floats at the edges of a share's range: 1 - f rounds to 1, r / f overflows, 1 - 1e-17 is 1.0
           1e-17, 1e-300, 2.2250738585072014e-308, 1 - 1e-17, 0.9999999999999999, 1e-9, 1 - 1e-9]
INT32 = [0, 1, -1, 2, 4, 12, 48, 1000, 65536, 2**31 - 1, -(2**31)]
INT64 = [0, 1, -1, 4096, 1 << 40, 2**62, 2**63 - 1, -(2**63), 4_000_000_000_000]


def _bases() -> dict[str, Message]:
    w = pb.Workload(read_fraction=0.7, target_iops=20_000, daily_write_bytes=1e12, io_size_mix=[pb.IoSizeShare(io_bytes=8192, weight=1)])
    spec = pb.PlanSpec(workload=w, constraints=pb.Constraints(usable_capacity_bytes=4_000_000_000_000, latency_percentile=99.9,
                                                               latency_target=duration_pb2.Duration(nanos=5_000_000)),
                       candidate_space=pb.CandidateSpace(drive_models=DRIVES[:2], layouts=["raid10", "raid6"], max_drive_count=16),
                       service_life_years=3, seed=1)
    return {
        "CreatePlan": pb.CreatePlanRequest(plan=pb.Plan(spec=spec)),
        "GetPlan": pb.GetPlanRequest(name="plans/fuzz-base"),
        "ListPlans": pb.ListPlansRequest(page_size=5),
        "CancelPlan": pb.CancelPlanRequest(name="plans/fuzz-base"),
        "WatchPlan": pb.WatchPlanRequest(name="plans/fuzz-base"),
        "SimulateArray": pb.SimulateArrayRequest(drive_model=DRIVES[0], drive_count=12, layout="raid6", workload=w,
                                                 duration=duration_pb2.Duration(seconds=1)),
        "RunConsistencyTest": pb.RunConsistencyTestRequest(drive_model=DRIVES[0], duration=duration_pb2.Duration(seconds=60)),
        "ListDrives": pb.ListDrivesRequest(page_size=3),
        "GetDrive": pb.GetDriveRequest(name=DRIVES[1]),
    }


def _scalar(rng: random.Random, f: descriptor.FieldDescriptor):  # type: ignore[no-untyped-def]
    t = f.type
    if t in (f.TYPE_DOUBLE, f.TYPE_FLOAT):
        x = rng.choice(DOUBLES) if rng.random() < 0.8 else rng.uniform(-1e6, 1e6)
        return x if t == f.TYPE_DOUBLE or not math.isfinite(x) or abs(x) < 3e38 else 1e30
    if t in (f.TYPE_INT32, f.TYPE_SINT32, f.TYPE_SFIXED32):
        return rng.choice(INT32) if rng.random() < 0.8 else rng.randint(-1000, 100_000)
    if t in (f.TYPE_INT64, f.TYPE_SINT64, f.TYPE_SFIXED64):
        return rng.choice(INT64) if rng.random() < 0.8 else rng.randint(-(10**6), 10**13)
    if t in (f.TYPE_UINT32, f.TYPE_FIXED32):
        return rng.choice([0, 1, 2**32 - 1])
    if t in (f.TYPE_UINT64, f.TYPE_FIXED64):
        return rng.choice([0, 1, 2**64 - 1])
    if t == f.TYPE_BOOL:
        return rng.random() < 0.5
    if t == f.TYPE_ENUM:
        return rng.choice([*f.enum_type.values_by_number, -1, 7, 99, 2**31 - 1])
    if t == f.TYPE_STRING:
        s = rng.choice(STRINGS)
        if rng.random() < 0.1:
            s = "".join(chr(rng.randint(1, 0x2FFF)) for _ in range(rng.randint(1, 40)))
        return s
    if t == f.TYPE_BYTES:
        return rng.randbytes(rng.randint(0, 20))
    raise AssertionError(f.type)


def _fill(rng: random.Random, msg: Message, depth: int) -> None:
    """Set a random subset of ``msg``'s fields to random values."""
    for f in msg.DESCRIPTOR.fields:
        if rng.random() < 0.5:
            _set(rng, msg, f, depth)


def _set(rng: random.Random, msg: Message, f: descriptor.FieldDescriptor, depth: int) -> None:
    if f.message_type is not None and f.message_type.full_name == "google.protobuf.Duration":
        values = [duration_pb2.Duration(seconds=rng.choice([0, 1, 5, 60, 3600, 100_000, -1, 2**62, -(2**62)]),
                                        nanos=rng.choice([0, 5_000_000, 999_999_999, 2_000_000_000, -5]))]
    elif f.message_type is not None:
        if depth > 4:
            return
        values = []
        for _ in range(1 if not f.is_repeated else rng.choice([1, 2, 5])):
            sub = GetMessageClass(f.message_type)()
            _fill(rng, sub, depth + 1)
            values.append(sub)
    else:
        count = 1 if not f.is_repeated else rng.choice([1, 2, 3, 20, 300, 10_000])
        one = _scalar(rng, f)
        values = [one if rng.random() < 0.5 else _scalar(rng, f) for _ in range(count)]
    if f.is_repeated:
        container = getattr(msg, f.name)
        if rng.random() < 0.3:
            del container[:]
        if f.message_type is not None:
            for v in values:
                container.add().CopyFrom(v)
        else:
            container.extend(values)
    elif f.message_type is not None:
        getattr(msg, f.name).CopyFrom(values[0])
    else:
        setattr(msg, f.name, values[0])


def _mutate(rng: random.Random, msg: Message, depth: int = 0) -> None:
    """Change one field somewhere in ``msg`` (set, clear or recurse)."""
    fields = list(msg.DESCRIPTOR.fields)
    if not fields:
        return
    f = rng.choice(fields)
    r = rng.random()
    if f.message_type is not None and not f.is_repeated and r < 0.5 and depth < 5 \
            and f.message_type.full_name != "google.protobuf.Duration":
        _mutate(rng, getattr(msg, f.name), depth + 1)
    elif r < 0.6:
        msg.ClearField(f.name)
    else:
        _set(rng, msg, f, depth)


def _request(rng: random.Random, name: str, bases: dict[str, Message]) -> tuple[bytes, bool]:
    """A serialized request for method ``name`` and whether it is deliberately undecodable."""
    method = SERVICE.methods_by_name[name]
    cls = GetMessageClass(method.input_type)
    r = rng.random()
    if r < 0.03:
        return rng.randbytes(rng.randint(1, 64)) + b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", True
    if r < 0.25 or name not in bases:
        msg = cls()
        _fill(rng, msg, 0)
    else:
        msg = cls()
        msg.CopyFrom(bases[name])
        for _ in range(rng.choice([1, 1, 2, 3])):
            _mutate(rng, msg)
    if name == "RunConsistencyTest" and msg.duration.seconds > 300:
        msg.duration.seconds = 5  # long runs are cancelled when the deadline passes (test_api), but each cancel restarts a Ray worker
    if name == "RunConsistencyTest" and not msg.HasField("duration"):
        msg.duration.seconds = 60  # not the 2,000 s default: ~7 s of kernel each, cleaning being simulated
    if name == "SimulateArray" and msg.HasField("duration") and msg.duration.seconds > 2:
        msg.duration.seconds = 2
    return msg.SerializeToString(), False


_INDEX = re.compile(r"\[[0-9]+\]")


def _field_exists(desc: descriptor.Descriptor, path: str) -> bool:
    """Whether ``plan.spec.candidate_space.layouts[3]`` names a field of ``desc``."""
    current: descriptor.Descriptor | None = desc
    for part in path.split("."):
        name = re.sub(r"\[\d+\]$", "", part)
        if current is None or name not in current.fields_by_name:
            return False
        f = current.fields_by_name[name]
        if part != name and not f.is_repeated:
            return False
        current = f.message_type if f.message_type is not None and f.message_type.full_name != "google.protobuf.Duration" else None
    return True


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    s = start_server(tmp_path_factory.mktemp("fuzz-data"), extra=("--num-cpus", "0", "--max-running-plans", "1",
                                                                  "--max-queued-plans", "3"))
    yield s
    s.stop()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_fuzz_every_rpc(fuzz_server: ServerProcess) -> None:
    rng = random.Random(SEED)
    bases = _bases()
    names = [m.name for m in SERVICE.methods]
    assert set(bases) <= set(names)
    requests = [(name, *_request(rng, name, bases)) for name in (rng.choice(names) for _ in range(REQUESTS))]
    log_lines_before = len(fuzz_server.log().splitlines())
    outcomes, problems, rss = asyncio.run(_send_all(fuzz_server, requests))
    assert not problems, f"{len(problems)} kinds of problem:\n" + "\n".join(list(problems.values())[:30])
    # one log line per malformed request at most (gRPC's own record of each is a 7-line traceback)
    undecodable = sum(1 for _, _, bad in requests if bad)
    new_log = fuzz_server.log().splitlines()[log_lines_before:]
    assert "Traceback" not in "\n".join(new_log)
    assert len(new_log) <= undecodable + 50, f"{len(new_log)} log lines for {undecodable} undecodable requests: {new_log[:12]}"
    assert sum(n for (method, _), n in outcomes.items() if method == "any") == REQUESTS
    assert outcomes[("any", "INVALID_ARGUMENT")] > REQUESTS // 4, outcomes
    # Memory: no growth without bound over the run (after a warm-up of 500 requests).
    before, after = rss
    assert after < before * 1.5 + 64 * 2**20, f"server RSS grew from {before / 2**20:.0f} MiB to {after / 2**20:.0f} MiB"


async def _send_all(server: ServerProcess, requests: list[tuple[str, bytes, bool]]):  # type: ignore[no-untyped-def]
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    outcomes: Counter[tuple[str, str]] = Counter()
    problems: dict[str, str] = {}  # one example per kind of problem
    data_dir = str(server.data_dir)
    queue: asyncio.Queue[tuple[int, str, bytes, bool]] = asyncio.Queue()
    for i, (name, body, undecodable) in enumerate(requests):
        queue.put_nowait((i, name, body, undecodable))
    rss_before = [0]
    async with grpc.aio.insecure_channel(server.address, options=[("grpc.max_receive_message_length", 64 << 20)]) as channel:

        async def one(i: int, name: str, body: bytes, undecodable: bool) -> None:
            method = SERVICE.methods_by_name[name]
            path = f"/{SERVICE.full_name}/{name}"
            try:
                if method.server_streaming:
                    call = channel.unary_stream(path)(body, timeout=0.5)
                    async for _ in call:
                        pass
                else:
                    timeout = {"SimulateArray": 0.5, "RunConsistencyTest": 0.5}.get(name, 5.0)
                    await channel.unary_unary(path)(body, timeout=timeout)
                code = grpc.StatusCode.OK
                err = None
            except grpc.aio.AioRpcError as exc:
                code = exc.code()
                err = exc
            outcomes[(name, code.name)] += 1
            outcomes[("any", code.name)] += 1
            if undecodable:
                return
            req = GetMessageClass(method.input_type).FromString(body)
            where = f"#{i} {name}({str(req)[:300]!r})"
            if code in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN):
                problems.setdefault(f"{name} {code.name}", f"{where}: {code.name} {err.details() if err else ''}")
                return
            if err is None:
                return
            text = err.details() or ""
            if "Traceback" in text or data_dir in text or "/work/" in text:
                problems.setdefault(f"{name} leak", f"{where}: leaks server detail: {text[:300]}")
            raw = dict(err.trailing_metadata() or ()).get("grpc-status-details-bin")
            if raw is not None and len(raw) > 7000:
                problems.setdefault(f"{name} size", f"{where}: status details of {len(raw)} bytes")
            if code == grpc.StatusCode.INVALID_ARGUMENT:
                if raw is None:
                    problems.setdefault(f"{name} nodetails", f"{where}: INVALID_ARGUMENT without details: {text}")
                    return
                status = status_pb2.Status.FromString(raw)
                bad = [d for d in status.details if d.Is(error_details_pb2.BadRequest.DESCRIPTOR)]
                if not bad:
                    problems.setdefault(f"{name} nobad", f"{where}: INVALID_ARGUMENT without a BadRequest: {text}")
                    return
                br = error_details_pb2.BadRequest()
                bad[0].Unpack(br)
                for v in br.field_violations:
                    if not _field_exists(method.input_type, v.field):
                        problems.setdefault(f"{name} {_INDEX.sub('', v.field)}",
                                            f"{where[:200]}: violation names {v.field!r}, not a field of {method.input_type.name}: "
                                            f"{v.description[:200]}")

        async def worker() -> None:
            while True:
                try:
                    i, name, body, undecodable = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                if i == 500:
                    rss_before[0] = _rss_bytes(server.proc.pid)
                await one(i, name, body, undecodable)

        t0 = time.monotonic()
        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        elapsed = time.monotonic() - t0
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
    assert server.proc.poll() is None, "the server is alive"
    print(f"fuzz: {len(requests)} requests in {elapsed:.1f} s; outcomes {sorted(outcomes.items())}")
    return outcomes, problems, (rss_before[0], _rss_bytes(server.proc.pid))


# -- custom drives the models cannot use: refused at input, never a plan FAILED as INTERNAL ---------

_GOOD_DRIVE = dict(name="fuzz-ssd-480gb", kind="ssd", interface="sata-6g", capacity_bytes=480_000_000_000, nand_type="mlc",
                   random_read_iops=90_000.0, random_write_iops=30_000.0, seq_read_bytes_per_s=540e6, seq_write_bytes_per_s=500e6,
                   endurance_bytes_written=3_500_000_000_000_000, price_usd=400.0)
# (what is changed, the field the violation must name, words its reason must hold)
HOSTILE_DRIVES = [
    ({"capacity_bytes": 1}, "capacity_bytes", "must be >= 655360"),
    ({"capacity_bytes": 4096, "raw_nand_bytes": 8192}, "capacity_bytes", "must be >= 655360"),
    ({"capacity_bytes": 1_000_000}, "capacity_bytes", "must be in [51589940, 1026639789]"),
    ({"raw_nand_bytes": 480_000_000_000}, "raw_nand_bytes", "spare factor"),
    ({"raw_nand_bytes": 2 * 10**15, "capacity_bytes": 10**12}, "raw_nand_bytes", "must be in [1045879806578, 20813008109268]"),
    ({"seq_write_bytes_per_s": None}, "seq_write_bytes_per_s", "is required for kind 'ssd'"),
    ({"random_read_iops": 1e-9}, "seq_read_bytes_per_s", "must be in [0, 10] s"),
    ({"random_read_iops": 5e-324, "random_write_iops": 5e-324, "seq_read_bytes_per_s": 5e-324, "seq_write_bytes_per_s": 5e-324},
     "random_read_iops", "too slow"),
    ({"seq_write_bytes_per_s": 1e-9}, "seq_write_bytes_per_s", "too slow"),
    ({"capacity_bytes": 1_000_000, "raw_nand_bytes": 2_000_000}, "capacity_bytes", "cleaner's free pages"),
    ({"capacity_bytes": 1_000_000_000, "raw_nand_bytes": 1_200_000_000, "pages_per_block": 4096, "page_bytes": 65536},
     "capacity_bytes", "cleaner's free pages"),
    ({"write_buffer_bytes": 10**12}, "write_buffer_bytes", "must be in [0, 60] s"),
    ({"annual_failure_rate": 5e-324}, "annual_failure_rate", "must be 0 (no failures modelled) or in [1e-12, 1]"),
    ({"capacity_bytes": 10**15, "raw_nand_bytes": 2 * 10**15, "seq_write_bytes_per_s": 1e6, "annual_failure_rate": 0.01},
     "seq_write_bytes_per_s", "must be >= 63419584"),
    ({"kind": "hdd", "interface": "sas-12g", "nand_type": None, "endurance_bytes_written": None, "rpm": 7200, "average_seek_s": 0.008,
      "seq_read_bytes_per_s": None, "seq_write_bytes_per_s": None, "capacity_bytes": 4 * 10**12}, "seq_read_bytes_per_s",
     "is required for kind 'hdd'"),
    ({"kind": "hdd", "interface": "sas-12g", "nand_type": None, "endurance_bytes_written": None, "rpm": 7200, "average_seek_s": 0.008,
      "capacity_bytes": 1}, "capacity_bytes", "must be >= 655360"),
]


def _drive_spec(change: dict[str, object]) -> pb.DriveSpec:
    d = pb.DriveSpec()
    for k, v in {**_GOOD_DRIVE, **change}.items():
        if v is not None:
            setattr(d, k, v)
    return d


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_hostile_custom_drives_are_invalid_argument(fuzz_server: ServerProcess) -> None:
    """A drive that passes the catalog's field ranges but not the drive models' (a 1-byte SSD, a
    spare factor outside (0.005, 0.95), rates so low an IO takes hours, ...) is refused by
    CreatePlan with a violation naming plan.spec.custom_drives[0].FIELD and the allowed range;
    a sound one is accepted (and cancelled)."""
    spec = _bases()["CreatePlan"].plan.spec
    with grpc.insecure_channel(fuzz_server.address) as channel:
        create = channel.unary_unary(f"/{SERVICE.full_name}/CreatePlan", request_serializer=lambda m: m.SerializeToString(),
                                     response_deserializer=pb.Plan.FromString)
        for change, field, words in HOSTILE_DRIVES:
            req = pb.CreatePlanRequest(plan=pb.Plan(spec=spec))
            req.plan.spec.custom_drives.append(_drive_spec(change))
            req.plan.spec.candidate_space.drive_models.append(_GOOD_DRIVE["name"])
            with pytest.raises(grpc.RpcError) as exc:
                create(req, timeout=30)
            err = exc.value
            assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, (change, err.code(), err.details())
            raw = dict(err.trailing_metadata() or ()).get("grpc-status-details-bin")
            assert raw is not None, change
            status = status_pb2.Status.FromString(raw)
            br = error_details_pb2.BadRequest()
            next(d for d in status.details if d.Is(error_details_pb2.BadRequest.DESCRIPTOR)).Unpack(br)
            got = {v.field: v.description for v in br.field_violations}
            path = f"plan.spec.custom_drives[0].{field}"
            assert path in got and words in got[path], (change, got)
            assert all(_field_exists(pb.CreatePlanRequest.DESCRIPTOR, f) for f in got), got
        req = pb.CreatePlanRequest(plan=pb.Plan(spec=spec))
        req.plan.spec.custom_drives.append(_drive_spec({}))
        req.plan.spec.candidate_space.drive_models.append(_GOOD_DRIVE["name"])
        try:
            plan = create(req, timeout=30)
        except grpc.RpcError as err:  # the queue may be full of the fuzz's plans: that is not a refusal of the drive
            assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, (err.code(), err.details())
        else:
            channel.unary_unary(f"/{SERVICE.full_name}/CancelPlan", request_serializer=lambda m: m.SerializeToString(),
                                response_deserializer=pb.Plan.FromString)(pb.CancelPlanRequest(name=plan.name), timeout=30)
