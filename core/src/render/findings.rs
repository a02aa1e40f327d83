//! The findings as text: one block per finding, the findings section of
//! the summary (identical findings of several processes folded, with their
//! pids), and the problems met while reading the traces.

use super::text::esc;
use crate::analysis::findings::{fold_across, Evidence, Finding};
use crate::analysis::Diagnosis;
use crate::model::Problem;
use std::fmt::Write as _;

/// The findings section of the text summary.
pub fn findings_text(d: &Diagnosis) -> String {
    let mut out = String::new();
    for w in &d.knowledge_warnings {
        out += &format!("cudnn-trace: knowledge: {}\n", esc(w));
    }
    let folded = fold_across(&d.images);
    if folded.is_empty() {
        out += "\nfindings: none\n";
        out += &policy_text(d);
        return out;
    }
    out += &format!("\nfindings ({}):\n", folded.len());
    for (f, pids) in &folded {
        let mut text = render_text(std::slice::from_ref(f));
        if !pids.is_empty() {
            let list: Vec<String> = pids.iter().take(8).map(u32::to_string).collect();
            let more = if pids.len() > 8 { ", …" } else { "" };
            text = text.replacen('\n', &format!("  (pid {}{more})\n", list.join(", ")), 1);
        }
        out += &text;
    }
    out += &policy_text(d);
    out
}

/// What `--ignore`, `--severity` or the configuration file changed, one
/// line each: `2 findings ignored by cudnn-trace.toml (CDT001, CDT005)`,
/// `1 finding re-ranked by --severity (CDT008 warning → error)`. Empty
/// when nothing. Identical findings of several processes count once, as
/// in the list above.
pub fn policy_text(d: &Diagnosis) -> String {
    let ignored: Vec<(String, String)> = fold_across(&d.ignored)
        .iter()
        .filter_map(|(f, _)| Some((f.policy.as_ref()?.by.clone(), f.code.to_string())))
        .collect();
    let reranked: Vec<(String, String)> = fold_across(&d.images)
        .iter()
        .filter_map(|(f, _)| {
            let m = f.policy.as_ref()?;
            let was = m.rule_severity?;
            Some((m.by.clone(), format!("{} {was} → {}", f.code, f.severity)))
        })
        .collect();
    let mut out = String::new();
    for (list, did) in [(ignored, "ignored"), (reranked, "re-ranked")] {
        if list.is_empty() {
            continue;
        }
        let n = list.len();
        let mut by: Vec<(String, Vec<String>)> = Vec::new();
        for (origin, what) in list {
            match by.iter_mut().find(|(o, _)| *o == origin) {
                Some((_, w)) => {
                    if !w.contains(&what) {
                        w.push(what)
                    }
                }
                None => by.push((origin, vec![what])),
            }
        }
        let parts: Vec<String> = by
            .iter()
            .map(|(o, w)| format!("by {} ({})", esc(o), w.join(", ")))
            .collect();
        let plural = if n == 1 { "finding" } else { "findings" };
        let _ = writeln!(out, "{n} {plural} {did} {}", parts.join(", "));
    }
    out
}

/// The findings as text for a terminal, one block per finding. Paths and
/// messages come from the traces and the program's output: their control
/// characters are escaped.
pub fn render_text(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        let _ = writeln!(
            out,
            "{:<7} {}  {}",
            f.severity.as_str().to_uppercase(),
            f.code,
            esc(&f.title)
        );
        for e in &f.evidence {
            let _ = writeln!(out, "          {}", esc(&evidence_text(e)));
        }
        let _ = writeln!(out, "          fix: {}", esc(&f.remedy));
        let _ = writeln!(out, "          more: cudnn-trace explain {}", f.code);
    }
    out
}

/// One evidence line: `what: path  version  (reason in dir, asked by …)  detail`.
pub fn evidence_text(e: &Evidence) -> String {
    let mut s = format!("{}:", e.what);
    let bare =
        e.path.is_none() && e.version.is_none() && e.reason.is_none() && e.requester.is_none();
    if let Some(p) = &e.path {
        let _ = write!(s, " {p}");
    }
    if let Some(v) = &e.version {
        let _ = write!(s, "  [{v}]");
    }
    let mut why = Vec::new();
    if let Some(r) = &e.reason {
        match &e.search_dir {
            Some(d) => why.push(format!("{r} {d}")),
            None => why.push(r.clone()),
        }
    }
    if let Some(r) = &e.requester {
        why.push(if r.is_empty() {
            "asked by the main program".to_string()
        } else {
            format!("asked by {r}")
        });
    }
    if !why.is_empty() {
        let _ = write!(s, "  ({})", why.join(", "));
    }
    if let Some(d) = &e.detail {
        let sep = if bare { " " } else { "  " };
        let _ = write!(s, "{sep}{d}");
    }
    s
}

