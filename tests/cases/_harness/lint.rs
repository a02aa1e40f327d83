//! What every case file must hold (checked without running anything).

use super::{cases_dir, known_failing, list, spec};
use std::collections::BTreeMap;
use std::path::Path;

/// The first `/* … */` comment of a C source.
fn header_comment(src: &str) -> &str {
    let start = src.find("/*").unwrap_or(0);
    let end = src[start..].find("*/").map_or(src.len(), |e| start + e);
    &src[start..end]
}

/// Problems with one case directory.
fn check_case(name: &str, dir: &Path, ids: &mut BTreeMap<String, String>) -> Vec<String> {
    let mut bad = Vec::new();
    let case = match spec::load(&dir.join("case.toml")) {
        Ok(c) => c,
        Err(e) => return vec![e],
    };
    if let Some(other) = ids.insert(case.id.clone(), name.to_string()) {
        bad.push(format!("id {} also used by {other}", case.id));
    }
    for (what, v) in [
        ("title", &case.title),
        ("framework", &case.framework),
        ("situation", &case.situation),
        ("status.main_commit", &case.status.main_commit),
    ] {
        if v.trim().is_empty() {
            bad.push(format!("{what} is empty"));
        }
    }
    if case.sources.is_empty() || case.sources.iter().any(|u| !u.starts_with("https://")) {
        bad.push("sources: want one or more https:// URLs".into());
    }
    match std::fs::read_to_string(dir.join(&case.program.source)) {
        Err(e) => bad.push(format!("{}: {e}", case.program.source)),
        Ok(src) => {
            let head = header_comment(&src);
            for u in &case.sources {
                if !head.contains(u.as_str()) {
                    bad.push(format!(
                        "{}: header comment does not cite {u}",
                        case.program.source
                    ));
                }
            }
        }
    }
    if case.clean != case.classes.is_empty() {
        bad.push("a clean stack has no classes; a failure case has one or more".into());
    }
    if case.classes.iter().any(|c| !(1..=9).contains(c)) {
        bad.push(format!(
            "classes {:?}: issue 9 has classes 1 to 9",
            case.classes
        ));
    }
    if case.clean && !(case.expect.cause.is_empty() && case.expect.message.is_empty()) {
        bad.push("a clean stack expects no cause and no message".into());
    }
    let wants = case.expect.cause.len() + case.expect.message.len() + case.expect.fact.len();
    if !case.clean && wants == 0 {
        bad.push("a failure case needs a cause, a message or a fact to expect".into());
    }
    if !case.status.passes_on_main && case.status.first_failure.trim().is_empty() {
        bad.push("status.first_failure: say which expectation failed on main".into());
    }
    bad
}

/// Every case file in the tree mentions only public sources.
fn private_references(dir: &Path, bad: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            private_references(&p, bad);
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        // The private material of this project's own machines (a report's
        // "/opt/conda/conda-bld/…/work/…" path is fine).
        for word in [
            "/work/research",
            "/work/shared",
            "/work/wt/",
            "shared/reference",
            "research/corpus",
            "compat-facts",
        ] {
            if text.contains(word) && !p.ends_with("_harness/lint.rs") {
                bad.push(format!(
                    "{}: mentions {word:?} (cite public sources only)",
                    p.display()
                ));
            }
        }
    }
}

/// Panics with every problem found.
pub fn lint() {
    let mut bad = Vec::new();
    let mut ids = BTreeMap::new();
    let names = list();
    let mut per_class: BTreeMap<u8, (usize, usize)> = BTreeMap::new();
    let (mut real, mut clean) = (0, 0);
    for n in &names {
        let dir = cases_dir().join(n);
        if !n.as_bytes().first().is_some_and(u8::is_ascii_digit) {
            bad.push(format!("{n}: case directories are named NN_slug"));
        }
        for p in check_case(n, &dir, &mut ids) {
            bad.push(format!("{n}: {p}"));
        }
        if let Ok(c) = spec::load(&dir.join("case.toml")) {
            if c.clean {
                clean += 1;
            } else {
                real += 1;
            }
            for k in &c.classes {
                let e = per_class.entry(*k).or_default();
                e.0 += 1;
                if !c.status.passes_on_main {
                    e.1 += 1;
                }
            }
        }
    }
    if real < 32 {
        bad.push(format!(
            "{real} real cases; issue 9 wants at least 30 (this suite 32)"
        ));
    }
    if clean < 5 {
        bad.push(format!("{clean} clean stacks; want at least 5"));
    }
    for class in 1..=9u8 {
        let (n, failing) = per_class.get(&class).copied().unwrap_or((0, 0));
        if n < 2 {
            bad.push(format!("class {class}: {n} cases, want at least 2"));
        }
        if failing == 0 {
            bad.push(format!("class {class}: no case that fails on main"));
        }
    }
    for k in known_failing() {
        if !names.contains(&k) {
            bad.push(format!("KNOWN_FAILING names {k}, which is no case"));
        }
    }
    let readme = std::fs::read_to_string(cases_dir().join("README.md")).unwrap_or_default();
    for n in &names {
        if !readme.contains(&format!("`{n}`")) {
            bad.push(format!("README.md's index lacks `{n}`"));
        }
    }
    private_references(&cases_dir(), &mut bad);
    assert!(bad.is_empty(), "case files:\n  {}", bad.join("\n  "));
}
