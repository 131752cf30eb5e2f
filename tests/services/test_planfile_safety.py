"""Plan files are untrusted (a CI job plans whatever a pull request wrote): the files they name
stay under the plan file's directory, only regular files are read, sizes are capped and no
error repeats a file's content (issue 12, part 6)."""

from __future__ import annotations

import os
import shutil
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
