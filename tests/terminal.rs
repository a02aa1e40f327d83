//! The launcher on a terminal: what the user sees and types must be what
//! they would see and type without it, and the program's messages must
//! still reach `stderr.txt`. Each test drives a real pseudo-terminal
//! (`tests/src/pty.rs`) on which either the launcher or a shell that starts
//! it is the session leader, as on a terminal emulator.
//!
//! ```sh
//! cargo test -p cudnn-trace-integration --test terminal
//! ```
//!
//! What is checked: stdout and stderr in the order written; what the
//! program sees of its terminal (one terminal on 0, 1 and 2, its
//! controlling terminal, in the foreground, the window size and its
//! changes); a Python REPL's tracebacks; job control in `bash -i`; Ctrl-Z
//! on a program that stops giving the shell back and `fg` resuming it;
//! Ctrl-C and Ctrl-\ ending the program and the launcher by the same
//! signal; a launch in the background; keys read raw by a full-screen
//! program; the terminal's modes restored even when the launcher is
//! killed; stdin not a terminal; and the copy of the output in
//! `stderr.txt`.

use cudnn_trace_integration::launcher_support::{
    assert_signal_state, bare, compile_copy, launcher, launcher_record, shim_cache, stderr_copy,
    wait_within, with_signal_state, work_dir,
};
use cudnn_trace_integration::pty::{eventually, gone, patience, Term};
use cudnn_trace_integration::tools;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

// ---------------------------------------------------------------------------
// Helpers

/// The environment every shell and program of these tests gets: a terminal
/// without escape sequences, a plain prompt, no start-up files.
fn plain_env(cmd: &mut Command) -> &mut Command {
    cmd.env("TERM", "dumb")
        .env("PS1", "$ ")
        .env("PS2", "> ")
        .env("INPUTRC", "/dev/null")
        .env("HISTFILE", "/dev/null")
        .env("PYTHON_BASIC_REPL", "1")
        .env_remove("PROMPT_COMMAND")
        .env_remove("PYTHONSTARTUP")
        .env_remove("BASH_ENV")
        .env_remove("ENV")
}

/// `cudnn-trace -q --out OUT -- PROGRAM...` in `d`.
fn traced(d: &Path, out: &str, program: &[&str]) -> Command {
    let mut cmd = launcher(d);
    cmd.args(["-q", "--out", out, "--"]).args(program);
    plain_env(&mut cmd);
    cmd
}

/// The launcher on a new terminal of 24 × 80, as its session leader.
fn on_terminal(d: &Path, out: &str, program: &[&str]) -> (Term, Child) {
    let t = Term::new(24, 80);
    let child = t.spawn(traced(d, out, program));
    (t, child)
}

/// Waits for the launcher; its exit status (None: killed by a signal).
fn finish(mut child: Child) -> std::process::ExitStatus {
    wait_within(&mut child, patience(), "the launcher")
}

/// `s` quoted for a POSIX shell.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The command line that starts the launcher from a shell of these tests.
fn launcher_line(out: &str, program: &str) -> String {
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    format!(
        "{} -q --out {out} -- {program}",
        sh_quote(&t.cli.display().to_string())
    )
}

/// An interactive bash on a new terminal, in `d`, at its first prompt.
/// `set -b`: job state changes are announced at once, not at the next
/// prompt.
fn shell(d: &Path) -> (Term, Child) {
    let mut t = Term::new(24, 80);
    let mut cmd = bare("bash", d);
    cmd.args(["--norc", "--noprofile", "-i"])
        .env("XDG_CACHE_HOME", shim_cache());
    plain_env(&mut cmd);
    let child = t.spawn(cmd);
    t.expect("$ ");
    t.send("set -b\n");
    t.expect("$ ");
    (t, child)
}

/// Ends the interactive shell of [`shell`].
fn exit_shell(t: Term, child: Child) {
    t.send("exit\n");
    let st = finish(child);
    assert_eq!(st.code(), Some(0), "the shell:\n{}", t.text());
}

