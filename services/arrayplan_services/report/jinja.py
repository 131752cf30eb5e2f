"""The report's one Jinja2 environment, shared by the plan report (``page``) and the forecast page
(``forecast``): templates under ``templates/``; HTML (``.html``, ``.html.j2``) autoescaped, so every
value a template prints is escaped unless it is already markup; Markdown templates escape every value
through ``markdown.inline`` (the environment's ``finalize``; tables are built by ``markdown.table``
and passed as ``Markup``); an undefined name is an error."""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, pass_eval_context, select_autoescape
from jinja2.nodes import EvalContext
from markupsafe import Markup

from . import markdown as md


@pass_eval_context
def _finalize(eval_ctx: EvalContext, value: Any) -> Any:
    """Markdown templates escape every value they print (``markdown.inline``: no raw HTML, no
    link or image syntax from what users wrote) unless it is Markdown the code built already
    (``Markup``: a table from ``markdown.table``, an image address); HTML templates autoescape."""
    if eval_ctx.autoescape or isinstance(value, Markup) or value is None:
        return value
    if isinstance(value, (int, float)):
        return value
    return md.inline(value)


ENV = Environment(loader=PackageLoader("arrayplan_services.report", "templates"),
                  autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
                  undefined=StrictUndefined, keep_trailing_newline=True, finalize=_finalize)
ENV.filters["cell"] = md.cell


def _code(value: Any) -> Markup:
    """A value shown in a Markdown code span (``{{ x | code }}`` inside backticks): printed as it
    is (a code span shows backslashes, entities and HTML literally), with no backtick or line break
    that could end the span."""
    return Markup(str(value).replace("`", "'").replace("\n", " ").replace("\r", " "))


ENV.filters["code"] = _code
