//! `cudnn-trace explain`: the list of finding codes and the long text of
//! one, from the knowledge tables (`data/findings.toml`, `data/sources.toml`).

use crate::analysis::findings::{Knowledge, CODES};
use std::fmt::Write as _;

/// [`explain_with`] with the tables in use (embedded, or their override).
#[cfg(test)]
pub fn explain(code: &str) -> Option<String> {
    let (k, _) = Knowledge::load();
    explain_with(&k, code)
}

/// The list of codes for `cudnn-trace explain` without an argument: one
/// line per code, `CDT001  duplicate-library  error  Two or more files …`.
pub fn codes_text(k: &Knowledge) -> String {
    let mut s = String::new();
    for (code, name) in CODES {
        let (sev, title) = k
            .findings
            .iter()
            .find(|d| d.code == *code)
            .map(|d| (d.severity.as_str(), d.title.as_str()))
            .unwrap_or(("", ""));
        let _ = writeln!(s, "{code}  {name:<32} {sev:<8} {title}");
    }
    s
}

/// The long explanation of a code (`cudnn-trace explain CDT002`), from the
/// knowledge base `k`: case-insensitive, the short name (`duplicate-library`)
/// works too.
pub fn explain_with(k: &Knowledge, code: &str) -> Option<String> {
    let want = code.trim();
    let doc = k
        .findings
        .iter()
        .find(|d| d.code.eq_ignore_ascii_case(want) || d.name.eq_ignore_ascii_case(want))?;
    let mut s = format!(
        "{} {} ({}, {})\n\n{}\n",
        doc.code,
        doc.title,
        doc.name,
        doc.severity,
        doc.explain.trim_end()
    );
    let refs = k.source_refs(&doc.source);
    if !refs.is_empty() {
        s.push_str("\nSources:\n");
        for r in refs {
            let title = k.sources.get(&r.id).map(|s| s.title.as_str()).unwrap_or("");
            let _ = writeln!(s, "  [{}] {}", r.id, title);
            for u in &r.urls {
                let _ = writeln!(s, "       {u}");
            }
        }
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explain_every_code() {
        let k = Knowledge::embedded().unwrap();
        for (code, name) in CODES {
            let t = explain_with(&k, code).unwrap();
            assert!(t.starts_with(code), "{t}");
            assert!(t.contains(name));
            assert!(t.contains("\nSources:\n"), "{t}");
            assert_eq!(explain_with(&k, &code.to_lowercase()), Some(t.clone()));
            assert_eq!(explain_with(&k, name), Some(t));
        }
        assert_eq!(explain_with(&k, "CDT999"), None);
        let list = codes_text(&k);
        assert_eq!(list.lines().count(), CODES.len());
        assert!(list.starts_with("CDT001  duplicate-library"), "{list}");
        assert!(explain("cdt008").unwrap().contains("RUNPATH"));
    }
}
