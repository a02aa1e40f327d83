//! End-to-end tests of the `cudnn-trace` launcher: the real binary with the
//! shim embedded in it, run on small C programs (`tests/launcher/*.c`,
//! compiled at test time with `${CC:-cc}` under `<target>/cdt-launcher/`),
//! traces read back with the real `cudnn-trace report --json`.
//!
//! ```sh
//! cargo test -p cudnn-trace-integration --test launcher
//! ```
//!
//! What is checked: exit statuses (127/126, the program's own, death by its signal), that
//! the program's stdin/stdout/stderr pass through byte for byte (stderr also
//! through the launcher's relay: a terminal, a pipe, a socket, a file, `2>&1`,
//! a child that keeps it, a reader that goes away) and its copy in
//! stderr.txt, the warnings
//! for programs that cannot be traced (static, setuid), children (fork +
//! exec), the user's own LD_PRELOAD/LD_LIBRARY_PATH, nested launchers, where
//! the trace directory goes (and what happens when it cannot be made), the
//! report's tolerance of damaged traces, and the summary of the cuDNN
//! "pip dispatcher + system sub-libraries" mix-up.

use cudnn_trace_integration::launcher_support::{
    assert_signal_state, bare, build_stack, cc, compile, compile_copy, copy_executable, launcher,
    launcher_record, lines_starting, pip_cudnn_919, report_json, report_ok, run, shim_cache,
    trace_files, with_signal_state, work_dir, Output,
};
use cudnn_trace_integration::tools;
use serde_json::Value;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

// ---------------------------------------------------------------------------
// Small helpers

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// The processes of a report document.
fn processes(doc: &Value) -> &[Value] {
    arr(&doc["processes"])
}

/// The library of a process whose `path` is `path`.
fn library<'a>(proc_: &'a Value, path: &Path) -> Option<&'a Value> {
    let want = path.to_str().unwrap();
    arr(&proc_["libraries"])
        .iter()
        .find(|l| s(&l["path"]) == want)
}

/// The value after `key` on the line of `text` that starts with `key`.
fn field<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no line starting with {key:?} in:\n{text}"))
}

/// Lines of the launcher's own messages (`cudnn-trace: …`) on stderr.
fn launcher_lines(o: &Output) -> Vec<String> {
    lines_starting(&o.err(), "cudnn-trace:")
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// The program's file in the trace directory: `<pid>.jsonl`, pid from launcher.json.
fn program_trace(dir: &Path) -> PathBuf {
    let rec = launcher_record(dir);
    let pid = rec["pid"]
        .as_u64()
        .unwrap_or_else(|| panic!("launcher.json has no pid: {rec}"));
    dir.join(format!("{pid}.jsonl"))
}

/// `bare(program, cwd)` with arguments.
fn bare_with(program: &str, cwd: &Path, args: &[&str]) -> Command {
    let mut c = bare(program, cwd);
    c.args(args);
    c
}

/// Removes files when dropped.
struct RemoveOnDrop(Vec<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = fs::remove_file(p);
        }
    }
}

fn write_mode(path: &Path, content: &[u8], mode: u32) {
    fs::write(path, content).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

// ---------------------------------------------------------------------------
// 1. Programs that cannot be started

#[test]
fn missing_program_is_127_and_not_executable_is_126() {
    let d = work_dir("not-runnable");
    let bin = d.join("bin");
    fs::create_dir_all(bin.join("adir")).unwrap();
    // Exists, no execute bit at all (so root cannot execute it either).
    write_mode(
        &bin.join("notexec"),
        b"#!/bin/sh\necho SHOULD-NOT-RUN\n",
        0o644,
    );

    let cases: &[(&str, i32, &str)] = &[
        // (PROGRAM, expected status, text the message must hold)
        ("cdt-no-such-program", 127, "cdt-no-such-program"),
        ("./bin/cdt-missing", 127, "./bin/cdt-missing"),
        ("./bin/notexec", 126, "./bin/notexec"),
        // Found by the PATH search but not executable: 126, and the
        // message names the file found.
        ("notexec", 126, "bin/notexec"),
        ("./bin/adir", 126, "./bin/adir"),
    ];
    for &(prog, code, named) in cases {
        let mut cmd = launcher(&d);
        cmd.env("PATH", &bin).args(["--out", "t", "--", prog]);
        let o = run(cmd, None);
        assert_eq!(o.code(), Some(code), "{prog}:\n{}", o.show());
        assert!(o.stdout.is_empty(), "{prog}: {}", o.show());
        let msgs = launcher_lines(&o);
        assert_eq!(msgs.len(), 1, "{prog}: one message expected:\n{}", o.show());
        assert!(
            msgs[0].contains(named),
            "{prog}: message should name {named}: {msgs:?}"
        );
        assert!(!o.err().contains("SHOULD-NOT-RUN"), "{prog}: {}", o.show());
    }
}

// ---------------------------------------------------------------------------
// 2. Exit status, signals, stdin/stdout/stderr

/// `io` (compiled once per test process) in `d`.
fn build_io(d: &Path) -> PathBuf {
    let io = d.join("io");
    compile_copy("io.c", &io);
    io
}

#[test]
fn exit_status_and_output_pass_through() {
    let d = work_dir("passthrough");
    build_io(&d);
    for code in [0, 7, 255] {
        let arg = code.to_string();
        let b = run(bare_with("./io", &d, &["exit", &arg]), None);
        assert_eq!(b.code(), Some(code), "bare:\n{}", b.show());
        assert!(b.stdout.len() > 64 * 1024, "bare output too short");

        // Quiet: the launcher adds nothing to the program's streams.
        let mut cmd = launcher(&d);
        cmd.args([
            "-q",
            "--out",
            &format!("t-q-{code}"),
            "--",
            "./io",
            "exit",
            &arg,
        ]);
        let t = run(cmd, None);
        assert_eq!(t.code(), Some(code), "traced -q:\n{}", t.show());
        assert!(t.stdout == b.stdout, "stdout differs from the bare run");
        assert!(
            t.stderr == b.stderr,
            "stderr differs from the bare run:\nbare: {:?}\ntraced: {:?}",
            b.err(),
            t.err()
        );

        // With the summary: stdout identical, stderr = the program's, then the summary.
        let mut cmd = launcher(&d);
        cmd.args(["--out", &format!("t-{code}"), "--", "./io", "exit", &arg]);
        let t = run(cmd, None);
        assert_eq!(t.code(), Some(code), "traced:\n{}", t.show());
        assert!(t.stdout == b.stdout, "stdout differs from the bare run");
        assert!(
            t.stderr.starts_with(&b.stderr),
            "stderr does not start with the program's own:\n{}",
            t.err()
        );
        let summary = String::from_utf8_lossy(&t.stderr[b.stderr.len()..]).into_owned();
        assert!(
            summary.contains(&format!("exit status {code}")),
            "summary:\n{summary}"
        );
        let rec = launcher_record(&d.join(format!("t-{code}")));
        assert_eq!(rec["exit_code"], code, "{rec}");
        assert_eq!(rec["status"], code, "{rec}");
    }

    // stdin reaches the program untouched.
    let input: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 256) as u8).collect();
    let mut cmd = launcher(&d);
    cmd.args(["-q", "--out", "t-cat", "--", "./io", "cat"]);
    let t = run(cmd, Some(&input));
    assert_eq!(t.code(), Some(0), "{}", t.show());
    assert!(t.stdout == input, "stdin was not passed through unchanged");
}

#[test]
fn death_by_signal_is_the_same_signal() {
    let d = work_dir("signal");
    build_io(&d);
    let b = run(bare_with("./io", &d, &["segv"]), None);
    assert_eq!(
        b.signal(),
        Some(11),
        "bare run should die of SIGSEGV:\n{}",
        b.show()
    );

    let mut cmd = launcher(&d);
    cmd.args(["--out", "t", "--", "./io", "segv"]);
    let t = run(cmd, None);
    // The launcher ends the way the program did: by the same signal (a
    // shell shows 128+11; a waitpid parent sees WIFSIGNALED, as without it).
    assert_eq!(t.signal(), Some(11), "{}", t.show());
    assert_eq!(t.code(), None, "{}", t.show());
    assert!(t.stdout == b.stdout, "stdout differs from the bare run");
    assert!(t.stderr.starts_with(&b.stderr), "stderr:\n{}", t.err());
    assert!(
        t.err().contains("killed by signal 11 (SIGSEGV)"),
        "summary should tell the signal:\n{}",
        t.err()
    );
    let rec = launcher_record(&d.join("t"));
    assert_eq!(rec["signal"], 11, "{rec}");
    assert_eq!(rec["signal_name"], "SIGSEGV", "{rec}");
    assert_eq!(rec["status"], 139, "{rec}");
    assert!(rec["exit_code"].is_null(), "{rec}");
    // The program was traced up to its crash: its file has the header.
    let f = program_trace(&d.join("t"));
    let first = fs::read_to_string(&f).unwrap();
    assert!(
        first.starts_with("{\"ev\":\"process\""),
        "{}: {first}",
        f.display()
    );
}

/// What the signal tests start programs with.
const IGNORED: &[i32] = &[libc::SIGHUP, libc::SIGQUIT, libc::SIGPIPE, libc::SIGCHLD];
const BLOCKED: &[i32] = &[libc::SIGUSR2];

#[test]
fn inherited_ignored_and_blocked_signals_reach_the_program() {
    let d = work_dir("sigstate");
    build_io(&d);
    let mut cmd = bare_with("./io", &d, &["sigs"]);
    with_signal_state(&mut cmd, IGNORED, BLOCKED);
    let b = run(cmd, None);
    assert_eq!(b.code(), Some(0), "{}", b.show());
    // The set-up took: what the program gets without the launcher.
    let out = b.out();
    assert_signal_state(&out.lines().collect::<Vec<_>>(), IGNORED, BLOCKED);
    // The launcher ignores SIGPIPE for itself (`launch::entry`) and must
    // catch SIGCHLD: neither change may leak into the program.
    for (out, quiet) in [("t-q", true), ("t", false)] {
        let mut cmd = launcher(&d);
        if quiet {
            cmd.arg("-q");
        }
        cmd.args(["--out", out, "--", "./io", "sigs"]);
        with_signal_state(&mut cmd, IGNORED, BLOCKED);
        let t = run(cmd, None);
        assert_eq!(t.code(), Some(0), "{}", t.show());
        assert_eq!(
            t.out(),
            b.out(),
            "launcher{}:\n{}",
            if quiet { " -q" } else { "" },
            t.show()
        );
    }
}

/// The program's environment is the launcher's, entry by entry and in its
/// order (an entry without `=` and a variable set twice included), plus the
/// tracer's variables.
#[test]
fn the_environment_reaches_the_program_entry_by_entry() {
    let d = work_dir("environ");
    build_io(&d);
    let b = run(bare_with("./io", &d, &["odd-env", "./io", "env"]), None);
    assert_eq!(b.code(), Some(0), "{}", b.show());
    let bare = b.out();
    assert!(
        bare.starts_with("CDT_ODD_ENTRY_WITHOUT_EQUALS\nCDT_TWICE=first\n"),
        "{bare}"
    );
    assert!(bare.ends_with("CDT_TWICE=second\n"), "{bare}");
    // The launcher is started with the odd environment, as the program was.
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    let cli = t.cli.to_str().unwrap();
    let argv = ["odd-env", cli, "-q", "--out", "t", "--", "./io", "env"];
    let mut cmd = bare_with("./io", &d, &argv);
    cmd.env("XDG_CACHE_HOME", shim_cache());
    let traced = run(cmd, None);
    assert_eq!(traced.code(), Some(0), "{}", traced.show());
    let other = |l: &&str| {
        ![
            "LD_AUDIT=",
            "LD_PRELOAD=",
            "CUDNN_TRACE_",
            "XDG_CACHE_HOME=",
        ]
        .iter()
        .any(|p| l.starts_with(p))
    };
    let out = traced.out();
    let got: Vec<&str> = out.lines().filter(other).collect();
    let want: Vec<&str> = bare.lines().filter(other).collect();
    assert_eq!(got, want);
}

// ---------------------------------------------------------------------------
// 3. A statically linked program

/// Whether `${CC:-cc} -static` can link a C program here. Ok(false) only
/// when the static C library is missing.
fn static_linking_works(d: &Path) -> Result<bool, String> {
    let src = d.join("probe.c");
    fs::write(&src, "int main(void) { return 0; }\n").unwrap();
    let o = cc()
        .arg("-static")
        .arg("-o")
        .arg(d.join("probe"))
        .arg(&src)
        .output()
        .map_err(|e| format!("running the C compiler: {e}"))?;
    if o.status.success() {
        return Ok(true);
    }
    let libc_a = cc()
        .arg("-print-file-name=libc.a")
        .output()
        .map_err(|e| e.to_string())?;
    let found = String::from_utf8_lossy(&libc_a.stdout).trim().to_string();
    if !Path::new(&found).is_absolute() || !Path::new(&found).exists() {
        return Ok(false);
    }
    Err(format!(
        "`cc -static` fails although {found} exists:\n{}",
        String::from_utf8_lossy(&o.stderr)
    ))
}

