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
        };
        let t = render_text(&[f]);
        assert!(!t.chars().any(|c| c.is_control() && c != '\n'), "{t:?}");
        assert!(
            t.contains(r"lib\x1b[31m.so") && t.contains(r"/a\x0ab"),
            "{t}"
        );
    }

    #[test]
    fn hostile_findings_render() {
        let _ = render_text(&hostile_trace().findings());
    }
}
