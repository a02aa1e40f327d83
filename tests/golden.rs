//! Golden files of what users read: the launcher's end-of-run summary and
//! findings, `report` (text, `--format json`, and for the PyTorch mix-up
//! also text at 80 columns, in colour, and `--format markdown`),
//! `explain`, `env --pin`, and an error path, for a few fixture runs under
//! the real launcher.
//!
//! The other tests check facts (a finding's code, its evidence); these pin
//! down the whole output, so that a change to the wording, the layout or the
//! JSON document shows up as a diff of `tests/golden/*.txt` to review. After
//! an intended change:
//!
//! ```sh
//! UPDATE_GOLDEN=1 cargo test -p cudnn-trace-integration --test golden
//! git diff tests/golden/
//! ```
//!
//! What varies from run to run is replaced before comparing: the work
//! directory (`{W}`), the shim's cache directory (`{CACHE}`), pids
//! (`{PID1}`, `{PID2}`, … in order of appearance), and in the JSON document
//! times, host name, thread ids, file identities, sizes, build-ids and the
//! glibc version (which depend on the machine and its compiler).

use cudnn_trace_integration::case_dir::{link_rpath, machine_provides, CaseDir, PY};
use cudnn_trace_integration::launcher_support::{compile, launcher, run, shim_cache, Output};
use cudnn_trace_integration::tools;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------
// Comparing with the golden files

fn golden_dir() -> PathBuf {
    tools::package_dir().join("golden")
}

/// Compares `actual` with `tests/golden/NAME.txt`, or writes it there under
/// `UPDATE_GOLDEN=1`.
fn check_golden(name: &str, actual: &str) {
    // The golden outputs hold what the shim records on glibc 2.35 and
    // later: the libraries' own version answers and the program's calls,
    // which an older glibc cannot give (docs/glibc.md); its summary differs
    // there by design (and says why, once).
    // (`explain` and `env` do not come from a trace.)
    let v = cudnn_trace_integration::spec::glibc_version();
    let traced = name != "explain_env_and_errors";
    if traced && v < (2, 35) && std::env::var_os("UPDATE_GOLDEN").is_none() {
        eprintln!(
            "golden {name} skipped: glibc {}.{} records no calls nor in-library versions (needs 2.35), which the golden output shows",
            v.0, v.1
        );
        return;
    }
    let path = golden_dir().join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        fs::create_dir_all(golden_dir()).unwrap();
        fs::write(&path, actual).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        eprintln!("updated {}", path.display());
        return;
    }
    let want = fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "reading {}: {e}; run with UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    if want == actual {
        return;
    }
    let (w, a): (Vec<&str>, Vec<&str>) = (want.lines().collect(), actual.lines().collect());
    let first = w
        .iter()
        .zip(&a)
        .position(|(x, y)| x != y)
        .unwrap_or(w.len().min(a.len()));
    let show = |v: &[&str]| {
        v.iter()
            .skip(first.saturating_sub(3))
            .take(12)
            .enumerate()
            .map(|(k, l)| format!("{:5} | {l}\n", first.saturating_sub(3) + k + 1))
            .collect::<String>()
    };
    let new = path.with_extension("actual.txt");
    let _ = fs::write(&new, actual);
    panic!(
        "{} differs from this run's output from line {} on.\n--- golden\n{}--- actual\n{}\
         The whole output is in {}. If the change is intended: \
         UPDATE_GOLDEN=1 cargo test -p cudnn-trace-integration --test golden, then review \
         git diff tests/golden/",
        path.display(),
        first + 1,
        show(&w),
        show(&a),
        new.display()
    );
}

/// What varies between runs, replaced by placeholders.
struct Normalizer {
    /// (text, placeholder), longest text first.
    paths: Vec<(String, String)>,
    /// pids in order of first appearance.
    pids: Vec<u64>,
}