#[test]
fn static_program_gets_one_warning_and_still_runs() {
    let d = work_dir("static");
    match static_linking_works(&d) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("SKIPPED static_program_gets_one_warning_and_still_runs: no static C library (libc.a) for ${{CC:-cc}} -static");
            return;
        }
        Err(e) => panic!("{e}"),
    }
    compile("io.c", &d.join("io-static"), &["-static"]);
    let b = run(bare_with("./io-static", &d, &["exit", "5"]), None);
    assert_eq!(b.code(), Some(5), "{}", b.show());

    // Quiet: stderr is exactly the warning line, then the program's stderr.
    let mut cmd = launcher(&d);
    cmd.args(["-q", "--out", "tq", "--", "./io-static", "exit", "5"]);
    let t = run(cmd, None);
    assert_eq!(t.code(), Some(5), "{}", t.show());
    assert!(t.stdout == b.stdout, "stdout differs from the bare run");
    let nl = t.stderr.iter().position(|&c| c == b'\n').unwrap_or(0);
    let (warning, rest) = t.stderr.split_at(nl + 1);
    let warning = String::from_utf8_lossy(warning);
    assert!(
        warning.starts_with("cudnn-trace: warning: ./io-static")
            && warning.contains("statically linked")
            && warning.contains("cannot inject the tracer"),
        "first stderr line should be the warning: {warning:?}"
    );
    assert!(rest == b.stderr.as_slice(), "rest of stderr:\n{}", t.err());
    assert!(
        trace_files(&d.join("tq")).is_empty(),
        "no trace file can exist"
    );

    // With the summary: still one launcher warning (the summary repeats it
    // as part of its own text, without the `cudnn-trace: warning:` prefix).
    let mut cmd = launcher(&d);
    cmd.args(["--out", "t", "--", "./io-static", "exit", "5"]);
    let t = run(cmd, None);
    assert_eq!(t.code(), Some(5), "{}", t.show());
    assert!(t.stdout == b.stdout, "stdout differs from the bare run");
    let warnings = lines_starting(&t.err(), "cudnn-trace: warning:")
        .into_iter()
        .map(str::to_string)
        .collect::<Vec<_>>();
    assert_eq!(warnings.len(), 1, "{}", t.show());
    assert!(warnings[0].contains("statically linked"), "{warnings:?}");
    let rec = launcher_record(&d.join("t"));
    assert_eq!(arr(&rec["warnings"]).len(), 1, "{rec}");
    assert!(
        s(&rec["warnings"][0]).contains("statically linked"),
        "{rec}"
    );
    assert_eq!(rec["exit_code"], 5, "{rec}");

    // The block for a bug report says why there is no table: the launcher
    // record is all there is (exit 1: no trace file read).
    let mut cmd = launcher(&d);
    cmd.args(["report", "--format", "markdown", "t"]);
    let m = run(cmd, None);
    assert_eq!(m.code(), Some(1), "{}", m.show());
    assert!(
        m.out()
            .lines()
            .any(|l| l.starts_with("- warning: ") && l.contains("statically linked")),
        "{}",
        m.show()
    );
}

// ---------------------------------------------------------------------------
// 4. setuid

/// What the launcher decides (core/src/launch/target.rs, `secure_mode`): it warns
/// that a program cannot be traced only when the loader will run it in
/// secure-execution mode, i.e. when exec changes the effective uid (setuid
/// bit AND an owner other than our real uid), or the gid likewise, or the
/// file has capabilities and we are not root, and the file system is not
/// mounted nosuid. A setuid program owned by ourselves changes nothing (the
/// kernel does not set AT_SECURE), so it is traced like any other; this holds
/// for root too (root running a root-owned setuid file keeps euid 0).
///
/// Case A (any user): a setuid copy owned by us → no warning, traced.
/// Case B (root only, since it needs chown): a setuid copy owned by nobody
/// (65534) → exec switches euid to 65534 and AT_SECURE is set, so the
/// launcher must warn once, run it anyway with its exit status, and no trace
/// file can appear. Whether AT_SECURE really is set is read from the bare
/// run (a nosuid mount would clear it, and then the launcher, which checks
/// nosuid too, must not warn).
#[test]
fn setuid_program_is_warned_about_exactly_when_secure_mode_applies() {
    let d = work_dir("setuid");
    let ids = d.join("ids");
    compile::<&str>("ids.c", &ids, &[]);
    let me = fs::metadata(&d).unwrap().uid();
    let own = d.join("ids-own");
    let other = d.join("ids-nobody");
    // Leave no setuid file behind, whatever happens.
    let _cleanup = RemoveOnDrop(vec![own.clone(), other.clone()]);

    // Case A: setuid, owned by us.
    copy_executable(&ids, &own);
    fs::set_permissions(&own, fs::Permissions::from_mode(0o4755)).unwrap();
    assert_eq!(fs::metadata(&own).unwrap().mode() & 0o4000, 0o4000);
    let b = run(bare_with("./ids-own", &d, &["4"]), None);
    assert!(
        b.out().contains(&format!("uid={me} euid={me} secure=0")),
        "bare:\n{}",
        b.show()
    );
    let mut cmd = launcher(&d);
    cmd.args(["--out", "t-own", "--", "./ids-own", "4"]);
    let t = run(cmd, None);
    assert_eq!(t.code(), Some(4), "{}", t.show());
    assert!(
        !t.err().contains("cudnn-trace: warning"),
        "a setuid file owned by the caller must not be reported as untraceable:\n{}",
        t.show()
    );
    assert!(
        field(&t.out(), "LD_PRELOAD=").contains("libcdtrace_preload.so"),
        "{}",
        t.show()
    );
    assert!(
        program_trace(&d.join("t-own")).is_file(),
        "the program must be traced"
    );
    assert!(arr(&launcher_record(&d.join("t-own"))["warnings"]).is_empty());

    // Case B: setuid, owned by another user.
    if me != 0 {
        eprintln!("setuid case B skipped: needs root to chown a file to another user");
        return;
    }
    copy_executable(&ids, &other);
    std::os::unix::fs::chown(&other, Some(65534), Some(65534)).unwrap();
    // chown clears the setuid bit: set it afterwards.
    fs::set_permissions(&other, fs::Permissions::from_mode(0o4755)).unwrap();
    let b = run(bare_with("./ids-nobody", &d, &["4"]), None);
    assert_eq!(b.code(), Some(4), "bare:\n{}", b.show());
    let secure = b.out().contains("secure=1");
    let mut cmd = launcher(&d);
    cmd.args(["--out", "t-nobody", "--", "./ids-nobody", "4"]);
    let t = run(cmd, None);
    assert_eq!(t.code(), Some(4), "{}", t.show());
    let warnings = lines_starting(&t.err(), "cudnn-trace: warning:")
        .into_iter()
        .map(str::to_string)
        .collect::<Vec<_>>();
    let rec = launcher_record(&d.join("t-nobody"));
    if secure {
        assert!(b.out().contains("euid=65534"), "bare:\n{}", b.show());
        assert_eq!(warnings.len(), 1, "one warning expected:\n{}", t.show());
        assert!(
            warnings[0].contains("./ids-nobody")
                && warnings[0].contains("setuid")
                && warnings[0].contains("secure-execution"),
            "{warnings:?}"
        );
        // The loader dropped the shim: the program saw no LD_PRELOAD and
        // wrote no trace; its output is the bare run's.
        assert_eq!(t.stdout, b.stdout, "{}", t.show());
        assert!(trace_files(&d.join("t-nobody")).is_empty());
        assert_eq!(arr(&rec["warnings"]).len(), 1, "{rec}");
    } else {
        eprintln!("setuid case B: the file system ignores setuid (nosuid): expecting no warning");
        assert!(warnings.is_empty(), "{}", t.show());
        assert!(program_trace(&d.join("t-nobody")).is_file());
    }
}

// ---------------------------------------------------------------------------
// 5. Children: fork + exec

#[test]
fn forked_and_execed_child_is_traced_with_its_parent() {
    let pip = pip_cudnn_919();
    let d = work_dir("children");
    compile::<&str>("forker.c", &d.join("forker"), &[]);
    compile::<&str>("cudnn_open.c", &d.join("cudnn_open"), &["-ldl"]);
    let child_exe = d.join("cudnn_open");

    let mut cmd = launcher(&d);
    cmd.env("LD_LIBRARY_PATH", pip)
        .args(["--out", "t", "--", "./forker"])
        .arg(&child_exe);
    let t = run(cmd, None);
    assert_eq!(t.code(), Some(0), "{}", t.show());
    let out = t.out();
    assert!(out.contains("cudnnGetVersion=91900"), "{}", t.show());
    let parent_pid: u64 = field(&out, "forker: pid ").trim().parse().unwrap();
    let child_pid: u64 = field(&out, "forker: child ")
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();

    let doc = report_ok(&d, &d.join("t"));
    let procs = processes(&doc);
    assert!(
        (2..=3).contains(&procs.len()),
        "2 processes (or 3 with a separate fork image) expected: {doc:#}"
    );
    let parent = procs
        .iter()
        .find(|p| p["pid"] == parent_pid)
        .unwrap_or_else(|| panic!("no process {parent_pid}: {doc:#}"));
    assert_eq!(parent["top"], true);
    assert_eq!(parent["ended"], "exit status 0");
    assert!(s(&parent["exe"]).ends_with("/forker"), "{parent:#}");

    let execd = procs
        .iter()
        .find(|p| s(&p["exe"]) == child_exe.to_str().unwrap())
        .unwrap_or_else(|| panic!("no process for {}: {doc:#}", child_exe.display()));
    assert_eq!(execd["pid"], child_pid, "{execd:#}");
    assert_eq!(execd["ppid"], parent_pid, "{execd:#}");
    assert_eq!(execd["origin"], "exec", "{execd:#}");
    assert_eq!(execd["top"], false);
    // Its place in the tree: a child of the parent's image, or the exec
    // successor of a fork image whose own parent is the parent.
    match s(&execd["link"]) {
        "child" => assert_eq!(execd["parent"], parent["file"], "{execd:#}"),
        "exec" => {
            let fork_img = procs
                .iter()
                .find(|p| p["file"] == execd["parent"])
                .unwrap_or_else(|| panic!("exec parent missing: {doc:#}"));
            assert_eq!(fork_img["pid"], child_pid);
            assert_eq!(fork_img["link"], "child");
            assert_eq!(fork_img["parent"], parent["file"]);
        }
        other => panic!("link {other:?}: {execd:#}"),
    }
    let cudnn = library(execd, &pip.join("libcudnn.so.9"))
        .unwrap_or_else(|| panic!("libcudnn.so.9 from {} not listed: {execd:#}", pip.display()));
    assert_eq!(cudnn["name"], "libcudnn.so.9", "{cudnn:#}");
    assert_eq!(cudnn["reason"], "LD_LIBRARY_PATH", "{cudnn:#}");
    assert_eq!(cudnn["search_dir"], pip.to_str().unwrap(), "{cudnn:#}");
    assert_eq!(cudnn["requester"], child_exe.to_str().unwrap(), "{cudnn:#}");
    assert_eq!(cudnn["via"], "dlopen", "{cudnn:#}");
    assert_eq!(cudnn["family"], "cudnn", "{cudnn:#}");
    // The parent loaded no CUDA library.
    assert!(arr(&parent["libraries"]).is_empty(), "{parent:#}");

    // The launcher's text summary shows the child and its library.
    let err = t.err();
    let lines: Vec<&str> = err.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains(&format!("pid {child_pid} ")) && l.contains("cudnn_open"))
        .unwrap_or_else(|| panic!("summary does not show pid {child_pid}:\n{err}"));
    // Under the table's header row.
    assert!(
        lines[at + 1].trim_start().starts_with("FAMILY  LIBRARY"),
        "the table header:\n{err}"
    );
    assert!(
        lines[at + 2].contains("libcudnn.so.9") && lines[at + 2].contains("LD_LIBRARY_PATH"),
        "the child's first library line:\n{err}"
    );
}

// ---------------------------------------------------------------------------
// 6. The user's environment, and nested launchers

