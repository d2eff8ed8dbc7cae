"""Writes notes-deck.pptx with python-pptx: slides with body text and long speaker notes,
and a References slide, for casebook-core's cite tests (tests/cite_modes.rs).

Run from the repository root: .venv/bin/python src-tauri/core/tests/data/cite/make_notes_deck.py
"""

import pathlib

import pptx
from pptx.util import Inches, Pt

HERE = pathlib.Path(__file__).resolve().parent
SLIDES = [
    (
        "Heat and health",
        "Heat waves are becoming longer and more frequent in most of the world's cities. "
        "Hospital admissions rise on the hottest days, above all among older people.",
        "Start with the trend in heat waves over the last three decades. "
        "Then show how admissions follow the temperature on the hottest days. "
        "Close with the groups most at risk and why they are exposed.",
    ),
    (
        "What helps",
        "Cooling centres reduce the harm when people can reach them in time. "
        "Trees and reflective roofs lower street temperatures by several degrees.",
        "Explain that cooling centres only work when people can reach them. "
        "Mention the street temperature measurements from the city survey. "
        "Point out that the benefits are largest in the densest neighbourhoods.",
    ),
]
REFERENCES = [
    "Buzan, B. (2010). Cities and heat. Urban Press.",
    "Smith, J., & Jones, K. (2019). Heat and health. Journal of Climate Medicine, 4, 1-20.",
    "Lee, A., Park, B., & Kim, C. (2020). Cooling the city. Environmental Research, 12, 33-41.",
]


def main():
    prs = pptx.Presentation()
    layout = prs.slide_layouts[1]  # Title and Content
    for title, body, notes in SLIDES:
        slide = prs.slides.add_slide(layout)
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = body
        slide.notes_slide.notes_text_frame.text = notes
    refs = prs.slides.add_slide(layout)
    refs.shapes.title.text = "References"
    frame = refs.placeholders[1].text_frame
    frame.text = REFERENCES[0]
    for entry in REFERENCES[1:]:
        frame.add_paragraph().text = entry
    for p in frame.paragraphs:
        for r in p.runs:
            r.font.size = Pt(14)
    prs.save(HERE / "notes-deck.pptx")


if __name__ == "__main__":
    main()
