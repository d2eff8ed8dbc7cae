#!/usr/bin/env python3
"""Opens .docx/.pptx files with python-docx / python-pptx (tools Casebook did not write)
and prints, as JSON, the text they see: one entry per file, with `paragraphs` (the
body's, or every slide's), for a deck `slides` and `notes` (each slide's speaker notes,
"" for none), and the core properties `author` and `lastModifiedBy`.

Usage: office_check.py FILE...   Exits 1 if any file fails to open.
"""
import json
import sys


def docx_texts(path):
    import docx

    doc = docx.Document(path)
    props = doc.core_properties
    qn = docx.oxml.ns.qn
    # Every paragraph of the body, including those in tables, content controls and
    # text boxes, which Document.paragraphs leaves out; and every w:t, including
    # tracked insertions, which Paragraph.text leaves out.
    return [
        "".join(t.text or "" for t in p.iter(qn("w:t")))
        for p in doc.element.body.iter(qn("w:p"))
    ], props


def pptx_texts(path):
    import pptx
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    prs = pptx.Presentation(path)
    texts = []

    def walk(shapes):
        for shape in shapes:
            if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
                walk(shape.shapes)
                continue
            if shape.has_text_frame:
                texts.extend(p.text for p in shape.text_frame.paragraphs)
            if getattr(shape, "has_table", False) and shape.has_table:
                for row in shape.table.rows:
                    for cell in row.cells:
                        texts.extend(p.text for p in cell.text_frame.paragraphs)

    notes = []
    for slide in prs.slides:
        walk(slide.shapes)
        notes.append(
            slide.notes_slide.notes_text_frame.text
            if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None
            else ""
        )
    return texts, len(prs.slides), notes, prs.core_properties


def main():
    out = []
    failed = False
    for path in sys.argv[1:]:
        entry = {"path": path}
        try:
            if path.endswith(".docx"):
                entry["paragraphs"], props = docx_texts(path)
            elif path.endswith(".pptx"):
                entry["paragraphs"], entry["slides"], entry["notes"], props = pptx_texts(path)
            else:
                raise ValueError("not a .docx or .pptx name")
            entry["author"] = props.author or ""
            entry["lastModifiedBy"] = props.last_modified_by or ""
        except Exception as e:  # report every file, then fail
            entry["error"] = f"{type(e).__name__}: {e}"
            failed = True
        out.append(entry)
    json.dump(out, sys.stdout)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