fn build_env_programs(d: &Path) -> PathBuf {
    compile::<&str>("envprog.c", &d.join("envprog"), &[]);
    let pre = d.join("libuserpre.so");
    compile("userpre.c", &pre, &["-shared", "-fPIC"]);
    pre
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

#[test]
fn user_preload_and_library_path_stay_in_force() {
    let d = work_dir("user-env");
    let pre = build_env_programs(&d);
    let pre_s = pre.to_str().unwrap();
    let llp = format!("{}:/cdt-nonexistent", d.join("libdir").display());
    let with_env = |mut c: Command| {
        c.env("LD_PRELOAD", &pre).env("LD_LIBRARY_PATH", &llp);
        c
    };

    let b = run(with_env(bare_with("./envprog", &d, &["3"])), None);
    assert_eq!(b.code(), Some(3), "{}", b.show());
    assert_eq!(field(&b.out(), "LD_PRELOAD="), pre_s);
    assert_eq!(
        count(&b.err(), "[userpre ctor in envprog]"),
        1,
        "{}",
        b.show()
    );

    let mut cmd = with_env(launcher(&d));
    cmd.args(["--all", "-q", "--out", "t", "--", "./envprog", "3"]);
    let t = run(cmd, None);
    assert_eq!(t.code(), Some(3), "{}", t.show());
    let out = t.out();
    let preload: Vec<&str> = field(&out, "LD_PRELOAD=").split(':').collect();
    assert_eq!(preload.len(), 2, "the user's preload + shim: {preload:?}");
    assert_eq!(
        preload[0], pre_s,
        "the user's preload must stay, and stay first (sanitizer runtimes need it)"
    );
    // LD_PRELOAD names the preload helper, LD_AUDIT the shim next to it.
    assert!(
        preload[1].ends_with("/libcdtrace_preload.so"),
        "{preload:?}"
    );
    let audit = field(&out, "LD_AUDIT=");
    assert_eq!(
        audit,
        preload[1].replace("/libcdtrace_preload.so", "/libcdtrace.so")
    );
    assert_eq!(field(&out, "LD_LIBRARY_PATH="), llp);
    assert_eq!(field(&out, "shim files mapped: "), "1", "{out}");
    assert_eq!(field(&out, "shim file: "), audit);
    assert_eq!(field(&out, "preload helper files mapped: "), "1", "{out}");
    assert_eq!(field(&out, "preload helper file: "), preload[1]);
    // The user's preload ran in the program, once. (The shell-level
    // LD_PRELOAD also reaches the launcher process itself, which the README
    // documents: that line says "in cudnn-trace" and is not counted here.)
    assert_eq!(
        count(&t.err(), "[userpre ctor in envprog]"),
        1,
        "{}",
        t.show()
    );

    // The trace (taken with --all) records the preload and the environment.
    let (o, doc) = report_json(&d, &[OsStr::new("--all"), d.join("t").as_os_str()]);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let doc = doc.unwrap();
    let p = processes(&doc)
        .iter()
        .find(|p| s(&p["exe"]).ends_with("/envprog"))
        .unwrap_or_else(|| panic!("no envprog process: {doc:#}"));
    let lib = library(p, &pre).unwrap_or_else(|| panic!("user preload not listed: {p:#}"));
    assert_eq!(lib["via"], "preload", "{lib:#}");
    assert_eq!(p["env"]["LD_LIBRARY_PATH"], llp.as_str());
    assert_eq!(s(&p["env"]["LD_PRELOAD"]), preload.join(":"));
}

#[test]
fn nested_launchers_put_one_shim_in_the_program() {
    let d = work_dir("nested");
    let pre = build_env_programs(&d);
    let cli = tools::tools().unwrap().cli.clone();

    // `cudnn-trace -- cudnn-trace -- envprog`, default output directories.
    let mut cmd = launcher(&d);
    cmd.arg("--").arg(&cli).args(["--", "./envprog", "6"]);
    let t = run(cmd, None);
    assert_eq!(t.code(), Some(6), "{}", t.show());
    let out = t.out();
    let preload = field(&out, "LD_PRELOAD=");
    assert!(
        !preload.contains(':') && preload.ends_with("/libcdtrace_preload.so"),
        "one preload helper entry expected: {preload}"
    );
    assert_eq!(
        field(&out, "LD_AUDIT="),
        preload.replace("/libcdtrace_preload.so", "/libcdtrace.so")
    );
    assert_eq!(field(&out, "shim files mapped: "), "1", "{out}");
    assert_eq!(field(&out, "preload helper files mapped: "), "1", "{out}");
    let runs: Vec<PathBuf> = fs::read_dir(d.join("cudnn-trace-out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 2, "one run directory per launcher: {runs:?}");

    // A second launcher with another shim file (another version, another
    // cache): its shim replaces the outer one, the user's preload is kept.
    let alt = d.join("alt");
    fs::create_dir_all(&alt).unwrap();
    let alt_shim = alt.join("libcdtrace.so");
    let alt_helper = alt.join("libcdtrace_preload.so");
    fs::copy(&tools::tools().unwrap().shim, &alt_shim).unwrap();
    fs::copy(&tools::tools().unwrap().preload, &alt_helper).unwrap();
    let mut cmd = launcher(&d);
    cmd.env("LD_PRELOAD", &pre)
        .args(["-q", "--out", "outer", "--", "env"])
        .arg(format!("CUDNN_TRACE_SHIM_PATH={}", alt_shim.display()))
        .arg(&cli)
        .args(["-q", "--out", "inner", "--", "./envprog", "6"]);
    let t = run(cmd, None);
    assert_eq!(t.code(), Some(6), "{}", t.show());
    let out = t.out();
    assert_eq!(
        field(&out, "LD_PRELOAD="),
        format!("{}:{}", pre.display(), alt_helper.display())
    );
    assert_eq!(field(&out, "LD_AUDIT="), alt_shim.to_str().unwrap());
    assert_eq!(field(&out, "shim files mapped: "), "1", "{out}");
    assert_eq!(field(&out, "shim file: "), alt_shim.to_str().unwrap());
    assert_eq!(field(&out, "preload helper files mapped: "), "1", "{out}");
    assert_eq!(
        field(&out, "preload helper file: "),
        alt_helper.to_str().unwrap()
    );
    assert_eq!(
        count(&t.err(), "[userpre ctor in envprog]"),
        1,
        "{}",
        t.show()
    );
    let inner = program_trace(&d.join("inner"));
    assert!(inner.is_file(), "the inner launcher traces the program");
}

// ---------------------------------------------------------------------------
// 7. The trace directory

#[test]
fn out_dir_is_used_as_given() {
    let d = work_dir("out-given");
    build_io(&d);
    let mut cmd = launcher(&d);
    cmd.args(["-q", "--out", "rel/a/b", "--", "./io", "exit", "0"]);
    let t = run(cmd, None);
    assert_eq!(t.code(), Some(0), "{}", t.show());
    let dir = d.join("rel/a/b");
    let rec = launcher_record(&dir);
    assert_eq!(
        s(&rec["out_dir"]),
        fs::canonicalize(&dir).unwrap().to_str().unwrap()
    );
    let files = trace_files(&dir);
    assert_eq!(
        files,
        vec![program_trace(&dir)],
        "the program's file, directly in DIR"
    );
    assert!(!d.join("cudnn-trace-out").exists());
}

/// `YYYYmmdd-HHMMSS-PID` → PID, checking the date and time fields.
fn stamped_pid(name: &str) -> Option<u64> {
    let parts: Vec<&str> = name.split('-').collect();
    let [date, time, pid] = parts.as_slice() else {
        return None;
    };
    let num = |t: &str, n: usize| t.len() == n && t.bytes().all(|c| c.is_ascii_digit());
    if !num(date, 8) || !num(time, 6) {
        return None;
    }
    let month: u32 = date[4..6].parse().ok()?;
    let day: u32 = date[6..8].parse().ok()?;
    let hour: u32 = time[0..2].parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 {
        return None;
    }
    pid.parse().ok()
}

#[test]
fn default_out_dir_is_fresh_and_timestamped() {
    let d = work_dir("out-default");
    build_io(&d);
    for _ in 0..2 {
        let mut cmd = launcher(&d);
        cmd.args(["--", "./io", "exit", "0"]);
        let t = run(cmd, None);
        assert_eq!(t.code(), Some(0), "{}", t.show());
        assert!(t.err().contains("trace: cudnn-trace-out/"), "{}", t.err());
    }
    let base = d.join("cudnn-trace-out");
    let mut runs: Vec<PathBuf> = fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 2, "one fresh directory per run: {runs:?}");
    for r in &runs {
        let name = r.file_name().unwrap().to_str().unwrap();
        let pid = stamped_pid(name).unwrap_or_else(|| panic!("{name} is not YYYYmmdd-HHMMSS-PID"));
        let rec = launcher_record(r);
        assert_eq!(rec["launcher_pid"], pid, "{name}: {rec}");
        assert_eq!(s(&rec["out_dir"]), r.to_str().unwrap());
        assert_eq!(trace_files(r), vec![program_trace(r)]);
    }
    // `report` without a path reads the newest run of ./cudnn-trace-out.
    let (o, doc) = report_json::<&str>(&d, &[]);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let doc = doc.unwrap();
    let sources = arr(&doc["sources"]);
    assert_eq!(sources.len(), 1, "{doc:#}");
    assert!(
        s(&sources[0]).ends_with(runs[1].file_name().unwrap().to_str().unwrap()),
        "newest run expected: {doc:#}"
    );
}

#[test]
fn unusable_out_dir_still_runs_the_program() {
    let d = work_dir("out-unusable");
    build_io(&d);
    // A regular file where a directory should be: no permission bits are
    // involved, so this holds for root too.
    fs::write(d.join("afile"), b"not a directory\n").unwrap();
    let b = run(bare_with("./io", &d, &["exit", "3"]), None);
    assert_eq!(b.code(), Some(3));

    for out in ["afile/sub", "afile"] {
        let mut cmd = launcher(&d);
        cmd.args(["--out", out, "--", "./io", "exit", "3"]);
        let t = run(cmd, None);
        assert_eq!(t.code(), Some(3), "--out {out}:\n{}", t.show());
        assert!(
            t.stdout == b.stdout,
            "--out {out}: stdout differs from the bare run"
        );
        let msgs = launcher_lines(&t);
        assert_eq!(
            msgs.len(),
            1,
            "--out {out}: one message expected:\n{}",
            t.show()
        );
        assert!(
            msgs[0].contains(out) && msgs[0].contains("trace directory"),
            "--out {out}: {msgs:?}"
        );
        // Apart from that line, stderr is the program's own.
        let line = format!("{}\n", msgs[0]);
        let pos = t
            .stderr
            .windows(line.len())
            .position(|w| w == line.as_bytes())
            .unwrap();
        let mut rest = t.stderr[..pos].to_vec();
        rest.extend_from_slice(&t.stderr[pos + line.len()..]);
        assert!(rest == b.stderr, "--out {out}: stderr:\n{}", t.err());
        assert_eq!(fs::read(d.join("afile")).unwrap(), b"not a directory\n");
    }
}

/// What happened in a directory, from its inotify events.
#[derive(Debug, Default)]
struct DirEvents {
    /// Names created, in order.
    created: Vec<String>,
    /// Files renamed to `launcher.json` (a plain `rename` or a swap): the
    /// versions of the record put in place.
    versions: usize,
    /// Names removed.
    deleted: Vec<String>,
}

/// Watches `dir` for creations and renames (inotify) while `run` runs.
/// `IN_MOVED_FROM` is watched too, though not counted: inotify merges an
/// event with the one queued before it when they are alike, and two
/// versions put in place one after the other are two alike `IN_MOVED_TO`.
fn watch_dir<T>(dir: &Path, run: impl FnOnce() -> T) -> (T, DirEvents) {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: plain system calls; the descriptor is closed below.
    let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
    assert!(
        fd >= 0,
        "inotify_init1: {}",
        std::io::Error::last_os_error()
    );
    let c = CString::new(dir.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path and our descriptor.
    let wd = unsafe {
        libc::inotify_add_watch(
            fd,
            c.as_ptr(),
            libc::IN_CREATE | libc::IN_MOVED_FROM | libc::IN_MOVED_TO | libc::IN_DELETE,
        )
    };
    assert!(
        wd >= 0,
        "inotify_add_watch: {}",
        std::io::Error::last_os_error()
    );
    let out = run();
    let mut ev = DirEvents::default();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        // SAFETY: our buffer and its length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        let mut at = 0;
        while at + 16 <= n as usize {
            let word = |i: usize| u32::from_ne_bytes(buf[at + i..at + i + 4].try_into().unwrap());
            let (mask, len) = (word(4), word(12) as usize);
            let raw = &buf[at + 16..at + 16 + len];
            let name = String::from_utf8_lossy(raw.split(|&b| b == 0).next().unwrap()).into_owned();
            if mask & libc::IN_CREATE != 0 {
                ev.created.push(name);
            } else if mask & libc::IN_DELETE != 0 {
                ev.deleted.push(name);
            } else if mask & libc::IN_MOVED_TO != 0 && name == "launcher.json" {
                ev.versions += 1;
            }
            at += 16 + len;
        }
    }
    // SAFETY: closing our descriptor.
    unsafe { libc::close(fd) };
    (out, ev)
}

/// The launcher makes one file for its record and removes none: the file
/// set aside before the program starts (with room allocated, for a disk
/// the program fills) becomes `launcher.json` once, with the record of the
/// start, and later versions (the end, the summary's counts) are written
/// over it in place. And a program that writes nothing to stderr leaves no
/// copy of it. Each file made is an inode allocated on the user's file
/// system, and on ext4 without a journal each file removed makes the next
/// allocations dearer for a minute or more: together the largest part of
/// the launcher's start-up there (docs/benchmarks.md, issue 10).
#[test]
fn a_run_creates_only_the_files_it_uses() {
    let d = work_dir("out-files");
    build_io(&d);
    for (stderr_to, quiet) in [
        ("file", true),
        ("file", false),
        ("pipe", true),
        ("pipe", false),
    ] {
        let what = format!("stderr to a {stderr_to}, quiet {quiet}");
        let out = d.join(format!("t-{stderr_to}-{quiet}"));
        let _ = fs::remove_dir_all(&out);
        fs::create_dir(&out).unwrap();
        let mut cmd = launcher(&d);
        cmd.args(["--out", out.to_str().unwrap()]);
        if quiet {
            cmd.arg("-q");
        }
        cmd.args(["--", "./io", "cat"]);
        let (code, ev) = watch_dir(&out, || {
            if stderr_to == "pipe" {
                return run(cmd, None).code();
            }
            let log = fs::File::create(d.join("err-log")).unwrap();
            cmd.stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(log);
            cmd.status().unwrap().code()
        });
        assert_eq!(code, Some(0), "{what}");
        let records = ev
            .created
            .iter()
            .filter(|n| n.starts_with(".launcher.json."))
            .count();
        assert_eq!(records, 1, "{what}: {ev:?}");
        assert_eq!(ev.versions, 1, "{what}: put in place once: {ev:?}");
        assert!(ev.deleted.is_empty(), "{what}: files removed: {ev:?}");
        // The last version is the one on disk: the summary's counts, or
        // none with -q.
        let findings = launcher_record(&out).get("findings").cloned();
        assert_eq!(findings.is_some(), !quiet, "{what}: {findings:?}");
        assert_eq!(launcher_record(&out)["exit_code"], 0, "{what}");
        let pid = launcher_record(&out)["pid"].as_u64().unwrap();
        let mut others: Vec<&String> = ev
            .created
            .iter()
            .filter(|n| !n.starts_with(".launcher.json."))
            .collect();
        others.sort();
        assert_eq!(others, [&format!("{pid}.jsonl")], "{what}: {ev:?}");
        let mut left: Vec<String> = fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [format!("{pid}.jsonl"), "launcher.json".into()],
            "{what}"
        );
        let rec = launcher_record(&out)["stderr"].clone();
        assert_eq!(rec["bytes"], 0, "{what}: {rec}");
        assert!(rec.get("file").is_none(), "{what}: no copy to name: {rec}");
    }
}

// ---------------------------------------------------------------------------
// 8. report on damaged traces

#[test]
fn report_reads_around_damaged_lines_and_files() {
    let pip = pip_cudnn_919();
    let d = work_dir("report-damaged");
    compile::<&str>("cudnn_open.c", &d.join("cudnn_open"), &["-ldl"]);
    let dispatcher = pip.join("libcudnn.so.9");
    let mut cmd = launcher(&d);
    cmd.args(["-q", "--out", "t", "--", "./cudnn_open"])
        .arg(&dispatcher);
    let t = run(cmd, None);
    assert_eq!(t.code(), Some(0), "{}", t.show());
    let dir = d.join("t");
    let file = program_trace(&dir);
    let mut bytes = fs::read(&file).unwrap();
    assert!(bytes.ends_with(b"\n"));
    let n = bytes.iter().filter(|&&c| c == b'\n').count();
    bytes.extend_from_slice(b"this is not JSON at all\n");
    bytes.extend_from_slice(
        b"{\"ev\":\"from_a_newer_shim\",\"seq\":1000,\"t_ns\":1,\"pid\":1,\"ppid\":1,\"tid\":1}\n",
    );
    bytes.extend_from_slice(b"{\"ev\":\"load\",\"seq\":1001,\"t_ns\":12,\"pid\":");
    fs::write(&file, &bytes).unwrap();
    fs::write(
        dir.join("junk.jsonl"),
        b"\xff\xfe\x00\x01binary\n\x00\x02\n",
    )
    .unwrap();

    let (o, doc) = report_json(&d, &[&dir]);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let doc = doc.unwrap_or_else(|| panic!("no JSON:\n{}", o.show()));
    let p = processes(&doc)
        .iter()
        .find(|p| s(&p["file"]) == file.to_str().unwrap())
        .unwrap_or_else(|| panic!("the program's file was not read: {doc:#}"));
    assert!(
        library(p, &dispatcher).is_some(),
        "libraries still listed: {p:#}"
    );
    let problems = arr(&doc["problems"]);
    for line in [n + 1, n + 2, n + 3] {
        assert!(
            problems
                .iter()
                .any(|q| s(&q["file"]) == file.to_str().unwrap() && q["line"] == line),
            "no problem for {}:{line}: {problems:#?}",
            file.display()
        );
        // Also on stderr as FILE:LINE.
        assert!(
            o.err().contains(&format!("{}:{line}:", file.display())),
            "{}",
            o.err()
        );
    }
    let junk = dir.join("junk.jsonl");
    assert!(
        problems
            .iter()
            .any(|q| s(&q["file"]) == junk.to_str().unwrap() && q["line"] == 1),
        "no problem for {}:1: {problems:#?}",
        junk.display()
    );
    assert_eq!(problems.len(), 4, "{problems:#?}");
    // The text report reads the same set.
    let mut cmd = launcher(&d);
    cmd.arg("report").arg(&dir);
    let o = run(cmd, None);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    assert!(o.out().contains("libcudnn.so.9"), "{}", o.show());

    // Nothing readable: exit 1.
    let empty = d.join("empty");
    fs::create_dir_all(&empty).unwrap();
    let (o, _) = report_json(&d, &[&empty]);
    assert_eq!(o.code(), Some(1), "{}", o.show());
    let mut cmd = launcher(&d);
    cmd.arg("report").arg(&empty);
    assert_eq!(run(cmd, None).code(), Some(1));
    let only_junk = d.join("only-junk");
    fs::create_dir_all(&only_junk).unwrap();
    fs::copy(&junk, only_junk.join("junk.jsonl")).unwrap();
    let (o, _) = report_json(&d, &[&only_junk]);
    assert_eq!(o.code(), Some(1), "{}", o.show());
}

// ---------------------------------------------------------------------------
// 8b. Repeated identical events folded (issue 10)

/// A program that loads and unloads one library N times, failing to load
/// a missing CUDA library each time: the end-of-run summary, `report` and
/// `report --json` show each once with its count, and every cycle is in
/// the trace (the shim writes them all; the report folds them).
#[test]
fn repeated_loads_fold_into_one_line_with_a_count() {
    const N: usize = 3000;
    let pip = pip_cudnn_919();
    let d = work_dir("fold-cycles");
    compile::<&str>("dlcycle.c", &d.join("dlcycle"), &["-ldl"]);
    let graph = pip.join("libcudnn_graph.so.9");
    let mut cmd = launcher(&d);
    cmd.args(["--out", "t", "--color", "never", "--", "./dlcycle"])
        .arg(&graph)
        .args([&N.to_string(), "libcublasLt.so.404"]);
    let t = run(cmd, None);
    assert_eq!(t.code(), Some(0), "{}", t.show());
    assert_eq!(t.out(), format!("{N} cycles\n"));
    let dir = d.join("t");
    let trace = fs::read_to_string(program_trace(&dir)).unwrap();
    let events = |ev: &str| trace.matches(&format!("{{\"ev\":\"{ev}\"")).count();
    assert_eq!(
        (events("unload"), events("load_failed"), events("dlerror")),
        (N, N, N),
        "every cycle is in the trace"
    );

    let counted = "loaded ×3,000, unloaded ×3,000";
    let failed = "FAILED  libcublasLt.so.404 [cublasLt]  dlopen by dlcycle";
    let mut report = launcher(&d);
    report.args(["report", "--color", "never"]).arg(&dir);
    let r = run(report, None);
    assert_eq!(r.code(), Some(0), "{}", r.show());
    for (what, text) in [("summary", t.err()), ("report", r.out())] {
        // The process's own lines name the library too (in its argv).
        let rows: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("libcudnn_graph.so.9") && l.contains("path given"))
            .collect();
        assert_eq!(rows.len(), 1, "{what}: one row for the library:\n{text}");
        let counts: Vec<&str> = text.lines().filter(|l| l.contains(counted)).collect();
        assert_eq!(counts.len(), 1, "{what}: its count once:\n{text}");
        // The loader's first search also tries the platform subdirectories
        // (it remembers they are missing): that failure differs from the
        // 2,999 after it.
        let fails: Vec<&str> = text.lines().filter(|l| l.contains(failed)).collect();
        let times = |l: &str| -> u64 {
            l.rsplit_once("  (")
                .and_then(|(_, t)| t.strip_suffix(" times)"))
                .map_or(1, |n| n.replace(',', "").parse().unwrap())
        };
        assert!(fails.len() <= 2, "{what}: {fails:?}");
        assert_eq!(
            fails.iter().map(|l| times(l)).sum::<u64>(),
            N as u64,
            "{what}: {fails:?}"
        );
        assert!(
            text.contains("could not be loaded (dlopen by dlcycle) (3000 times)"),
            "{what}: the finding counts every failure:\n{text}"
        );
        assert!(
            text.lines().count() < 40,
            "{what}: {} lines:\n{text}",
            text.lines().count()
        );
    }

    let doc = report_ok(&d, &dir);
    let p = processes(&doc)
        .iter()
        .find(|p| s(&p["argv"][0]) == "./dlcycle")
        .unwrap_or_else(|| panic!("no dlcycle process: {doc:#}"));
    let lib = library(p, &graph).unwrap_or_else(|| panic!("no graph library: {p:#}"));
    assert_eq!(lib["count"], N, "{lib:#}");
    assert_eq!(lib["unloads"], N, "{lib:#}");
    assert!(lib["last_seq"].as_u64() > lib["seq"].as_u64(), "{lib:#}");
    let graphs = arr(&p["libraries"])
        .iter()
        .filter(|l| s(&l["path"]) == graph.to_str().unwrap())
        .count();
    assert_eq!(graphs, 1, "{p:#}");
    let fails = arr(&p["failed_loads"]);
    assert!(fails.len() <= 2, "{p:#}");
    let total: u64 = fails.iter().map(|f| f["count"].as_u64().unwrap()).sum();
    assert_eq!(total, N as u64, "{p:#}");
    assert!(
        s(&fails[0]["errors"][0]).contains("libcublasLt.so.404"),
        "the text the program read: {:#}",
        fails[0]
    );
}

