//! `cudnn-trace diff GOOD BAD`: the differences, most important first, as
//! text, Markdown, or the JSON document (`docs/compare.md`).

use super::style::{finish, paint, Role, TextOptions};
use crate::analysis::compare::{Diff, EnvDiff, FieldChange, LibChange, LibDiff, ProcessDiff, Who};
use serde::Serialize;
use std::fmt::Write as _;

/// Version of the `diff --format json` document.
pub const DIFF_VERSION: u32 = 1;

/// The JSON document: the diff with its version.
#[derive(Serialize)]
pub struct DiffDocument<'a> {
    pub diff_version: u32,
    #[serde(flatten)]
    pub diff: &'a Diff,
}

/// `label (pid P on HOST)`.
fn who(label: &str, w: &Option<Who>) -> String {
    match w {
        Some(w) if w.host.is_empty() => format!("{label} pid {}", w.pid),
        Some(w) => format!("{label} pid {} on {}", w.pid, w.host),
        None => format!("not in {label}"),
    }
}

fn opt(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or("-")
}

/// The headline: whether something that matters differs.
pub fn verdict(d: &Diff) -> String {
    let libs: usize = d
        .processes
        .iter()
        .map(|p| p.libraries.iter().filter(|l| l.matters).count())
        .sum();
    let findings: usize = d
        .processes
        .iter()
        .map(|p| p.findings_only_good.len() + p.findings_only_bad.len())
        .sum();
    if d.matters {
        let procs = d.processes.iter().filter(|p| p.matters).count();
        format!(
            "DIFFERENT: {libs} CUDA librar{} and {findings} finding{} differ, in {procs} process{}",
            if libs == 1 { "y" } else { "ies" },
            if findings == 1 { "" } else { "s" },
            if procs == 1 { "" } else { "es" }
        )
    } else if d.processes.is_empty() {
        format!(
            "SAME STACK: {} process{} lined up, nothing differs",
            d.same,
            if d.same == 1 { "" } else { "es" }
        )
    } else {
        format!(
            "SAME STACK: the same CUDA files in every process ({} lined up); only the layout or environment below differs",
            d.same + d.processes.len()
        )
    }
}

/// The directory most of the diff's paths start with (at least 24
/// characters), written `…/` in the text, as the summary does.
fn diff_prefix(d: &Diff) -> Option<String> {
    common_dir(d.processes.iter().flat_map(|p| &p.libraries))
}

/// The directory most paths of `libs` start with (at least 24
/// characters, covering half of them or more).
pub(super) fn common_dir<'a>(libs: impl Iterator<Item = &'a LibDiff>) -> Option<String> {
    let mut paths: Vec<&str> = Vec::new();
    for l in libs {
        for lib in l.good.iter().chain(l.bad.iter()) {
            paths.push(&lib.path);
            paths.extend(lib.realpath.as_deref());
        }
    }
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for p in &paths {
        for (i, c) in p.char_indices() {
            if c == '/' && i + 1 >= 24 && i + 1 < p.len() {
                *counts.entry(&p[..=i]).or_default() += 1;
            }
        }
    }
    counts
        .into_iter()
        .filter(|&(_, n)| n >= 4 && n * 2 >= paths.len())
        .max_by_key(|&(pre, n)| (n, pre.len(), std::cmp::Reverse(pre)))
        .map(|(pre, _)| pre.to_string())
}

/// The text report.
pub fn text(d: &Diff, opts: &TextOptions) -> String {
    let prefix = diff_prefix(d);
    let mut s = String::new();
    let _ = writeln!(s, "GOOD: {}", d.good.join(", "));
    let _ = writeln!(s, "BAD:  {}", d.bad.join(", "));
    let role = if d.matters { Role::Error } else { Role::Good };
    let _ = writeln!(s, "{}\n", paint(opts, role, &verdict(d)));
    for p in &d.processes {
        process_text(&mut s, p, opts);
    }
    if d.same > 0 && !d.processes.is_empty() {
        let _ = writeln!(
            s,
            "{} other process{} lined up and the same.",
            d.same,
            if d.same == 1 { "" } else { "es" }
        );
    }
    if let Some(pre) = &prefix {
        s = super::text::legend(&s, Some(pre)).into_owned();
        let _ = writeln!(s, "{}", paint(opts, Role::Dim, &format!("…/ = {pre}")));
    }
    finish(&s, opts)
}

fn process_text(s: &mut String, p: &ProcessDiff, opts: &TextOptions) {
    let rank = p
        .rank
        .as_deref()
        .map(|r| format!(" (rank {r})"))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "{}{rank}: {} · {}",
        paint(opts, Role::Header, &p.role),
        who("GOOD", &p.good),
        who("BAD", &p.bad)
    );
    for l in &p.libraries {
        lib_text(s, l, opts);
    }
    for f in &p.failed {
        let _ = writeln!(
            s,
            "  {} {} ({}) failed to load in {} only{}",
            paint(opts, Role::Error, "FAILED"),
            f.lib.name,
            f.lib.family.as_deref().unwrap_or("?"),
            f.failed_in.to_uppercase(),
            f.lib
                .error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        );
    }
    for (list, side) in [
        (&p.findings_only_bad, "BAD"),
        (&p.findings_only_good, "GOOD"),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(s, "  findings only in {side}:");
        for f in list {
            let r = match f.severity.as_str() {
                "error" => Role::Error,
                "warning" => Role::Warning,
                _ => Role::Info,
            };
            let _ = writeln!(
                s,
                "    {} {} {}",
                paint(opts, r, f.severity.as_str()),
                f.code,
                f.title
            );
        }
    }
    if !p.environment.is_empty() {
        let _ = writeln!(s, "  environment:");
        for e in &p.environment {
            env_text(s, e);
        }
    }
    s.push('\n');
}