/// The real Python 3 (not a version manager's wrapper script).
fn python() -> PathBuf {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is needed by the terminal tests");
    assert!(out.status.success(), "python3 -c failed");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

fn build(d: &Path, source: &str) -> PathBuf {
    let p = d.join(source.trim_end_matches(".c"));
    compile_copy(source, &p);
    p
}

/// The terminal's output as the launcher kept it, `\r` removed.
fn captured(dir: &Path) -> String {
    String::from_utf8_lossy(&stderr_copy(dir)).replace('\r', "")
}

fn modes_are_cooked(t: &libc::termios) -> bool {
    t.c_lflag & (libc::ICANON | libc::ECHO | libc::ISIG) == libc::ICANON | libc::ECHO | libc::ISIG
        && t.c_oflag & libc::OPOST != 0
}

// ---------------------------------------------------------------------------
// What the screen shows

#[test]
fn stdout_and_stderr_keep_their_order() {
    let d = work_dir("term-order");
    let (mut t, child) = on_terminal(
        &d,
        "t",
        &[
            "sh",
            "-c",
            "for i in 1 2 3; do echo out$i; echo err$i >&2; done",
        ],
    );
    assert_eq!(finish(child).code(), Some(0), "{}", t.text());
    let shown = t.expect("err3\n");
    assert_eq!(shown, "out1\nerr1\nout2\nerr2\nout3\nerr3\n", "the screen");

    // Many writes in quick succession: the screen is what it is without
    // the launcher, byte for byte.
    let errio = build(&d, "errio.c");
    let errio = errio.to_str().unwrap();
    let (mut b, bare_run) = {
        let t = Term::new(24, 80);
        let mut cmd = bare(errio, &d);
        cmd.args(["alternate", "300"]);
        let c = t.spawn(cmd);
        (t, c)
    };
    assert_eq!(finish(bare_run).code(), Some(0));
    let want = b.expect("o299\n");
    let (mut t, child) = on_terminal(&d, "t-many", &[errio, "alternate", "300"]);
    assert_eq!(finish(child).code(), Some(0), "{}", t.text());
    let got = t.expect("o299\n");
    assert!(got == want, "the interleaving changed:\n{got}");

    // The copy for the findings has the program's error text (on a
    // terminal of its own, all of its output, in the same order).
    let dir = d.join("t");
    let copy = captured(&dir);
    assert!(
        copy.contains("out1\nerr1\nout2\nerr2\nout3\nerr3\n"),
        "stderr.txt: {copy:?}"
    );
    let rec = launcher_record(&dir);
    assert_eq!(rec["stderr"]["how"], "session", "{rec}");
    assert_eq!(rec["stderr"]["with_stdout"], true, "{rec}");
    assert_eq!(rec["exit_code"], 0, "{rec}");
}

#[test]
fn the_program_has_one_terminal_and_it_is_its_own() {
    let d = work_dir("term-owner");
    let info = build(&d, "ttyinfo.c");
    let info = info.to_str().unwrap();
    let (mut t, child) = on_terminal(&d, "t", &[info]);
    assert_eq!(finish(child).code(), Some(0), "{}", t.text());
    let line = t.expect("\n");
    let field = |k: &str| -> String {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("no {k} in {line:?}"))
            .to_string()
    };
    let name = field("tty0");
    assert!(name.starts_with("/dev/pts/"), "{line}");
    // stdin, stdout, stderr and /dev/tty are one terminal (isatty, ttyname,
    // the controlling terminal), and the program is in its foreground, so
    // job control and tcgetpgrp work as without the launcher.
    for k in ["tty1", "tty2", "ctty"] {
        assert_eq!(field(k), name, "{line}");
    }
    assert_eq!(field("devtty"), "1", "{line}");
    assert_eq!(field("fg"), "1", "{line}");
    assert_eq!((field("rows"), field("cols")), ("24".into(), "80".into()));
}