// ---------------------------------------------------------------------------
// 9. The pip/system cuDNN mix-up

#[test]
fn mixup_shows_pip_dispatcher_by_rpath_and_system_graph_by_ld_library_path() {
    let pip = pip_cudnn_919();
    let d = work_dir("mixup");
    let system = d.join("system");
    build_stack(
        "cudnn9",
        &system,
        &["--version", "9.14.0", "--versioned-files"],
    );
    let prog = d.join("linked_cudnn");
    let include = tools::package_dir().join("fixtures").join("stack");
    compile(
        "linked_cudnn.c",
        &prog,
        &[
            format!("-I{}", include.display()),
            format!("-L{}", pip.display()),
            "-l:libcudnn.so.9".to_string(),
            format!("-Wl,--disable-new-dtags,-rpath,{}", pip.display()),
        ],
    );

    let mut bare_cmd = bare(&prog, &d);
    bare_cmd.env("LD_LIBRARY_PATH", &system);
    let b = run(bare_cmd, None);
    assert_eq!(b.code(), Some(0), "{}", b.show());
    assert_eq!(
        b.out(),
        "cudnnGetVersion=91400\n",
        "the mix-up must happen bare"
    );

    let mut cmd = launcher(&d);
    cmd.env("LD_LIBRARY_PATH", &system)
        .args(["--out", "t", "--"])
        .arg(&prog);
    let t = run(cmd, None);
    assert_eq!(t.code(), Some(0), "{}", t.show());
    assert_eq!(t.stdout, b.stdout, "{}", t.show());

    let doc = report_ok(&d, &d.join("t"));
    let procs = processes(&doc);
    assert_eq!(procs.len(), 1, "{doc:#}");
    let p = &procs[0];
    let prog_s = prog.to_str().unwrap();

    let disp = library(p, &pip.join("libcudnn.so.9"))
        .unwrap_or_else(|| panic!("dispatcher from pip not listed: {p:#}"));
    assert_eq!(disp["reason"], "RPATH", "{disp:#}");
    assert_eq!(disp["reason_owner"], prog_s, "{disp:#}");
    assert_eq!(disp["requester"], prog_s, "{disp:#}");
    assert_eq!(disp["via"], "needed", "{disp:#}");
    assert_eq!(disp["search_dir"], pip.to_str().unwrap(), "{disp:#}");

    let graph = library(p, &system.join("libcudnn_graph.so.9"))
        .unwrap_or_else(|| panic!("libcudnn_graph from the system dir not listed: {p:#}"));
    assert_eq!(graph["reason"], "LD_LIBRARY_PATH", "{graph:#}");
    assert_eq!(graph["search_dir"], system.to_str().unwrap(), "{graph:#}");
    assert_eq!(
        graph["requester"],
        pip.join("libcudnn.so.9").to_str().unwrap(),
        "{graph:#}"
    );
    assert_eq!(graph["version"]["text"], "9.14.0", "{graph:#}");
    assert!(
        library(p, &pip.join("libcudnn_graph.so.9")).is_none(),
        "no graph from pip: {p:#}"
    );
    // The text summary says the same.
    let err = t.err();
    let line = |name: &str| {
        err.lines()
            .find(|l| l.split_whitespace().any(|w| w == name))
            .unwrap_or_else(|| panic!("summary has no {name} line:\n{err}"))
            .to_string()
    };
    // (The summary may shorten long directories to "…/<last parts>".)
    let l = line("libcudnn.so.9");
    assert!(
        l.contains("RPATH of linked_cudnn") && l.contains("needed by linked_cudnn"),
        "{l}"
    );
    assert!(l.trim_end().ends_with("/stack/pip919"), "{l}");
    let l = line("libcudnn_graph.so.9");
    assert!(
        l.contains("9.14.0")
            && l.contains("LD_LIBRARY_PATH")
            && l.contains("dlopen by libcudnn.so.9"),
        "{l}"
    );
    assert!(l.contains("/mixup/system"), "{l}");
}

