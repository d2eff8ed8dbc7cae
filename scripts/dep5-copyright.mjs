// Writes the package's machine-readable copyright file (Debian's DEP-5 format) from
// cargo-about's findings (`cargo about generate --format json`, one file per program):
//   node scripts/dep5-copyright.mjs app.json cli.json [npm.json] > copyright
// cargo-about reads the dependency graph and each crate's licence files; this only
// lays its answer out. One paragraph per crate, named cargo/<crate>-<version>/*, with
// the copyright lines its licence files carry (its authors when they carry none) and
// the licence cargo-about chose (about.toml's `accepted` order); then each licence's
// text once. Debian ships Apache-2.0 and MPL-2.0 in /usr/share/common-licenses, and
// policy (and lintian) wants a pointer there instead of the full text.
// An npm.json ([{name, version, license, text, authors}]) adds the npm packages the web
// UI bundles, as npm/<package>-<version>/*.
import { readFileSync } from "node:fs";

const COMMON = {
  "Apache-2.0": "the Apache License, Version 2.0",
  "MPL-2.0": "the Mozilla Public License, Version 2.0",
  "CC0-1.0": "the Creative Commons CC0 1.0 Universal licence",
};
const MAINTAINER = "Casebook maintainers <maintainers@users.noreply.a-seed-a735da5c.example>";
// "Copyright (c) 2016 Jane", "Copyright 2016 Jane", "Copyright The X Developers", "© Jane";
// not the licences' own wording ("copyright owner", "COPYRIGHT HOLDERS", "[yyyy]"), nor
// a template's blanks ("<year> <copyright holders>").
const BLANKS = /<(?:year|years|owner|copyright holders?|name of[^>]*)>|\[yyyy\]|\{yyyy\}/i;
const COPYRIGHT_LINE =
  /^\s*(?:(?:[Cc]opyright|COPYRIGHT)\b(?!\s*(?:HOLDER|OWNER|AND|NOTICE))\s*(?:\([Cc]\)|©|\d{4}|[A-Z])|\([Cc]\)\s*\d{4}|©)/;

const inputs = process.argv.slice(2);
if (inputs.length === 0) {
  console.error("usage: dep5-copyright.mjs ABOUT.json... [NPM.json]");
  process.exit(2);
}

/** key → {name, version, ids:Set, copyright:Set, authors} */
const packages = new Map();
/** licence id → Map(text without copyright lines → uses) */
const texts = new Map();

function add(kind, name, version, id, text, authors) {
  const key = `${kind}/${name}-${version}`;
  let p = packages.get(key);
  if (!p) {
    p = { key, ids: new Set(), copyright: new Set(), authors: authors ?? [] };
    packages.set(key, p);
  }
  for (const one of splitIds(id)) p.ids.add(one);
  const body = [];
  for (const line of (text ?? "").split(/\r?\n/)) {
    if (/^\s*(?:copyright|\(c\)|©)/i.test(line) && BLANKS.test(line)) {
      continue; // a template's blank line: neither a holder nor the licence's text
    } else if (COPYRIGHT_LINE.test(line)) {
      const holder = line.trim().replace(/\s+/g, " ");
      p.copyright.add(holder.replace(/^(?:copyright\b\s*)?(?:\(c\)|©)?\s*/i, "") || holder);
    } else {
      body.push(line.replace(/\s+$/, ""));
    }
  }
  const clean = trimBlank(body).join("\n");
  if (clean && splitIds(id).length === 1) {
    if (!texts.has(id)) texts.set(id, new Map());
    const variants = texts.get(id);
    variants.set(clean, (variants.get(clean) ?? 0) + 1);
  }
}

/** cargo-about names one licence per text; an AND of several comes as several. */
function splitIds(id) {
  return id.split(/\s+AND\s+/).map((s) => s.replace(/^\(|\)$/g, ""));
}

function trimBlank(lines) {
  let a = 0;
  let b = lines.length;
  while (a < b && lines[a].trim() === "") a++;
  while (b > a && lines[b - 1].trim() === "") b--;
  return lines.slice(a, b);
}

