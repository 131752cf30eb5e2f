"""Workload presets as data files (arrayplan_engine/data/presets/*.toml): the same values the
former hand-written ``presets._build`` produced, and clear errors for a bad file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arrayplan_engine.presets import PresetFileError, all_presets, load_preset_files, preset_from_toml

# repr() of every Preset (workload, provenance, aliases, description) as the hand-written
# presets._build() produced it before the presets became files, computed once from that code.
BEFORE = json.loads((Path(__file__).parent / "data" / "presets_before_files.json").read_text())["presets"]

GOOD = """name = "p"
description = "a preset"
source = "assumed: test"

[read_fraction]
value = 0.5
[[read_fraction.provenance]]
assumed = true
reason = "half reads, for the test"

[io_size_mix]
value = [[4096, 3], [8192, 1]]
"""


def test_every_preset_loaded_from_its_file_equals_the_former_code() -> None:
    loaded = {p.name: p for p in all_presets()}
    assert sorted(loaded) == sorted(BEFORE)
    for name, expected in BEFORE.items():
        # repr shows every field of the Preset and its Workload, floats to the last bit and int vs
        # float, so equal reprs mean equal values.
        assert repr(loaded[name]) == expected, name


def test_a_good_file_renormalises_the_weights_as_given() -> None:
    p = preset_from_toml(GOOD, "p.toml")
    assert p.workload.io_size_mix == ((4096, 0.75), (8192, 0.25))
    assert p.workload.read_fraction == 0.5 and p.assumed_fields == ("read_fraction",)
    assert p.workload.notes == ("read_fraction: assumed - half reads, for the test",)


@pytest.mark.parametrize(("text", "line", "expected"), [
    (GOOD.replace("value = 0.5", "value = 1.5"), 6, "read_fraction"),
    (GOOD.replace("value = 0.5", 'value = "half"'), 6, "read_fraction.value: must be a number, got 'half'"),
    (GOOD.replace("[[4096, 3], [8192, 1]]", "[[4096, -3]]"), 12, "io_size_mix.value: must be a non-empty list of [IO bytes"),
    (GOOD.replace('reason = "half reads, for the test"', 'quote = "x"'), 7, "an assumed value needs a reason"),
    (GOOD.replace("assumed = true", 'assumed = "yes"'), 7, "assumed must be true or false, got 'yes'"),
    (GOOD + "\n[queue_dept]\nvalue = 4\n", 14, "queue_dept: not a workload field; allowed: read_fraction"),
    (GOOD.replace('description = "a preset"\n', ""), None, "description: required: a non-empty string"),
    (GOOD + "\n[read_fraction]\n", 14, "not valid TOML"),
])
def test_a_bad_file_names_the_file_line_and_field(text: str, line: int | None, expected: str) -> None:
    with pytest.raises(PresetFileError) as exc:
        preset_from_toml(text, "presets/p.toml")
    message = str(exc.value)
    assert expected in message
    assert message.startswith(f"presets/p.toml:{line if line is not None else '?'}:"), message


def test_a_name_taken_twice_names_the_second_file() -> None:
    with pytest.raises(PresetFileError) as exc:
        load_preset_files([("a.toml", GOOD), ("b.toml", GOOD)])
    assert str(exc.value).startswith("b.toml:1: name: 'p' is already taken by preset 'p'")