// ---------------------------------------------------------------------------
// 9b. LD_LIBRARY_PATH changed inside the running program (issue 9, class 5)

/// `setenv_dlopen.c`, built plain and with a copy relocation of `environ`
/// in the executable (`-DUSE_ENVIRON`): the program's environment is then
/// the executable's copy, which neither the audit namespace's libc nor
/// libc's own `__environ` symbol holds.
fn build_setenv_programs(d: &Path) -> [PathBuf; 2] {
    let plain = d.join("setenv_dlopen");
    let copy = d.join("setenv_dlopen_environ");
    compile("setenv_dlopen.c", &plain, &["-pthread", "-ldl"]);
    compile(
        "setenv_dlopen.c",
        &copy,
        &["-DUSE_ENVIRON", "-pthread", "-ldl"],
    );
    [plain, copy]
}

/// A directory in `d` that holds no library: the value of
/// `LD_LIBRARY_PATH` at start-up in the tests where the program sets another.
fn empty_dir(d: &Path) -> PathBuf {
    let dir = d.join("elsewhere");
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `prog ARGS` bare and under the launcher (trace in `cwd/out`), with
/// `LD_LIBRARY_PATH` set to `llp` at start-up (None: unset); both must end
/// the same way, with the same output. The traced run.
fn setenv_run(prog: &Path, cwd: &Path, out: &str, llp: Option<&Path>, args: &[&OsStr]) -> Output {
    let env: Vec<(&str, &OsStr)> = llp
        .map(|v| ("LD_LIBRARY_PATH", v.as_os_str()))
        .into_iter()
        .collect();
    setenv_run_env(prog, cwd, out, &env, args)
}

/// [`setenv_run`] with these variables set at start-up.
fn setenv_run_env(
    prog: &Path,
    cwd: &Path,
    out: &str,
    env: &[(&str, &OsStr)],
    args: &[&OsStr],
) -> Output {
    let with = |mut c: Command| {
        c.envs(env.iter().copied());
        c
    };
    let mut b = with(bare(prog, cwd));
    b.args(args);
    let b = run(b, None);
    assert_eq!(b.code(), Some(0), "{}", b.show());
    let mut t = with(launcher(cwd));
    t.args(["--out", out, "--"]).arg(prog).args(args);
    let t = run(t, None);
    assert_eq!(t.code(), Some(0), "{}", t.show());
    assert_eq!(t.stdout, b.stdout, "traced output differs:\n{}", t.show());
    t
}

/// The events of kind `ev` for `name` in the program's trace file.
fn events_for(dir: &Path, ev: &str, name: &str) -> Vec<Value> {
    events_in(&program_trace(dir), ev, name)
}

/// The events of kind `ev` for `name` in the trace file `f`.
fn events_in(f: &Path, ev: &str, name: &str) -> Vec<Value> {
    let text = fs::read_to_string(f).unwrap();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["ev"] == ev && v["name"] == name)
        .collect()
}

/// The program adds the pip cuDNN directory to LD_LIBRARY_PATH and then
/// dlopens `libcudnn.so.9`: glibc searches the start-up value, so the load
/// fails, bare and traced alike. The trace records the value the program
/// held at the request (only because it differs from the start-up one),
/// and the finding names the directory the program added and glibc never
/// searched.
#[test]
fn ld_library_path_set_inside_the_program_is_recorded_and_explained() {
    let pip = pip_cudnn_919();
    let d = work_dir("setenv-llp");
    let other = empty_dir(&d);
    let progs = build_setenv_programs(&d);
    let name = OsStr::new("libcudnn.so.9");
    let pip_s = pip.to_str().unwrap();
    for (i, prog) in progs.iter().enumerate() {
        // Unset at start-up: setenv adds a variable, and glibc moves the
        // program's environment to a new array.
        let out = format!("t-added-{i}");
        let t = setenv_run(prog, &d, &out, None, &[pip.as_os_str(), name]);
        assert!(
            t.out().contains("dlopen(libcudnn.so.9) failed"),
            "{}",
            t.show()
        );
        let fails = events_for(&d.join(&out), "load_failed", "libcudnn.so.9");
        assert_eq!(fails.len(), 1, "{fails:#?}");
        assert_eq!(fails[0]["ld_library_path_now"], pip_s, "{:#}", fails[0]);

        let doc = report_ok(&d, &d.join(&out));
        let p = &processes(&doc)[0];
        let findings = serde_json::to_string(&p["findings"]).unwrap();
        assert!(
            findings.contains("after start-up") && findings.contains(pip_s),
            "the finding must say the program added {pip_s} after start-up: {:#}",
            p["findings"]
        );
        // The fix: set it before the program starts, with the directory
        // that holds the library (checked on disk).
        let fix = arr(&p["findings"])
            .iter()
            .map(|x| s(&x["fix"]))
            .find(|x| x.contains("before the program starts"))
            .unwrap_or_else(|| panic!("no fix to set it before start: {:#}", p["findings"]));
        assert!(fix.contains(&format!("LD_LIBRARY_PATH={pip_s}:")), "{fix}");
        // The launcher's own summary says it too.
        assert!(t.err().contains("after start-up"), "{}", t.show());

        // Set at start-up, changed in place.
        let out = format!("t-changed-{i}");
        let value = format!("{pip_s}:{}", other.display());
        let t = setenv_run(prog, &d, &out, Some(&other), &[OsStr::new(&value), name]);
        assert!(t.out().contains("failed"), "{}", t.show());
        let fails = events_for(&d.join(&out), "load_failed", "libcudnn.so.9");
        assert_eq!(fails.len(), 1, "{fails:#?}");
        assert_eq!(
            fails[0]["ld_library_path_now"],
            value.as_str(),
            "{:#}",
            fails[0]
        );

        // Unset inside the program: recorded as null.
        let out = format!("t-unset-{i}");
        let t = setenv_run(prog, &d, &out, Some(&other), &[OsStr::new("!"), name]);
        assert!(t.out().contains("failed"), "{}", t.show());
        let fails = events_for(&d.join(&out), "load_failed", "libcudnn.so.9");
        assert_eq!(fails.len(), 1, "{fails:#?}");
        assert!(
            fails[0]
                .get("ld_library_path_now")
                .is_some_and(Value::is_null),
            "{:#}",
            fails[0]
        );

        // Unchanged (or set to what it was): no field, and the load works.
        for (value, tag) in [("-", "same"), (pip_s, "again")] {
            let out = format!("t-{tag}-{i}");
            let t = setenv_run(prog, &d, &out, Some(pip), &[OsStr::new(value), name]);
            assert!(t.out().contains("loaded 1 of 1"), "{}", t.show());
            let loads = events_for(&d.join(&out), "load", "libcudnn.so.9");
            assert_eq!(loads.len(), 1, "{loads:#?}");
            assert_eq!(loads[0]["reason"], "LD_LIBRARY_PATH", "{:#}", loads[0]);
            assert!(
                loads[0].get("ld_library_path_now").is_none(),
                "{:#}",
                loads[0]
            );
        }
    }
}

/// The program replaces its start-up `LD_LIBRARY_PATH` with `putenv`,
/// which rewrites that slot of the start-up array in place: with a buffer
/// it keeps (the value is recorded), and with a page it then unmaps (the
/// program runs as it does bare, and nothing is recorded: that string
/// cannot be read).
#[test]
fn a_putenv_string_in_the_start_up_array_is_read_safely() {
    let pip = pip_cudnn_919();
    let d = work_dir("putenv-slot");
    let other = empty_dir(&d);
    for (i, prog) in build_setenv_programs(&d).iter().enumerate() {
        let put = format!("@put:{}", pip.display());
        let out = format!("t-put-{i}");
        let args = [OsStr::new(&put), OsStr::new("libcudnn.so.9")];
        let t = setenv_run(prog, &d, &out, Some(&other), &args);
        assert!(t.out().contains("loaded 0 of 1"), "{}", t.show());
        let fails = events_for(&d.join(&out), "load_failed", "libcudnn.so.9");
        assert_eq!(fails.len(), 1, "{fails:#?}");
        let want = pip.to_str().unwrap();
        assert_eq!(fails[0]["ld_library_path_now"], want, "{:#}", fails[0]);

        let out = format!("t-unmapped-{i}");
        let args = ["@unmapped", "libcudnn.so.9"].map(OsStr::new);
        let t = setenv_run(prog, &d, &out, Some(&other), &args);
        assert!(t.out().contains("loaded 0 of 1"), "{}", t.show());
        let fails = events_for(&d.join(&out), "load_failed", "libcudnn.so.9");
        assert_eq!(fails.len(), 1, "{fails:#?}");
        // No value (or, when the loader mapped that page again meanwhile,
        // what is there now: zeros, no variable).
        let v = fails[0].get("ld_library_path_now");
        assert!(v.is_none_or(Value::is_null), "{:#}", fails[0]);
    }
}

/// ld.so rewrites the `GLIBC_TUNABLES` slot of the start-up array with a
/// copy of its own before any audit module runs (glibc 2.26 to 2.38), far
/// below the stack. The strings read in place must still be the stack's
/// only: under the legacy (bottom-up) address layout, the program's own
/// mappings lie between ld.so and the stack, and a `putenv` string there
/// that the program unmapped was read in place (SIGSEGV; found in review).
#[test]
fn a_putenv_string_between_ld_so_and_the_stack_is_not_read_in_place() {
    let d = work_dir("tunables-slot");
    let nopie = d.join("setenv_dlopen_nopie");
    compile("setenv_dlopen.c", &nopie, &["-no-pie", "-pthread", "-ldl"]);
    let other = empty_dir(&d);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let setarch = std::env::split_paths(&path)
        .map(|dir| dir.join("setarch"))
        .find(|p| p.is_file())
        .expect("setarch (util-linux) on PATH");
    let env = [
        ("GLIBC_TUNABLES", OsStr::new("glibc.malloc.check=0")),
        ("LD_LIBRARY_PATH", other.as_os_str()),
    ];
    let args = [
        OsStr::new(std::env::consts::ARCH),
        OsStr::new("-L"),
        nopie.as_os_str(),
        OsStr::new("@unmapped"),
        OsStr::new("libcudnn.so.9"),
    ];
    let t = setenv_run_env(&setarch, &d, "t", &env, &args);
    assert!(t.out().contains("loaded 0 of 1"), "{}", t.show());
    let fails = events_in_dir(&d.join("t"), "load_failed", "libcudnn.so.9");
    assert_eq!(fails.len(), 1, "{fails:#?}");
    // The slot points at memory the program unmapped: no value (or, when
    // the loader mapped that page again meanwhile, what is there now).
    let v = fails[0].get("ld_library_path_now");
    assert!(v.is_none_or(Value::is_null), "{:#}", fails[0]);
}

/// The events of kind `ev` for `name` in every trace file of `dir` (a
/// program started through a wrapper that execs it writes `PID.1.jsonl`).
fn events_in_dir(dir: &Path, ev: &str, name: &str) -> Vec<Value> {
    trace_files(dir)
        .iter()
        .flat_map(|f| events_in(f, ev, name))
        .collect()
}

