//! The findings as text: the verdict (one line, first and last), then one
//! block per finding (identical findings of several processes folded, with
//! their pids): its title, its fix and the alternatives, the findings it
//! follows from, and the evidence under them, paths written with the
//! summary's `…/` legend; before the closing verdict, every title once
//! more. Also the problems met while reading the traces.

use super::style::{finish, paint, Role, TextOptions};
use super::text::{esc, legend};
use crate::analysis::findings::{fold_across, Evidence, Finding, Severity};
use crate::analysis::Diagnosis;
use crate::model::{basename, dirname, Problem};
use std::fmt::Write as _;

/// Consecutive `tried` evidence items shown before the rest are counted.
const MAX_TRIED_SHOWN: usize = 6;

/// The findings section of the text summary: knowledge warnings, the
/// verdict, each finding, the verdict again.
pub fn findings_text(d: &Diagnosis, opts: &TextOptions) -> String {
    let mut out = String::new();
    for w in &d.knowledge_warnings {
        out += &format!("cudnn-trace: knowledge: {}\n", esc(w));
    }
    let folded = fold_across(&d.images);
    let verdict = verdict_line(d, opts);
    if folded.is_empty() {
        out += "\n";
        out += &policy_text(d);
        out += &format!("{verdict}\n");
        return finish(&out, opts);
    }
    out += &format!("\n{verdict}\n");
    for (f, pids) in &folded {
        out.push('\n');
        out += &finding_block(f, pids, opts);
    }
    if folded.len() > 1 {
        // Like pytest's short summary: every finding's title once more,
        // right above the closing verdict, so that the last screen of a
        // long report still names each of them.
        out.push('\n');
        for (f, _) in &folded {
            out += &summary_line(f, opts);
        }
    }
    // What the policy left out or re-ranked, right above the verdict that
    // counts without it.
    out.push('\n');
    out += &policy_text(d);
    out += &format!("{verdict}\n");
    finish(&out, opts)
}

/// `2 errors, 1 warning`, counting the findings as shown (folded).
pub fn counts(folded: &[(Finding, Vec<u32>)]) -> String {
    let n = |s: Severity| folded.iter().filter(|(f, _)| f.severity == s).count();
    let mut parts = Vec::new();
    for (s, one, many) in [
        (Severity::Error, "error", "errors"),
        (Severity::Warning, "warning", "warnings"),
        (Severity::Info, "info", "infos"),
    ] {
        match n(s) {
            0 => {}
            1 => parts.push(format!("1 {one}")),
            k => parts.push(format!("{k} {many}")),
        }
    }
    parts.join(", ")
}

/// The finding the verdict names: the first in rank (the most severe that
/// follows from no other).
pub fn root_cause(d: &Diagnosis) -> Option<Finding> {
    fold_across(&d.images).into_iter().next().map(|(f, _)| f)
}

/// The verdict, one line: `cudnn-trace: 2 errors, 1 warning: TITLE: fix:
/// FIX`, or that nothing was found.
pub fn verdict_line(d: &Diagnosis, opts: &TextOptions) -> String {
    let folded = fold_across(&d.images);
    let lead = "cudnn-trace:";
    let Some((top, _)) = folded.first() else {
        let mut what = match d.images.len() {
            0 => "no process was traced".to_string(),
            1 => "no findings in the 1 process traced".to_string(),
            n => format!("no findings in the {n} processes traced"),
        };
        // Clean by the policy's leave, not by the rules': say so here too,
        // since this line also opens the section.
        let ignored = fold_across(&d.ignored).len();
        if ignored > 0 {
            let _ = write!(what, " ({ignored} ignored)");
        }
        return format!(
            "{lead} {}",
            paint(opts, Role::Good, &format!("clean: {what}"))
        );
    };
    let pre = opts.prefix.as_deref();
    format!(
        "{lead} {}: {}: {} {}",
        paint(opts, severity_role(top.severity), &counts(&folded)),
        esc(&legend(&top.title, pre)),
        paint(opts, Role::Fix, "fix:"),
        esc(&legend(&top.fix, pre))
    )
}

