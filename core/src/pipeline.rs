//! The one pipeline behind `run`'s summary and `report` (and any other
//! front end): read the traces (`model`) → the machine the report runs on
//! (`machine`) → analyse (`analysis`) → render (`render`).
//!
//! ```text
//! let report = Report::read(&paths);       // read, describe the machine, analyse
//! print!("{}", report.text(&opts));         // render: text (summary, findings) ...
//! print!("{}", report.json(all)?);          // ... or the JSON document
//! print!("{}", report.markdown());          // ... or a block for a bug report
//! ```

use crate::analysis::findings::Severity;
use crate::analysis::policy::Policy;
use crate::analysis::{self, Analysis};
use crate::machine::Machine;
use crate::model::{self, FindingsRecord, TraceSet};
use crate::render::{self, json::Document, TextOptions};
use std::path::PathBuf;

/// What [`Report::read_with`] tells a front end as it goes: a report of
/// gigabytes takes seconds, and a user should see it move.
pub trait Progress {
    /// `done` of `total` bytes of trace files read.
    fn read(&mut self, done: u64, total: u64);
    /// A later stage began (`analysing`).
    fn stage(&mut self, name: &'static str);
}

/// No progress shown.
pub struct NoProgress;

impl Progress for NoProgress {
    fn read(&mut self, _: u64, _: u64) {}
    fn stage(&mut self, _: &'static str) {}
}

/// A trace set and what the analysis made of it.
pub struct Report {
    pub set: TraceSet,
    pub analysis: Analysis,
}

impl Report {
    /// Reads trace directories and files, and analyses them on this
    /// machine with the knowledge tables. The program's stderr is taken
    /// from the first run directory that has a `stderr.txt`.
    pub fn read(paths: &[PathBuf]) -> Report {
        Report::read_with(paths, &mut NoProgress)
    }

    /// [`Report::read`], telling `progress` how far it got (a front end's
    /// progress bar).
    pub fn read_with(paths: &[PathBuf], progress: &mut dyn Progress) -> Report {
        Report::read_as(paths, progress, model::trace::read_paths_with)
    }

    /// [`Report::read_with`] keeping each process's own times (no image
    /// shares another's events, `Image::class`): for the timeline.
    pub fn read_timed_with(paths: &[PathBuf], progress: &mut dyn Progress) -> Report {
        Report::read_as(paths, progress, model::trace::read_paths_timed)
    }

    fn read_as(
        paths: &[PathBuf],
        progress: &mut dyn Progress,
        read: fn(&[PathBuf], &mut dyn FnMut(u64)) -> TraceSet,
    ) -> Report {
        let total = model::trace::input_bytes(paths);
        progress.read(0, total);
        let set = read(paths, &mut |done| progress.read(done, total));
        progress.stage("analysing");
        let stderr = model::captured_stderr(paths, &set.launchers);
        Report::analyse(set, stderr.as_deref(), &Machine::this_host())
    }

    /// Analyses a trace set already read, with the program's `stderr` (when
    /// captured), on `machine`, with the knowledge tables (read only when a
    /// rule could use them: [`analysis::needs_knowledge`]).
    pub fn analyse(set: TraceSet, stderr: Option<&str>, machine: &Machine) -> Report {
        let analysis = analysis::analyse_loading(&set, stderr, machine);
        Report { set, analysis }
    }

    /// The report with a per-code [`Policy`] applied (`--ignore`,
    /// `--severity`, the configuration file): every rendering and the
    /// `--fail-on` gate then see the findings as the policy has them.
    pub fn with_policy(mut self, policy: &Policy) -> Report {
        policy.apply(&mut self.analysis.diagnosis);
        self
    }

    /// The whole text report: the summary, then the findings with the
    /// verdict first and last, one `…/` legend for both.
    pub fn text(&self, opts: &TextOptions) -> String {
        let mut opts = opts.clone();
        if opts.prefix.is_none() {
            opts.prefix = render::summary::common_prefix(&self.set, opts.all);
        }
        let mut s = self.summary_text(&opts);
        s += &self.findings_text(&opts);
        s
    }

    /// The text summary: the process tree and each process's libraries.
    pub fn summary_text(&self, opts: &TextOptions) -> String {
        render::summary::render_with(&self.set, &self.analysis.tree, &self.analysis.files, opts)
    }

    /// The findings section that follows the summary (`opts.prefix`: the
    /// summary's legend).
    pub fn findings_text(&self, opts: &TextOptions) -> String {
        render::findings::findings_text(&self.analysis.diagnosis, opts)
    }

