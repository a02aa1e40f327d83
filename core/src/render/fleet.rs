//! `report --fleet`: many runs grouped by CUDA stack, the majority of each
//! role and its odd ones out (`docs/compare.md`).

use super::style::{finish, paint, Role, TextOptions};
use crate::analysis::compare::LibChange;
use crate::analysis::fleet::{FleetView, GroupView, RoleView};
use std::fmt::Write as _;

/// Odd groups listed per role in the text (the JSON has them all).
const ODD_SHOWN: usize = 20;

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The headline.
pub fn verdict(v: &FleetView) -> String {
    if v.odd_processes == 0 {
        format!(
            "ONE STACK: all {} with CUDA libraries agree, per role",
            plural(v.processes, "process", "processes")
        )
    } else {
        format!(
            "ODD ONES OUT: {} of {} differ from their role's majority",
            plural(v.odd_processes, "process", "processes"),
            v.processes
        )
    }
}

/// The text view.
pub fn text(v: &FleetView, opts: &TextOptions) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "fleet: {} read ({} runs, {}), {} with CUDA libraries, {} without",
        plural(v.images, "process image", "process images"),
        v.runs,
        plural(v.hosts, "host", "hosts"),
        v.processes,
        v.without_cuda
    );
    let role = if v.odd_processes == 0 {
        Role::Good
    } else {
        Role::Error
    };
    let _ = writeln!(s, "{}\n", paint(opts, role, &verdict(v)));
    for r in &v.roles {
        role_text(&mut s, r, opts);
    }
    let prefix = super::diff::common_dir(
        v.roles
            .iter()
            .flat_map(|r| r.odd.iter().flat_map(|g| &g.differs)),
    );
    if let Some(pre) = &prefix {
        s = super::text::legend(&s, Some(pre)).into_owned();
        let _ = writeln!(s, "{}", paint(opts, Role::Dim, &format!("…/ = {pre}")));
    }
    finish(&s, opts)
}

fn ranks(g: &GroupView) -> String {
    if g.ranks.is_empty() {
        String::new()
    } else {
        format!(", ranks {}", g.ranks)
    }
}

fn hosts(g: &GroupView) -> String {
    let mut h = g.host_names.join(", ");
    if g.hosts > g.host_names.len() {
        let _ = write!(h, ", … ({} hosts)", g.hosts);
    }
    h
}

fn role_text(s: &mut String, r: &RoleView, opts: &TextOptions) {
    let _ = writeln!(
        s,
        "{}: {}, {}",
        paint(opts, Role::Header, &r.role),
        plural(r.processes, "process", "processes"),
        plural(r.groups, "stack", "stacks")
    );
    let m = &r.majority;
    let _ = writeln!(
        s,
        "  majority  {}  {}{} on {}",
        m.id,
        plural(m.count, "process", "processes"),
        ranks(m),
        hosts(m)
    );
    let w = m.libraries.iter().map(|l| l.key.len()).max().unwrap_or(0);
    for l in &m.libraries {
        let _ = writeln!(
            s,
            "      {:<w$} {:<10} {}",
            l.key,
            l.version.as_deref().unwrap_or("?"),
            l.realpath.as_deref().unwrap_or(&l.path)
        );
    }
    for g in r.odd.iter().take(ODD_SHOWN) {
        odd_text(s, g, opts);
    }
    if r.odd.len() > ODD_SHOWN {
        let _ = writeln!(
            s,
            "  … {} more odd groups (--format json lists them all)",
            r.odd.len() - ODD_SHOWN
        );
    }
    s.push('\n');
}

fn odd_text(s: &mut String, g: &GroupView, opts: &TextOptions) {
    let what = if g.subset {
        " (a subset of the majority's libraries: ended early, or did not need the rest)"
    } else {
        ""
    };
    let _ = writeln!(
        s,
        "  {}       {}  {}{} on {}{what}",
        paint(opts, Role::Error, "odd"),
        g.id,
        plural(g.count, "process", "processes"),
        ranks(g),
        hosts(g)
    );
    for m in &g.members {
        let rank = m
            .rank
            .as_deref()
            .map(|r| format!("rank {r}, "))
            .unwrap_or_default();
        let _ = writeln!(s, "      {}{} pid {}  {}", rank, m.host, m.pid, m.file);
    }
    if g.count > g.members.len() {
        let _ = writeln!(s, "      … {} more", g.count - g.members.len());
    }
    for d in &g.differs {
        let lib = d.bad.as_ref().or(d.good.as_ref()).expect("one side");
        let path = lib.realpath.as_deref().unwrap_or(&lib.path);
        match d.change {
            LibChange::OnlyGood => {
                let _ = writeln!(
                    s,
                    "    {}: not loaded here (the majority has {path})",
                    d.key
                );
            }
            LibChange::OnlyBad => {
                let v = lib.version.as_deref().unwrap_or("?");
                let _ = writeln!(s, "    {}: loaded only here, {v} {path}", d.key);
            }
            LibChange::OtherFile | LibChange::Layout => {
                let what = if d.change == LibChange::Layout {
                    "same file, another route"
                } else {
                    "another file"
                };
                let _ = writeln!(s, "    {}: {what} (majority → here)", d.key);
                for f in &d.fields {
                    super::diff::field_text(s, f);
                }
            }
        }
        for b in &d.because {
            let b = b
                .replace("GOOD", "the majority")
                .replace("BAD", "this group");
            let _ = writeln!(s, "      because {b}");
        }
    }
    for f in &g.failed {
        let side = if f.failed_in == "bad" {
            "here"
        } else {
            "in the majority"
        };
        let _ = writeln!(s, "      {} failed to load {side} only", f.lib.name);
    }
}

/// The Markdown block.
pub fn markdown(v: &FleetView) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### cudnn-trace fleet\n\n**{}**\n", verdict(v));
    let _ = writeln!(s, "| role | group | processes | ranks | hosts | differs from the majority |\n|---|---|---|---|---|---|");
    for r in &v.roles {
        for (g, major) in
            std::iter::once((&r.majority, true)).chain(r.odd.iter().map(|g| (g, false)))
        {
            let what = if major {
                "(majority)".to_string()
            } else {
                g.differs
                    .iter()
                    .map(|d| {
                        let fields: Vec<&str> = d.fields.iter().map(|f| f.field).collect();
                        format!(
                            "`{}` {}",
                            d.key,
                            if fields.is_empty() {
                                "present/absent".to_string()
                            } else {
                                fields.join("/")
                            }
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} | {} | {what} |",
                r.role,
                g.id,
                g.count,
                g.ranks,
                hosts(g)
            );
        }
    }
    s
}
