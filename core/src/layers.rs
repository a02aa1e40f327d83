//! The layering rule of this crate, checked (see the table in `lib.rs`):
//! every path a source file names through `crate::…` or `super::…` is
//! resolved to the top-level module it reaches, and that module must be the
//! file's own layer or one the layer may import. A new top-level module must
//! be given its place in [`LAYERS`] before the test passes.
//!
//! The check reads the source text (comments left out), so it sees `use`
//! declarations, grouped ones (`use crate::{model, machine::Machine}`) and
//! paths written inline (`crate::model::io_msg(e)`) alike, in tests too: a
//! test of a lower layer must not reach up either.
//!
//! It also rejects circles between the files of one directory: two sibling
//! modules that name each other (directly or around a loop) belong
//! together, or one of them holds what both need.

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    /// Each top-level module, and the top-level modules it may name. Listed
    /// from the bottom up.
    const LAYERS: &[(&str, &[&str])] = &[
        ("model", &[]),
        ("machine", &["model"]),
        ("analysis", &["model", "machine"]),
        ("render", &["model", "machine", "analysis"]),
        ("pipeline", &["model", "machine", "analysis", "render"]),
        ("launch", &["model", "machine"]),
    ];

    /// Modules outside the layers: the crate root, this check, and the
    /// helpers of unit tests (which any layer's tests use).
    const OUTSIDE: &[&str] = &["lib", "layers", "testutil"];

    fn src() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
    }

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    /// The module path of a source file: `analysis/findings/rules/loads.rs`
    /// → `["analysis", "findings", "rules", "loads"]`; `mod.rs` names its
    /// directory; `lib.rs` is the root (`[]`).
    fn module_path(rel: &Path) -> Vec<String> {
        let mut parts: Vec<String> = rel
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        let file = parts.pop().unwrap_or_default();
        match file.as_str() {
            "mod.rs" | "lib.rs" => {}
            f => parts.push(f.trim_end_matches(".rs").to_string()),
        }
        parts
    }

    /// The source without comments (line and block comments; string
    /// contents are kept, which at worst adds a path that is not one).
    fn code(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut chars = text.chars().peekable();
        let mut in_str = false;
        while let Some(c) = chars.next() {
            if in_str {
                out.push(c);
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                } else if c == '"' {
                    in_str = false;
                }
                continue;
            }
            match (c, chars.peek()) {
                ('"', _) => {
                    in_str = true;
                    out.push(c);
                }
                ('/', Some('/')) => {
                    for n in chars.by_ref() {
                        if n == '\n' {
                            out.push('\n');
                            break;
                        }
                    }
                }
                ('/', Some('*')) => {
                    chars.next();
                    let mut prev = ' ';
                    for n in chars.by_ref() {
                        if prev == '*' && n == '/' {
                            break;
                        }
                        prev = n;
                    }
                }
                _ => out.push(c),
            }
        }
        out
    }

    /// Every module path the code names: `crate::a::b` and `super::…::x`,
    /// resolved against the file's own module path `here`, with grouped
    /// imports (`crate::{a, b::c}`) expanded.
    fn named_paths(code: &str, here: &[String]) -> Vec<Vec<String>> {
        let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let tests = tests_block(code);
        let mut out = Vec::new();
        let b = code.as_bytes();
        let mut i = 0;
        while i < code.len() {
            let rest = &code[i..];
            let starts_word = i == 0 || !ident(b[i - 1] as char) && b[i - 1] != b'$';
            let (base, skip) = if starts_word && rest.starts_with("crate::") {
                (Vec::new(), "crate::".len())
            } else if starts_word && rest.starts_with("super::") {
                // `super` of a module is its parent; of a file's own `mod
                // tests`, the file. Files are what is resolved here, so a
                // chain of supers climbs from the file's module.
                let mut up = 0;
                let mut k = 0;
                while code[i + k..].starts_with("super::") {
                    up += 1;
                    k += "super::".len();
                }
                // Inside `mod tests` the first `super` is the file itself.
                let in_tests = tests.as_ref().is_some_and(|r| r.contains(&i));
                let climb = if in_tests { up - 1 } else { up };
                let keep = here.len().saturating_sub(climb);
                (here[..keep].to_vec(), k)
            } else {
                i += rest.chars().next().map_or(1, char::len_utf8);
                continue;
            };
            let after = &code[i + skip..];
            for p in expand(after) {
                let mut full = base.clone();
                full.extend(p);
                out.push(full);
            }
            i += skip;
        }
        out
    }

    /// Where the file's `mod tests { … }` is, braces matched.
    fn tests_block(code: &str) -> Option<std::ops::Range<usize>> {
        let start = code.find("mod tests")?;
        let open = start + code[start..].find('{')?;
        let mut depth = 0;
        for (k, c) in code[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(start..open + k + 1);
                    }
                }
                _ => {}
            }
        }
        Some(start..code.len())
    }

    /// The paths at the start of `s`: `a::b::C` gives one, `{a, b::{c,
    /// d}}` several (only their module parts matter).
    fn expand(s: &str) -> Vec<Vec<String>> {
        let s = s.trim_start();
        if let Some(inner) = s.strip_prefix('{') {
            let mut depth = 1;
            let mut end = inner.len();
            for (k, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = k;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let mut items = Vec::new();
            let mut depth = 0;
            let mut start = 0;
            let body = &inner[..end];
            for (k, c) in body.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        items.push(&body[start..k]);
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            items.push(&body[start..]);
            return items
                .into_iter()
                .filter(|t| !t.trim().is_empty())
                .flat_map(expand)
                .collect();
        }
        let mut path = Vec::new();
        let mut rest = s;
        loop {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let word = &rest[..end];
            if word.is_empty() || word == "self" {
                break;
            }
            path.push(word.to_string());
            rest = &rest[end..];
            match rest.strip_prefix("::") {
                Some(r) if r.starts_with('{') => {
                    return expand(r)
                        .into_iter()
                        .map(|mut p| {
                            let mut full = path.clone();
                            full.append(&mut p);
                            full
                        })
                        .collect();
                }
                Some(r) => rest = r,
                None => break,
            }
        }
        vec![path]
    }

    struct Source {
        rel: PathBuf,
        module: Vec<String>,
        named: Vec<Vec<String>>,
    }

    /// `pub use a::b::C;` in module `m`: `m::C` stands for `m::a::b::C`.
    /// Paths through such re-exports are followed to where the item is, so
    /// that `super::LauncherRecord` in `model::trace` counts as naming
    /// `model::record`.
    fn reexports(code: &str, here: &[String]) -> Vec<(Vec<String>, Vec<String>)> {
        let mut out = Vec::new();
        for stmt in code.split("pub use ").skip(1) {
            let stmt = &stmt[..stmt.find(';').unwrap_or(stmt.len())];
            if stmt.starts_with("crate::") || stmt.starts_with("super::") {
                continue; // named_paths sees these already
            }
            for p in expand(stmt) {
                let (Some(last), Some(first)) = (p.last(), p.first()) else {
                    continue;
                };
                // Only paths into this module's children (`trace::Image`),
                // not other crates (`cudnn_trace_format::…`).
                if first.starts_with("cudnn_") || first == "std" || first == "serde" {
                    continue;
                }
                let mut alias = here.to_vec();
                alias.push(last.clone());
                let mut target = here.to_vec();
                target.extend(p.iter().cloned());
                out.push((alias, target));
            }
        }
        out
    }

    fn sources() -> Vec<Source> {
        let mut files = Vec::new();
        rust_files(&src(), &mut files);
        let mut read: Vec<(PathBuf, Vec<String>, String)> = Vec::new();
        let mut aliases: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
        for f in files {
            let rel = f.strip_prefix(src()).unwrap().to_path_buf();
            let module = module_path(&rel);
            let text = code(&std::fs::read_to_string(&f).unwrap());
            aliases.extend(reexports(&text, &module));
            read.push((rel, module, text));
        }
        let follow = |mut p: Vec<String>| {
            for _ in 0..8 {
                let hit = (1..=p.len()).rev().find_map(|n| {
                    aliases
                        .get(&p[..n])
                        .map(|t| (n, t.clone()))
                        .filter(|(_, t)| t.as_slice() != &p[..n])
                });
                match hit {
                    Some((n, mut t)) => {
                        t.extend(p.drain(n..));
                        p = t;
                    }
                    None => break,
                }
            }
            p
        };
        read.into_iter()
            .map(|(rel, module, text)| {
                let named = named_paths(&text, &module)
                    .into_iter()
                    .map(&follow)
                    .collect();
                Source { rel, module, named }
            })
            .collect()
    }

    fn top(module: &[String]) -> &str {
        module.first().map_or("lib", String::as_str)
    }

    #[test]
    fn every_module_imports_only_from_lower_layers() {
        let layers: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
        let mut wrong = Vec::new();
        for s in sources() {
            let mine = top(&s.module);
            if OUTSIDE.contains(&mine) {
                continue;
            }
            let Some(allowed) = layers.get(mine) else {
                wrong.push(format!(
                    "{}: module `{mine}` has no layer; add it to LAYERS in layers.rs",
                    s.rel.display()
                ));
                continue;
            };
            for p in &s.named {
                let Some(target) = p.first().map(String::as_str) else {
                    continue;
                };
                if target == mine || OUTSIDE.contains(&target) || allowed.contains(&target) {
                    continue;
                }
                wrong.push(format!(
                    "{}: layer `{mine}` names `{}`, a layer it may not import (allowed: {allowed:?})",
                    s.rel.display(),
                    p.join("::")
                ));
            }
        }
        assert!(
            wrong.is_empty(),
            "layering violations:\n{}",
            wrong.join("\n")
        );
    }

    /// Sibling files (modules of one parent) must not name each other in a
    /// circle. A module naming its parent or a child is not a circle of
    /// this kind (`super::Finding` in a rule, `rules::run_all` in its
    /// parent).
    #[test]
    fn no_circles_between_sibling_modules() {
        let srcs = sources();
        let known: BTreeSet<Vec<String>> = srcs.iter().map(|s| s.module.clone()).collect();
        // Edges between siblings: the named module, cut to the sibling level.
        let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
        for s in &srcs {
            let Some((_, parent)) = s.module.split_last() else {
                continue;
            };
            if OUTSIDE.contains(&top(&s.module)) {
                continue;
            }
            for p in &s.named {
                if p.len() <= parent.len() || p[..parent.len()] != *parent {
                    continue;
                }
                let sibling = p[..parent.len() + 1].to_vec();
                let outside = OUTSIDE.contains(&top(&sibling));
                if sibling != s.module && known.contains(&sibling) && !outside {
                    edges.entry(s.module.clone()).or_default().insert(sibling);
                }
            }
        }
        let mut circles = Vec::new();
        for start in edges.keys() {
            // Depth-first search for a way back to `start`.
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut seen = BTreeSet::new();
            while let Some((node, path)) = stack.pop() {
                for next in edges.get(&node).into_iter().flatten() {
                    if next == start {
                        let names: Vec<String> = path.iter().map(|m| m.join("::")).collect();
                        circles.push(format!("{} → {}", names.join(" → "), start.join("::")));
                    } else if seen.insert(next.clone()) {
                        let mut p = path.clone();
                        p.push(next.clone());
                        stack.push((next.clone(), p));
                    }
                }
            }
        }
        assert!(
            circles.is_empty(),
            "import circles:\n{}",
            circles.join("\n")
        );
    }

    /// The check itself: it finds paths in the forms the code uses.
    #[test]
    fn paths_are_found_and_resolved() {
        let here: Vec<String> = ["analysis", "findings", "rules", "loads"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let code = code(
            "use crate::{model::{self, Image}, machine::Machine};\n\
             // crate::render::x in a comment\n\
             let x = crate::launch::eprint(\"a\");\n\
             use super::super::Context;\n\
             use super::copies::symbol;\n\
             mod tests { use super::*; use crate::pipeline::Report; }",
        );
        let found: Vec<String> = named_paths(&code, &here)
            .iter()
            .map(|p| p.join("::"))
            .collect();
        assert_eq!(
            found,
            vec![
                "model",
                "model::Image",
                "machine::Machine",
                "launch::eprint",
                "analysis::findings::Context",
                "analysis::findings::rules::copies::symbol",
                "analysis::findings::rules::loads",
                "pipeline::Report",
            ]
        );
    }
}
