#!/usr/bin/env python3
"""Checks cited packages against their originals, as tools Casebook did not write see
them, and prints one JSON entry per pair:

- `untyped`: parts with no content type (no Override, no Default for the extension);
- `dangling`: internal relationships whose target is not a part;
- `malformed`: XML parts (.xml, .rels) that are not well-formed;
- `changed`, `added`, `removed`: parts whose bytes differ, new ones, and lost ones;
- `lost`: paragraphs of the original (python-docx / python-pptx, as office_check.py
  reads them; speaker notes too) not found, in order, in the output, where a
  paragraph counts as found when its text is the output paragraph's with only
  insertions;
- `error`: python-docx / python-pptx could not open the output;
- `unopenable_original`: they could not open the original either, so neither is read.

Usage: corpus_check.py ORIGINAL=OUTPUT...   Exits 0 whatever it finds; the caller judges.
"""
import json
import os
import posixpath
import sys
import xml.etree.ElementTree as ET
import zipfile
from urllib.parse import unquote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import office_check  # noqa: E402


def parts(path):
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i) for i in z.infolist() if not i.filename.endswith("/")}


def local(tag):
    return tag.rsplit("}", 1)[-1]


def package_problems(ps):
    lower = {n.lower() for n in ps}
    types = ET.fromstring(ps["[Content_Types].xml"])
    defaults = {e.get("Extension", "").lower() for e in types if local(e.tag) == "Default"}
    overrides = {
        e.get("PartName", "").lstrip("/").lower() for e in types if local(e.tag) == "Override"
    }
    untyped = [
        n
        for n in ps
        if n != "[Content_Types].xml"
        and n.lower() not in overrides
        and posixpath.basename(n).rpartition(".")[2].lower() not in defaults
    ]
    malformed, dangling = [], []
    for name, data in ps.items():
        if not name.lower().endswith((".xml", ".rels")):
            continue
        try:
            root = ET.fromstring(data)
        except ET.ParseError as e:
            malformed.append(f"{name}: {e}")
            continue
        if not name.lower().endswith(".rels"):
            continue
        source_dir = posixpath.dirname(posixpath.dirname(name))
        for rel in root:
            if (rel.get("TargetMode") or "").lower() == "external":
                continue
            target = unquote((rel.get("Target") or "").split("#")[0])
            if not target:
                continue
            if target.startswith("/"):
                resolved = posixpath.normpath(target.lstrip("/"))
            else:
                resolved = posixpath.normpath(posixpath.join(source_dir, target))
            if resolved.lower() not in lower:
                dangling.append(f"{name} -> {rel.get('Target')}")
    return untyped, dangling, malformed


def subsequence(short, long):
    it = iter(long)
    return all(c in it for c in short)


def lost_in_order(before, after):
    lost, j = [], 0
    for p in before:
        if not p.strip():
            continue
        k = j
        while k < len(after) and not subsequence(p, after[k]):
            k += 1
        if k == len(after):
            lost.append(p)
        else:
            j = k + 1
    return lost


def texts(path):
    if path.endswith(".docx"):
        paragraphs, _ = office_check.docx_texts(path)
        return paragraphs, []
    paragraphs, _, notes, _ = office_check.pptx_texts(path)
    return paragraphs, notes


def check(original, output):
    entry = {"original": original, "output": output}
    try:
        before, after = parts(original), parts(output)
        entry["untyped"], entry["dangling"], entry["malformed"] = package_problems(after)
        entry["changed"] = sorted(n for n in before if n in after and before[n] != after[n])
        entry["added"] = sorted(n for n in after if n not in before)
        entry["removed"] = sorted(n for n in before if n not in after)
    except Exception as e:  # a package that cannot be read at all
        entry["error"] = f"package: {type(e).__name__}: {e}"
        return entry
    try:
        paras_before, notes_before = texts(original)
    except Exception as e:
        # python-docx cannot open every legal package (ISO 29500 Strict, say): the
        # output is then judged by other readers.
        entry["unopenable_original"] = f"{type(e).__name__}: {e}"
        return entry
    try:
        paras_after, notes_after = texts(output)
    except Exception as e:
        entry["error"] = f"output: {type(e).__name__}: {e}"
        return entry
    entry["lost"] = lost_in_order(paras_before, paras_after) + lost_in_order(
        notes_before, notes_after
    )
    return entry


def main():
    out = []
    for pair in sys.argv[1:]:
        original, output = pair.split("=", 1)
        out.append(check(original, output))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
