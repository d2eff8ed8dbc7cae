//! Core's modules import each other in one direction only, and so do its folders.
//!
//! A cycle (`a` uses `b`, `b` uses `a`) means neither can be read, tested or moved
//! without the other, and the tree stops telling which part is built on which. The
//! check reads the `crate::` paths in core's own source (not doc comments, not
//! `#[cfg(test)]` modules, which may reach up to test through the top), resolves each
//! to the module that defines it, and looks for a cycle twice: between files, and
//! between the top-level modules and folders (`net`, `citations`, `missions`, ...).
//! `make lint` runs it; so does `cargo test`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path (`missions::store`; `crate` for lib.rs) → its source.
type Sources = BTreeMap<String, String>;
/// Module → the modules it uses.
type Graph = BTreeMap<String, BTreeSet<String>>;

fn read_sources(root: &Path) -> Sources {
    let mut out = Sources::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(root).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            let name = if parts == ["lib"] {
                "crate".to_owned()
            } else {
                parts.join("::")
            };
            out.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
    out
}

/// The source without comments, string literals and `#[cfg(test)]` items.
fn code_of(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let b = source.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if source[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if source[i..].starts_with("/*") {
            i = source[i + 2..]
                .find("*/")
                .map_or(b.len(), |e| i + 2 + e + 2);
        } else if b[i] == b'"' && !source[..i].ends_with('\'') {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if source[i..].starts_with("#[cfg(test)]") {
            // Skip the attribute and the item it guards: to its `;` or its closing brace.
            i += "#[cfg(test)]".len();
            let mut depth = 0;
            while i < b.len() {
                match b[i] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    b';' if depth == 0 => {
                        i += 1;
                        break;
                    }
                    _ => {}
                }
                i += 1;
            }
        } else {
            let ch = source[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Every path that starts with `crate::`, with `use` groups (`crate::a::{b, c::D}`)
/// expanded, as lists of segments.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    fn expand(prefix: &[String], rest: &str, out: &mut Vec<Vec<String>>) {
        let rest = rest.trim();
        if let Some(inner) = rest.strip_prefix('{') {
            let inner = &inner[..matching_brace(inner)];
            for item in split_top_level(inner) {
                expand(prefix, item, out);
            }
            return;
        }
        let mut path = prefix.to_vec();
        let mut s = rest;
        loop {
            let end = s
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(s.len());
            if end == 0 {
                break;
            }
            let seg = &s[..end];
            if seg != "self" {
                path.push(seg.to_owned());
            }
            s = &s[end..];
            match s.strip_prefix("::") {
                Some(next) if next.starts_with('{') => {
                    expand(&path, next, out);
                    return;
                }
                Some(next) => s = next,
                None => break,
            }
        }
        out.push(path);
    }
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(pos) = code[at..].find("crate::") {
        let start = at + pos;
        let before = code[..start].chars().next_back();
        at = start + "crate::".len();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        expand(&[], &code[at..], &mut out);
    }
    out
}

fn matching_brace(s: &str) -> usize {
    let mut depth = 1;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    s.len()
}

fn split_top_level(s: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// Which module each file's `crate::` paths lead to. A path names the longest module it
/// starts with; a name the root re-exports (`crate::Error`) names the module it comes from.
fn graph_of(sources: &Sources) -> Graph {
    let modules: BTreeSet<&str> = sources.keys().map(String::as_str).collect();
    let mut root_reexports = BTreeMap::new();
    if let Some(lib) = sources.get("crate") {
        for path in crate_paths(&code_of(&lib.replace("pub use ", "pub use crate::"))) {
            if let Some((name, module)) = path.split_last() {
                root_reexports.insert(name.clone(), module.join("::"));
            }
        }
    }
    let mut graph = Graph::new();
    for (module, source) in sources {
        let uses = graph.entry(module.clone()).or_default();
        for path in crate_paths(&code_of(source)) {
            let target = (1..=path.len())
                .rev()
                .map(|n| path[..n].join("::"))
                .find(|p| modules.contains(p.as_str()))
                .or_else(|| path.first().and_then(|n| root_reexports.get(n).cloned()));
            if let Some(t) = target.filter(|t| t != module) {
                uses.insert(t);
            }
        }
    }
    graph
}

/// The graph with each module replaced by its top-level module or folder.
fn folders_of(graph: &Graph) -> Graph {
    let top = |m: &str| m.split("::").next().unwrap().to_owned();
    let mut out = Graph::new();
    for (from, tos) in graph {
        let uses = out.entry(top(from)).or_default();
        for to in tos {
            if top(to) != top(from) {
                uses.insert(top(to));
            }
        }
    }
    out
}

/// One cycle, as the modules around it, if there is any.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, done, path) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut done, &mut Vec::new()))
}

fn core_sources() -> Sources {
    read_sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn no_module_of_core_imports_one_that_imports_it() {
    let graph = graph_of(&core_sources());
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "core's modules import each other in a circle: {}. Move what both need below \
             both (the module they share), or pass it in.",
            cycle.join(" → ")
        );
    }
}

/// Every crate of the workspace besides core: the sandbox, the CLI and the desktop shell.
const OTHER_CRATES: [(&str, &str); 3] = [
    ("the sandbox", "../sandbox/src"),
    ("the CLI", "../cli/src"),
    ("the shell", "../src"),
];

#[test]
fn no_module_of_any_other_crate_imports_one_that_imports_it() {
    for (name, dir) in OTHER_CRATES {
        let mut sources = read_sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir));
        // A binary's root is its main.rs (the shell's main.rs only calls its lib).
        if !sources.contains_key("crate")
            && let Some(main) = sources.remove("main")
        {
            sources.insert("crate".into(), main);
        }
        assert!(
            sources.contains_key("crate"),
            "{name}: no crate root under {dir}"
        );
        let graph = graph_of(&sources);
        if let Some(cycle) = find_cycle(&graph) {
            panic!(
                "{name}'s modules import each other in a circle: {}. Move what both need below \
                 both, or pass it in.",
                cycle.join(" → ")
            );
        }
    }
}