/// Under a seccomp filter that kills the process on `process_vm_readv`
/// (a sandbox: `tests/launcher/seccomp_run.c`), the program runs as it does
/// bare, and the value it set is still recorded, whether its libc moved the
/// environment array (a variable added) or rewrote a start-up slot in place
/// (one replaced): the shim reads through `/proc/self/mem` there.
#[test]
fn the_environment_is_read_safely_under_a_seccomp_filter() {
    let pip = pip_cudnn_919();
    let d = work_dir("seccomp-env");
    let wrapper = d.join("seccomp_run");
    compile::<&str>("seccomp_run.c", &wrapper, &[]);
    let other = empty_dir(&d);
    for (i, prog) in build_setenv_programs(&d).iter().enumerate() {
        for (tag, llp) in [("moved", None), ("replaced", Some(other.as_path()))] {
            let out = format!("t-{tag}-{i}");
            let args = [
                prog.as_os_str(),
                pip.as_os_str(),
                OsStr::new("libcudnn.so.9"),
            ];
            let t = setenv_run(&wrapper, &d, &out, llp, &args);
            assert!(t.out().contains("loaded 0 of 1"), "{}", t.show());
            let fails = events_in_dir(&d.join(&out), "load_failed", "libcudnn.so.9");
            assert_eq!(fails.len(), 1, "{tag}: {fails:#?}");
            let want = pip.to_str().unwrap();
            assert_eq!(
                fails[0]["ld_library_path_now"], want,
                "{tag}: {:#}",
                fails[0]
            );
        }
        // A start-up slot pointing at memory the program unmapped: nothing
        // recorded, and no fault.
        let out = format!("t-unmapped-{i}");
        let args = [
            prog.as_os_str(),
            OsStr::new("@unmapped"),
            OsStr::new("libcudnn.so.9"),
        ];
        let t = setenv_run(&wrapper, &d, &out, Some(&other), &args);
        assert!(t.out().contains("loaded 0 of 1"), "{}", t.show());
        let fails = events_in_dir(&d.join(&out), "load_failed", "libcudnn.so.9");
        assert_eq!(fails.len(), 1, "{fails:#?}");
        // No value (or, when the loader mapped that page again meanwhile,
        // what is there now: zeros, no variable).
        let v = fails[0].get("ld_library_path_now");
        assert!(v.is_none_or(Value::is_null), "{:#}", fails[0]);
    }
    // Another thread moving and freeing the array throughout: every value
    // recorded is the one the program set.
    let [plain, _] = build_setenv_programs(&d);
    let mut args = vec![plain.into_os_string()];
    args.extend(["/cdt-added", "libcudnn_graph.so.9", "1000", "race"].map(Into::into));
    let args: Vec<&OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let t = setenv_run(&wrapper, &d, "t-race", None, &args);
    assert!(t.out().contains("loaded 0 of 1000"), "{}", t.show());
    let fails = events_in_dir(&d.join("t-race"), "load_failed", "libcudnn_graph.so.9");
    assert!(fails.len() >= 1000, "{} events", fails.len());
    let recorded: Vec<&Value> = fails
        .iter()
        .filter_map(|f| f.get("ld_library_path_now"))
        .collect();
    assert!(recorded.iter().all(|v| *v == "/cdt-added"), "{recorded:?}");
    let (r, n) = (recorded.len(), fails.len());
    assert!(r * 10 >= n * 9, "{r} of {n}");
}

/// Another thread keeps adding variables to the environment (moving and
/// freeing glibc's array) while the main thread's requests are recorded,
/// each reading the program's environment: the program must run as it does
/// bare, and every recorded value is the one the program set (almost every
/// request records it).
#[test]
fn reading_the_environment_survives_concurrent_setenv() {
    let d = work_dir("setenv-race");
    let progs = build_setenv_programs(&d);
    for (i, prog) in progs.iter().enumerate() {
        let out = format!("t-{i}");
        let args = ["/cdt-added", "libcudnn_graph.so.9", "3000", "race"].map(OsStr::new);
        let t = setenv_run(prog, &d, &out, None, &args);
        assert!(t.out().contains("loaded 0 of 3000"), "{}", t.show());
        let fails = events_for(&d.join(&out), "load_failed", "libcudnn_graph.so.9");
        assert!(fails.len() >= 3000, "{} events", fails.len());
        // A reading that met the array while it was being moved is left
        // out (no field) rather than guessed; one that is there is right.
        let mut recorded = 0;
        for f in &fails {
            if let Some(v) = f.get("ld_library_path_now") {
                assert_eq!(v, "/cdt-added", "{f:#}");
                recorded += 1;
            }
        }
        assert!(
            recorded * 10 >= fails.len() * 9,
            "{recorded} of {}",
            fails.len()
        );
    }
}

// ---------------------------------------------------------------------------
// A failed dlopen the hook cannot see

/// The fake `libcudnn_engines_precompiled` (like the real one) calls
/// `dlopen("libcuda.so.1", RTLD_LAZY)` from its constructor and ignores the
/// result. Compiled with -O2 that call is a tail call, so its return address
/// lies in ld.so, where the shim's `dlopen` hook finds no detour and passes
/// the call through unobserved. The search it leaves open must be judged
/// from its candidates (all missing: a failure), not taken as part of the
/// enclosing successful `dlopen` of the engine library (which once turned it
/// into a `same-file` load of a file that does not exist).
#[test]
fn failed_dlopen_in_a_constructor_is_not_recorded_as_a_load() {
    let pip = pip_cudnn_919();
    let d = work_dir("ctor-dlopen");
    compile::<&str>("cudnn_open.c", &d.join("cudnn_open"), &["-ldl"]);
    let mut cmd = launcher(&d);
    cmd.args(["-q", "--out", "t", "--", "./cudnn_open"])
        .arg(pip.join("libcudnn.so.9"));
    let t = run(cmd, None);
    assert_eq!(t.code(), Some(0), "{}", t.show());
    if !t.out().contains("libcuda.so.1 in process: no") {
        eprintln!("a libcuda.so.1 is installed here: nothing to check");
        return;
    }
    let doc = report_ok(&d, &d.join("t"));
    let p = &processes(&doc)[0];
    let listed: Vec<&Value> = arr(&p["libraries"])
        .iter()
        .filter(|l| l["name"] == "libcuda.so.1")
        .collect();
    assert!(
        listed.is_empty(),
        "libcuda.so.1 was never loaded: {listed:#?}"
    );
    assert!(
        arr(&p["failed_loads"])
            .iter()
            .any(|f| f["name"] == "libcuda.so.1"),
        "its failed dlopen should be listed: {p:#}"
    );
}

// ---------------------------------------------------------------------------
// Processes that outlive the program (core/src/launch/outliving.rs)

/// The `outlived` entry of launcher.json for `pid`.
fn outlived(dir: &Path, pid: u64) -> Value {
    let rec = launcher_record(dir);
    arr(&rec["outlived"])
        .iter()
        .find(|o| o["pid"].as_u64() == Some(pid))
        .cloned()
        .unwrap_or_else(|| panic!("no outlived entry for pid {pid}: {rec}"))
}

/// `sh -c SCRIPT` under the launcher (trace in `d/t`), where SCRIPT starts
/// a background job and prints its pid: the run and that pid.
fn sh_with_a_job(d: &Path, script: &str) -> (Output, i32) {
    let mut cmd = launcher(d);
    cmd.args(["--out", "t", "--", "sh", "-c", script]);
    let o = run(cmd, None);
    let pid = o
        .out()
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("the job's pid: {}", o.show()));
    (o, pid)
}

#[test]
fn processes_that_outlive_the_program_are_waited_for_and_listed() {
    let d = work_dir("outlive-ended");
    // A subshell that writes to stderr 0.4 s after the program ended (more
    // than the stream's own 250 ms grace), then exits 3.
    let (o, sub) = sh_with_a_job(&d, "(sleep 0.4; echo late-err >&2; exit 3) & echo $!");
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let sub = sub as u64;
    let err = o.err();
    let late = err
        .find("late-err\n")
        .unwrap_or_else(|| panic!("{}", o.show()));
    let summary = err
        .find("cudnn-trace: ")
        .unwrap_or_else(|| panic!("{}", o.show()));
    assert!(
        late < summary,
        "its output comes before the summary:\n{err}"
    );
    let dir = d.join("t");
    let copy = String::from_utf8_lossy(&cudnn_trace_integration::launcher_support::stderr_copy(
        &dir,
    ))
    .into_owned();
    assert_eq!(copy, "late-err\n", "captured while the launcher waited");
    let o_sub = outlived(&dir, sub);
    assert_eq!(o_sub["exit_code"], 3, "{o_sub}");
    assert_eq!(o_sub["still_running"], false, "{o_sub}");
    assert!(
        o_sub["ended_after_ms"].as_u64().is_some_and(|ms| ms >= 200),
        "it ended 0.4 s after the program: {o_sub}"
    );
    assert!(
        err.contains(&format!("outlived the program: sh (pid {sub})")),
        "the summary lists it:\n{err}"
    );
    // Its sleep, a traced image, says how it ended.
    assert!(
        err.lines()
            .any(|l| l.contains("sleep 0.4") && l.contains("→ outlived the program by")),
        "{err}"
    );
    let rec = launcher_record(&dir);
    assert_eq!(rec["stderr"]["left_open"], Value::Null, "{rec}");
}

#[test]
fn processes_still_running_are_said_to_be() {
    let d = work_dir("outlive-running");
    let started = std::time::Instant::now();
    let (o, pid) = sh_with_a_job(&d, "sleep 60 >/dev/null 2>&1 & echo $!");
    let took = started.elapsed();
    // SAFETY: signal 0 only checks that the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    // SAFETY: ending the process this test started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert_eq!(o.code(), Some(0), "{}", o.show());
    assert!(alive, "the launcher must leave it running");
    assert!(
        took >= std::time::Duration::from_secs(2),
        "the launcher waits its grace time for it (took {took:?})"
    );
    let dir = d.join("t");
    let entry = outlived(&dir, pid as u64);
    assert_eq!(entry["still_running"], true, "{entry}");
    assert_eq!(entry["name"], "sleep", "{entry}");
    let err = o.err();
    assert!(
        err.contains(&format!(
            "still running when cudnn-trace ended: sleep (pid {pid})"
        )),
        "{err}"
    );
    assert!(
        err.lines()
            .any(|l| l.contains("sleep 60") && l.contains("→ still running when cudnn-trace ended")),
        "{err}"
    );
    // report reads the same record.
    let doc = report_ok(&d, &dir);
    let rec = &arr(&doc["launchers"])[0];
    assert_eq!(rec["outlived"][0]["still_running"], true, "{rec}");
}

/// A process of the tree that starts another program during the grace
/// time (a subshell that `exec`s its last command) is named by what it
/// runs when the launcher ends, not by what it ran when first seen.
#[test]
fn a_process_that_execs_during_the_grace_is_named_by_its_new_program() {
    let d = work_dir("outlive-exec");
    let (o, pid) = sh_with_a_job(&d, "(sleep 0.5; exec sleep 60) >/dev/null 2>&1 & echo $!");
    // SAFETY: ending the process this test started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let entry = outlived(&d.join("t"), pid as u64);
    assert_eq!(entry["still_running"], true, "{entry}");
    assert_eq!(entry["name"], "sleep", "{entry}");
    assert!(
        o.err().contains(&format!(
            "still running when cudnn-trace ended: sleep (pid {pid})"
        )),
        "{}",
        o.err()
    );
}

// ---------------------------------------------------------------------------
// Signals sent to the launcher alone, and the launcher's own death

/// Reads lines of the child's stdout until one equals `want` (or EOF).
fn wait_for_line(out: &mut impl std::io::BufRead, want: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let mut line = String::new();
    while out.read_line(&mut line).unwrap_or(0) > 0 {
        let l = line.trim_end().to_string();
        line.clear();
        let done = l == want;
        seen.push(l);
        if done {
            break;
        }
    }
    seen
}

/// SIGUSR1 sent to the launcher's pid (Slurm's `--signal=USR1@90` signals
/// every process of the step) must reach the program, not end the launcher.
#[test]
fn usr1_to_the_launcher_reaches_the_program() {
    use std::io::BufReader;
    let d = work_dir("usr1");
    let mut cmd = launcher(&d);
    cmd.args(["-q", "--out", "t", "--", "sh", "-c"])
        .arg("trap 'echo got-usr1; exit 0' USR1; echo ready; i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; echo timeout")
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("start the launcher");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let first = wait_for_line(&mut out, "ready");
    assert_eq!(first.last().map(String::as_str), Some("ready"), "{first:?}");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) };
    let rest = wait_for_line(&mut out, "got-usr1");
    let status = child.wait().unwrap();
    assert_eq!(rest, vec!["got-usr1"], "the program did not get the signal");
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// A launcher killed outright (a timeout's SIGKILL) must not leave the
/// program running orphaned.
#[test]
fn killing_the_launcher_takes_the_program_with_it() {
    use std::io::BufReader;
    let d = work_dir("pdeathsig");
    let mut cmd = launcher(&d);
    cmd.args([
        "-q",
        "--out",
        "t",
        "--",
        "sh",
        "-c",
        "echo $$; exec sleep 30",
    ])
    .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("start the launcher");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let program: i32 = line.trim().parse().expect("the program's pid");
    child.kill().unwrap();
    child.wait().unwrap();
    let gone = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(20));
        // A killed orphan is reaped by init; until then it is a zombie.
        let stat = std::fs::read_to_string(format!("/proc/{program}/stat")).unwrap_or_default();
        stat.is_empty()
            || stat
                .rsplit(')')
                .next()
                .is_some_and(|s| s.trim_start().starts_with('Z'))
    });
    if !gone {
        // SAFETY: cleaning up the process this test started.
        unsafe { libc::kill(program, libc::SIGKILL) };
    }
    assert!(gone, "program {program} outlived its launcher");
}

// ---------------------------------------------------------------------------
// The program's stderr: relayed unchanged, and a copy in stderr.txt
//
// `tests/launcher/errio.c` is the program. The launcher decides by what its
// fd 2 is (core/src/launch/capture.rs): a pseudo-terminal for a terminal, a pipe
// (or socket pair) for a pipe (or socket), a read-back for a regular file,
// nothing otherwise.

mod stderr_capture {
    use super::*;
    use cudnn_trace_integration::launcher_support::{drain, stderr_copy as captured, wait_within};
    use std::fs::File;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::net::UnixStream;
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::process::{ExitStatus, Stdio};
    use std::time::{Duration, Instant};