impl Normalizer {
    fn new(work: &Path) -> Normalizer {
        let mut paths = Vec::new();
        for (p, ph) in [(work.to_path_buf(), "{W}"), (shim_cache(), "{CACHE}")] {
            if let Ok(c) = fs::canonicalize(&p) {
                paths.push((c.display().to_string(), ph.to_string()));
            }
            paths.push((p.display().to_string(), ph.to_string()));
        }
        paths.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        paths.dedup();
        Normalizer {
            paths,
            pids: Vec::new(),
        }
    }

    /// Learns the pids of a `report --json` document (processes, launchers).
    fn learn_pids(&mut self, doc: &Value) {
        let mut add = |v: &Value| {
            if let Some(n) = v.as_u64() {
                if n > 1 && !self.pids.contains(&n) {
                    self.pids.push(n);
                }
            }
        };
        for l in doc["launchers"].as_array().into_iter().flatten() {
            add(&l["launcher_pid"]);
            add(&l["pid"]);
        }
        for p in doc["processes"].as_array().into_iter().flatten() {
            add(&p["pid"]);
            add(&p["ppid"]);
        }
    }

    fn pid(&self, n: u64) -> Option<String> {
        let k = self.pids.iter().position(|&p| p == n)?;
        Some(format!("{{PID{}}}", k + 1))
    }

    /// Paths, and pids where a line talks about pids or trace files (a bare
    /// number elsewhere may be a version that happens to equal a pid).
    fn text(&self, s: &str) -> String {
        let mut t = s.to_string();
        for (p, ph) in &self.paths {
            t = t.replace(p.as_str(), ph);
        }
        let t = cpu_counts(&shim_paths(&t));
        t.split_inclusive('\n')
            .map(|line| {
                // `forker: child PID exit N`: the fixture's own line.
                if line.contains("pid") || line.contains(".jsonl") || line.contains("forker:") {
                    self.pids_in(line)
                } else {
                    line.to_string()
                }
            })
            .collect()
    }

    /// Whole numbers of a line that are known pids, replaced.
    fn pids_in(&self, line: &str) -> String {
        let mut out = String::new();
        let mut digits = String::new();
        let flush = |digits: &mut String, out: &mut String| {
            match digits.parse().ok().and_then(|n| self.pid(n)) {
                Some(ph) => out.push_str(&ph),
                None => out.push_str(digits),
            }
            digits.clear();
        };
        for c in line.chars() {
            if c.is_ascii_digit() {
                digits.push(c);
            } else {
                flush(&mut digits, &mut out);
                out.push(c);
            }
        }
        flush(&mut digits, &mut out);
        out
    }

    /// The pretty-printed JSON document, line by line (so that the order
    /// and layout of its fields stay checked): machine- and run-dependent
    /// values replaced, pids mapped.
    fn json(&self, pretty: &str) -> String {
        const VARYING: &[&str] = &[
            "t_ns",
            "wall_ms",
            "start_wall_ms",
            "end_wall_ms",
            "start",
            "end",
            "hostname",
            "tid",
            "dev",
            "ino",
            "size",
            "build_id",
            "glibc",
            "launcher_version",
            "tool_version",
        ];
        // Inside a `"pids": [` array: its bare numbers are pids.
        let mut in_pids = false;
        pretty
            .split_inclusive('\n')
            .map(|line| {
                let body = line.trim_start();
                let indent = &line[..line.len() - body.len()];
                if in_pids {
                    let num = body.trim_end().trim_end_matches(',');
                    if let Some(ph) = num.parse().ok().and_then(|n| self.pid(n)) {
                        return format!("{indent}\"{ph}\"{}", &body[num.len()..]);
                    }
                    in_pids = false;
                }
                if body.starts_with("\"pids\": [") && !body.contains(']') {
                    in_pids = true;
                }
                let Some((key, value)) = body.strip_prefix('"').and_then(|b| b.split_once("\": "))
                else {
                    return self.text(line);
                };
                let (value, tail) = match value.trim_end_matches('\n').strip_suffix(',') {
                    Some(v) => (v, ",\n"),
                    None => (value.trim_end_matches('\n'), "\n"),
                };
                if value == "null" || value.starts_with('{') || value.starts_with('[') {
                    return self.text(line);
                }
                let value = if VARYING.contains(&key) {
                    format!("\"{{{key}}}\"")
                } else if matches!(key, "pid" | "ppid" | "launcher_pid") {
                    match value.parse().ok().and_then(|n| self.pid(n)) {
                        Some(ph) => format!("\"{ph}\""),
                        None => value.to_string(),
                    }
                } else {
                    self.text(value)
                };
                format!("{indent}\"{key}\": {value}{tail}")
            })
            .collect()
    }
}

