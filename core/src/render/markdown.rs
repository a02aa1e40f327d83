//! `report --format markdown`: a short block to paste into a bug report,
//! with what a maintainer asks first: the program and how it ended, the
//! cuDNN, CUDA runtime and driver versions, where each file came from and
//! why, the findings with their fixes, and the cudnn-trace version.
//!
//! Short by design: one table per process with CUDA libraries (at most
//! [`MAX_PROCESSES`]), the findings folded across processes, one line
//! each. The JSON document has everything else.

use super::findings::{counts, root_cause};
use super::summary::{startup_line, static_runtime_version};
use super::text::{argv_text, legend};
use crate::analysis::files::{ImageFiles, StaticRuntime};
use crate::analysis::findings::fold_across;
use crate::analysis::libraries::{libraries_with, LibraryView};
use crate::analysis::Analysis;
use crate::model::{basename, dirname, Image, TraceSet};
use std::fmt::Write as _;

/// Processes shown with their own table.
pub const MAX_PROCESSES: usize = 3;

/// The Markdown block.
pub fn render(set: &TraceSet, a: &Analysis) -> String {
    let prefix = super::summary::common_prefix(set, false);
    let pre = prefix.as_deref();
    let mut s = String::from("### cudnn-trace report\n\n");
    let d = &a.diagnosis;
    match root_cause(d) {
        Some(top) => {
            let folded = fold_across(&d.images);
            let _ = writeln!(
                s,
                "**{}:** {}. **Fix:** {}\n",
                counts(&folded),
                md(&legend(&top.title, pre)),
                md(&legend(&top.fix, pre))
            );
        }
        None => s += "**No findings.**\n\n",
    }
    for (path, rec) in &set.launchers {
        let _ = path;
        let ended = rec.ending().map(|e| format!(", {e}")).unwrap_or_default();
        let _ = writeln!(
            s,
            "- program: `{}`{}",
            code(&legend(&argv_text(&rec.argv, 100), pre)),
            md(&ended)
        );
        // What the launcher said about the run (a static program, say,
        // which no trace file describes).
        for w in &rec.warnings {
            let _ = writeln!(s, "- warning: {}", md(w));
        }
    }
    if let Some(p) = pre {
        let _ = writeln!(s, "- paths: `…/` stands for `{}`", code(p));
    }
    // A program the loader ended before main: the one fact that matters.
    for (img, f) in set.images.iter().zip(&a.files) {
        if let Some(st) = &f.startup {
            let _ = writeln!(s, "- start-up: {}", md(&startup_line(img, st, pre)));
        }
    }
    let cuda: Vec<usize> = (0..set.images.len())
        .filter(|&i| {
            set.images[i].loads.iter().any(|l| l.family.is_some())
                || a.files
                    .get(i)
                    .is_some_and(|f| static_runtimes(f).next().is_some())
        })
        .collect();
    if let Some(&first) = cuda.first() {
        let img = &set.images[first];
        if let Some(g) = &img.header.glibc {
            let _ = writeln!(s, "- glibc: {}", md(g));
        }
        for var in ["LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES"] {
            if let Some(v) = img.header.env.get(var) {
                let _ = writeln!(s, "- {var}: `{}`", code(&legend(v, pre)));
            }
        }
    }
    let one = cuda.len() == 1 && !set.launchers.is_empty();
    for &i in cuda.iter().take(MAX_PROCESSES) {
        process_table(&set.images[i], a, i, pre, one, &mut s);
    }
    if cuda.len() > MAX_PROCESSES {
        let _ = writeln!(
            s,
            "\n{} more processes loaded CUDA libraries (`cudnn-trace report --format json` lists them).",
            cuda.len() - MAX_PROCESSES
        );
    }
    let folded = fold_across(&d.images);
    if !folded.is_empty() {
        s += "\nFindings:\n\n";
        for (k, (f, pids)) in folded.iter().enumerate() {
            let pid = match pids.as_slice() {
                [p] => format!(" (pid {p})"),
                [] => String::new(),
                _ => format!(" ({} processes)", pids.len()),
            };
            let _ = writeln!(
                s,
                "{}. **{} {}**{pid}: {}. Fix: {}",
                k + 1,
                f.severity,
                f.code,
                md(&legend(&f.title, pre)),
                md(&legend(&f.fix, pre))
            );
        }
    }
    let _ = writeln!(
        s,
        "\n<sub>cudnn-trace {}; `cudnn-trace explain CODE` explains a finding.</sub>",
        env!("CARGO_PKG_VERSION")
    );
    s
}