fn lib_text(s: &mut String, l: &LibDiff, opts: &TextOptions) {
    let (label, role) = match l.change {
        LibChange::OnlyGood => ("loaded in GOOD only", Role::Error),
        LibChange::OnlyBad => ("loaded in BAD only", Role::Error),
        LibChange::OtherFile => ("another file", Role::Error),
        LibChange::Layout => ("same file, another route", Role::Warning),
    };
    let _ = writeln!(
        s,
        "  {} ({}): {}",
        l.key,
        l.family,
        paint(opts, role, label)
    );
    match l.change {
        LibChange::OnlyGood | LibChange::OnlyBad => {
            let lib = l.good.as_ref().or(l.bad.as_ref()).expect("one side");
            let _ = writeln!(
                s,
                "      {} {} ({}, asked by {})",
                lib.path,
                opt(&lib.version),
                lib.reason,
                opt(&lib.requester)
            );
        }
        _ => {
            for f in &l.fields {
                field_text(s, f);
            }
        }
    }
    for b in &l.because {
        let _ = writeln!(s, "      because {b}");
    }
}

/// One field: `version     9.19.0 → 9.14.0` when short, else the GOOD
/// value and the BAD one under it. Build-ids are cut to 12 digits.
pub(super) fn field_text(s: &mut String, f: &FieldChange) {
    let cut = |v: &Option<String>| -> String {
        let v = opt(v);
        if f.field == "build_id" && v.len() > 12 {
            format!("{}…", &v[..12])
        } else {
            v.to_string()
        }
    };
    let (g, b) = (cut(&f.good), cut(&f.bad));
    if g.chars().count() + b.chars().count() <= 60 {
        let _ = writeln!(s, "      {:<11} {g} → {b}", f.field);
    } else {
        let _ = writeln!(s, "      {:<11} {g}", f.field);
        let _ = writeln!(s, "      {:<11} → {b}", "");
    }
}

fn env_text(s: &mut String, e: &EnvDiff) {
    if !e.only_good.is_empty() || !e.only_bad.is_empty() {
        for x in &e.only_bad {
            let _ = writeln!(s, "    {:<16} + {x}  (only in BAD)", e.name);
        }
        for x in &e.only_good {
            let _ = writeln!(s, "    {:<16} - {x}  (only in GOOD)", e.name);
        }
        return;
    }
    let _ = writeln!(
        s,
        "    {:<16} {} → {}",
        e.name,
        e.good.as_deref().unwrap_or("(unset)"),
        e.bad.as_deref().unwrap_or("(unset)")
    );
}

/// The Markdown block (for an issue or a CI summary).
pub fn markdown(d: &Diff) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### cudnn-trace diff\n");
    let _ = writeln!(s, "- GOOD: `{}`", d.good.join("`, `"));
    let _ = writeln!(s, "- BAD: `{}`", d.bad.join("`, `"));
    let _ = writeln!(s, "\n**{}**\n", verdict(d));
    for p in &d.processes {
        let rank = p
            .rank
            .as_deref()
            .map(|r| format!(" (rank {r})"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "#### `{}`{rank}: {} · {}\n",
            p.role,
            who("GOOD", &p.good),
            who("BAD", &p.bad)
        );
        if !p.libraries.is_empty() {
            let _ = writeln!(
                s,
                "| library | change | field | GOOD | BAD |\n|---|---|---|---|---|"
            );
            for l in &p.libraries {
                let change = match l.change {
                    LibChange::OnlyGood => "GOOD only",
                    LibChange::OnlyBad => "BAD only",
                    LibChange::OtherFile => "another file",
                    LibChange::Layout => "same file, another route",
                };
                if l.fields.is_empty() {
                    let lib = l.good.as_ref().or(l.bad.as_ref()).expect("one side");
                    let (g, b) = if l.change == LibChange::OnlyGood {
                        (lib.path.as_str(), "")
                    } else {
                        ("", lib.path.as_str())
                    };
                    let _ = writeln!(s, "| `{}` | {change} | path | `{g}` | `{b}` |", l.key);
                }
                for f in &l.fields {
                    let _ = writeln!(
                        s,
                        "| `{}` | {change} | {} | `{}` | `{}` |",
                        l.key,
                        f.field,
                        opt(&f.good),
                        opt(&f.bad)
                    );
                }
            }
            for l in p.libraries.iter().filter(|l| !l.because.is_empty()) {
                for b in &l.because {
                    let _ = writeln!(s, "\n- `{}`: because {b}", l.key);
                }
            }
            s.push('\n');
        }
        for f in &p.failed {
            let _ = writeln!(
                s,
                "- `{}` failed to load in {} only",
                f.lib.name,
                f.failed_in.to_uppercase()
            );
        }
        for (list, side) in [
            (&p.findings_only_bad, "BAD"),
            (&p.findings_only_good, "GOOD"),
        ] {
            for f in list {
                let _ = writeln!(
                    s,
                    "- only in {side}: **{}** {} {}",
                    f.severity, f.code, f.title
                );
            }
        }
        for e in &p.environment {
            let _ = writeln!(
                s,
                "- environment `{}`: `{}` → `{}`",
                e.name,
                e.good.as_deref().unwrap_or("(unset)"),
                e.bad.as_deref().unwrap_or("(unset)")
            );
        }
        s.push('\n');
    }
    s
}