/// The counts of places searched, which include the loader's
/// `glibc-hwcaps` subdirectories (see [`without_hwcaps`]): `(+N platform
/// subdirs)` and `N places tried` written with `{N}`.
fn cpu_counts(s: &str) -> String {
    let mut t = s.to_string();
    for suffix in [" platform subdirs)", " places tried"] {
        let mut out = String::new();
        let mut rest = t.as_str();
        while let Some(i) = rest.find(suffix) {
            let head = &rest[..i];
            let digits = head.len() - head.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            out.push_str(&head[..head.len() - digits]);
            out.push_str(if digits > 0 { "{N}" } else { "" });
            out.push_str(suffix);
            rest = &rest[i + suffix.len()..];
        }
        out.push_str(rest);
        t = out;
    }
    t
}

/// The pretty-printed document without the places tried in the loader's
/// `glibc-hwcaps` subdirectories: which of them the loader searches
/// depends on the CPU (`x86-64-v4` only where it has AVX-512), not on the
/// run. Each such place is an object of its own in a `tried` list.
fn without_hwcaps(pretty: &str) -> String {
    let lines: Vec<&str> = pretty.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let opens = lines[i].trim() == "{";
        let hwcaps = lines.get(i + 1).is_some_and(|l| {
            l.trim_start().starts_with("\"path\": ") && l.contains("/glibc-hwcaps/")
        });
        if opens && hwcaps {
            while i < lines.len() && !lines[i].trim().starts_with('}') {
                i += 1;
            }
            i += 1;
            continue;
        }
        out.push_str(lines[i]);
        i += 1;
    }
    out
}

/// Paths of the shim and of its preload helper (`…/<version>-<hash>/
/// libcdtrace.so`, a hash that changes with every change to the shim)
/// written `{SHIM}` and `{PRELOAD}`.
fn shim_paths(s: &str) -> String {
    shim_file_paths(
        &shim_file_paths(s, "libcdtrace.so", "{SHIM}"),
        "libcdtrace_preload.so",
        "{PRELOAD}",
    )
}

fn shim_file_paths(s: &str, file: &'static str, token: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(file) {
        let before = &rest[..i];
        let start = before
            .rfind(|c: char| c.is_whitespace() || "\"'(=:,".contains(c))
            .map_or(0, |k| k + 1);
        if before[start..].starts_with('/') || before[start..].starts_with('{') {
            out.push_str(&before[..start]);
            out.push_str(token);
        } else {
            out.push_str(before);
            out.push_str(file);
        }
        rest = &rest[i + file.len()..];
    }
    out.push_str(rest);
    out
}

/// One command's outcome as a golden section.
fn section(title: &str, out: &Output, n: &Normalizer) -> String {
    let ended = match (out.code(), out.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => "?".into(),
    };
    format!(
        "== {title} ({ended})\n-- stdout\n{}-- stderr\n{}",
        n.text(&out.out()),
        n.text(&out.err())
    )
}

// ---------------------------------------------------------------------------
// The situations (as in findings.rs)

/// A situation's work directory (`golden-NAME`), with the golden runs.
struct Case(CaseDir);

impl std::ops::Deref for Case {
    type Target = CaseDir;
    fn deref(&self) -> &CaseDir {
        &self.0
    }
}

impl Case {
    fn new(name: &str) -> Case {
        Case(CaseDir::new(&format!("golden-{name}")))
    }

    /// A pip cuDNN 9 in the wheel layout, with its dist-info directory.
    fn pip_cudnn9(&self, version: &str, cuda: &str) -> PathBuf {
        self.pip_cudnn(version, cuda, &[])
    }

