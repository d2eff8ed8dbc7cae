"""Writes expected.json: the paragraphs python-docx and python-pptx report for each
fixture, for casebook-core's reader tests (src-tauri/core/tests/reader_fixtures.rs).

Run from the repository root with python-docx 1.2 and python-pptx 1.0:
    .venv/bin/python tests/data/reader/expected.py

Word: python-docx's body paragraphs and table-cell paragraphs (nested tables too), in
document order. python-docx's Paragraph.text reads only runs and hyperlinks directly
in the paragraph, so for a paragraph that also holds tracked insertions, simple
fields, smart tags, custom XML or inline content controls, the text is the paragraph's
own w:t/w:tab/w:br runs read with lxml (not deleted, not the mc:Fallback copy, not a
nested text box's). PowerPoint: python-pptx's paragraphs of every text frame and table
cell on every slide, recursing into groups; "Title"/"Subtitle" for title placeholders;
and each slide's speaker notes (python-pptx's notes text frame, the body placeholder).
Texts are as the libraries give them (tabs, "\\n", "\\v" kept); empty ones are kept.
"""

import json
import pathlib

import docx
import pptx
from docx.table import Table, _Cell
from docx.text.paragraph import Paragraph
from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER

ROOT = pathlib.Path(__file__).resolve().parent.parent
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
INCOMPLETE = {W + t for t in ("ins", "fldSimple", "smartTag", "customXml", "sdt", "moveTo")}
SKIP = {W + "del", W + "moveFrom", MC_FALLBACK, W + "p"}
PIECES = {W + "t": None, W + "tab": "\t", W + "ptab": "\t", W + "br": "\n", W + "cr": "\n", W + "noBreakHyphen": "-"}


def own_text(p):
    out = []
    for node in p.iter(*PIECES):
        if node.getparent() is None or node.getparent().tag != W + "r":
            continue
        anc, keep = node.getparent(), True
        while anc is not None and anc is not p:
            if anc.tag in SKIP:
                keep = False
                break
            anc = anc.getparent()
        if keep:
            out.append(node.text or "" if PIECES[node.tag] is None else PIECES[node.tag])
    return "".join(out)


def docx_paragraph(p, in_table):
    el = p._p
    incomplete = any(child.tag in INCOMPLETE for child in el.iter() if child is not el)
    return {
        "text": own_text(el) if incomplete else p.text,
        "style": el.style,
        "table": in_table,
        "pythonDocxText": p.text,
    }


def blocks(container, in_table):
    for item in container.iter_inner_content():
        if isinstance(item, Paragraph):
            yield docx_paragraph(item, in_table)
        elif isinstance(item, Table):
            for tr in item._tbl.tr_lst:
                for tc in tr.tc_lst:
                    yield from blocks(_Cell(tc, item), True)


def read_docx(path):
    d = docx.Document(str(path))
    return {"paragraphs": list(blocks(d, False))}


def shape_paragraphs(shape):
    if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
        for s in shape.shapes:
            yield from shape_paragraphs(s)
        return
    style = None
    if shape.is_placeholder:
        t = shape.placeholder_format.type
        if t in (PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE):
            style = "Title"
        elif t == PP_PLACEHOLDER.SUBTITLE:
            style = "Subtitle"
    if shape.has_text_frame:
        for p in shape.text_frame.paragraphs:
            yield {"text": p.text, "style": style}
    if getattr(shape, "has_table", False) and shape.has_table:
        for row in shape.table.rows:
            for cell in row.cells:
                for p in cell.text_frame.paragraphs:
                    yield {"text": p.text, "style": None}


def notes_paragraphs(slide):
    if not slide.has_notes_slide:
        return []
    frame = slide.notes_slide.notes_text_frame
    return [] if frame is None else [{"text": p.text, "style": None} for p in frame.paragraphs]


def read_pptx(path):
    prs = pptx.Presentation(str(path))
    return {
        "slides": [[p for s in slide.shapes for p in shape_paragraphs(s)] for slide in prs.slides],
        "notes": [notes_paragraphs(slide) for slide in prs.slides],
    }


def main():
    out = {}
    for path in sorted((ROOT / "docx").glob("*.docx")):
        out[f"docx/{path.name}"] = read_docx(path)
    for path in sorted((ROOT / "pptx").glob("*.pptx")):
        out[f"pptx/{path.name}"] = read_pptx(path)
    out["generator"] = f"python-docx {docx.__version__}, python-pptx {pptx.__version__}"
    (ROOT / "reader" / "expected.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