fn severity_role(s: Severity) -> Role {
    match s {
        Severity::Error => Role::Error,
        Severity::Warning => Role::Warning,
        Severity::Info => Role::Info,
    }
}

/// One finding: `error[CDT008]: title`, what it follows from, the fix and
/// its alternatives, the evidence, and where to read more. Each part is
/// wrapped to the width under its label.
pub fn finding_block(f: &Finding, pids: &[u32], opts: &TextOptions) -> String {
    let pre = opts.prefix.as_deref();
    let t = |s: &str| esc(&legend(s, pre)).into_owned();
    let mut b = Block::new(opts);
    let label = format!("{}[{}]:", f.severity, f.code);
    b.item(
        &paint(opts, severity_role(f.severity), &label),
        label.len(),
        &t(&f.title),
        0,
    );
    if !f.consequence_of.is_empty() {
        b.item(
            &paint(opts, Role::Dim, "follows from:"),
            13,
            &f.consequence_of.join(", "),
            2,
        );
    }
    b.item(&paint(opts, Role::Fix, "fix:"), 4, &t(&f.fix), 2);
    for a in &f.alternatives {
        b.item(" or:", 4, &t(a), 2);
    }
    let mut tried = 0usize;
    let tried_total = f.evidence.iter().filter(|e| e.what == "tried").count();
    for e in &f.evidence {
        if e.what == "tried" {
            tried += 1;
            if tried > MAX_TRIED_SHOWN && tried_total > MAX_TRIED_SHOWN + 1 {
                if tried == MAX_TRIED_SHOWN + 1 {
                    b.item(
                        "-",
                        1,
                        &format!(
                            "tried: … {} more places (report --format json lists them)",
                            tried_total - MAX_TRIED_SHOWN
                        ),
                        4,
                    );
                }
                continue;
            }
        }
        b.item("-", 1, &t(&evidence_text(e, pre)), 4);
    }
    let pid = match pids {
        [] => String::new(),
        [p] => format!("pid {p} · "),
        _ if pids.len() <= 8 => {
            let list: Vec<String> = pids.iter().map(u32::to_string).collect();
            format!("pids {} · ", list.join(", "))
        }
        // A fleet: how many, and the pids as ranges.
        _ => format!(
            "{} processes, pids {} · ",
            super::summary::thousands(pids.len() as u64),
            super::summary::pid_ranges(&mut pids.to_vec())
        ),
    };
    b.item(
        "",
        0,
        &paint(
            opts,
            Role::Dim,
            &format!("{pid}more: cudnn-trace explain {}", f.code),
        ),
        2,
    );
    b.out
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

/// `error[CDT008]: title`, wrapped, for the short summary.
fn summary_line(f: &Finding, opts: &TextOptions) -> String {
    let label = format!("{}[{}]:", f.severity, f.code);
    let mut b = Block::new(opts);
    b.item(
        &paint(opts, severity_role(f.severity), &label),
        label.len(),
        &esc(&legend(&f.title, opts.prefix.as_deref())),
        0,
    );
    b.out
}

/// The lines of one finding, each a label and its text, wrapped.
struct Block<'o> {
    opts: &'o TextOptions,
    out: String,
}

impl<'o> Block<'o> {
    fn new(opts: &'o TextOptions) -> Self {
        Block {
            opts,
            out: String::new(),
        }
    }

    /// `label` (`label_width` columns, maybe coloured) at `indent`, then
    /// `text`, its continuation lines under the text's start.
    fn item(&mut self, label: &str, label_width: usize, text: &str, indent: usize) {
        let pad = " ".repeat(indent);
        let first = if label.is_empty() {
            pad.clone()
        } else {
            format!("{pad}{label} ")
        };
        let hang = " ".repeat(indent + label_width + usize::from(!label.is_empty()));
        match self.opts.width {
            Some(w) => {
                for l in super::style::wrap(text, &first, &hang, w) {
                    self.out.push_str(&l);
                    self.out.push('\n');
                }
            }
            None => {
                let _ = writeln!(self.out, "{first}{text}");
            }
        }
    }
}