#[test]
fn inherited_ignored_and_blocked_signals_reach_the_program() {
    let d = work_dir("term-sigstate");
    let io = build(&d, "io.c");
    let io = io.to_str().unwrap();
    // Started as by Python's `subprocess` with `restore_signals=False`:
    // SIGPIPE, SIGQUIT and SIGCHLD ignored, SIGUSR2 blocked. The program's
    // session leader must hand it that state, not its own.
    const IGNORED: &[i32] = &[libc::SIGQUIT, libc::SIGPIPE, libc::SIGCHLD];
    const BLOCKED: &[i32] = &[libc::SIGUSR2];
    let mut cmd = bare(io, &d);
    cmd.arg("sigs");
    let mut b = Term::new(24, 80);
    b.prepare(&mut cmd);
    with_signal_state(&mut cmd, IGNORED, BLOCKED);
    assert_eq!(finish(cmd.spawn().expect("spawn")).code(), Some(0));
    let want = [b.expect("\n"), b.expect("\n")];
    // The set-up took.
    assert_signal_state(&[&want[0], &want[1]], IGNORED, BLOCKED);
    let mut cmd = traced(&d, "t", &[io, "sigs"]);
    let mut t = Term::new(24, 80);
    t.prepare(&mut cmd);
    with_signal_state(&mut cmd, IGNORED, BLOCKED);
    let child = cmd.spawn().expect("spawn");
    assert_eq!(finish(child).code(), Some(0), "{}", t.text());
    assert_eq!([t.expect("\n"), t.expect("\n")], want);
}

#[test]
fn stdin_not_a_terminal_keeps_the_order_and_stdin() {
    let d = work_dir("term-nostdin");
    let errio = build(&d, "errio.c");
    let errio = errio.to_str().unwrap();
    let info = build(&d, "ttyinfo.c");
    let info = info.to_str().unwrap();
    // stdout and stderr on the terminal, stdin from /dev/null, in a session
    // without a controlling terminal (a cron job writing to a tty, say).
    let run = |t: &Term, mut cmd: Command| -> Child {
        cmd.stdin(Stdio::null()).stdout(t.stdio()).stderr(t.stdio());
        // SAFETY: setsid between fork and exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                libc::setsid();
                Ok(())
            });
        }
        cmd.spawn().expect("spawn")
    };
    let mut b = Term::new(24, 80);
    let mut cmd = bare(errio, &d);
    cmd.args(["alternate", "300"]);
    assert_eq!(finish(run(&b, cmd)).code(), Some(0));
    let want = b.expect("o299\n");
    let mut t = Term::new(24, 80);
    assert_eq!(
        finish(run(&t, traced(&d, "t", &[errio, "alternate", "300"]))).code(),
        Some(0)
    );
    assert!(t.expect("o299\n") == want, "the interleaving changed");
    let mut t = Term::new(24, 80);
    assert_eq!(
        finish(run(&t, traced(&d, "t-info", &[info]))).code(),
        Some(0)
    );
    let line = t.expect("\n");
    assert!(line.starts_with("tty0=- tty1=/dev/pts/"), "{line}");
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        words[1].strip_prefix("tty1="),
        words[2].strip_prefix("tty2="),
        "{line}"
    );
    assert_eq!(launcher_record(&d.join("t"))["stderr"]["with_stdout"], true);
}

// ---------------------------------------------------------------------------
// Interactive programs

#[test]
fn python_repl_shows_a_clean_traceback() {
    let d = work_dir("term-python");
    let py = python();
    let (mut t, child) = on_terminal(&d, "t", &[py.to_str().unwrap(), "-q"]);
    t.expect(">>> ");
    // A run-time error: its wording is the same from Python 3.0 on (a
    // syntax error's is not: 3.10 says "invalid decimal literal" where
    // Debian 11's 3.9 says "invalid syntax").
    t.send("1/0\n");
    let shown = t.expect("\n>>> ");
    assert!(
        shown.ends_with("\nZeroDivisionError: division by zero\n>>> "),
        "the traceback, then the prompt:\n{shown}"
    );
    assert!(
        shown.contains("Traceback (most recent call last):\n  File \"<stdin>\", line 1"),
        "{shown}"
    );
    t.send("exit()\n");
    assert_eq!(finish(child).code(), Some(0), "{}", t.text());
    assert!(
        captured(&d.join("t")).contains("ZeroDivisionError: division by zero"),
        "stderr.txt has the error"
    );
}

