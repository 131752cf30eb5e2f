"""Plan files are untrusted (a CI job plans whatever a pull request wrote): the files they name
stay under the plan file's directory, only regular files are read, sizes are capped and no
error repeats a file's content. Hostile files (YAML alias bombs, deep nesting,
merge keys, huge integers, giant one-line traces, drives the models cannot use) exit 2 with one
line naming the file and line, in bounded memory, never a hang or a traceback (docs/service.md,
"Limits on input files")."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arrayplan_services.api.planfile import MAX_PLAN_FILE_BYTES, PlanFileError, load_plan_file
from conftest import DATA

FIO = DATA / "fio" / "jesd219.fio"
SECRET = "root:$6$SECRET-HASH-CONTENT:19000:0:99999:7:::"


def _plan(dirpath: Path, workload: str) -> Path:
    p = dirpath / "plan.yaml"
    p.write_text(f"workload:\n  {workload}\nconstraints:\n  usable_capacity_bytes: 1 TB\n")
    return p


@pytest.fixture()
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """plans/ (the plan file's directory, with a good fio file) and a secret file beside it."""
    plans = tmp_path / "plans"
    plans.mkdir()
    shutil.copy(FIO, plans / "job.fio")
    secret = tmp_path / "shadow"
    secret.write_text(SECRET + "\n")
    return plans, secret


def _problem(exc: pytest.ExceptionInfo[PlanFileError]) -> str:
    return str(exc.value)


def test_relative_path_under_the_plan_dir_is_read(layout) -> None:  # type: ignore[no-untyped-def]
    plans, _ = layout
    spec, _ = load_plan_file(_plan(plans, "fio: job.fio"))
    assert spec.workload.io_size_mix, "the fio job was read"


@pytest.mark.parametrize("ref", ["../shadow", "SECRET_ABS", "sub/../../shadow"])
def test_paths_outside_the_plan_dir_are_refused(layout, ref: str) -> None:  # type: ignore[no-untyped-def]
    plans, secret = layout
    ref = str(secret) if ref == "SECRET_ABS" else ref
    (plans / "sub").mkdir()
    with pytest.raises(PlanFileError) as exc:
        load_plan_file(_plan(plans, f"trace: {ref}"))
    text = _problem(exc)
    assert "workload.trace" in text and "outside the plan file's directory" in text and "--allow-outside-paths" in text
    assert "SECRET" not in text


def test_symlink_leaving_the_plan_dir_is_refused(layout) -> None:  # type: ignore[no-untyped-def]
    plans, secret = layout
    (plans / "innocent.trace").symlink_to(secret)
    with pytest.raises(PlanFileError) as exc:
        load_plan_file(_plan(plans, "trace: innocent.trace"))
    assert "outside the plan file's directory" in _problem(exc) and "SECRET" not in _problem(exc)


def test_allow_outside_paths_reads_it_but_never_echoes_content_when_untrusted(layout) -> None:  # type: ignore[no-untyped-def]
    plans, secret = layout
    with pytest.raises(PlanFileError) as exc:
        load_plan_file(_plan(plans, f"trace: {secret}"), allow_outside_paths=True)
    assert "workload.trace" in _problem(exc), "read (it is not a trace), so the error is about its format"
    # Under the plan dir an unparseable file gives its name and line, not its content.
    (plans / "bad.trace").write_text(SECRET + "\n" + SECRET + "\n")
    (plans / "bad.fio").write_text("[job]\n" + SECRET + "\n")
    for ref in ("trace: bad.trace", "fio: bad.fio"):
        with pytest.raises(PlanFileError) as exc:
            load_plan_file(_plan(plans, ref))
        text = _problem(exc)
        assert "bad." in text and "SECRET" not in text and "root:" not in text, text


@pytest.mark.timeout(60)
def test_fifo_and_devices_are_refused_without_reading(layout) -> None:  # type: ignore[no-untyped-def]
    plans, _ = layout
    os.mkfifo(plans / "pipe.trace")  # opening it for reading would block forever
    (plans / "zero.fio").symlink_to("/dev/zero")  # reading it would never end
    with pytest.raises(PlanFileError) as exc:
        load_plan_file(_plan(plans, "trace: pipe.trace"))
    assert "is not a regular file" in _problem(exc)
    with pytest.raises(PlanFileError) as exc:
        load_plan_file(_plan(plans, "fio: zero.fio"), allow_outside_paths=True)
    assert "is not a regular file" in _problem(exc)
    os.mkfifo(plans / "plan-pipe.yaml")
    with pytest.raises(PlanFileError) as exc:
        load_plan_file(plans / "plan-pipe.yaml")
    assert "is not a regular file" in _problem(exc)


def test_sizes_are_capped(layout) -> None:  # type: ignore[no-untyped-def]
    plans, _ = layout
    big = plans / "big.yaml"
    big.write_text("# " + "x" * MAX_PLAN_FILE_BYTES + "\n")
    with pytest.raises(PlanFileError) as exc:
        load_plan_file(big)
    assert f"over {MAX_PLAN_FILE_BYTES} bytes" in _problem(exc)
    (plans / "huge.fio").write_text("[job]\n" + ("; comment\n" * 200_000))
    with pytest.raises(PlanFileError) as exc:
        load_plan_file(_plan(plans, "fio: huge.fio"))
    assert "not a fio job file?" in _problem(exc)


# -- hostile files: exit 2, one line naming file and line, never a hang, a traceback or gigabytes --

def _bomb(levels: int = 9, width: int = 9, indent: str = "") -> str:
    """A "billion laughs": ``levels`` lists of ``width`` aliases of the one before (width^levels
    leaves from a few hundred bytes)."""
    out = [f'{indent}- &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        out.append(f"{indent}- &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    return "\n".join(out) + "\n"


_TAIL = "constraints:\n  usable_capacity_bytes: 1 TB\n"
_SMALL_DRIVE = """custom_drives:
  - name: tiny-ssd
    kind: ssd
    interface: sata-6g
    capacity_bytes: CAPACITY
    nand_type: mlc
    random_read_iops: 90000
    random_write_iops: 30000
    seq_read_bytes_per_s: 540e6
    SEQ_WRITE
    endurance_bytes_written: 3.5 PB
"""


def _drive(capacity: str, seq_write: str = "seq_write_bytes_per_s: 500e6") -> str:
    return _SMALL_DRIVE.replace("CAPACITY", capacity).replace("SEQ_WRITE", seq_write)


# (id, plan file text, the line the error names, words it must hold)
HOSTILE = [
    ("alias-bomb", "x:\n" + _bomb() + "workload:\n  read_fraction: 0.5\n" + _TAIL, 7, "MAX_YAML_NODES = 100,000"),
    ("alias-bomb-in-io-size-mix", "workload:\n  read_fraction: 0.5\n  io_size_mix:\n" + _bomb(indent="    ") + _TAIL, 9,
     "MAX_YAML_NODES = 100,000"),
    ("deep-flow-nesting", "workload: {read_fraction: 0.5, io_size_mix: " + "[" * 50_000 + "]" * 50_000 + "}\n" + _TAIL, 1,
     "MAX_YAML_DEPTH = 32"),
    ("deep-block-nesting", "workload:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(40)) + _TAIL, 33, "MAX_YAML_DEPTH = 32"),
    ("merge-key", "base: &w {read_fraction: 0.5}\nworkload:\n  <<: *w\n" + _TAIL, 3, "merge keys ('<<') are not supported"),
    ("5001-digit-int", "workload:\n  read_fraction: 0.5\n" + _TAIL + "seed: " + "9" * 5001 + "\n", 5, "MAX_YAML_INT_DIGITS = 40"),
    ("5001-digit-io-bytes", "workload:\n  io_size_mix:\n    - {io_bytes: " + "1" * 5001 + ", weight: 1}\n" + _TAIL, 3,
     "MAX_YAML_INT_DIGITS = 40"),
    ("recursive-alias", "workload: &w\n  read_fraction: 0.5\n  io_size_mix: [*w]\n" + _TAIL, 3, "recursive alias"),
    ("alias-uses", "a: &a 1\nb: [" + ", ".join(["*a"] * 101) + "]\n" + _TAIL, 2, "MAX_YAML_ALIASES = 100"),
    ("over-1-mib", "workload:\n  read_fraction: 0.5\n" + _TAIL + ("# " + "x" * 1000 + "\n") * 1100, 1050, "MAX_YAML_BYTES"),
    ("nul-character", "workload:\n  read_fraction: 0.5\n" + _TAIL + "x: \x00\n", 5, "not valid YAML"),
    ("bad-date", "workload:\n  read_fraction: 0.5\n" + _TAIL + "x: 2024-13-45\n", 5, "cannot read this value"),
    ("unknown-tag", "workload:\n  read_fraction: !!python/object:os.system ls\n" + _TAIL, 2, "cannot read this value"),
    ("mapping-key", "? [a, b]\n: c\n" + _TAIL, 1, "a key must be a plain value"),
    ("infinite-seed", "workload:\n  read_fraction: 0.5\n" + _TAIL + "seed: 1" + "0" * 400 + ".0\n", 5, "seed"),
    ("tiny-custom-drive", "workload:\n  read_fraction: 0.5\n" + _TAIL + _drive("1"), 9, "custom_drives[0].capacity_bytes: must be >= 655360"),
    ("raw-nand-below-capacity", "workload:\n  read_fraction: 0.5\n" + _TAIL + _drive("960 GB\n    raw_nand_bytes: 960 GB"), 10,
     "custom_drives[0].raw_nand_bytes: must be in [1004044614315, 19980487784897]"),
    ("spare-factor-of-assumed-raw", "workload:\n  read_fraction: 0.5\n" + _TAIL + _drive("1 MB"), 9,
     "custom_drives[0].capacity_bytes: must be in [51589940, 1026639789] with raw_nand_bytes 1073741824"),
    ("ssd-without-seq-write", "workload:\n  read_fraction: 0.5\n" + _TAIL + _drive("480 GB", "price_usd: 100"), 6,
     "custom_drives[0].seq_write_bytes_per_s: is required for kind 'ssd'"),
    ("undrainable-write-buffer", "workload:\n  read_fraction: 0.5\n" + _TAIL + _drive("480 GB") + "    write_buffer_bytes: 1 TB\n", 16,
     "custom_drives[0].write_buffer_bytes: the write buffer takes too long to drain"),
]

# Runs a command as its child with its address space capped (a regression fails with a MemoryError
# instead of taking the shared machine's memory: an 80 MiB one-line trace once took 14.7 GB) and
# prints the child's peak resident memory in bytes, then its exit code; the child's stderr passes on.
_MEASURE = """
import resource, subprocess, sys
limit = int(sys.argv[1])
def cap():
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
out = subprocess.run(sys.argv[2:], capture_output=True, text=True, preexec_fn=cap)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
print(out.returncode)
sys.stderr.write(out.stderr)
"""
ADDRESS_SPACE_BYTES = 4 << 30
MEMORY_SLACK_BYTES = 48 << 20  # a hostile file may cost this much more than a one-line bad one


def _cli_measured(*args: str) -> tuple[int, str, int]:
    """(exit code, stderr, peak RSS in bytes) of ``arrayplan ARGS``."""
    cmd = [sys.executable, "-c", _MEASURE, str(ADDRESS_SPACE_BYTES), sys.executable, "-m", "arrayplan_services.cli.main", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=True)
    rss, code = (int(x) for x in out.stdout.split())
    return code, out.stderr, rss


def _one_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr[:3000]
    return lines[0]


@pytest.fixture(scope="module")
def baseline_rss(tmp_path_factory: pytest.TempPathFactory) -> int:
    """Peak RSS of refusing a plan whose trace is one short bad line (every module a plan file's
    loader and the trace reader import)."""
    d = tmp_path_factory.mktemp("baseline")
    (d / "bad.trace").write_text("not a trace\n")
    code, err, rss = _cli_measured("plan", str(_plan(d, "trace: bad.trace")))
    assert code == 2 and "bad.trace:1:" in _one_line(err)
    return rss


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("text", "line", "words"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_hostile_plan_files_exit_2_with_one_line(tmp_path: Path, baseline_rss: int, text: str, line: int, words: str) -> None:
    plan = tmp_path / "hostile.yaml"
    plan.write_text(text)
    code, err, rss = _cli_measured("plan", str(plan))
    shown = _one_line(err)
    assert code == 2, err
    assert f"{plan}:{line}: " in shown and words in shown, shown
    assert rss < baseline_rss + MEMORY_SLACK_BYTES, f"peak RSS {rss / 2**20:.0f} MiB vs {baseline_rss / 2**20:.0f} MiB"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("compress", ["", ".gz"])
def test_a_giant_one_line_trace_is_refused_after_one_line_limit(tmp_path: Path, baseline_rss: int, compress: str) -> None:
    """64 MiB without a line break (sparse on disk, or gzip of it): refused naming file and line 1
    after reading MAX_LINE_CHARS of it; the peak memory stays the baseline's."""
    import gzip

    from arrayplan_engine.trace import MAX_LINE_CHARS

    name = f"big.trace{compress}"
    head = b"128166372003061629,hm,1,Read,383496192,32768,"
    if compress:
        with gzip.open(tmp_path / name, "wb", compresslevel=1) as f:
            f.write(head)
            zeros = bytes(1 << 20)
            for _ in range(64):
                f.write(zeros)
    else:
        with open(tmp_path / name, "wb") as f:
            f.write(head)
            f.truncate(64 << 20)
    code, err, rss = _cli_measured("plan", str(_plan(tmp_path, f"trace: {name}")))
    shown = _one_line(err)
    assert code == 2
    assert f"workload.trace: {name}:1: the line is over {MAX_LINE_CHARS:,} characters" in shown, shown
    assert rss < baseline_rss + MEMORY_SLACK_BYTES, f"peak RSS {rss / 2**20:.0f} MiB vs {baseline_rss / 2**20:.0f} MiB"


@pytest.mark.parametrize(("trace", "words"), [
    ("128166372003061629,hm,1,Read," + "9" * 30 + ",4096,100\n", "Offset"),
    ("128166372003061629,hm,1,Read," + "9" * 5000 + ",4096,100\n", "is not an integer"),
    ("1" * 5000 + ",hm,1,Read,0,4096,100\n", "is not an integer"),
    ("8,0 0 1 " + "9" * 400 + ".0 1 D W 0 + 8 [x]\n", "beyond"),
    ("8,0 0 1 0.000000000 1 D W " + "9" * 5000 + " + 8 [x]\n", "is not an integer"),
    ("0," + "7" * 3000 + ",4096,r,0.0\n", "out of range"),
])
def test_hostile_trace_records_are_line_numbered_errors(layout, trace: str, words: str) -> None:  # type: ignore[no-untyped-def]
    plans, _ = layout
    (plans / "h.trace").write_text(trace)
    with pytest.raises(PlanFileError) as exc:
        load_plan_file(_plan(plans, "trace: h.trace"))
    assert "h.trace:1:" in _problem(exc) and words in _problem(exc), _problem(exc)
    assert len(_problem(exc)) < 600, "a field is echoed at most 200 characters"


def test_fio_warnings_never_repeat_the_file(layout) -> None:  # type: ignore[no-untyped-def]
    plans, _ = layout
    (plans / "w.fio").write_text(f"[job]\nrw=randread:{SECRET}\nbs=4k\nthinktime={SECRET}\nsecret-hash-content=1\n"
                                 f"random_distribution=zoned_abs={SECRET}\n")
    spec, warnings = load_plan_file(_plan(plans, "fio: w.fio"))
    assert spec.workload.io_size_mix
    assert len(warnings) >= 4 and not [w for w in warnings if "secret" in w.lower() or "root:" in w], warnings
    assert any("w.fio: fio:4:thinktime: is not supported" in w for w in warnings), warnings
    assert any("w.fio: fio:5:<option>: is not supported" in w for w in warnings), warnings


def test_the_loader_reports_each_limit_with_its_value() -> None:
    from arrayplan_services.api import safe_yaml as sy

    cases = [("x:\n" + _bomb(), "MAX_YAML_NODES", sy.MAX_YAML_NODES),
             ("x: " + "[" * 40 + "]" * 40 + "\n", "MAX_YAML_DEPTH", sy.MAX_YAML_DEPTH),
             ("a: &a 1\nb: [" + ", ".join(["*a"] * 101) + "]\n", "MAX_YAML_ALIASES", sy.MAX_YAML_ALIASES),
             ("x: " + "1" * 41 + "\n", "MAX_YAML_INT_DIGITS", sy.MAX_YAML_INT_DIGITS),
             ("x: 1\n" + "#" * sy.MAX_YAML_BYTES, "MAX_YAML_BYTES", sy.MAX_YAML_BYTES)]
    for text, limit, value in cases:
        with pytest.raises(sy.YamlLimitError) as exc:
            sy.load_document(text, "f.yaml")
        assert (exc.value.path, exc.value.limit, exc.value.limit_value) == ("f.yaml", limit, value)
        assert exc.value.line is not None and f"f.yaml:{exc.value.line}:" in str(exc.value)
        assert f"{limit} = {value:,}" in str(exc.value)
    # Just inside every limit it loads: 40 digits, 32 levels, 100 aliases, aliases expanding to < 100,000 nodes.
    ok = ("n: " + "1" * 40 + "\nd: " + "[" * 31 + "]" * 31 + "\na: &a [1, 2, 3]\nb: [" + ", ".join(["*a"] * 99) + "]\n"
          "w: &w {x: 1}\nv: *w\n")
    doc = sy.load_document(ok, "ok.yaml")
    assert doc is not None and doc.data["n"] == int("1" * 40) and len(doc.data["b"]) == 99 and doc.data["v"] == {"x": 1}
    assert doc.lines[("b",)] == 4 and doc.lines[("v",)] == 6


def test_array_and_workload_files_use_the_same_loader(tmp_path: Path) -> None:
    from arrayplan_services.api.arrayfile import load_array_file

    array = tmp_path / "array.yaml"
    array.write_text("name: a\nlayout: raid5\n" + "x:\n" + _bomb())
    with pytest.raises(PlanFileError) as exc:
        load_array_file(array)
    assert f"{array}:9:" in str(exc.value) and "MAX_YAML_NODES" in str(exc.value)
    os.mkfifo(tmp_path / "array-pipe.yaml")
    with pytest.raises(PlanFileError) as exc:
        load_array_file(tmp_path / "array-pipe.yaml")
    assert "is not a regular file" in str(exc.value)
    workload = tmp_path / "w.yaml"
    workload.write_text("read_fraction: 0.5\nio_size_mix:\n" + _bomb())
    code, err, _ = _cli_measured("simulate", "--drive", "intel-dc-s3500-480gb", "--drives", "4", "--layout", "raid10",
                                 "--workload", str(workload))
    assert code == 2 and f"{workload}:8:" in _one_line(err) and "MAX_YAML_NODES" in err, err


def test_hostile_telemetry_json_is_a_named_problem(tmp_path: Path) -> None:
    from arrayplan_services.api.smart_io import MAX_TELEMETRY_FILE_BYTES, read_telemetry

    (tmp_path / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    (tmp_path / "bigint.json").write_text('{"x": ' + "1" * 5001 + "}")
    with open(tmp_path / "huge.json", "wb") as f:
        f.truncate(MAX_TELEMETRY_FILE_BYTES + 1)
    snaps, problems = read_telemetry([tmp_path])
    got = {Path(p.source).name: p.message for p in problems}
    assert not snaps and set(got) == {"deep.json", "bigint.json", "huge.json"}, got
    assert "recursion" in got["deep.json"] and "4300 digits" in got["bigint.json"]
    assert f"over {MAX_TELEMETRY_FILE_BYTES} bytes" in got["huge.json"]


def test_a_catalog_drive_the_models_cannot_use_is_refused_with_its_line(tmp_path: Path) -> None:
    """``--catalog DIR``: raw NAND below the rated capacity (spare factor < 0.005) is one line naming
    the file, the line of [raw_nand_bytes] and the range, exit 2; the same file with 4 TiB loads."""
    acme = (Path(__file__).resolve().parents[1] / "engine" / "test_catalog_files.py").read_text().split('GOOD = """')[1].split('"""')[0]
    (tmp_path / "catalog").mkdir()
    bad = tmp_path / "catalog" / "acme.toml"
    bad.write_text(acme.replace("value = 4398046511104", "value = 3840000000000"))
    code, err, _ = _cli_measured("drives", "--catalog", str(tmp_path / "catalog"), "--format", "json")
    shown = _one_line(err)
    line = next(i for i, ln in enumerate(bad.read_text().splitlines(), start=1) if ln.startswith("[raw_nand_bytes]"))
    assert code == 2 and f"{bad}:{line}: raw_nand_bytes: must be in [" in shown and "spare factor" in shown, shown
    bad.write_text(acme)
    code, err, _ = _cli_measured("drives", "--catalog", str(tmp_path / "catalog"), "--format", "json")
    assert code == 0, err