/// The findings as plain text, one block per finding, without verdict or
/// legend (for tests and other front ends).
pub fn render_text(findings: &[Finding]) -> String {
    let opts = TextOptions::default();
    let mut out = String::new();
    for f in findings {
        out += &finding_block(f, &[], &opts);
    }
    finish(&out, &opts)
}

/// One evidence line: `what: path [version] (reason, asked by who) detail`,
/// paths with the legend `prefix`; the requester by its file name (the
/// summary's table has its directory).
pub fn evidence_text(e: &Evidence, prefix: Option<&str>) -> String {
    let mut s = format!("{}:", e.what);
    if let Some(p) = &e.path {
        let _ = write!(s, " {p}");
    }
    if let Some(v) = &e.version {
        let _ = write!(s, " [{v}]");
    }
    let mut why = Vec::new();
    if let Some(r) = &e.reason {
        match &e.search_dir {
            // The directory is the path's own: saying it again adds nothing.
            Some(d) if e.path.as_deref().map(dirname) != Some(d.as_str()) => {
                why.push(format!("{r} {d}"))
            }
            _ => why.push(r.clone()),
        }
    }
    if let Some(r) = &e.requester {
        why.push(if r.is_empty() {
            "asked by the main program".to_string()
        } else {
            format!("asked by {}", basename(r))
        });
    }
    if !why.is_empty() {
        let _ = write!(s, " ({})", why.join(", "));
    }
    if let Some(d) = &e.detail {
        let _ = write!(s, " {d}");
    }
    legend(&s, prefix).into_owned()
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
    use crate::analysis::findings::ImageFindings;
    use std::collections::BTreeMap;

    fn diagnosis(findings: Vec<Finding>) -> Diagnosis {
        Diagnosis {
            images: vec![ImageFindings {
                file: "7.jsonl".into(),
                pid: 7,
                findings,
            }],
            ignored: Vec::new(),
            knowledge_origin: BTreeMap::new(),
            knowledge_warnings: Vec::new(),
        }
    }

    #[test]
    fn probe_situation_renders_errors_first() {
        let fs = probe_trace().findings();
        let text = render_text(&fs);
        println!("{text}");
        assert!(
            text.starts_with("error[CDT008]: libcudnn_graph.so.9 9.14.0 came from LD_LIBRARY_PATH"),
            "{text}"
        );
        assert!(text.contains("\n  fix: remove "), "{text}");
        assert!(
            text.contains("\n    - environment: LD_LIBRARY_PATH="),
            "{text}"
        );
        assert!(text.contains("more: cudnn-trace explain CDT010"));
        // The framework's message follows from the LD_LIBRARY_PATH finding.
        assert!(text.contains("  follows from: CDT002, CDT008"), "{text}");
    }

    #[test]
    fn verdict_first_and_last() {
        let d = diagnosis(probe_trace().findings());
        let text = findings_text(&d, &TextOptions::default());
        let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
        let verdict = lines[0];
        assert!(
            verdict.starts_with("cudnn-trace: 2 errors, 1 warning: libcudnn_graph.so.9 9.14.0 came from LD_LIBRARY_PATH"),
            "{text}"
        );
        assert!(verdict.contains(": fix: remove "), "{verdict}");
        assert_eq!(lines.last(), Some(&verdict));
        let clean = findings_text(&diagnosis(Vec::new()), &TextOptions::default());
        assert_eq!(
            clean.trim(),
            "cudnn-trace: clean: no findings in the 1 process traced"
        );
    }

    #[test]
    fn wrapped_to_the_width_with_the_legend() {
        let d = diagnosis(probe_trace().findings());
        let prefix = "/opt/torch/.venv/lib/python3.12/site-packages/";
        let opts = TextOptions {
            width: Some(80),
            prefix: Some(prefix.into()),
            ..Default::default()
        };
        let text = findings_text(&d, &opts);
        println!("{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(!text.contains(prefix), "{text}");
        assert!(text.contains("…/nvidia/cudnn/lib"), "{text}");
        // Continuation lines hang under their text.
        assert!(text.contains("\n       "), "{text}");
    }

    #[test]
    fn rendering_escapes_control_characters() {
        let f = Finding {
            code: "CDT006",
            severity: Severity::Error,
            title: "lib\u{1b}[31m.so could not be loaded".into(),
            fix: "r\u{9b}".into(),
            alternatives: vec!["a\u{7}".into()],
            evidence: vec![Evidence::new("failed").path("/a\nb").detail("x\u{7}")],
            consequence_of: Vec::new(),
            count: None,
            sources: Vec::new(),
            policy: None,
        };
        for opts in [
            TextOptions::default(),
            TextOptions {
                width: Some(40),
                ..Default::default()
            },
        ] {
            let t = findings_text(&diagnosis(vec![f.clone()]), &opts);
            assert!(!t.chars().any(|c| c.is_control() && c != '\n'), "{t:?}");
            assert!(t.contains(r"\x1b[31m.so"), "{t}");
        }
        let t = render_text(&[f]);
        assert!(t.contains(r"/a\x0ab"), "{t}");
    }

    #[test]
    fn the_pids_of_a_fleet_as_ranges() {
        let f = Finding {
            code: "CDT006",
            severity: Severity::Error,
            title: "libnvrtc.so.13 could not be loaded".into(),
            fix: "install it".into(),
            alternatives: Vec::new(),
            evidence: Vec::new(),
            consequence_of: Vec::new(),
            count: None,
            sources: Vec::new(),
            policy: None,
        };
        let opts = TextOptions::default();
        let few: Vec<u32> = (100..108).collect();
        let t = finding_block(&f, &few, &opts);
        assert!(
            t.contains("pids 100, 101, 102, 103, 104, 105, 106, 107 · "),
            "{t}"
        );
        let mut many: Vec<u32> = (100_000..110_000).collect();
        many.push(7);
        let t = finding_block(&f, &many, &opts);
        assert!(
            t.contains("10,001 processes, pids 7, 100000–109999 · "),
            "{t}"
        );
    }

    #[test]
    fn colour_only_in_labels() {
        let d = diagnosis(probe_trace().findings());
        let opts = TextOptions {
            color: true,
            ..Default::default()
        };
        let text = findings_text(&d, &opts);
        assert!(
            text.contains("\x1b[1m\x1b[31merror[CDT008]:\x1b[0m"),
            "{text:?}"
        );
        let plain = findings_text(&d, &TextOptions::default());
        assert!(!plain.contains('\x1b'));
    }

    #[test]
    fn policy_changes_are_said_once_before_the_closing_verdict() {
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
        let text = findings_text(&d, &TextOptions::default());
        assert!(text.contains("\nerror[CDT002]: "), "{text}");
        assert!(
            !text.contains("[CDT008]") && !text.contains("[CDT010]"),
            "{text}"
        );
        // Said once, right above the closing verdict, which counts only
        // what is shown.
        let (before, verdict) = text.trim_end().rsplit_once('\n').unwrap();
        assert!(
            before.ends_with(
                "\n2 findings ignored by /p/cudnn-trace.toml (CDT008), by --ignore (CDT010)\n\
                 1 finding re-ranked by /p/cudnn-trace.toml (CDT002 warning → error)"
            ),
            "{text}"
        );
        assert!(verdict.starts_with("cudnn-trace: 1 error: "), "{text}");
        assert_eq!(text.matches("ignored by").count(), 1, "{text}");
        // Everything ignored: said before the clean verdict.
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
            findings_text(&d, &TextOptions::default()),
            "\n3 findings ignored by --ignore (CDT008, CDT010, CDT002)\n\
             cudnn-trace: clean: no findings in the 1 process traced (3 ignored)\n"
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