#[test]
fn bash_keeps_its_job_control() {
    let d = work_dir("term-bash");
    let (mut t, child) = on_terminal(&d, "t", &["bash", "--norc", "--noprofile", "-i"]);
    let first = t.expect("$ ");
    assert!(
        !first.contains("no job control") && !first.contains("terminal process group"),
        "bash has no job control:\n{first}"
    );
    t.send("sleep 100 &\n");
    t.expect("[1] ");
    t.expect("$ ");
    t.send("jobs\n");
    t.expect("Running");
    t.expect("$ ");
    t.send("kill %1; wait %1; echo rc=$?\n");
    t.expect("rc=143\n");
    t.expect("$ ");
    // A job in the foreground, stopped with Ctrl-Z and resumed with fg;
    // the shell gets the terminal back each time. The job forks nothing
    // (a Ctrl-Z between a vfork and its exec leaves the parent running, on
    // any terminal), and says when it runs, so that each key goes where it
    // is meant.
    t.send("sh -c 'echo started; read x; echo \"got:$x\"'\n");
    t.expect("started\n");
    t.send("\x1a");
    t.expect("Stopped");
    t.expect("$ ");
    t.send("fg\n");
    t.send("more\n");
    t.expect("got:more\n");
    t.expect("$ ");
    // Ctrl-C ends a foreground job, not bash (nor the launcher).
    t.send("sh -c 'echo ready; exec sleep 100'\n");
    t.expect("ready\n");
    t.send("\x03");
    t.expect("$ ");
    t.send("echo alive\n");
    t.expect("alive\n");
    t.expect("$ ");
    t.send("exit\n");
    assert_eq!(finish(child).code(), Some(0), "{}", t.text());
    let all = t.text();
    assert!(!all.contains("no job control"), "{all}");
}

#[test]
fn a_full_screen_program_reads_keys_raw() {
    let d = work_dir("term-raw");
    let py = python();
    // As curses does: the modes are set through stdout, keys read from
    // stdin one at a time, without echo.
    let script = "import sys, termios, tty\n\
                  old = termios.tcgetattr(1)\n\
                  tty.setraw(1)\n\
                  sys.stdout.write('raw\\r\\n'); sys.stdout.flush()\n\
                  c = sys.stdin.read(1)\n\
                  termios.tcsetattr(1, termios.TCSADRAIN, old)\n\
                  print('key=%r' % c)\n";
    let (mut t, child) = on_terminal(&d, "t", &[py.to_str().unwrap(), "-c", script]);
    t.expect("raw\n");
    t.send("x");
    let shown = t.expect("\n");
    assert_eq!(shown, "key='x'\n", "no echo, no Enter needed");
    assert_eq!(finish(child).code(), Some(0), "{}", t.text());
}

#[test]
fn the_window_size_follows_the_terminal() {
    let d = work_dir("term-winsize");
    let mut t = Term::new(30, 100);
    let child = t.spawn(traced(
        &d,
        "t",
        &["sh", "-c", "stty size; while read x; do stty size; done"],
    ));
    t.expect("30 100\n");
    t.resize(50, 140);
    // The launcher passes the change on when its SIGWINCH arrives: ask until
    // the program sees it.
    let mut seen = false;
    for _ in 0..600 {
        t.send("\n");
        if t.expect_within("50 140\n", Duration::from_millis(100))
            .is_some()
        {
            seen = true;
            break;
        }
    }
    assert!(seen, "the program never saw the new size:\n{}", t.text());
    t.send("\x04");
    assert_eq!(finish(child).code(), Some(0), "{}", t.text());
}

#[test]
fn keys_typed_before_the_start_reach_the_program() {
    let d = work_dir("term-typeahead");
    let mut t = Term::new(24, 80);
    // A line and an end of file typed before the launcher runs (as
    // `script` sends when its own input ends): cat gets both, and ends.
    t.send("early\n\x04");
    let child = t.spawn(traced(&d, "t", &["cat"]));
    assert_eq!(finish(child).code(), Some(0), "{}", t.text());
    // The test terminal's echo, then the program's terminal's, then cat.
    t.expect("early\nearly\nearly\n");
    assert!(
        !t.text().contains("^@"),
        "EOF became a NUL byte:\n{}",
        t.text()
    );
}

// ---------------------------------------------------------------------------
// Job control and signals, from a shell