    /// The short Markdown block for a bug report.
    pub fn markdown(&self) -> String {
        render::markdown::render(&self.set, &self.analysis)
    }

    /// What could not be read, one line each (bounded).
    pub fn problems_text(&self) -> String {
        render::findings::problems_text(&self.set.problems)
    }

    /// The machine-readable document. `all`: include libraries outside the
    /// CUDA family (only in traces taken with `--all`).
    pub fn document(&self, all: bool) -> Document<'_> {
        render::json::document_with(
            &self.set,
            &self.analysis.tree,
            all,
            &self.analysis.diagnosis,
            &self.analysis.files,
        )
    }

    /// [`Report::document`] as pretty-printed JSON, safe on a terminal
    /// (`model::json::to_pretty`).
    pub fn json(&self, all: bool) -> serde_json::Result<String> {
        let bytes = model::json::to_pretty(&self.document(all))?;
        // to_pretty writes UTF-8 (serde_json strings, escapes).
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// [`Report::json`] written to `w` as it is made, with its final
    /// newline: a large report is never held whole (give `w` a buffer).
    /// An error is the writer's (serialising the document cannot fail).
    pub fn write_json<W: std::io::Write>(&self, mut w: W, all: bool) -> std::io::Result<()> {
        model::json::write_pretty(&mut w, &self.document(all))?;
        w.write_all(b"\n")?;
        w.flush()
    }

    /// Why there is nothing to report, when no trace file was read (`report`
    /// then exits 1); None when at least one was.
    pub fn nothing_read(&self) -> Option<&'static str> {
        if !self.set.images.is_empty() {
            None
        } else if !self.set.launchers.is_empty() {
            Some("a launcher record but no trace file was found")
        } else {
            Some("no readable trace found")
        }
    }

    /// `--fail-on LEVEL`: whether a finding reached it.
    pub fn trips(&self, level: Option<Severity>) -> bool {
        self.analysis.diagnosis.trips(level)
    }

    /// The findings counts and the `--fail-on` gate, as `launcher.json`
    /// records them.
    pub fn findings_record(&self, fail_on: Option<Severity>) -> FindingsRecord {
        let d = &self.analysis.diagnosis;
        let count = |s: Severity| d.all().filter(|f| f.severity == s).count();
        FindingsRecord {
            error: count(Severity::Error),
            warning: count(Severity::Warning),
            info: count(Severity::Info),
            ignored: d.ignored_all().count(),
            fail_on: fail_on.map(|l| l.as_str().to_string()),
            tripped: self.trips(fail_on),
        }
    }
}

// ---------------------------------------------------------------------------
// Comparing runs (issue 13): entry points of `diff`, the fleet view and the
// Chrome timeline, over the same reading and analysis.

impl Report {
    /// The timeline as Chrome Trace Event JSON (`render::chrome`).
    pub fn chrome(&self, opts: &render::chrome::ChromeOptions) -> String {
        render::chrome::render(&self.set, &self.analysis.diagnosis, opts)
    }