/// The problems as printed: file names and texts come from the traces, so
/// their control characters are escaped.
pub fn problems_text(problems: &[Problem]) -> String {
    const MAX: usize = 50;
    let mut s = String::new();
    for p in problems.iter().take(MAX) {
        s += &format!("cudnn-trace: {}\n", esc(&p.to_string()));
    }
    if problems.len() > MAX {
        s += &format!(
            "cudnn-trace: … and {} more problems\n",
            problems.len() - MAX
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::findings::testkit::*;
    use crate::analysis::findings::Severity;

    #[test]
    fn probe_situation_renders_errors_first() {
        let fs = probe_trace().findings();
        let text = render_text(&fs);
        println!("{text}");
        assert!(
            text.starts_with("ERROR   CDT008  libcudnn_graph.so.9 came from LD_LIBRARY_PATH"),
            "{text}"
        );
        assert!(
            text.contains("\n          environment: LD_LIBRARY_PATH="),
            "{text}"
        );
        assert!(text.contains("more: cudnn-trace explain CDT010"));
    }

    #[test]
    fn rendering_escapes_control_characters() {
        let f = Finding {
            code: "CDT006",
            severity: Severity::Error,
            title: "lib\u{1b}[31m.so could not be loaded".into(),
            evidence: vec![Evidence::new("failed").path("/a\nb").detail("x\u{7}")],
            remedy: "r\u{9b}".into(),
            sources: Vec::new(),
            policy: None,
        };
        let t = render_text(&[f]);
        assert!(!t.chars().any(|c| c.is_control() && c != '\n'), "{t:?}");
        assert!(
            t.contains(r"lib\x1b[31m.so") && t.contains(r"/a\x0ab"),
            "{t}"
        );
    }

    #[test]
    fn policy_changes_are_said_once_after_the_findings() {
        use crate::analysis::findings::ImageFindings;
        use crate::analysis::policy::{Action, Origin, Policy};
        let fs = probe_trace().findings();
        let codes: Vec<&str> = fs.iter().map(|f| f.code).collect();
        assert_eq!(codes, ["CDT008", "CDT010", "CDT002"]);
        // The same findings in two processes count once, as in the list.
        let image = |pid: u32| ImageFindings {
            file: format!("{pid}.jsonl"),
            pid,
            findings: fs.clone(),
        };
        let mut d = Diagnosis {
            images: vec![image(1), image(2)],
            ignored: Vec::new(),
            knowledge_origin: Default::default(),
            knowledge_warnings: Vec::new(),
        };
        let mut p = Policy::default();
        let file = Origin::File("/p/cudnn-trace.toml".into());
        p.set("CDT008", Action::Ignore, file.clone());
        p.set("CDT010", Action::Ignore, Origin::Option("--ignore"));
        p.set("CDT002", Action::Severity(Severity::Error), file);
        p.apply(&mut d);
        let text = findings_text(&d);
        assert!(text.contains("\nfindings (1):\nERROR   CDT002"), "{text}");
        assert!(
            !text.contains("CDT008  ") && !text.contains("CDT010  "),
            "{text}"
        );
        assert!(
            text.ends_with(
                "2 findings ignored by /p/cudnn-trace.toml (CDT008), by --ignore (CDT010)\n\
                 1 finding re-ranked by /p/cudnn-trace.toml (CDT002 warning → error)\n"
            ),
            "{text}"
        );
        // Everything ignored: said after "none".
        let mut p = Policy::default();
        for c in codes {
            p.set(c, Action::Ignore, Origin::Option("--ignore"));
        }
        let mut d = Diagnosis {
            images: vec![image(1)],
            ignored: Vec::new(),
            knowledge_origin: Default::default(),
            knowledge_warnings: Vec::new(),
        };
        p.apply(&mut d);
        assert_eq!(
            findings_text(&d),
            "\nfindings: none\n3 findings ignored by --ignore (CDT008, CDT010, CDT002)\n"
        );
        // No policy: no line.
        assert!(policy_text(&Diagnosis {
            images: vec![image(1)],
            ignored: Vec::new(),
            knowledge_origin: Default::default(),
            knowledge_warnings: Vec::new(),
        })
        .is_empty());
    }

    #[test]
    fn hostile_findings_render() {
        let _ = render_text(&hostile_trace().findings());
    }
}