    /// The first and last bytes stderr.txt keeps (capture::KEEP).
    const KEEP: usize = 256 << 10;

    fn build_errio(d: &Path) -> PathBuf {
        let p = d.join("errio");
        compile_copy("errio.c", &p);
        p
    }

    /// `launcher -q --out OUT -- ./errio ARGS...` in `d`.
    fn traced(d: &Path, out: &str, args: &[&str]) -> Command {
        let mut cmd = launcher(d);
        cmd.args(["-q", "--out", out, "--", "./errio"]).args(args);
        cmd
    }

    fn untraced(d: &Path, args: &[&str]) -> Command {
        bare_with("./errio", d, args)
    }

    fn stderr_record(dir: &Path) -> Value {
        launcher_record(dir)["stderr"].clone()
    }

    /// A pipe: (read end, write end).
    fn pipe() -> (File, File) {
        let mut fds = [0i32; 2];
        // SAFETY: fds is a valid array of two ints.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: two new descriptors that we own.
        unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
    }

    fn show(st: ExitStatus, out: &[u8], err: &[u8]) -> String {
        format!(
            "status: {st}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            String::from_utf8_lossy(out),
            String::from_utf8_lossy(err)
        )
    }

    // -- through a pipe ----------------------------------------------------

    #[test]
    fn stderr_through_a_pipe_is_byte_identical_and_copied() {
        let d = work_dir("stderr-pipe");
        build_errio(&d);
        let size = (5 << 20).to_string();
        let b = run(untraced(&d, &["mix", &size]), None);
        assert_eq!(b.code(), Some(0), "{}", b.show());
        assert!(b.stderr.len() > 5 << 20);

        let t = run(traced(&d, "t-big", &["mix", &size]), None);
        assert_eq!(t.code(), Some(0), "{}", t.show());
        assert!(t.stdout == b.stdout, "stdout differs:\n{}", t.out());
        assert!(t.stderr == b.stderr, "stderr differs from the bare run");

        let dir = d.join("t-big");
        let rec = stderr_record(&dir);
        assert_eq!(rec["how"], "pipe", "{rec}");
        assert_eq!(rec["file"], "stderr.txt", "{rec}");
        assert_eq!(rec["bytes"], b.stderr.len() as u64, "{rec}");
        assert_eq!(rec["truncated"], true, "{rec}");
        assert!(rec.get("with_stdout").is_none(), "{rec}");
        assert!(rec.get("left_open").is_none(), "{rec}");
        let copy = captured(&dir);
        assert!(copy[..KEEP] == b.stderr[..KEEP], "head of stderr.txt");
        assert!(
            copy[copy.len() - KEEP..] == b.stderr[b.stderr.len() - KEEP..],
            "tail of stderr.txt"
        );
        let marker = String::from_utf8_lossy(&copy[KEEP..copy.len() - KEEP]).into_owned();
        assert_eq!(
            marker,
            format!(
                "\n[cudnn-trace: {} bytes left out here; stderr.txt keeps the first and the last 256 KiB]\n",
                b.stderr.len() - 2 * KEEP
            )
        );

        // Small, with the summary: the program's stderr comes first and
        // whole, and the copy has it alone.
        let b = run(untraced(&d, &["mix", "1000"]), None);
        let mut cmd = launcher(&d);
        cmd.args(["--out", "t-small", "--", "./errio", "mix", "1000"]);
        let t = run(cmd, None);
        assert_eq!(t.code(), Some(0), "{}", t.show());
        assert!(t.stdout == b.stdout, "{}", t.show());
        assert!(
            t.stderr.starts_with(&b.stderr) && t.stderr.len() > b.stderr.len(),
            "the program's stderr, then the summary:\n{}",
            t.err()
        );
        let dir = d.join("t-small");
        assert!(captured(&dir) == b.stderr, "stderr.txt:\n{}", t.err());
        let rec = stderr_record(&dir);
        assert_eq!(rec["bytes"], b.stderr.len() as u64, "{rec}");
        assert_eq!(rec["truncated"], false, "{rec}");
        // The program saw a pipe, not the launcher's own.
        let o = run(traced(&d, "t-fd2", &["fd2"]), None);
        assert!(o.out().starts_with("type=fifo "), "{}", o.show());
    }

    #[test]
    fn stdout_and_stderr_in_one_pipe_keep_their_order() {
        let d = work_dir("stderr-2to1");
        build_errio(&d);
        // `2>&1 | reader`: one pipe for both.
        let both = |mut cmd: Command| -> (ExitStatus, Vec<u8>) {
            let (r, w) = pipe();
            cmd.stdin(Stdio::null())
                .stdout(Stdio::from(w.try_clone().unwrap()))
                .stderr(Stdio::from(w));
            let mut child = cmd.spawn().expect("spawn");
            drop(cmd);
            let reader = drain(r);
            let st = wait_within(&mut child, Duration::from_secs(60), "2>&1 run");
            (st, reader.join().unwrap())
        };
        let (bs, bare_out) = both(untraced(&d, &["alternate", "3000"]));
        assert!(bs.success());
        let (ts, traced_out) = both(traced(&d, "t", &["alternate", "3000"]));
        assert_eq!(ts.code(), Some(0), "{}", show(ts, &traced_out, b""));
        assert!(
            traced_out == bare_out,
            "the interleaving changed; first lines:\n{}",
            String::from_utf8_lossy(&traced_out[..200.min(traced_out.len())])
        );
        let dir = d.join("t");
        let rec = stderr_record(&dir);
        assert_eq!(rec["how"], "pipe", "{rec}");
        assert_eq!(rec["with_stdout"], true, "{rec}");
        assert!(captured(&dir) == bare_out, "the copy holds both, in order");
    }

