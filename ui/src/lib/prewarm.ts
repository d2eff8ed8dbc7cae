// The first time WebKit lays out bold text of a weight and size it has not drawn before, it
// asks fontconfig for the face: about 10 ms on this machine (perf: libfontconfig), paid
// inside the frame that draws it. Opening the Missions view drew two such styles at once
// and went over a frame's budget (docs/performance.md, "Many missions"). So the main window
// lays out each bold style its views use that its first screen does not, hidden, one a
// frame, once that screen is drawn: Chromium's font prewarmer does the same for the same
// reason. Faces stay in WebKit's font cache once made, so the specimens are then removed.

/** One element of each bold style, with the classes the views draw it with. */
export const SPECIMENS: readonly string[] = [
  // The composer's labels (0.9em of 600), the History heading (h2), a report's h3, a tag.
  `<form class="composer"><label><span>Objective</span></label></form>`,
  `<h2>History</h2>`,
  `<div class="preview"><h3>Heading</h3></div>`,
  `<span class="tag">Before</span>`,
];

/**
 * Lays out each specimen inside `host`, one an animation frame, after two frames (the
 * first screen drawn), then removes them and marks `host` (`data-prewarmed`, the number
 * laid out). Returns a function that stops it.
 */
export function prewarmFonts(host: HTMLElement, specimens: readonly string[] = SPECIMENS): () => void {
  const box = document.createElement("div");
  box.setAttribute("aria-hidden", "true");
  box.dataset.prewarm = "";
  box.style.cssText = "position:absolute;left:0;top:0;visibility:hidden;pointer-events:none";
  let next = -2;
  let frame = 0;
  const step = () => {
    if (next >= specimens.length) {
      box.remove();
      host.dataset.prewarmed = String(specimens.length);
      return;
    }
    if (next === 0) host.append(box);
    if (next >= 0) {
      const el = document.createElement("div");
      el.innerHTML = specimens[next] ?? "";
      box.append(el);
      // Laid out now, inside this frame, not in whichever frame next draws the page.
      void box.offsetHeight;
    }
    next += 1;
    frame = requestAnimationFrame(step);
  };
  frame = requestAnimationFrame(step);
  return () => {
    cancelAnimationFrame(frame);
    box.remove();
  };
}
