#!/usr/bin/env python3
"""Judges a review copy (a cited Word document whose insertions are tracked changes) the
way Word's Accept All and Reject All would see it, reading the XML with python-docx's own
parser (lxml), and prints one JSON object:

- `opens`, `original_opens`: python-docx opened the review copy (`error` says why not),
  and the original (it opens no Strict OOXML, whoever wrote it);
- `rejected`, `original_rejected`: the non-blank paragraphs of the review copy and of the
  original with every tracked change rejected (insertions and moved-to text gone, an
  inserted paragraph mark joining its paragraph to the next, deletions kept);
- `accepted`, `cited_accepted`: the same with every change accepted, for the review copy
  and the service's cited document;
- `insertions`: for each paragraph holding text inserted by AUTHOR, that text (the
  paragraph's insertions joined), in document order;
- `whole_paragraphs`: how many paragraphs have their mark inserted by AUTHOR;
- `ids`, `duplicate_ids`: how many change ids (`w:ins`, `w:del`) the main part has, and
  which are used twice;
- `authors`, `dates`: the authors and dates of the changes AUTHOR's are among;
- `changed_parts`: parts of the package whose bytes differ from the cited document's.

Usage: review_check.py ORIGINAL CITED REVIEW AUTHOR. Exits 0 whatever it finds.
"""
import copy
import json
import sys
import zipfile

import docx
from docx.oxml.ns import qn
from lxml import etree

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"


def main_part(path):
    """The main document part's name, from the package's relationships."""
    with zipfile.ZipFile(path) as z:
        rels = etree.fromstring(z.read("_rels/.rels"))
        for r in rels:
            if r.get("Type", "").endswith("/officeDocument"):
                return r.get("Target").lstrip("/")
    return "word/document.xml"


def root_of(path):
    with zipfile.ZipFile(path) as z:
        return etree.fromstring(z.read(main_part(path)))


def ns_of(root):
    """The WordprocessingML namespace the part uses (Transitional or Strict)."""
    return etree.QName(root).namespace or W


def unwrap(el):
    parent = el.getparent()
    at = parent.index(el)
    for child in list(el):
        parent.insert(at, child)
        at += 1
    parent.remove(el)


def mark_of(p, w, kind):
    """The paragraph mark's `w:ins` or `w:del`, if any."""
    ppr = p.find(f"{{{w}}}pPr")
    rpr = ppr.find(f"{{{w}}}rPr") if ppr is not None else None
    return rpr.find(f"{{{w}}}{kind}") if rpr is not None else None


def join_with_next(p):
    nxt = p.getnext()
    w = etree.QName(p).namespace
    if nxt is not None and nxt.tag == p.tag:
        at = 1 if nxt.find(f"{{{w}}}pPr") is not None else 0
        for child in [c for c in p if etree.QName(c).localname != "pPr"]:
            nxt.insert(at, child)
            at += 1
    p.getparent().remove(p)


def resolve(root, accept):
    """Every tracked change accepted (or rejected) in place."""
    w = ns_of(root)
    gone, kept = (("del", "moveFrom"), ("ins", "moveTo")) if accept else (("ins", "moveTo"), ("del", "moveFrom"))
    for p in list(root.iter(f"{{{w}}}p")):
        mark = mark_of(p, w, "del" if accept else "ins")
        if mark is not None:
            mark.getparent().remove(mark)
            p.set("joins", "1")
        other = mark_of(p, w, "ins" if accept else "del")
        if other is not None:
            other.getparent().remove(other)
    for kind in gone:
        for el in list(root.iter(f"{{{w}}}{kind}")):
            if el.getparent() is not None and etree.QName(el.getparent()).localname != "rPr":
                el.getparent().remove(el)
    for kind in kept:
        for el in list(root.iter(f"{{{w}}}{kind}")):
            if el.getparent() is not None and etree.QName(el.getparent()).localname != "rPr":
                unwrap(el)
    for t in list(root.iter(f"{{{w}}}delText")):
        t.tag = f"{{{w}}}t"
    for p in list(root.iter(f"{{{w}}}p")):
        if p.get("joins"):
            join_with_next(p)
    return root


def paragraphs(root):
    """Each paragraph's text (tabs and breaks as spaces), text boxes as paragraphs of
    their own, Word's fallback copies left out; blank ones dropped."""
    w = ns_of(root)
    out = []
    for p in root.iter(f"{{{w}}}p"):
        if any(etree.QName(a).localname == "Fallback" for a in p.iterancestors()):
            continue
        text = []
        for el in p.iter():
            if el is p:
                continue
            owner = next(a for a in el.iterancestors(f"{{{w}}}p"))
            if owner is not p:
                continue
            if any(etree.QName(a).localname in ("Fallback", "del", "moveFrom") for a in el.iterancestors()):
                continue
            name = etree.QName(el).localname
            if name == "t":
                text.append(el.text or "")
            elif name in ("tab", "ptab", "br", "cr") and etree.QName(el.getparent()).localname == "r":
                text.append(" ")
            elif name == "noBreakHyphen":
                text.append("-")
        s = "".join(text)
        if s.strip():
            out.append(s)
    return out


def insertions(root, author):
    w = ns_of(root)
    out, whole = [], 0
    for p in root.iter(f"{{{w}}}p"):
        mark = mark_of(p, w, "ins")
        if mark is not None and mark.get(f"{{{w}}}author") == author:
            whole += 1
        text = []
        for ins in p.iter(f"{{{w}}}ins"):
            if ins.get(f"{{{w}}}author") != author:
                continue
            if next(ins.iterancestors(f"{{{w}}}p")) is not p:
                continue
            text.extend(t.text or "" for t in ins.iter(f"{{{w}}}t"))
        if text:
            out.append("".join(text))
    return out, whole


def main():
    original, cited, review, author = sys.argv[1:5]
    result = {}
    try:
        docx.Document(review)
        result["opens"] = True
    except Exception as e:  # noqa: BLE001 - any failure to open is the finding
        result["opens"] = False
        result["error"] = f"{type(e).__name__}: {e}"
    try:
        docx.Document(original)
        result["original_opens"] = True
    except Exception:  # noqa: BLE001
        result["original_opens"] = False
    r = root_of(review)
    w = ns_of(r)
    result["rejected"] = paragraphs(resolve(copy.deepcopy(r), accept=False))
    result["accepted"] = paragraphs(resolve(copy.deepcopy(r), accept=True))
    result["original_rejected"] = paragraphs(resolve(root_of(original), accept=False))
    result["cited_accepted"] = paragraphs(resolve(root_of(cited), accept=True))
    result["insertions"], result["whole_paragraphs"] = insertions(r, author)
    ids = [el.get(f"{{{w}}}id") for kind in ("ins", "del") for el in r.iter(f"{{{w}}}{kind}")]
    result["ids"] = len(ids)
    result["duplicate_ids"] = sorted({i for i in ids if ids.count(i) > 1})
    changes = [el for kind in ("ins", "del") for el in r.iter(f"{{{w}}}{kind}")]
    result["authors"] = sorted({el.get(f"{{{w}}}author") or "" for el in changes})
    result["dates"] = sorted({el.get(f"{{{w}}}date") or "" for el in changes if el.get(f"{{{w}}}author") == author})
    with zipfile.ZipFile(cited) as a, zipfile.ZipFile(review) as b:
        names = set(a.namelist()) | set(b.namelist())
        result["changed_parts"] = sorted(
            n for n in names
            if n not in a.namelist() or n not in b.namelist() or a.read(n) != b.read(n)
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