for (const file of inputs) {
  const data = JSON.parse(readFileSync(file, "utf8"));
  if (Array.isArray(data)) {
    for (const n of data) {
      // As about.toml chooses for crates: MIT where a package offers it.
      const offered = n.license.replace(/[()]/g, "").split(/\s+OR\s+/);
      const id = offered.includes("MIT") ? "MIT" : offered[0];
      add("npm", n.name, n.version, id, n.text, n.authors);
    }
    continue;
  }
  for (const licence of data.licenses) {
    for (const used of licence.used_by) {
      const c = used.crate;
      add("cargo", c.name, c.version, licence.id, licence.text, c.authors);
    }
  }
  // A crate cargo-about could not match with a text still has an expression.
  for (const { package: c, license } of data.crates) {
    const key = `cargo/${c.name}-${c.version}`;
    if (!packages.has(key) && license !== "Ignore") {
      add("cargo", c.name, c.version, license, "", c.authors);
    }
  }
}

/** DEP-5 continuation lines: one space in, blank lines as " .". */
function field(lines) {
  return lines.map((l) => (l.trim() === "" ? " ." : ` ${l}`)).join("\n");
}

/** SPDX's upper-case operators in DEP-5's lower-case spelling. */
function dep5(expr) {
  return expr.replace(/\bOR\b/g, "or").replace(/\bAND\b/g, "and").replace(/\bWITH\b/g, "with");
}

const out = [];
out.push(`Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: Casebook
Upstream-Contact: ${MAINTAINER}
Comment: casebook-app and casebook are Rust programs, statically linked: besides
 Casebook's own code they contain the crates listed below as
 cargo/<crate>-<version>/*, and the app's window bundles the npm packages listed
 as npm/<package>-<version>/*. Each paragraph's copyright lines are those in the
 licence files the package itself ships (its authors where those carry none).
 cargo-about found them in the dependency graph of both programs for x86_64
 Linux (scripts/copyright.sh). Licence names are SPDX identifiers.

Files: *
Copyright: 2026 ${MAINTAINER}
License: MIT or Apache-2.0`);

const used = new Set(["MIT", "Apache-2.0"]);
for (const p of [...packages.values()].sort((a, b) => a.key.localeCompare(b.key))) {
  const ids = [...p.ids].filter((i) => i && i !== "Unknown");
  if (ids.length === 0) {
    console.error(`dep5-copyright: no licence found for ${p.key}`);
    process.exit(1);
  }
  for (const i of ids) used.add(i);
  let holders = [...p.copyright];
  if (holders.length === 0) {
    const authors = p.authors.filter(Boolean);
    const name = p.key.replace(/^[a-z]+\//, "").replace(/-[^-]+$/, "");
    holders = authors.length ? authors : [`The ${name} authors`];
  }
  out.push(`Files: ${p.key}/*
Copyright: ${holders[0]}${holders.length > 1 ? "\n" + field(holders.slice(1)) : ""}
License: ${dep5(ids.join(" AND "))}`);
}

for (const id of [...used].sort()) {
  if (COMMON[id]) {
    out.push(`License: ${id}
 On Debian systems, the full text of ${COMMON[id]}
 can be found in /usr/share/common-licenses/${id}.`);
    continue;
  }
  // The text most of its crates ship, without their copyright lines (above); a licence
  // notice at the top of a source file (ring's) only where there is nothing else.
  const code = (text) => /^\s*(#|\/\*|\*|\/\/)/m.test(text);
  const variants = [...(texts.get(id) ?? new Map()).entries()].sort(
    (a, b) => code(a[0]) - code(b[0]) || b[1] - a[1],
  );
  if (variants.length === 0) {
    console.error(`dep5-copyright: no text for ${id}`);
    process.exit(1);
  }
  out.push(`License: ${dep5(id)}\n${field(variants[0][0].split("\n"))}`);
}

process.stdout.write(out.join("\n\n") + "\n");