    #[test]
    fn a_socket_stays_a_socket() {
        let d = work_dir("stderr-socket");
        build_errio(&d);
        let via_socket = |mut cmd: Command| -> (ExitStatus, Vec<u8>, Vec<u8>) {
            let (ours, theirs) = UnixStream::pair().unwrap();
            cmd.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::from(OwnedFd::from(theirs)));
            let mut child = cmd.spawn().expect("spawn");
            drop(cmd);
            let err = drain(ours);
            let out = drain(child.stdout.take().unwrap());
            let st = wait_within(&mut child, Duration::from_secs(60), "socket run");
            (st, out.join().unwrap(), err.join().unwrap())
        };
        let (_, out, _) = via_socket(traced(&d, "t-fd2", &["fd2"]));
        assert!(
            String::from_utf8_lossy(&out).starts_with("type=sock "),
            "{}",
            String::from_utf8_lossy(&out)
        );
        let (bs, bout, berr) = via_socket(untraced(&d, &["mix", "300000"]));
        assert!(bs.success());
        let (ts, tout, terr) = via_socket(traced(&d, "t", &["mix", "300000"]));
        assert_eq!(ts.code(), Some(0), "{}", show(ts, &tout, &terr));
        assert!(
            tout == bout && terr == berr,
            "output differs from the bare run"
        );
        let rec = stderr_record(&d.join("t"));
        assert_eq!(rec["how"], "socket", "{rec}");
        assert_eq!(rec["bytes"], berr.len() as u64, "{rec}");
        assert!(captured(&d.join("t")) == berr);
    }

    // -- a terminal --------------------------------------------------------

    /// A pseudo-terminal of this test (standing for the user's terminal):
    /// ROWS × COLS, output processing on (`cooked`, as a terminal is) or off.
    struct TestPty {
        master: File,
        slave: File,
    }

    fn test_pty(rows: u16, cols: u16, cooked: bool) -> TestPty {
        let (master, slave, _) = cudnn_trace_integration::pty::open_pty();
        let s = slave.as_raw_fd();
        // SAFETY: termios calls on a descriptor we own, with a valid struct.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            assert_eq!(libc::tcgetattr(s, &mut t), 0);
            if cooked {
                t.c_oflag |= libc::OPOST | libc::ONLCR;
            } else {
                t.c_oflag &= !libc::OPOST;
            }
            assert_eq!(libc::tcsetattr(s, libc::TCSANOW, &t), 0);
        }
        set_size(&master, rows, cols);
        TestPty { master, slave }
    }

    fn set_size(master: &File, rows: u16, cols: u16) {
        let ws = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCSWINSZ with a valid winsize.
        assert_eq!(
            unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &ws) },
            0
        );
    }

    /// Reads a pty master until no slave is open (EIO).
    fn drain_master(master: File) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let mut buf = [0u8; 4096];
            let mut m = master;
            loop {
                match m.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => v.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break, // EIO: every slave closed
                }
            }
            v
        })
    }

    /// Runs `cmd` with stderr on a fresh test pty: (status, stdout, what the
    /// terminal received).
    fn on_a_terminal(mut cmd: Command, cooked: bool) -> (ExitStatus, String, Vec<u8>) {
        let pty = test_pty(37, 123, cooked);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(pty.slave));
        let mut child = cmd.spawn().expect("spawn");
        drop(cmd);
        let term = drain_master(pty.master);
        let out = drain(child.stdout.take().unwrap());
        let st = wait_within(&mut child, Duration::from_secs(60), "terminal run");
        let out = String::from_utf8_lossy(&out.join().unwrap()).into_owned();
        (st, out, term.join().unwrap())
    }

    const TTY_BYTES: &[u8] = b"a\nb\r\nc\td\n\x1b[31mred\x1b[0m\n\xff\x01 end";

    #[test]
    fn a_terminal_stays_a_terminal_and_bytes_are_unchanged() {
        let d = work_dir("stderr-pty");
        build_errio(&d);
        // Output processing off in the test terminal: what arrives is
        // exactly what the program wrote (the launcher's pty adds no \r).
        let (bs, bout, bterm) = on_a_terminal(untraced(&d, &["tty"]), false);
        assert!(bs.success());
        assert_eq!(bout, "isatty2=1 rows=37 cols=123\n");
        assert_eq!(bterm, TTY_BYTES);
        let (ts, tout, tterm) = on_a_terminal(traced(&d, "t-raw", &["tty"]), false);
        assert_eq!(ts.code(), Some(0), "{}", show(ts, tout.as_bytes(), &tterm));
        assert_eq!(
            tout, bout,
            "isatty(2) and the window size, as the program sees them"
        );
        assert!(
            tterm == TTY_BYTES,
            "the terminal received {:?}",
            String::from_utf8_lossy(&tterm)
        );
        let dir = d.join("t-raw");
        let rec = stderr_record(&dir);
        assert_eq!(rec["how"], "pty", "{rec}");
        assert_eq!(rec["bytes"], TTY_BYTES.len() as u64, "{rec}");
        assert!(captured(&dir) == TTY_BYTES);

        // A terminal that turns \n into \r\n does it once, as without the
        // launcher.
        let (_, _, bterm) = on_a_terminal(untraced(&d, &["tty"]), true);
        assert!(bterm.starts_with(b"a\r\nb\r\r\n"), "{bterm:?}");
        let (ts, _, tterm) = on_a_terminal(traced(&d, "t-cooked", &["tty"]), true);
        assert!(ts.success());
        assert!(
            tterm == bterm,
            "traced: {:?}\nbare: {:?}",
            String::from_utf8_lossy(&tterm),
            String::from_utf8_lossy(&bterm)
        );
        // stderr.txt has the program's bytes, not the terminal's.
        assert!(captured(&d.join("t-cooked")) == TTY_BYTES);

        // 5 MiB in one write, all delivered before the launcher ends (a pty
        // master still holds data when the last slave closes).
        let size = (5 << 20).to_string();
        let (bs, bout, bterm) = on_a_terminal(untraced(&d, &["mix", &size]), false);
        assert!(bs.success());
        assert!(bterm.len() > 5 << 20);
        let (ts, tout, tterm) = on_a_terminal(traced(&d, "t-big", &["mix", &size]), false);
        assert!(ts.success());
        assert_eq!(tout, bout);
        assert!(
            tterm == bterm,
            "the terminal received {} bytes, {} without the launcher",
            tterm.len(),
            bterm.len()
        );
        let rec = stderr_record(&d.join("t-big"));
        assert_eq!(rec["bytes"], bterm.len() as u64, "{rec}");
        assert_eq!(rec["truncated"], true, "{rec}");
    }

    #[test]
    fn the_window_size_follows_the_terminal() {
        let d = work_dir("stderr-winsize");
        build_errio(&d);
        let pty = test_pty(37, 123, true);
        let mut cmd = traced(&d, "t", &["winsize"]);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(pty.slave));
        // The test terminal becomes the launcher's controlling terminal, so
        // that resizing it sends SIGWINCH to its foreground group (the
        // launcher and the program), as a real terminal does.
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(2, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().expect("spawn");
        drop(cmd);
        let term = drain_master(pty.master.try_clone().unwrap());
        let mut input = child.stdin.take().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut ask = || {
            input.write_all(b"?\n").unwrap();
            let mut line = String::new();
            out.read_line(&mut line).unwrap();
            line.trim_end().to_string()
        };
        assert_eq!(ask(), "rows=37 cols=123");
        set_size(&pty.master, 50, 140);
        // The launcher updates its pty when it gets the signal: ask until
        // the program sees the new size (it may ask first).
        let start = Instant::now();
        let mut seen = ask();
        while seen != "rows=50 cols=140" && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(5));
            seen = ask();
        }
        assert_eq!(
            seen, "rows=50 cols=140",
            "the program never saw the new size"
        );
        drop(pty.master);
        drop(input);
        let st = wait_within(&mut child, Duration::from_secs(30), "winsize run");
        assert_eq!(st.code(), Some(0), "{st:?}");
        let _ = term.join();
        assert_eq!(stderr_record(&d.join("t"))["how"], "pty");
    }

    // -- a regular file, /dev/null, closed ------------------------------------

    #[test]
    fn a_file_is_left_alone_and_read_back_from_where_the_program_started() {
        let d = work_dir("stderr-file");
        build_errio(&d);
        let b = run(untraced(&d, &["mix", "100000"]), None);
        assert!(b.status.success());
        let previous = b"an earlier line of the log\n";

        // `2>>log`, with the summary: the file gets the program's stderr
        // then the summary; the copy has the program's part alone.
        let log = d.join("append.log");
        fs::write(&log, previous).unwrap();
        let f = fs::OpenOptions::new().append(true).open(&log).unwrap();
        let mut cmd = launcher(&d);
        cmd.args(["--out", "t-append", "--", "./errio", "mix", "100000"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(f));
        let mut child = cmd.spawn().expect("spawn");
        drop(cmd);
        let out = drain(child.stdout.take().unwrap());
        let st = wait_within(&mut child, Duration::from_secs(60), "2>>log run");
        assert_eq!(st.code(), Some(0));
        assert!(out.join().unwrap() == b.stdout);
        let content = fs::read(&log).unwrap();
        let mut expect = previous.to_vec();
        expect.extend_from_slice(&b.stderr);
        assert!(
            content.starts_with(&expect),
            "the log must hold the old line, then the program's stderr"
        );
        assert!(
            String::from_utf8_lossy(&content[expect.len()..]).contains("exit status 0"),
            "then the summary"
        );
        let dir = d.join("t-append");
        assert!(
            captured(&dir) == b.stderr,
            "stderr.txt: from the offset, without the summary"
        );
        let rec = stderr_record(&dir);
        assert_eq!(rec["how"], "file", "{rec}");
        assert_eq!(rec["bytes"], b.stderr.len() as u64, "{rec}");
        assert_eq!(rec["truncated"], false, "{rec}");

        // `2>log` positioned after existing content (not O_APPEND), quiet.
        let log = d.join("offset.log");
        fs::write(&log, previous).unwrap();
        let mut f = fs::OpenOptions::new().write(true).open(&log).unwrap();
        std::io::Seek::seek(&mut f, std::io::SeekFrom::End(0)).unwrap();
        let ino = f.metadata().unwrap().ino();
        let mut cmd = traced(&d, "t-offset", &["mix", "100000"]);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(f));
        let mut child = cmd.spawn().expect("spawn");
        drop(cmd);
        assert!(wait_within(&mut child, Duration::from_secs(60), "2>log run").success());
        assert!(
            fs::read(&log).unwrap() == expect,
            "the file is what the bare run gives"
        );
        assert!(captured(&d.join("t-offset")) == b.stderr);

        // The program's fd 2 is the file itself.
        let f = fs::OpenOptions::new().append(true).open(&log).unwrap();
        let mut cmd = traced(&d, "t-fd2", &["fd2"]);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(f));
        let o = cmd.output().unwrap();
        let line = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            line.starts_with(&format!("type=reg ino={ino} ")),
            "{line} (file inode {ino})"
        );
    }

    #[test]
    fn dev_null_and_a_closed_stderr_are_left_as_they_are() {
        let d = work_dir("stderr-null");
        build_errio(&d);
        let mut cmd = traced(&d, "t-null", &["fd2"]);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let o = cmd.output().unwrap();
        assert!(o.status.success());
        let line = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            line.starts_with("type=chr ") && line.contains(" rdev=1:3 "),
            "{line}"
        );
        let rec = stderr_record(&d.join("t-null"));
        assert_eq!(rec["how"], "none", "{rec}");
        assert!(rec.get("file").is_none(), "{rec}");
        assert!(s(&rec["note"]).contains("/dev/null"), "{rec}");
        assert!(!d.join("t-null/stderr.txt").exists());

        // `2>&-`: closed for the program too, as without the launcher.
        let closed = |mut cmd: Command| {
            cmd.stdin(Stdio::null()).stdout(Stdio::piped());
            // SAFETY: close(2) between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    libc::close(2);
                    Ok(())
                });
            }
            cmd.output().unwrap()
        };
        let b = closed(untraced(&d, &["fd2"]));
        assert_eq!(String::from_utf8_lossy(&b.stdout), "closed\n");
        let t = closed(traced(&d, "t-closed", &["fd2"]));
        assert_eq!(t.status.code(), Some(0));
        assert_eq!(String::from_utf8_lossy(&t.stdout), "closed\n");
        let rec = stderr_record(&d.join("t-closed"));
        assert_eq!(rec["how"], "none", "{rec}");
        assert!(s(&rec["note"]).contains("closed"), "{rec}");
        // Writing to it fails in the program (errio exits 99) as without
        // the launcher, which still ends with the program's status.
        let b = closed(untraced(&d, &["mix", "10"]));
        assert_eq!(b.status.code(), Some(99));
        let mut cmd = launcher(&d);
        cmd.args(["--out", "t-closed2", "--", "./errio", "mix", "10"]);
        let t = closed(cmd);
        assert_eq!(t.status.code(), Some(99));
        assert!(t.stdout == b.stdout);
    }

    #[test]
    fn no_capture_stderr_gives_the_program_the_launchers_own() {
        let d = work_dir("stderr-off");
        build_errio(&d);
        let (r, w) = pipe();
        let ino = w.metadata().unwrap().ino();
        let mut cmd = launcher(&d);
        cmd.args([
            "-q",
            "--no-capture-stderr",
            "--out",
            "t",
            "--",
            "./errio",
            "fd2",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(w));
        let o = cmd.output().unwrap();
        drop(r);
        assert!(o.status.success());
        let line = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            line.starts_with(&format!("type=fifo ino={ino} ")),
            "{line} (pipe {ino})"
        );
        let rec = stderr_record(&d.join("t"));
        assert_eq!(rec["how"], "none", "{rec}");
        assert!(s(&rec["note"]).contains("--no-capture-stderr"), "{rec}");
        assert!(!d.join("t/stderr.txt").exists());
    }

    // -- the end of the stream -----------------------------------------------

    #[test]
    fn a_child_keeping_stderr_does_not_hold_the_launcher() {
        let d = work_dir("stderr-linger");
        build_errio(&d);
        let mut cmd = traced(&d, "t", &["linger"]);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = cmd.spawn().expect("spawn");
        let mut input = child.stdin.take().unwrap();
        let err = drain(child.stderr.take().unwrap());
        let out = drain(child.stdout.take().unwrap());
        let st = wait_within(&mut child, Duration::from_secs(30), "the launcher");
        let took = started.elapsed();
        assert_eq!(st.code(), Some(0), "{st:?}");
        let out = String::from_utf8_lossy(&out.join().unwrap()).into_owned();
        let pid: i32 = out
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("stdout: {out:?}"));
        // SAFETY: signal 0 only checks that the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        assert!(alive, "the child (blocked on stdin) must still be running");
        // The launcher waited for its own program and a bounded time for
        // the child (2 s for the processes that outlive the program, then
        // 250 ms for the stream; the rest is start-up).
        assert!(took < Duration::from_secs(10), "took {took:?}");
        let dir = d.join("t");
        let rec = stderr_record(&dir);
        assert_eq!(rec["left_open"], true, "{rec}");
        assert_eq!(rec["bytes"], 6, "{rec}");
        assert_eq!(captured(&dir), b"early\n");
        // The child's later output still reaches the launcher's stderr, and
        // the stream ends when the child does.
        input.write_all(b"g").unwrap();
        drop(input);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(err.join().unwrap());
        });
        let got = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("stderr never ended after the child exited");
        assert_eq!(String::from_utf8_lossy(&got), "early\nlate\n");
    }

    /// Starts `cmd` with stderr piped, reads the first line of it, closes
    /// it, and waits.
    fn close_after_first_line(mut cmd: Command) -> (ExitStatus, String) {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn");
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        err.read_line(&mut line).unwrap();
        assert_eq!(line, "spew\n");
        drop(err);
        let out = drain(child.stdout.take().unwrap());
        let st = wait_within(&mut child, Duration::from_secs(30), "spew");
        (
            st,
            String::from_utf8_lossy(&out.join().unwrap()).into_owned(),
        )
    }

    /// A reader that stops reading holds the relay, and with it the
    /// launcher's end (as it would have held the program). The program has
    /// ended meanwhile: how it ended must be on disk then, not only after
    /// the relay is done, so that a launcher killed in that wait (a job's
    /// time limit) leaves it behind.
    #[test]
    fn how_the_program_ended_is_on_disk_while_a_stalled_reader_holds_the_launcher() {
        let d = work_dir("stderr-stalled");
        let (r, w) = pipe();
        let mut cmd = launcher(&d);
        // More than the pipe holds, but not more than the pipe, the relay
        // and the program's own pipe hold together: the program ends.
        cmd.args(["-q", "--out", "t", "--", "sh", "-c"])
            .arg("head -c 100000 /dev/zero >&2; : > done; exit 7")
            .current_dir(&d)
            .stdout(Stdio::null())
            .stderr(w);
        let mut child = cmd.spawn().expect("start the launcher");
        let started = Instant::now();
        while !d.join("done").exists() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the program never ended"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let ended = || {
            fs::read_to_string(d.join("t/launcher.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .is_some_and(|v| v["exit_code"] == 7)
        };
        let on_disk = Instant::now();
        while !ended() && on_disk.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(20));
        }
        // Still held: the reader has not read a byte.
        let held = child.try_wait().unwrap().is_none();
        child.kill().unwrap();
        child.wait().unwrap();
        drop(r);
        assert!(held, "the launcher ended although nobody read its stderr");
        let rec = launcher_record(&d.join("t"));
        assert_eq!(rec["exit_code"], 7, "{rec:#}");
        assert_eq!(rec["status"], 7, "{rec:#}");
    }

    /// Started with stderr closed (`2>&-`), the launcher opens /dev/null on
    /// it first (`launch::entry`, as Rust's runtime start did): none of its
    /// own files lands on fd 2, so the summary it writes there cannot end up
    /// inside `launcher.json` (the program still gets fd 2 closed: above).
    #[test]
    fn a_launcher_started_without_stderr_keeps_its_files_apart() {
        let d = work_dir("stderr-closed-summary");
        let mut cmd = launcher(&d);
        cmd.args(["--out", "t", "--", "/bin/sh", "-c", "exit 0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        // SAFETY: close(2) between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::close(2);
                Ok(())
            });
        }
        let st = cmd.status().expect("spawn");
        assert_eq!(st.code(), Some(0), "{st:?}");
        let text = fs::read_to_string(d.join("t/launcher.json")).unwrap();
        let rec: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("launcher.json is not JSON ({e}):\n{text}"));
        assert_eq!(rec["status"], 0, "{rec:#}");
    }

    /// The launcher ignores SIGPIPE for itself (`launch::entry`, in place of
    /// Rust's runtime start): a summary written to a pipe nobody reads any
    /// more fails quietly, and the launcher still ends as the program did.
    #[test]
    fn a_summary_to_a_pipe_without_reader_does_not_kill_the_launcher() {
        let d = work_dir("summary-epipe");
        let (r, w) = pipe();
        drop(r);
        let mut cmd = launcher(&d);
        cmd.args(["--out", "t", "--", "/bin/sh", "-c", "exit 3"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(w);
        let st = cmd.status().expect("spawn");
        assert_eq!((st.code(), st.signal()), (Some(3), None), "{st:?}");
        assert_eq!(launcher_record(&d.join("t"))["status"], 3);
    }

    #[test]
    fn sigpipe_when_the_reader_goes_away() {
        let d = work_dir("stderr-sigpipe");
        build_errio(&d);
        let (bs, _) = close_after_first_line(untraced(&d, &["spew"]));
        assert_eq!(bs.signal(), Some(libc::SIGPIPE), "bare: {bs:?}");
        let (ts, _) = close_after_first_line(traced(&d, "t", &["spew"]));
        assert_eq!(ts.signal(), Some(libc::SIGPIPE), "traced: {ts:?}");
        let rec = launcher_record(&d.join("t"));
        assert_eq!(rec["signal"], libc::SIGPIPE, "{rec}");
        assert!(
            s(&rec["stderr"]["note"]).contains("stopped taking output"),
            "{rec}"
        );

        // A program that ignores SIGPIPE gets EPIPE.
        let (bs, bout) = close_after_first_line(untraced(&d, &["spew", "ignore"]));
        assert_eq!((bs.code(), bout.as_str()), (Some(3), "errno=EPIPE\n"));
        let (ts, tout) = close_after_first_line(traced(&d, "t2", &["spew", "ignore"]));
        assert_eq!((ts.code(), tout.as_str()), (Some(3), "errno=EPIPE\n"));
    }
}
