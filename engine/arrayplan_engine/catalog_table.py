"""docs/catalog.md's tables: every catalog drive's summary and the provenance of each figure
(``catalog_markdown``; tests/engine/test_catalog.py checks the doc holds what it generates)."""

from __future__ import annotations

from typing import Any

from .catalog import PROVENANCED_FIELDS, Catalog, builtin_catalog
from .units import GB, MB, TB, GiB


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _num(value: float | None, scale: float, fmt: str = "{:g}") -> str:
    return "-" if value is None else fmt.format(value / scale)


def catalog_markdown(catalog: Catalog | None = None) -> str:
    """The drive tables of docs/catalog.md: a summary, then every value of every drive with its
    source and quote (or, for an assumed value, the reason). Pure; the test compares it with the
    file."""
    cat = builtin_catalog() if catalog is None else catalog
    lines = [
        "## Summary",
        "",
        "Assumed values are counted in the last column; see each drive's table for the reasons.",
        "",
        (
            "| name | kind | interface | capacity GB | raw NAND GiB | spare factor | rand read IOPS "
            "| rand write IOPS (fresh) | steady write IOPS | seq read / write MB/s | endurance TB "
            "| P/E | active / idle W | price USD (year) | AFR % | assumed |"
        ),
        (
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- "
            "| --- | ---: | ---: |"
        ),
    ]
    for d in cat:
        spare = d.spare_bytes_per_user_byte
        year = "" if d.price_year is None else f" ({d.price_year})"
        afr = d.annual_failure_rate
        lines.append(
            "| "
            + " | ".join(
                [
                    f"`{d.name}`",
                    d.kind,
                    d.interface,
                    _num(d.capacity_bytes, GB),
                    _num(d.raw_nand_bytes, GiB),
                    "-" if spare is None else f"{spare:.3f}",
                    _num(d.random_read_iops, 1, "{:,.0f}"),
                    _num(d.random_write_iops, 1, "{:,.0f}"),
                    _num(d.steady_random_write_iops, 1, "{:,.0f}"),
                    f"{_num(d.seq_read_bytes_per_s, MB, '{:,.0f}')} / {_num(d.seq_write_bytes_per_s, MB, '{:,.0f}')}",
                    _num(d.endurance_bytes_written, TB, "{:,.1f}"),
                    _num(d.pe_cycles, 1, "{:,.0f}"),
                    f"{_num(d.active_power_w, 1)} / {_num(d.idle_power_w, 1)}",
                    ("-" if d.price_usd is None else f"{d.price_usd:,.2f}") + year,
                    "-" if afr is None else f"{afr * 100:.2f}",
                    str(len(d.assumed_fields)),
                ]
            )
            + " |"
        )
    for d in cat:
        lines += [
            "",
            f"## `{d.name}` — {d.display_name}",
            "",
            f"vendor {d.vendor}; family {d.family or '-'}; kind {d.kind}",
            "",
            "| field | value | source | quote / note |",
            "| --- | --- | --- | --- |",
        ]
        for f in PROVENANCED_FIELDS:
            value = getattr(d, f)
            if value is None:
                continue
            p = d.provenance[f]
            src = p.source or "-"
            if p.assumed:
                text = f"**assumed**: {p.reason}"
                if p.quote:
                    text += f" (seed: \"{p.quote}\")"
            else:
                text = f"\"{p.quote}\""
                if p.reason:
                    text += f" — {p.reason}"
            shown = str(value) if f == "price_year" else _value_text(value)
            lines.append(f"| {f} | {_cell(shown)} | {_cell(src)} | {_cell(text)} |")
    return "\n".join(lines) + "\n"
