//! The command line through the real binary: per-code control (`--ignore`,
//! `--severity`, `cudnn-trace.toml`, `[tool.cudnn-trace]` in
//! `pyproject.toml`) and `--fail-on` for `report` and the launcher, the
//! error paths (one clear message, no empty summary, no "(os error N)"),
//! the help pages, the completion scripts and the man page.
//!
//! The traced situation is the one of `tests/findings/02_cudnn9_two_installs`
//! (the pip cuDNN 9.19 dispatcher, the system's 9.14 graph through
//! LD_LIBRARY_PATH): two error findings, CDT002 and CDT008, while the
//! program exits 0.
//!
//! ```sh
//! cargo test -p cudnn-trace-integration --test cli
//! ```

use cudnn_trace_integration::launcher_support::{launcher, launcher_record, run, work_dir, Output};
use cudnn_trace_integration::two_installs::TwoInstalls;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

// ---------------------------------------------------------------------------
// The traced situation, made once

struct Situation {
    /// The work directory; the trace is `dir/t`.
    dir: PathBuf,
    prog: PathBuf,
    /// LD_LIBRARY_PATH for the program: the bad one.
    llp: String,
}

fn s(p: &Path) -> String {
    p.to_str().expect("UTF-8 path").to_string()
}

/// The two-installs situation, with the pip wheel's dist-info, built and
/// traced (into `t`) once per test process.
fn situation() -> &'static Situation {
    static S: OnceLock<Situation> = OnceLock::new();
    S.get_or_init(|| {
        let two = TwoInstalls::build(work_dir("cli-policy"));
        let site = two.dir.join("venv/lib/python3.12/site-packages");
        fs::create_dir_all(site.join("nvidia_cudnn_cu13-9.19.0.56.dist-info")).unwrap();
        let llp = two.ld_path(true);
        let sit = Situation {
            dir: two.dir,
            prog: two.prog,
            llp,
        };
        let t = sit.launch(&sit.dir, &["-q", "--no-config", "--out", "t"]);
        assert_eq!(t.code(), Some(0), "{}", t.show());
        sit
    })
}

impl Situation {
    fn trace(&self) -> PathBuf {
        self.dir.join("t")
    }

    /// `cudnn-trace OPTS... -- PROG` in `cwd`.
    fn launch(&self, cwd: &Path, opts: &[&str]) -> Output {
        let mut cmd = launcher(cwd);
        cmd.env("LD_LIBRARY_PATH", &self.llp)
            .args(opts)
            .arg("--")
            .arg(&self.prog);
        run(cmd, None)
    }

    /// `cudnn-trace report ARGS... TRACE` in `cwd`.
    fn report(&self, cwd: &Path, args: &[&str]) -> Output {
        let mut cmd = launcher(cwd);
        cmd.arg("report").args(args).arg(self.trace());
        run(cmd, None)
    }

    /// `report --json ARGS... TRACE` in `cwd`, which must exit `code`: the
    /// document.
    fn doc(&self, cwd: &Path, args: &[&str], code: i32) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let o = self.report(cwd, &all);
        assert_eq!(o.code(), Some(code), "report {args:?}:\n{}", o.show());
        serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("report {args:?}: {e}\n{}", o.show()))
    }
}

/// A fresh directory inside the situation's (its parents hold no config).
fn project(name: &str) -> PathBuf {
    let d = situation().dir.join("projects").join(name);
    if d.exists() {
        fs::remove_dir_all(&d).unwrap();
    }
    fs::create_dir_all(&d).unwrap();
    d
}

fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// (code, severity) of every finding in force, sorted, deduplicated.
fn findings(doc: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = arr(&doc["processes"])
        .iter()
        .flat_map(|p| arr(&p["findings"]))
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The ignored findings: (code, what ignored it).
fn ignored(doc: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = arr(&doc["processes"])
        .iter()
        .flat_map(|p| arr(&p["ignored_findings"]))
        .map(|f| {
            assert_eq!(f["policy"]["ignored"], true, "{f}");
            (
                f["code"].as_str().unwrap().to_string(),
                f["policy"]["by"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

fn has(list: &[(String, String)], code: &str, what: &str) -> bool {
    list.iter().any(|(c, w)| c == code && w == what)
}

fn codes(list: &[(String, String)]) -> Vec<&str> {
    list.iter().map(|(c, _)| c.as_str()).collect()
}

// ---------------------------------------------------------------------------
// Per-code control

#[test]
fn ignore_and_severity_options_change_the_report_and_the_gate() {
    let sit = situation();
    let cwd = project("options");
    let base = sit.doc(&cwd, &[], 0);
    let all = findings(&base);
    assert!(
        has(&all, "CDT002", "error") && has(&all, "CDT008", "error"),
        "{all:?}"
    );
    assert!(ignored(&base).is_empty());
    assert!(base.get("findings_ignored").is_none());

    let doc = sit.doc(&cwd, &["--ignore", "CDT008"], 0);
    assert!(!codes(&findings(&doc)).contains(&"CDT008"), "{doc:#}");
    assert_eq!(ignored(&doc), [("CDT008".into(), "--ignore".into())]);
    assert_eq!(
        doc["findings_total"]["error"].as_u64().unwrap() + 1,
        base["findings_total"]["error"].as_u64().unwrap()
    );
    assert_eq!(doc["findings_ignored"], 1);

    // By name, in lower case, several at once.
    let doc = sit.doc(
        &cwd,
        &["--ignore", "ld-library-path-shadows-runpath,cdt002"],
        0,
    );
    assert_eq!(codes(&ignored(&doc)), ["CDT002", "CDT008"]);

    let doc = sit.doc(&cwd, &["--severity", "CDT002=info"], 0);
    assert!(has(&findings(&doc), "CDT002", "info"), "{doc:#}");
    let f = arr(&doc["processes"])
        .iter()
        .flat_map(|p| arr(&p["findings"]))
        .find(|f| f["code"] == "CDT002")
        .unwrap();
    assert_eq!(f["policy"]["rule_severity"], "error", "{f}");
    assert_eq!(f["policy"]["by"], "--severity", "{f}");

    // --fail-on sees the findings as the policy has them.
    let errors: Vec<&str> = all
        .iter()
        .filter(|(_, s)| s == "error")
        .map(|(c, _)| c.as_str())
        .collect();
    let ignore_errors = errors.join(",");
    for (args, want) in [
        (vec!["--fail-on", "error"], 3),
        (vec!["--fail-on", "error", "--ignore", "CDT008"], 3),
        (vec!["--fail-on", "error", "--ignore", &ignore_errors], 0),
        (
            vec![
                "--fail-on",
                "error",
                "--ignore",
                "CDT008",
                "--severity",
                "CDT002=warning",
            ],
            0,
        ),
        (
            vec![
                "--fail-on",
                "warning",
                "--ignore",
                "CDT008",
                "--severity",
                "CDT002=warning",
            ],
            3,
        ),
        // The last word on a code wins on the command line: ignore.
        (
            vec![
                "--fail-on",
                "error",
                "--ignore",
                &ignore_errors,
                "--severity",
                "CDT008=error",
            ],
            0,
        ),
    ] {
        let o = sit.report(&cwd, &args);
        assert_eq!(o.code(), Some(want), "report {args:?}:\n{}", o.show());
    }

    // The text says once what was left out, and by what.
    let o = sit.report(&cwd, &["--ignore", "CDT008"]);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let out = o.out();
    assert_eq!(
        out.matches("1 finding ignored by --ignore (CDT008)")
            .count(),
        1,
        "{out}"
    );
    assert!(!out.contains("[CDT008]"), "{out}");
    // Right above the closing verdict, which counts without it.
    let lines: Vec<&str> = out.trim_end().lines().collect();
    assert_eq!(
        lines[lines.len() - 2],
        "1 finding ignored by --ignore (CDT008)",
        "{out}"
    );
    assert!(lines[lines.len() - 1].starts_with("cudnn-trace: "), "{out}");
}

#[test]
fn config_file_is_found_upwards_and_the_command_line_wins() {
    let sit = situation();
    let root = project("config");
    let nested = root.join("src/pkg");
    fs::create_dir_all(&nested).unwrap();
    let cfg = root.join("cudnn-trace.toml");
    fs::write(
        &cfg,
        "# a CI gate's settings\nignore = [\"CDT008\"]\n\n[severity]\nCDT002 = \"warning\"\n",
    )
    .unwrap();

    // Found from a subdirectory: the file's settings, marked with its path.
    let doc = sit.doc(&nested, &[], 0);
    assert_eq!(ignored(&doc), [("CDT008".into(), s(&cfg))]);
    assert!(has(&findings(&doc), "CDT002", "warning"), "{doc:#}");
    let o = sit.report(&nested, &["--fail-on", "error"]);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let o = sit.report(&nested, &["--fail-on", "warning"]);
    assert_eq!(o.code(), Some(3), "{}", o.show());
    // In the working directory itself, the path is shown as the file name.
    let o = sit.report(&root, &[]);
    assert!(
        o.out()
            .contains("1 finding ignored by cudnn-trace.toml (CDT008)"),
        "{}",
        o.show()
    );

    // The command line wins over the file, code by code.
    let doc = sit.doc(&nested, &["--severity", "CDT008=info"], 0);
    assert!(has(&findings(&doc), "CDT008", "info"), "{doc:#}");
    assert!(has(&findings(&doc), "CDT002", "warning"), "{doc:#}");
    let doc = sit.doc(&nested, &["--ignore", "CDT002"], 0);
    assert_eq!(
        ignored(&doc),
        [
            ("CDT002".into(), "--ignore".into()),
            ("CDT008".into(), s(&cfg))
        ]
    );

    // --no-config: the defaults; --config FILE: that file instead.
    let doc = sit.doc(&nested, &["--no-config"], 0);
    assert!(ignored(&doc).is_empty(), "{doc:#}");
    assert!(has(&findings(&doc), "CDT002", "error"), "{doc:#}");
    let other = root.join("other.toml");
    fs::write(&other, "ignore = [\"CDT002\"]\n").unwrap();
    let doc = sit.doc(&nested, &["--config", &s(&other)], 0);
    assert_eq!(ignored(&doc), [("CDT002".into(), s(&other))]);
    assert!(has(&findings(&doc), "CDT008", "error"), "{doc:#}");

    // A nearer pyproject.toml with a [tool.cudnn-trace] table wins; one
    // without it is passed over.
    let py = root.join("src/pyproject.toml");
    fs::write(&py, "[project]\nname = \"pkg\"\n").unwrap();
    assert_eq!(
        ignored(&sit.doc(&nested, &[], 0)),
        [("CDT008".into(), s(&cfg))]
    );
    fs::write(
        &py,
        "[project]\nname = \"pkg\"\n\n[tool.cudnn-trace]\nignore = [\"cudnn-sublibrary-mismatch\"]\n",
    )
    .unwrap();
    let doc = sit.doc(&nested, &[], 0);
    assert_eq!(ignored(&doc), [("CDT002".into(), s(&py))]);
    assert!(has(&findings(&doc), "CDT008", "error"), "{doc:#}");
}

#[test]
fn config_problems() {
    let sit = situation();
    let root = project("config-problems");

    // Unknown codes and settings: one warning each, the rest applies.
    fs::write(
        root.join("cudnn-trace.toml"),
        "ignore = [\"CDT008\", \"CDT404\"]\nfail_on = \"error\"\n",
    )
    .unwrap();
    let o = sit.report(&root, &["--json", "--fail-on", "error"]);
    assert_eq!(o.code(), Some(3), "{}", o.show());
    let err = o.err();
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning:")).collect();
    assert_eq!(warnings.len(), 2, "{err}");
    assert!(warnings[0].contains("CDT404"), "{err}");
    assert!(warnings[1].contains("unknown setting fail_on"), "{err}");

    // A file that is not valid TOML: report refuses, in one line.
    fs::write(root.join("cudnn-trace.toml"), "ignore = [\"CDT008\"\n").unwrap();
    let o = sit.report(&root, &[]);
    assert_eq!(o.code(), Some(2), "{}", o.show());
    assert_eq!(o.out(), "");
    assert_eq!(o.err().lines().count(), 1, "{}", o.show());
    assert!(
        o.err().contains("cudnn-trace.toml: not valid TOML"),
        "{}",
        o.show()
    );
    // ... which --no-config gets past.
    let o = sit.report(&root, &["--no-config"]);
    assert_eq!(o.code(), Some(0), "{}", o.show());

    // A named file that does not exist: a usage error, with the OS's words.
    let o = sit.report(&root, &["--config", "nope.toml"]);
    assert_eq!(o.code(), Some(2), "{}", o.show());
    assert_eq!(
        o.err(),
        "cudnn-trace: nope.toml: no such file or directory\n",
        "{}",
        o.show()
    );
}

#[test]
fn launcher_honours_the_policy_in_its_gate_and_record() {
    let sit = situation();
    let cwd = project("launcher");
    let o = sit.launch(&cwd, &["-q", "--out", "plain", "--fail-on", "error"]);
    assert_eq!(o.code(), Some(3), "{}", o.show());

    let o = sit.launch(
        &cwd,
        &[
            "-q",
            "--out",
            "ignored",
            "--fail-on",
            "error",
            "--ignore",
            "CDT008,CDT002",
        ],
    );
    assert_eq!(o.code(), Some(0), "{}", o.show());
    assert!(o.out().contains("cudnnGetVersion=91400"), "{}", o.show());
    let rec = launcher_record(&cwd.join("ignored"));
    assert_eq!(rec["findings"]["tripped"], false, "{rec:#}");
    assert_eq!(rec["findings"]["ignored"], 2, "{rec:#}");
    assert_eq!(rec["findings"]["error"], 0, "{rec:#}");

    // The configuration file of the working directory, and the summary's line.
    fs::write(
        cwd.join("cudnn-trace.toml"),
        "ignore = [\"CDT008\"]\n[severity]\nCDT002 = \"info\"\n",
    )
    .unwrap();
    let o = sit.launch(&cwd, &["--out", "config", "--fail-on", "warning"]);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let err = o.err();
    assert!(
        err.contains("1 finding ignored by cudnn-trace.toml (CDT008)"),
        "{err}"
    );
    assert!(
        err.contains("1 finding re-ranked by cudnn-trace.toml (CDT002 error → info)"),
        "{err}"
    );

    // A broken configuration file found: the program still runs, the gate
    // fails closed, and one warning says why.
    fs::write(cwd.join("cudnn-trace.toml"), "ignore = ").unwrap();
    let o = sit.launch(&cwd, &["-q", "--out", "broken", "--fail-on", "error"]);
    assert_eq!(o.code(), Some(3), "{}", o.show());
    assert!(o.out().contains("cudnnGetVersion=91400"), "{}", o.show());
    let warnings: Vec<String> = o
        .err()
        .lines()
        .filter(|l| l.starts_with("cudnn-trace: "))
        .map(str::to_string)
        .collect();
    assert_eq!(warnings.len(), 1, "{}", o.show());
    assert!(
        warnings[0].contains("not valid TOML") && warnings[0].contains("--fail-on fails the run"),
        "{warnings:?}"
    );
    assert_eq!(
        launcher_record(&cwd.join("broken"))["findings"]["tripped"],
        true
    );
    // Even a policy that would pass cannot be judged without the file.
    let o = sit.launch(
        &cwd,
        &[
            "-q",
            "--out",
            "broken2",
            "--fail-on",
            "error",
            "--ignore",
            "CDT002,CDT008",
        ],
    );
    assert_eq!(o.code(), Some(3), "{}", o.show());

    // A named file that cannot be read: a usage error, nothing runs.
    let o = sit.launch(&cwd, &["--config", "nope.toml", "--out", "named"]);
    assert_eq!(o.code(), Some(2), "{}", o.show());
    assert_eq!(o.out(), "", "the program must not run");
    assert!(!cwd.join("named").exists());
}

// ---------------------------------------------------------------------------
// Error paths

/// Runs `cudnn-trace ARGS...` in `cwd`.
fn cli(cwd: &Path, args: &[&str]) -> Output {
    let mut cmd = launcher(cwd);
    cmd.args(args);
    run(cmd, None)
}

#[test]
fn error_paths_say_one_thing_and_print_no_empty_summary() {
    let d = work_dir("cli-errors");
    fs::write(d.join("afile"), "not a directory\n").unwrap();
    fs::create_dir_all(d.join("empty")).unwrap();
    for (args, want) in [
        (
            vec!["report", "/nonexistent"],
            "cudnn-trace: /nonexistent: cannot read: no such file or directory\n",
        ),
        (
            vec!["report", "--json", "/nonexistent"],
            "cudnn-trace: /nonexistent: cannot read: no such file or directory\n",
        ),
        (
            vec!["report", "afile/x"],
            "cudnn-trace: afile/x: cannot read: not a directory\n",
        ),
        (
            vec!["report", "empty"],
            "cudnn-trace: empty: no trace files (*.jsonl) and no launcher.json here\n",
        ),
    ] {
        let o = cli(&d, &args);
        assert_eq!(o.code(), Some(1), "{args:?}: {}", o.show());
        assert_eq!(o.out(), "", "{args:?}: no summary: {}", o.show());
        assert_eq!(o.err(), want, "{args:?}");
    }
    // A directory of nothing but junk: the problems, then why nothing is shown.
    fs::create_dir_all(d.join("junk")).unwrap();
    fs::write(d.join("junk/1.jsonl"), "not json\n").unwrap();
    let o = cli(&d, &["report", "junk"]);
    assert_eq!(o.code(), Some(1), "{}", o.show());
    assert_eq!(o.out(), "");
    assert!(
        o.err()
            .ends_with("cudnn-trace: no readable trace found in junk\n"),
        "{}",
        o.show()
    );

    // A launcher record alone (no trace file was written): how the run went
    // is still shown, and the exit status says nothing was traced.
    let o = cli(&d, &["-q", "--out", "ran", "true"]);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    fs::create_dir_all(d.join("record-only")).unwrap();
    fs::copy(
        d.join("ran/launcher.json"),
        d.join("record-only/launcher.json"),
    )
    .unwrap();
    let o = cli(&d, &["report", "record-only"]);
    assert_eq!(o.code(), Some(1), "{}", o.show());
    assert!(o.out().contains("program: true"), "{}", o.show());
    assert!(!o.out().contains("findings"), "{}", o.show());
    assert_eq!(
        o.err(),
        "cudnn-trace: a launcher record but no trace file was found in record-only\n"
    );

    // Where a file cannot be written, the OS's words without Rust's suffix.
    for args in [
        vec!["man", "--dir", "afile/m"],
        vec!["-q", "--json-summary", "afile/s.json", "--out", "t", "true"],
    ] {
        let o = cli(&d, &args);
        let err = o.err();
        assert!(err.contains("not a directory"), "{args:?}: {}", o.show());
        assert!(!err.contains("os error"), "{args:?}: {err}");
    }
    // A program named like a command, mistyped.
    let o = cli(&d, &["reprot", "t"]);
    assert_eq!(o.code(), Some(127), "{}", o.show());
    assert_eq!(
        o.err(),
        "cudnn-trace: reprot: command not found\n\
         cudnn-trace: did you mean the command `cudnn-trace report`?\n"
    );
    // Usage errors: clap's message, a suggestion, the usage, exit 2.
    let o = cli(&d, &["--ou", "d", "true"]);
    assert_eq!(o.code(), Some(2), "{}", o.show());
    assert!(o
        .err()
        .starts_with("error: unexpected argument '--ou' found\n"));
    assert!(o.err().contains("a similar argument exists: '--out'"));
    assert_eq!(o.out(), "");
}

// ---------------------------------------------------------------------------
// Help, completions, man page

#[test]
fn help_pages_are_per_command_with_examples() {
    let d = work_dir("cli-help");
    let mut pages = Vec::new();
    for args in [
        vec!["--help"],
        vec!["report", "--help"],
        vec!["env", "--help"],
        vec!["explain", "--help"],
        vec!["help", "completions"],
        vec!["man", "--help"],
    ] {
        let o = cli(&d, &args);
        assert_eq!(o.code(), Some(0), "{args:?}: {}", o.show());
        assert_eq!(o.err(), "");
        let page = o.out();
        assert!(
            page.contains("\nExamples:\n  cudnn-trace "),
            "{args:?}: {page}"
        );
        assert!(!pages.contains(&page), "{args:?} repeats another page");
        pages.push(page);
    }
    assert!(pages[1].contains("--format <FORMAT>") && pages[1].contains("--ignore <CODE>"));
    assert!(pages[2].contains("--shim <PATH>") && !pages[2].contains("--ignore"));
    let o = cli(&d, &["--version"]);
    assert_eq!(
        o.out(),
        format!("cudnn-trace {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn completion_scripts_for_each_shell() {
    let d = work_dir("cli-completions");
    for (shell, marker) in [
        ("bash", "complete -F _cudnn__trace"),
        ("zsh", "#compdef cudnn-trace"),
        ("fish", "complete -c cudnn-trace"),
        ("elvish", "edit:completion:arg-completer[cudnn-trace]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let o = cli(&d, &["completions", shell]);
        assert_eq!(o.code(), Some(0), "{shell}: {}", o.show());
        let script = o.out();
        assert!(script.contains(marker), "{shell}: {script}");
        // (fish names the long options without their dashes.)
        for word in ["report", "fail-on", "ignore", "pin-mode", "completions"] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
        assert!(
            !script.contains("__probe-cudnn"),
            "{shell}: the hidden command"
        );
    }
    // bash loads it and completes the commands.
    let script = d.join("cudnn-trace.bash");
    fs::write(&script, cli(&d, &["completions", "bash"]).stdout).unwrap();
    let o = run(
        {
            let mut c = std::process::Command::new("bash");
            c.arg("-c").arg(format!(
                "source {}; COMP_WORDS=(cudnn-trace rep); COMP_CWORD=1; \
                 _cudnn__trace cudnn-trace rep cudnn-trace; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                s(&script)
            ));
            c
        },
        None,
    );
    assert_eq!(o.code(), Some(0), "{}", o.show());
    assert_eq!(o.out(), "report\n", "{}", o.show());
}

#[test]
fn man_pages_are_generated_from_the_definitions() {
    let d = work_dir("cli-man");
    let o = cli(&d, &["man"]);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let page = o.out();
    assert!(page.contains(".TH cudnn-trace 1"), "{page}");
    for part in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH OPTIONS",
        ".SH SUBCOMMANDS",
        "\\-\\-fail\\-on",
        "\\-\\-ignore",
        "Exit status:",
        "cudnn\\-trace\\-report(1)",
    ] {
        assert!(page.contains(part), "no {part:?} in:\n{page}");
    }
    let o = cli(&d, &["man", "--dir", "man1"]);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let mut files: Vec<String> = fs::read_dir(d.join("man1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "cudnn-trace-completions.1",
            "cudnn-trace-diff.1",
            "cudnn-trace-env.1",
            "cudnn-trace-explain.1",
            "cudnn-trace-man.1",
            "cudnn-trace-report.1",
            "cudnn-trace-version.1",
            "cudnn-trace.1"
        ]
    );
    assert_eq!(
        fs::read_to_string(d.join("man1/cudnn-trace.1")).unwrap(),
        page
    );
    let report = fs::read_to_string(d.join("man1/cudnn-trace-report.1")).unwrap();
    assert!(
        report.contains("\\-\\-format") && report.contains("Examples:"),
        "{report}"
    );
}
