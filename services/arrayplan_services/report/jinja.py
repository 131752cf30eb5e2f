"""The report's one Jinja2 environment, shared by the plan report (``page``) and the forecast page
(``forecast``): templates under ``templates/``; HTML (``.html``, ``.html.j2``) autoescaped, so every
value a template prints is escaped unless it is already markup; Markdown templates not (their
table cells go through ``markdown.cell``, the ``cell`` filter); an undefined name is an error."""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from . import markdown as md

ENV = Environment(loader=PackageLoader("arrayplan_services.report", "templates"),
                  autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
                  undefined=StrictUndefined, keep_trailing_newline=True)
ENV.filters["cell"] = md.cell