    /// The driver of the H100 runs (580.159.04, CUDA 13.0).
    fn driver(&self) -> PathBuf {
        self.0.driver("580.159.04", "13.0", &[])
    }

    /// `tests/findings/SRC` compiled into the venv's bin, linked like
    /// libtorch_cuda.so: `-l:SONAME` found through a DT_RPATH to `dir`.
    fn compile(&self, src: &str, links: &[(&Path, &str)]) -> PathBuf {
        let flags: Vec<String> = links
            .iter()
            .flat_map(|(dir, soname)| link_rpath(dir, soname))
            .collect();
        self.0.compile(src, PY, &flags)
    }

    /// The launcher with its summary (no `-q`), `report DIR` and `report
    /// --format json DIR`, normalized, as one golden text.
    /// `prog`: the command line, relative to the work directory (as typed,
    /// so that what the summary shows does not depend on where the
    /// repository is).
    fn golden_run(&self, llp: &[&Path], prog: &[&str]) -> String {
        let llp: Vec<String> = llp.iter().map(|d| d.display().to_string()).collect();
        let mut cmd = launcher(&self.dir);
        cmd.env("LD_LIBRARY_PATH", llp.join(":"))
            .args(["--out", "t", "--"])
            .args(prog);
        let ran = run(cmd, None);
        let mut text_cmd = launcher(&self.dir);
        text_cmd.args(["report", "t"]);
        let text = run(text_cmd, None);
        let mut json_cmd = launcher(&self.dir);
        json_cmd.args(["report", "--format", "json", "t"]);
        let json = run(json_cmd, None);
        let doc: Value = serde_json::from_slice(&json.stdout)
            .unwrap_or_else(|e| panic!("report --json: {e}\n{}", json.show()));

        let mut n = Normalizer::new(&self.dir);
        n.learn_pids(&doc);
        let mut out = section("cudnn-trace --out t -- PROG...", &ran, &n);
        out += &section("cudnn-trace report t", &text, &n);
        out += &format!(
            "== cudnn-trace report --format json t (exit {})\n-- stderr\n{}-- stdout\n{}",
            json.code().unwrap_or(-1),
            n.text(&json.err()),
            n.json(&without_hwcaps(&json.out()))
        );
        out
    }