#[test]
fn no_folder_of_core_imports_one_that_imports_it() {
    let folders = folders_of(&graph_of(&core_sources()));
    if let Some(cycle) = find_cycle(&folders) {
        panic!(
            "core's folders import each other in a circle: {}. A folder is one layer: \
             net below the services, the services below app.",
            cycle.join(" → ")
        );
    }
    // The layers the tree promises: the network knows neither service, and neither
    // service knows the other or the desktop.
    for (folder, forbidden) in [
        (
            "net",
            &["citations", "missions", "desktop", "app", "backend"][..],
        ),
        ("citations", &["missions", "desktop", "app", "backend"][..]),
        ("missions", &["citations", "desktop", "app", "backend"][..]),
        (
            "error",
            &["net", "citations", "missions", "keys", "app"][..],
        ),
    ] {
        let uses = folders.get(folder).cloned().unwrap_or_default();
        for f in forbidden {
            assert!(
                !uses.contains(*f),
                "{folder} must not use {f}; it uses {uses:?}"
            );
        }
    }
}

#[test]
fn the_check_finds_cycles_through_groups_reexports_and_nested_paths() {
    let files = |pairs: &[(&str, &str)]| -> Sources {
        pairs
            .iter()
            .map(|(m, s)| (m.to_string(), s.to_string()))
            .collect()
    };
    // Through a `use` group and a root re-export.
    let g = graph_of(&files(&[
        ("crate", "pub mod a; pub mod b; pub use a::Thing;"),
        ("a", "use crate::{b::{self, Other}, c};"),
        ("b", "fn f() -> crate::Thing { todo!() }"),
    ]));
    assert_eq!(
        find_cycle(&g).unwrap(),
        ["a", "b", "a"].map(String::from).to_vec()
    );
    // Nested modules: a folder's file using a sibling folder that uses it back.
    let g = graph_of(&files(&[
        ("net::http", "use crate::citations::client::Paragraph;"),
        ("citations::client", "use crate::net::http::read;"),
    ]));
    assert!(find_cycle(&g).is_some());
    // Doc comments, strings and test modules are not imports.
    let g = graph_of(&files(&[
        ("a", "use crate::b::X;"),
        (
            "b",
            "//! See [`crate::a`].\nconst S: &str = \"crate::a\";\n#[cfg(test)]\nmod tests { use crate::a::Y; }",
        ),
    ]));
    assert_eq!(find_cycle(&g), None);
    // One direction only across folders is fine; both ways is a folder cycle.
    let g = graph_of(&files(&[
        ("missions::store", "use crate::missions::client::Event;"),
        ("missions::client", "use crate::net::api::Api;"),
        ("net::api", "use crate::error::Error;"),
        ("error", ""),
    ]));
    assert_eq!(find_cycle(&folders_of(&g)), None);
    let g = graph_of(&files(&[
        ("missions::client", "use crate::net::api::Api;"),
        ("net::api", "x = crate::missions::store::open();"),
        ("missions::store", ""),
    ]));
    assert_eq!(find_cycle(&g), None, "no cycle between files");
    assert!(
        find_cycle(&folders_of(&g)).is_some(),
        "but one between folders"
    );
}
