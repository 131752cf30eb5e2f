"""Where a value came from: the one provenance record the drive catalog and the workload presets
share.

A sourced value names its ``source`` (a seed file such as ``001_4993870e060cd6fa.txt``, a shared
data file such as ``data/reliability/survival.csv`` or ``seeds/000_....txt``, a web address such as
``https://...`` for a datasheet or review, or ``user``) and the exact sentence or table row it was
read from (``quote``, a verbatim substring of the source up to whitespace). ``assumed=True`` marks
a value no source gives; ``reason`` then says what it is and why (an assumed value may still quote
the sentence that supports it). On a sourced value ``reason`` is an optional note (how a table was
read, the arithmetic from the quote to the value). ``field`` names the value the record is about
where the record is not already keyed by it (a preset's list of records).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Provenance"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Provenance:
    """Where one value came from (see the module doc)."""

    source: str = ""
    quote: str = ""
    assumed: bool = False
    reason: str = ""
    field: str = ""

    def __post_init__(self) -> None:
        if self.assumed and not self.reason:
            raise ValueError("an assumed value needs a reason")
        if not self.assumed and not (self.source and self.quote):
            raise ValueError("a sourced value needs a source and a quote")

    def __str__(self) -> str:
        if self.assumed:
            return f"{self.field}: assumed - {self.reason}"
        return f"{self.field}: {self.source}: \"{self.quote}\""
