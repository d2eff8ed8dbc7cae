#!/usr/bin/env python3
"""Reads a report's Word document with python-docx (a tool Casebook did not write) and
prints, as JSON: the core properties `title`, `author` and `created`; each body paragraph
with its `style` name, its `text` and its `links` (each hyperlink's `address`, its
internal `fragment` and its `text`, as python-docx resolves them through the part's
relationships); and how many `tables` the body has.

Usage: report_check.py FILE.docx
"""
import json
import sys

import docx


def main():
    doc = docx.Document(sys.argv[1])
    props = doc.core_properties
    out = {
        "title": props.title or "",
        "author": props.author or "",
        "created": props.created.isoformat() if props.created else "",
        "paragraphs": [
            {
                "style": p.style.name if p.style is not None else "",
                "text": p.text,
                "links": [
                    {"address": h.address, "fragment": h.fragment, "text": h.text}
                    for h in p.hyperlinks
                ],
            }
            for p in doc.paragraphs
        ],
        "tables": len(doc.tables),
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