/// One process's CUDA-family libraries as a table.
/// `only`: the launcher's program is the one process, named above.
fn process_table(
    img: &Image,
    a: &Analysis,
    i: usize,
    pre: Option<&str>,
    only: bool,
    s: &mut String,
) {
    let h = &img.header;
    let ended = a.tree.ending[i]
        .as_deref()
        .map(|e| format!(", {e}"))
        .unwrap_or_default();
    if only {
        let _ = writeln!(s, "\nLibraries of pid {}:", h.pid);
    } else {
        let _ = writeln!(
            s,
            "\npid {} `{}`{}:",
            h.pid,
            code(&legend(&argv_text(&h.argv, 60), pre)),
            md(&ended)
        );
    }
    let files = a.files.get(i);
    let libs = libraries_with(img, false, files);
    if !libs.is_empty() {
        s.push_str("\n| library | version | directory | found via |\n|---|---|---|---|\n");
    }
    for v in libs {
        let stub = if v.stub { " (stub)" } else { "" };
        let _ = writeln!(
            s,
            "| {}{stub} | {} | `{}` | {} |",
            md(basename(&v.path)),
            md(&v.version.as_ref().map(|v| v.text()).unwrap_or_default()),
            code(&legend(dirname(&v.path), pre)),
            md(&found_via(&v))
        );
    }
    // A CUDA runtime linked into an object loads no libcudart file: the
    // table cannot show it.
    for r in files.into_iter().flat_map(static_runtimes) {
        let _ = writeln!(
            s,
            "\n`{}` carries a static CUDA runtime ({}).",
            code(&legend(&r.path, pre)),
            md(&static_runtime_version(r))
        );
    }
}

/// The objects of an image that carry a static CUDA runtime, other than
/// NVIDIA's own libraries (as the summary shows them).
fn static_runtimes(f: &ImageFiles) -> impl Iterator<Item = &StaticRuntime> {
    f.static_runtimes.iter().filter(|r| !r.nvidia)
}

/// `RUNPATH of libtorch_cuda.so`, `LD_LIBRARY_PATH`.
fn found_via(v: &LibraryView) -> String {
    match v.reason_owner.as_deref().filter(|o| !o.is_empty()) {
        Some(o) if v.reason.contains("PATH") && v.reason != "LD_LIBRARY_PATH" => {
            format!("{} of {}", v.reason, basename(o))
        }
        _ => v.reason.clone(),
    }
}

/// Text for a Markdown paragraph or table cell: control characters
/// escaped, and the characters that would start markup (`|` of a table,
/// `*`, `` ` ``, `<`) escaped.
fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in super::text::esc(s).chars() {
        // `_` inside words is no markup in GitHub's Markdown.
        if "|*`<>[]\\".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Text inside a code span: no backquote can end it early, no `|` can
/// split a table cell.
fn code(s: &str) -> String {
    super::text::esc(s).replace('`', "'").replace('|', "¦")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_escaped() {
        assert_eq!(md("a|b *c* <d> e_f"), r"a\|b \*c\* \<d\> e_f");
        assert_eq!(md("x\u{1b}[31m"), r"x\\x1b\[31m");
        assert_eq!(code("a`b|c"), "a'b¦c");
    }
}
