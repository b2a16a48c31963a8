"""A Jupyter notebook (*.ipynb) as a page of the site, without a kernel and without pandoc.

The notebook is read with nbformat and turned into MyST markdown, which the MyST parser then reads like any page
(so its links are checked too): a markdown cell as it is, a code cell as a python code block, and the outputs
stored in the notebook as they were when it was last executed (tools/docs.sh --execute-notebook refreshes them;
the DocsNotebook test executes it with nbconvert): text as a literal block, HTML and PNG images as raw HTML,
LaTeX (sympy's, clmbench.Equations') as a math block.
"""
import base64
import html

import nbformat
from myst_parser.parsers.sphinx_ import MystParser


def _fence(text, info=""):
    """A code fence long enough for any backticks inside the text."""
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{info}\n{text.rstrip()}\n{ticks}\n"


def _raw_html(text):
    return _fence(text, "{raw} html")


def _output(out):
    kind = out.get("output_type")
    if kind == "stream":
        return _fence("".join(out.get("text", "")), "text")
    if kind == "error":
        return _fence("\n".join([f"{out.get('ename')}: {out.get('evalue')}"]), "text")
    data = out.get("data", {})
    if "text/html" in data:
        return _raw_html("<div class='nb-output'>" + "".join(data["text/html"]) + "</div>")
    if "image/png" in data:
        png = "".join(data["image/png"]).replace("\n", "")
        base64.b64decode(png)  # a damaged image is an error here, not a broken page
        return _raw_html(f"<div class='nb-output'><img alt='output' src='data:image/png;base64,{png}'/></div>")
    if "text/latex" in data:  # sympy objects, clmbench.Equations: typeset by the site's MathJax
        tex = "".join(data["text/latex"]).strip()
        for delimiter in ("$$", "$"):
            if tex.startswith(delimiter) and tex.endswith(delimiter) and len(tex) > 2 * len(delimiter):
                tex = tex[len(delimiter):-len(delimiter)]
                break
        return _fence(tex, "{math}")
    if "text/plain" in data:
        return _fence("".join(data["text/plain"]), "text")
    return ""


def notebook_to_myst(text):
    nb = nbformat.reads(text, as_version=4)
    parts = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            parts.append(cell.source.rstrip() + "\n")
        elif cell.cell_type == "code":
            if cell.source.strip():
                parts.append(_fence(cell.source, "python"))
            for out in cell.get("outputs", []):
                rendered = _output(out)
                if rendered:
                    parts.append(rendered)
    return "\n".join(parts)


class NotebookParser(MystParser):
    supported = ("jupyter_notebook", "ipynb")

    def parse(self, inputstring, document):
        return super().parse(notebook_to_myst(inputstring), document)


def setup(app):
    app.add_source_suffix(".ipynb", "jupyter_notebook")
    app.add_source_parser(NotebookParser)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