    /// `report` of the run `golden_run` took: at 80 columns, in colour
    /// (both through the environment, as on a terminal), and as Markdown.
    fn golden_layouts(&self) -> String {
        let mut n = Normalizer::new(&self.dir);
        let mut json_cmd = launcher(&self.dir);
        json_cmd.args(["report", "--json", "t"]);
        let doc: Value = serde_json::from_slice(&run(json_cmd, None).stdout).unwrap();
        n.learn_pids(&doc);
        let mut out = String::new();
        for (title, env, args) in [
            (
                "COLUMNS=80 cudnn-trace report t",
                ("COLUMNS", "80"),
                vec!["report", "t"],
            ),
            (
                "CLICOLOR_FORCE=1 cudnn-trace report t",
                ("CLICOLOR_FORCE", "1"),
                vec!["report", "t"],
            ),
            (
                "cudnn-trace report --format markdown t",
                ("NO_COLOR", "1"),
                vec!["report", "--format", "markdown", "t"],
            ),
        ] {
            let mut cmd = launcher(&self.dir);
            cmd.env(env.0, env.1).args(&args);
            let o = run(cmd, None);
            // Colour sequences written visibly: `\e[31m`; the glibc
            // version depends on the machine.
            let text: String = n
                .text(&o.out())
                .replace('\x1b', "\\e")
                .split_inclusive('\n')
                .map(|l| {
                    if l.starts_with("- glibc: ") {
                        "- glibc: {GLIBC}\n"
                    } else {
                        l
                    }
                })
                .collect();
            let text = if env.0 == "COLUMNS" {
                unwrap_pid_headers(&text)
            } else {
                text
            };
            if env.0 == "COLUMNS" {
                // With the placeholders the lines may be a little longer
                // or shorter than they were: the width is checked on the
                // real output.
                for l in o.out().lines() {
                    assert!(l.chars().count() <= 80, "over 80 columns: {l}");
                }
            }
            out += &format!(
                "== {title} (exit {})\n-- stdout\n{text}",
                o.code().unwrap_or(-1)
            );
        }
        // NO_COLOR beats CLICOLOR_FORCE; --color always beats both.
        let colour = |env: &[(&str, &str)], args: &[&str]| {
            let mut cmd = launcher(&self.dir);
            cmd.envs(env.iter().copied())
                .arg("report")
                .args(args)
                .arg("t");
            run(cmd, None).out().contains('\x1b')
        };
        assert!(!colour(&[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")], &[]));
        assert!(colour(&[("NO_COLOR", "1")], &["--color", "always"]));
        assert!(!colour(&[("CLICOLOR_FORCE", "1")], &["--color=never"]));
        assert!(!colour(&[], &[]), "no colour through a pipe");
        out
    }
}

// ---------------------------------------------------------------------------
/// A process's header line (`pid {PID2} (ppid {PID1})  PROGRAM  → exit
/// status 1`) wraps where its real pids' digits put the end of the line,
/// and the `paths: …/ stands for DIR` legend where the checkout's path
/// does, both of which change from run to run and machine to machine: its continuation lines (indented four
/// spaces) are joined back to it, so the golden holds one line whatever the
/// pids were. Every other wrap stays as the 80-column output has it.
fn unwrap_pid_headers(text: &str) -> String {
    let mut out = String::new();
    let mut in_header = false;
    for line in text.split_inclusive('\n') {
        let cont = line.starts_with("    ") && !line[4..].starts_with(' ');
        if in_header && cont {
            out.pop();
            out.push(' ');
            out.push_str(line.trim_start());
            continue;
        }
        in_header = line.starts_with("pid {PID") || line.starts_with("paths: ");
        out.push_str(line);
    }
    out
}

// The golden runs

/// PyTorch's "compiled against (9, 19, 0) but found runtime version (9, 14,
/// 0)": pip cuDNN 9.19 through the DT_RPATH, the system 9.14 first on
/// LD_LIBRARY_PATH (CDT008, CDT010; copies on disk and a dist-info).
#[test]
fn pytorch_mixup() {
    let case = Case::new("pytorch");
    let pip = case.pip_cudnn9("9.19.0", "13.0");
    let system = case.stack(
        "usr/lib/x86_64-linux-gnu",
        &["cudnn9", "--version", "9.14.0", "--versioned-files"],
    );
    let drv = case.driver();
    case.compile("12_pytorch_message/main.c", &[(&pip, "libcudnn.so.9")]);
    let mut out = case.golden_run(&[&system, &drv], &[PY]);
    out += &case.golden_layouts();
    check_golden("pytorch_mixup", &out);
}

/// cuDNN 9 sub-libraries of two installs, graph through a directory of
/// symlinks on LD_LIBRARY_PATH (CDT002, CDT008).
#[test]
fn cudnn9_two_installs() {
    let case = Case::new("two-installs");
    let pip = case.pip_cudnn9("9.19.0", "13.0");
    let system = case.stack(
        "usr/lib/x86_64-linux-gnu",
        &["cudnn9", "--version", "9.14.0", "--versioned-files"],
    );
    let drv = case.driver();
    let graph = case.p("opt/cudnn-9.14-graph/lib");
    fs::create_dir_all(&graph).unwrap();
    let mut names: Vec<String> = fs::read_dir(&system)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    for name in names {
        let keep = ["libcudnn_graph", "libcudnn_engines", "libcudnn_heuristic"];
        if keep.iter().any(|k| name.starts_with(k)) {
            std::os::unix::fs::symlink(system.join(&name), graph.join(&name)).unwrap();
        }
    }
    case.compile("02_cudnn9_two_installs/main.c", &[(&pip, "libcudnn.so.9")]);
    check_golden(
        "cudnn9_two_installs",
        &case.golden_run(&[&graph, &drv], &[PY]),
    );
}

/// Situation 02 in a child process: a parent that loads nothing forks and
/// execs the program (the process tree; findings name the child's pid).
/// The JSON lists processes by pid: should the pids wrap around between
/// parent and child, its order (and this test) would change.
#[test]
fn cudnn9_two_installs_in_a_child() {
    let case = Case::new("forked");
    let pip = case.pip_cudnn9("9.19.0", "13.0");
    let system = case.stack(
        "usr/lib/x86_64-linux-gnu",
        &["cudnn9", "--version", "9.14.0", "--versioned-files"],
    );
    let drv = case.driver();
    case.compile("02_cudnn9_two_installs/main.c", &[(&pip, "libcudnn.so.9")]);
    let forker = case.p("forker");
    compile::<&str>("forker.c", &forker, &[]);
    check_golden(
        "cudnn9_two_installs_in_a_child",
        &case.golden_run(&[&system, &drv], &["./forker", PY]),
    );
}

/// The dispatcher cannot load libcudnn_graph and aborts (CDT006 with its
/// name variants, CDT010 for cuDNN's own message; the launcher ends by the
/// program's signal).
#[test]
fn missing_graph_v9() {
    if machine_provides("libcudnn_graph.so") {
        eprintln!("skipped: this machine's loader finds a libcudnn_graph.so* by itself");
        return;
    }
    let case = Case::new("missing-graph");
    let pip = case.pip_cudnn9("9.1.0", "12.2");
    let drv = case.driver();
    case.compile("07_missing_sublibrary/main.c", &[(&pip, "libcudnn.so.9")]);
    let held = case.p("held");
    fs::create_dir_all(&held).unwrap();
    fs::rename(
        pip.join("libcudnn_graph.so.9"),
        held.join("libcudnn_graph.so.9"),
    )
    .unwrap();
    check_golden("missing_graph_v9", &case.golden_run(&[&drv], &[PY]));
}

/// One pip install of everything: no finding.
#[test]
fn clean_pip() {
    let case = Case::new("clean");
    let pip = case.pip_cudnn9("9.19.0", "13.0");
    let rt = case.stack(
        "venv/lib/python3.12/site-packages/nvidia/cu13/lib",
        &["cudart", "--version", "13.0"],
    );
    let drv = case.driver();
    case.compile(
        "16_clean_pip/main.c",
        &[(&rt, "libcudart.so.13"), (&pip, "libcudnn.so.9")],
    );
    check_golden("clean_pip", &case.golden_run(&[&drv], &[PY]));
}

/// `explain` (the list, one code, an unknown code), `env --pin` on a valid
/// directory, and `report` of a path that does not exist.
#[test]
fn explain_env_and_errors() {
    let case = Case::new("commands");
    let pip = case.pip_cudnn9("9.19.0", "13.0");
    let n = Normalizer::new(&case.dir);
    let mut out = String::new();
    for (title, args) in [
        ("cudnn-trace explain", vec!["explain"]),
        ("cudnn-trace explain CDT008", vec!["explain", "CDT008"]),
        ("cudnn-trace explain cdt002", vec!["explain", "cdt002"]),
        ("cudnn-trace explain CDT999", vec!["explain", "CDT999"]),
        (
            "cudnn-trace env --pin PIP",
            vec!["env", "--pin", pip.to_str().unwrap()],
        ),
        (
            "cudnn-trace env --pin DIR/missing",
            vec!["env", "--pin", "missing"],
        ),
        ("cudnn-trace report missing", vec!["report", "missing"]),
        (
            "cudnn-trace report --json missing",
            vec!["report", "--json", "missing"],
        ),
        ("cudnn-trace report --bogus", vec!["report", "--bogus"]),
    ] {
        let mut cmd = launcher(&case.dir);
        cmd.args(&args);
        out += &section(title, &run(cmd, None), &n);
    }
    check_golden("explain_env_and_errors", &out);
}