    /// This report as one side of a `diff`.
    pub fn diff_side(&self, paths: &[PathBuf]) -> analysis::compare::Side {
        let paths = paths.iter().map(|p| p.display().to_string()).collect();
        analysis::compare::Side::of(
            &self.set,
            &self.analysis.tree,
            &self.analysis.diagnosis,
            paths,
        )
    }
}

/// `diff GOOD BAD`: both runs read and analysed, then compared.
pub fn diff(
    good: &Report,
    good_paths: &[PathBuf],
    bad: &Report,
    bad_paths: &[PathBuf],
) -> analysis::compare::Diff {
    analysis::compare::diff(&good.diff_side(good_paths), &bad.diff_side(bad_paths))
}

/// What the fleet view read: the view, and what could not be read.
pub struct FleetRead {
    pub view: analysis::fleet::FleetView,
    /// The first problems met (at most [`FLEET_PROBLEMS_KEPT`]).
    pub problems: Vec<model::Problem>,
    pub problems_total: usize,
}

/// Problems the fleet view keeps to show; the rest are counted.
pub const FLEET_PROBLEMS_KEPT: usize = 20;

/// The fleet view of `paths`: run directories, trace files, or
/// directories holding run directories (a job's `--out /shared/traces/%h`
/// parent), looked into up to [`FLEET_DEPTH`] levels. One run is read
/// at a time and each of its images handed to the fleet, which keeps a
/// few integers per process: memory is bounded by the largest run, not
/// by the fleet.
pub fn fleet(paths: &[PathBuf]) -> FleetRead {
    let mut fleet = analysis::fleet::Fleet::new();
    let mut problems = Vec::new();
    let mut total = 0;
    let mut runs = Vec::new();
    for p in paths {
        find_runs(p, FLEET_DEPTH, &mut runs, &mut problems);
    }
    total += problems.len();
    for run in &runs {
        let set = model::read_paths(std::slice::from_ref(run));
        fleet.runs += 1;
        for img in &set.images {
            fleet.add(img);
        }
        total += set.problems.len();
        let room = FLEET_PROBLEMS_KEPT.saturating_sub(problems.len());
        problems.extend(set.problems.into_iter().take(room));
    }
    FleetRead {
        view: fleet.view(),
        problems,
        problems_total: total,
    }
}

/// How deep [`fleet`] looks for run directories under a path given.
pub const FLEET_DEPTH: usize = 3;

fn find_runs(
    p: &std::path::Path,
    depth: usize,
    runs: &mut Vec<PathBuf>,
    problems: &mut Vec<model::Problem>,
) {
    if !p.is_dir() || model::trace::looks_like_run(p) {
        runs.push(p.to_path_buf());
        return;
    }
    let mut subs: Vec<PathBuf> = match std::fs::read_dir(p) {
        Ok(rd) => rd
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect(),
        Err(e) => {
            problems.push(model::Problem {
                file: p.display().to_string(),
                line: None,
                what: format!("cannot read directory: {}", model::io_msg(&e)),
            });
            return;
        }
    };
    subs.sort();
    let before = runs.len();
    if depth > 0 {
        for s in &subs {
            find_runs(s, depth - 1, runs, problems);
        }
    }
    if runs.len() == before && depth == FLEET_DEPTH {
        problems.push(model::Problem {
            file: p.display().to_string(),
            line: None,
            what: "no run directory (trace files or launcher.json) found here".into(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Knowledge;
    use crate::model::LauncherRecord;
    use crate::testutil::{header, tempdir};
    use std::fs;

    /// The set analysed on this machine.
    fn report(set: TraceSet) -> Report {
        Report::analyse(set, None, &Machine::this_host())
    }

    #[test]
    fn json_document_with_problems() {
        let d = tempdir("reportjson");
        let load = r#"{"ev":"load","seq":1,"t_ns":10,"pid":10,"ppid":1,"tid":10,"name":"libcudnn.so.9","path":"/l/libcudnn.so.9","realpath":"/l/libcudnn.so.9.1.0","reason":"LD_LIBRARY_PATH","reason_owner":null,"search_dir":"/l","requester":"/usr/bin/python3.11","via":"dlopen","mode":1,"lmid":0,"soname":"libcudnn.so.9","dev":1,"ino":2,"size":3,"build_id":null,"family":"cudnn","tried":[{"path":"/l/libcudnn.so.9","reason":"LD_LIBRARY_PATH","result":"used"}],"new":true}"#;
        let failed = r#"{"ev":"load_failed","seq":2,"t_ns":11,"pid":10,"ppid":1,"tid":10,"name":"libcudnn_adv.so.9","requester":"/l/libcudnn.so.9","via":"dlopen","mode":2,"lmid":0,"family":"cudnn","tried":[],"error":"E1","errno":2}"#;
        let dlerr =
            r#"{"ev":"dlerror","seq":3,"t_ns":12,"pid":10,"ppid":1,"tid":10,"req":2,"error":"E2"}"#;
        let note = r#"{"ev":"note","seq":4,"t_ns":13,"pid":10,"ppid":1,"tid":10,"level":"warning","msg":"hello"}"#;
        fs::write(
            d.join("10.jsonl"),
            format!("{}\n{load}\n{failed}\n{dlerr}\n{note}\n{{\"ev\":\"mystery\"}}\n{{\"ev\":\"load\",\"s", header(10, 1, "exec")),
        )
        .unwrap();
        fs::write(d.join("11.jsonl"), b"\x00\x01\x02binary").unwrap();
        let r = report(model::read_paths(std::slice::from_ref(&d)));
        let v = serde_json::to_value(r.document(false)).unwrap();
        assert_eq!(v["report_version"], 2);
        assert_eq!(v["processes"].as_array().unwrap().len(), 1);
        let p = &v["processes"][0];
        assert_eq!(p["pid"], 10);
        assert_eq!(p["libraries"][0]["version"]["text"], "9.1.0");
        assert_eq!(p["libraries"][0]["version"]["minor"], 1);
        assert_eq!(p["libraries"][0]["version"]["kind"], "full");
        assert_eq!(
            p["failed_loads"][0]["errors"],
            serde_json::json!(["E1", "E2"])
        );
        assert_eq!(p["notes"][0]["msg"], "hello");
        let probs = v["problems"].as_array().unwrap();
        assert_eq!(probs.len(), 3, "{probs:?}");
        assert_eq!(r.nothing_read(), None);

        // Text rendering of the same set does not panic and names the failure.
        let text = r.summary_text(&TextOptions::default());
        assert!(text.contains("FAILED  libcudnn_adv.so.9"), "{text}");
        assert!(text.contains("error: E1"), "{text}");
        assert!(text.contains("note    warning: hello"), "{text}");
    }

    #[test]
    fn policy_reaches_the_document_the_counts_and_the_gate() {
        use crate::analysis::findings::testkit::probe_trace;
        use crate::analysis::policy::{Action, Origin};
        let t = probe_trace();
        let mut set = TraceSet::default();
        set.images.push(t.image());
        let m = Machine::with_disk(t.machine.clone());
        let r = Report::analyse(set, t.stderr.as_deref(), &m);
        let codes: Vec<_> = r.analysis.diagnosis.all().map(|f| f.code).collect();
        assert_eq!(codes, ["CDT008", "CDT010", "CDT002"]);
        assert!(r.trips(Some(Severity::Error)));

        let mut p = Policy::default();
        p.set("CDT008", Action::Ignore, Origin::Option("--ignore"));
        p.set(
            "CDT010",
            Action::Severity(Severity::Warning),
            Origin::Option("--severity"),
        );
        let r = r.with_policy(&p);
        assert!(!r.trips(Some(Severity::Error)));
        assert!(r.trips(Some(Severity::Warning)));
        let v = serde_json::to_value(r.document(false)).unwrap();
        assert_eq!(v["findings_total"]["error"], 0, "{v}");
        assert_eq!(v["findings_total"]["warning"], 2, "{v}");
        assert_eq!(v["findings_ignored"], 1, "{v}");
        let p0 = &v["processes"][0];
        assert_eq!(p0["ignored_findings"][0]["code"], "CDT008", "{p0}");
        assert_eq!(p0["ignored_findings"][0]["policy"]["ignored"], true);
        assert_eq!(p0["ignored_findings"][0]["policy"]["by"], "--ignore");
        // Ranked again: CDT010, now a warning too, follows from CDT002
        // (and no longer from the ignored CDT008).
        assert_eq!(p0["findings"][0]["code"], "CDT002", "{p0}");
        assert!(p0["findings"][0].get("policy").is_none(), "{p0}");
        assert_eq!(p0["findings"][1]["code"], "CDT010", "{p0}");
        assert_eq!(p0["findings"][1]["severity"], "warning");
        assert_eq!(p0["findings"][1]["policy"]["rule_severity"], "error");
        assert_eq!(
            p0["findings"][1]["consequence_of"],
            serde_json::json!(["CDT002"])
        );
        // The flat list: what is shown, ranked; the ignored one apart.
        assert_eq!(v["findings"][0]["code"], "CDT002", "{v}");
        assert_eq!(v["findings"].as_array().unwrap().len(), 2, "{v}");
        assert_eq!(v["ignored_findings"][0]["code"], "CDT008", "{v}");
        assert_eq!(v["ignored_findings"][0]["policy"]["ignored"], true);
        let rec = r.findings_record(Some(Severity::Error));
        assert_eq!(
            (rec.error, rec.warning, rec.ignored, rec.tripped),
            (0, 2, 1, false)
        );
        let text = r.findings_text(&TextOptions::default());
        assert!(
            text.contains("1 finding ignored by --ignore (CDT008)"),
            "{text}"
        );
    }

    #[test]
    fn no_policy_adds_no_fields() {
        let t = crate::analysis::findings::testkit::probe_trace();
        let mut set = TraceSet::default();
        set.images.push(t.image());
        let r = Report::analyse(set, None, &Machine::with_disk(t.machine.clone()))
            .with_policy(&Policy::default());
        let v = serde_json::to_value(r.document(false)).unwrap();
        assert!(v.get("findings_ignored").is_none(), "{v}");
        assert!(v.get("ignored_findings").is_none(), "{v}");
        let p0 = &v["processes"][0];
        assert!(p0.get("ignored_findings").is_none(), "{p0}");
        assert!(p0["findings"][0].get("policy").is_none(), "{p0}");
        let rec = serde_json::to_value(r.findings_record(None)).unwrap();
        assert!(rec.get("ignored").is_none(), "{rec}");
    }

    /// Both renderings of `r`, for comparing two analyses of one set.
    fn rendered(r: &Report) -> (String, String) {
        (r.json(true).unwrap(), r.text(&TextOptions::default()))
    }

    #[test]
    fn skipping_the_tables_changes_nothing() {
        use crate::testutil::{image, load};
        let plain = load(
            7,
            1,
            "/usr/lib/x86_64-linux-gnu/libz.so.1",
            "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13",
            "ld.so.cache",
            "",
            "/usr/bin/python3.11",
            "dlopen",
            true,
        );
        let sets = [
            // `/bin/true`: a header and nothing else.
            vec![image(7, 1, "exec", &[], "7.jsonl")],
            // `--all`: libraries outside the CUDA family, in two processes.
            vec![
                image(7, 1, "exec", std::slice::from_ref(&plain), "7.jsonl"),
                image(8, 7, "fork", &[], "8.jsonl"),
            ],
        ];
        for images in sets {
            for stderr in [None, Some(""), Some(" \n\t\n")] {
                let set = || TraceSet {
                    images: images.clone(),
                    ..TraceSet::default()
                };
                let m = Machine::this_host();
                let files = analysis::files::of_set(&set(), &m);
                assert!(!analysis::needs_knowledge(&set(), stderr, &files));
                let skipped = Report::analyse(set(), stderr, &m);
                let (k, warnings) = Knowledge::load_from(None);
                assert!(!k.messages.is_empty() && warnings.is_empty());
                let full = Report {
                    analysis: analysis::analyse(&set(), stderr, &m, &k, warnings),
                    set: set(),
                };
                assert_eq!(rendered(&skipped), rendered(&full), "{stderr:?}");
                let v: serde_json::Value = serde_json::from_str(&full.json(true).unwrap()).unwrap();
                assert_eq!(v["knowledge"]["frameworks.toml"], "embedded", "{v}");
            }
        }
    }

    #[test]
    fn cuda_runs_and_messages_still_read_the_tables() {
        use crate::analysis::findings::testkit::probe_trace;
        // A CUDA run: its findings need the tables (CDT002's versions,
        // CDT010's message patterns, the sources of all three).
        let t = probe_trace();
        let m = Machine::with_disk(t.machine.clone());
        let set = || TraceSet {
            images: vec![t.image()],
            ..TraceSet::default()
        };
        let files = analysis::files::of_set(&set(), &m);
        assert!(analysis::needs_knowledge(&set(), None, &files));
        let r = Report::analyse(set(), t.stderr.as_deref(), &m);
        let codes: Vec<_> = r.analysis.diagnosis.all().map(|f| f.code).collect();
        assert_eq!(codes, ["CDT008", "CDT010", "CDT002"]);
        assert!(r.analysis.diagnosis.all().all(|f| !f.sources.is_empty()));

        // No CUDA library at all, but a framework's message on stderr: the
        // message is explained, so the tables are read.
        let bare = || TraceSet {
            images: vec![crate::testutil::image(7, 1, "exec", &[], "7.jsonl")],
            ..TraceSet::default()
        };
        let msg = "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory\n";
        let files = analysis::files::of_set(&bare(), &m);
        assert!(analysis::needs_knowledge(&bare(), Some(msg), &files));
        let r = Report::analyse(bare(), Some(msg), &m);
        assert!(
            r.analysis.diagnosis.all().any(|f| f.code == "CDT010"),
            "{:?}",
            r.analysis
                .diagnosis
                .all()
                .map(|f| (&f.code, &f.title))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn alike_processes_are_analysed_once_and_listed_each() {
        let d = crate::testutil::alike_fleet();
        let m = Machine::this_host();
        let shared = Report::analyse(model::read_paths(std::slice::from_ref(&d)), None, &m);
        let timed = model::trace::read_paths_timed(&[d], &mut |_| {});
        let timed = Report::analyse(timed, None, &m);
        let classes: std::collections::BTreeSet<u32> =
            shared.set.images.iter().map(|i| i.class).collect();
        // 10, 20 and 21 (pid and parent aside, the same); 11–13; 14.
        assert_eq!(classes.len(), 3, "{classes:?}");
        // Every process has the findings of its class, the JSON document
        // lists each process as when each is read on its own, and so does
        // the text with --each.
        let findings = &shared.analysis.diagnosis.images;
        assert_eq!(findings.len(), 7);
        let codes =
            |i: usize| -> Vec<&str> { findings[i].findings.iter().map(|f| f.code).collect() };
        assert!(!codes(1).is_empty());
        assert!((0..7).all(|i| codes(i) == codes(1)), "{:?}", codes(0));
        assert_eq!(shared.json(true).unwrap(), timed.json(true).unwrap());
        let each = TextOptions {
            each: true,
            ..TextOptions::default()
        };
        assert_eq!(shared.text(&each), timed.text(&each));
        let text = shared.text(&TextOptions::default());
        assert!(text.contains("3 processes alike: pids 11–13"), "{text}");
        assert!(text.contains("pids 10, 11, 12, 13, 14, 20, 21"), "{text}");
    }

    #[test]
    fn nothing_readable_exits_1() {
        let d = tempdir("reportnone");
        fs::write(d.join("1.jsonl"), "").unwrap();
        let set = model::read_paths(&[d]);
        let r = report(set);
        assert_eq!(r.nothing_read(), Some("no readable trace found"));
        let _ = r.summary_text(&TextOptions::default());
        let _ = serde_json::to_string(&r.document(true)).unwrap();
    }

    #[test]
    fn terminal_escapes_from_traces_are_escaped() {
        let d = tempdir("reportesc");
        let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{7f}";
        let h = header(10, 1, "exec")
            .replace(
                r#""argv":["python","train.py"]"#,
                r#""argv":["py\u001b[31m","a\nb"]"#,
            )
            .replace("/usr/bin/python3.11", r"/usr/bin/\u001b[1mpy");
        let note = format!(
            r#"{{"ev":"note","seq":4,"t_ns":13,"pid":10,"ppid":1,"tid":10,"level":"warning","msg":{}}}"#,
            serde_json::to_string(evil).unwrap()
        );
        let failed = r#"{"ev":"load_failed","seq":2,"t_ns":11,"pid":10,"ppid":1,"tid":10,"name":"libcudnn\u001b[8m.so","requester":"/l/x\u0007.so","via":"dlopen","mode":2,"lmid":0,"family":"cudnn","tried":[{"path":"/a\u001b/libcudnn\u001b[8m.so","reason":"LD_LIBRARY_PATH","result":"missing"}],"error":"E\u001b[1A\r\nforged line","errno":2}"#;
        fs::write(
            d.join("10.jsonl"),
            format!("{h}\n{failed}\n{note}\nnot json \u{1b}[5m\n"),
        )
        .unwrap();
        fs::write(d.join("bad\u{1b}[7m.jsonl"), "x\n").unwrap();
        let mut set = model::read_paths(std::slice::from_ref(&d));
        set.launchers.push((
            d.join(model::LAUNCHER_FILE),
            LauncherRecord {
                argv: vec!["run\u{1b}c".into()],
                warnings: vec!["w\u{1b}[0m".into()],
                error: Some("no\u{85}such".into()),
                ..Default::default()
            },
        ));
        let r = report(set);
        let text = r.summary_text(&TextOptions::default());
        let problems = r.problems_text();
        for out in [&text, &problems] {
            assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
        }
        assert!(text.contains(r"py\x1b[31m"), "{text}");
        assert!(
            text.contains(r"note    warning: \x1b]0;pwned\x07\x1b[2J\u{9b}31m\x7f"),
            "{text}"
        );
        assert!(
            text.contains(r"error: E\x1b[1A\x0d\x0aforged line"),
            "{text}"
        );
        assert!(!text.contains("\nforged line"), "{text}");
        assert!(text.contains(r"FAILED  libcudnn\x1b[8m.so"), "{text}");
        assert!(text.contains(r"[/usr/bin/\x1b[1mpy]"), "{text}");
        assert!(text.contains(r"warning: w\x1b[0m"), "{text}");
        assert!(text.contains(r"not started: no\u{85}such"), "{text}");
        assert!(problems.contains(r"bad\x1b[7m.jsonl"), "{problems}");
        // JSON keeps the text as it is (serde escapes it).
        let json = serde_json::to_string(&r.document(false)).unwrap();
        assert!(json.contains(r"\u001b]0;pwned"), "{json}");
    }
}