#[test]
fn ctrl_z_gives_the_shell_back_and_fg_resumes_the_program() {
    let d = work_dir("term-suspend");
    let (mut t, sh) = shell(&d);
    let program = sh_quote("echo ready; while read l; do echo \"got:$l\"; done");
    t.send(&format!(
        "{}\n",
        launcher_line("t", &format!("sh -c {program}"))
    ));
    t.expect("ready\n");
    t.send("hello\n");
    t.expect("got:hello\n");
    t.send("\x1a");
    t.expect("Stopped");
    t.expect("$ ");
    // The shell has the terminal, in its own modes.
    t.send("echo alive\n");
    t.expect("\nalive\n");
    t.expect("$ ");
    t.send("fg\n");
    t.send("world\n");
    t.expect("got:world\n");
    t.send("\x04");
    t.expect("$ ");
    t.send("echo rc=$?\n");
    t.expect("rc=0\n");
    t.expect("$ ");
    assert_eq!(launcher_record(&d.join("t"))["exit_code"], 0);
    exit_shell(t, sh);
}

#[test]
fn ctrl_c_and_ctrl_backslash_end_the_program_and_the_launcher() {
    let d = work_dir("term-interrupt");
    let (mut t, sh) = shell(&d);
    for (key, out, status, sig) in [("\x03", "t-int", 130, 2), ("\x1c", "t-quit", 131, 3)] {
        let program = sh_quote("echo ready; exec sleep 100");
        t.send(&format!(
            "{}\n",
            launcher_line(out, &format!("sh -c {program}"))
        ));
        t.expect("ready\n");
        t.send(key);
        t.expect("$ ");
        t.send("echo rc=$?\n");
        t.expect(&format!("rc={status}\n"));
        t.expect("$ ");
        let rec = launcher_record(&d.join(out));
        assert_eq!(rec["signal"], sig, "{rec}");
    }
    exit_shell(t, sh);
}

#[test]
fn a_launch_in_the_background_leaves_the_terminal_to_the_shell() {
    let d = work_dir("term-background");
    let (mut t, sh) = shell(&d);
    let program = sh_quote("echo bg-out; echo bg-err >&2");
    t.send(&format!(
        "{} &\n",
        launcher_line("t", &format!("sh -c {program}"))
    ));
    t.expect("bg-out\n");
    t.expect("bg-err\n");
    t.send("wait; echo rc=$?\n");
    t.expect("rc=0\n");
    t.expect("$ ");
    // A program that reads the terminal in the background is stopped, and
    // the shell says so, as without the launcher; fg gives it the terminal.
    let program = sh_quote("read l; echo \"got:$l\"");
    t.send(&format!(
        "{} &\n",
        launcher_line("t2", &format!("sh -c {program}"))
    ));
    // (With `set -b` the notice comes after the prompt, not before one.)
    t.expect("Stopped");
    t.send("echo alive\n");
    t.expect("\nalive\n");
    t.expect("$ ");
    t.send("fg\n");
    t.send("typed\n");
    t.expect("got:typed\n");
    t.expect("$ ");
    t.send("echo rc=$?\n");
    t.expect("rc=0\n");
    t.expect("$ ");
    exit_shell(t, sh);
}

// ---------------------------------------------------------------------------
// The terminal's modes come back

#[test]
fn killing_the_launcher_restores_the_terminal() {
    let d = work_dir("term-killed");
    let mut t = Term::new(24, 80);
    let before = t.modes();
    assert!(modes_are_cooked(&before));
    let mut child = t.spawn(traced(&d, "t", &["sh", "-c", "echo $$; exec sleep 100"]));
    let line = t.expect("\n");
    let program: i32 = line.trim().parse().expect("the program's pid");
    assert!(
        !modes_are_cooked(&t.modes()),
        "the launcher relays keys raw while the program runs"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    eventually("the terminal's modes restored", || {
        let now = t.modes();
        (now.c_iflag, now.c_oflag, now.c_lflag) == (before.c_iflag, before.c_oflag, before.c_lflag)
    });
    eventually("the program ended with the launcher", || gone(program));
}

#[test]
fn a_program_that_cannot_start_leaves_the_terminal_as_it_was() {
    let d = work_dir("term-noexec");
    let script = d.join("script");
    std::fs::write(&script, "#!/nonexistent/interpreter\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (mut t, child) = on_terminal(&d, "t", &["./script"]);
    let st = finish(child);
    assert_eq!(st.code(), Some(127), "{}", t.text());
    t.expect("its interpreter or loader is missing");
    assert!(modes_are_cooked(&t.modes()), "modes not restored");
}
