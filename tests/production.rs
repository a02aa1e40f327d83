//! Production safety of the shim (issue 11): what happens when the shim is
//! left in other people's processes, often as root, with no launcher
//! around it (`LD_AUDIT`, `LD_PRELOAD` and `CUDNN_TRACE_DIR` set directly,
//! as `cudnn-trace env --out` prints them for a Dockerfile).
//!
//! - the trace file is never written through whatever replaced it (a
//!   symlink, another file) once the program closed the shim's descriptor;
//! - a setuid or setcap program (`AT_SECURE`) is neither traced nor pinned;
//! - a full disk is recorded (a count in the header, a note when space comes
//!   back, one line on stderr per process tree), never silent;
//! - a bad trace or pin directory gives one message per process tree, not
//!   one per process, with its bytes escaped;
//! - trace files are 0600;
//! - a relative `CUDNN_TRACE_DIR` keeps meaning the same directory after the
//!   program changes directory;
//! - a panic in the shim (its self-test) costs a trace note, never the
//!   program, in the development build and in the one the CLI embeds.
//!
//! The programs are `tests/production/*.c`, compiled at test time. Tests
//! that need root (a setuid program, a small tmpfs) say why they are
//! skipped when not run as root.
//!
//! ```sh
//! cargo test -p cudnn-trace-integration --test production
//! ```

use cudnn_trace_integration::launcher_support::{
    cc, launcher, run, run_cc, work_dir, work_dir_for_others, Output,
};
use cudnn_trace_integration::tools;
use serde_json::Value;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

// ---------------------------------------------------------------------------
// Helpers

/// Compiles `tests/production/<source>` into `out` (`-ldl` for glibc
/// before 2.34, where dlopen lives in libdl).
fn compile(source: &str, out: &Path, extra: &[&str]) {
    let src = tools::package_dir().join("production").join(source);
    let mut cmd = cc();
    cmd.args(["-std=gnu11", "-O2", "-Wall", "-o"])
        .arg(out)
        .arg(&src)
        .args(extra)
        .arg("-ldl");
    run_cc(&mut cmd, source, false);
}

/// `program` in `cwd`, traced by the shim alone, as in production: the
/// audit library in `LD_AUDIT`, its helper in `LD_PRELOAD`, the trace
/// directory in `CUDNN_TRACE_DIR`; no launcher.
fn traced(program: &Path, cwd: &Path, trace_dir: &[u8]) -> Command {
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = Command::new(program);
    cudnn_trace_integration::run::clear_env(&mut cmd);
    cmd.current_dir(cwd)
        .env("LD_AUDIT", &t.shim)
        .env("LD_PRELOAD", &t.preload)
        .env("CUDNN_TRACE_DIR", std::ffi::OsStr::from_bytes(trace_dir));
    cmd
}

/// The lines of a trace file, parsed (`None` for a line that is not JSON).
fn lines(path: &Path) -> Vec<Option<Value>> {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    bytes
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).ok())
        .collect()
}

/// The events of kind `ev` in a trace file.
fn events(path: &Path, ev: &str) -> Vec<Value> {
    lines(path)
        .into_iter()
        .flatten()
        .filter(|v| v["ev"] == ev)
        .collect()
}

/// Whether one of the `note` events in a trace file has a message that
/// contains every one of `words`; the notes, for the failure message.
fn has_note(path: &Path, words: &[&str]) -> (bool, Vec<Value>) {
    let notes = events(path, "note");
    let found = notes.iter().any(|n| {
        let msg = n["msg"].as_str().unwrap_or_default();
        words.iter().all(|w| msg.contains(w))
    });
    (found, notes)
}

/// The `*.jsonl` files in `dir`, by name.
fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|x| x == "jsonl"));
    v.sort();
    v
}

/// The lines of `stderr` the shim wrote (they start with "cudnn-trace:").
fn shim_lines(o: &Output) -> Vec<String> {
    o.err()
        .lines()
        .filter(|l| l.contains("cudnn-trace"))
        .map(str::to_string)
        .collect()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs a bash script; its output when it succeeded, else None (and the
/// output on stderr of the test).
fn bash(script: &str, args: &[&Path]) -> Option<Output> {
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg(script).arg("bash").args(args);
    let o = run(cmd, None);
    if o.status.success() {
        Some(o)
    } else {
        eprintln!("script failed:\n{}", o.show());
        None
    }
}

// ---------------------------------------------------------------------------
// 1. A replaced trace file

/// The program closes the shim's descriptor; someone who can write the
/// trace directory then moves the trace file away and puts a symlink to
/// another file (or another file) at its path. The shim's next event must
/// go neither through the symlink nor into the other file: it goes into a
/// new file of its own, which says why.
#[test]
fn a_replaced_trace_file_is_never_written_through() {
    for how in ["symlink", "file"] {
        let d = work_dir(&format!("prod-swap-{how}"));
        let prog = d.join("swap");
        compile("swap.c", &prog, &[]);
        let traces = d.join("t");
        fs::create_dir(&traces).unwrap();
        let victim = d.join("victim");
        fs::write(&victim, "secret\n").unwrap();
        fs::set_permissions(&victim, fs::Permissions::from_mode(0o600)).unwrap();

        let mut cmd = traced(&prog, &d, traces.as_os_str().as_bytes());
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        let pid: u32 = first
            .trim()
            .strip_prefix("closed ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("unexpected output {first:?}"));
        let path = traces.join(format!("{pid}.jsonl"));
        let moved = traces.join("moved-away");
        fs::rename(&path, &moved).unwrap();
        match how {
            "symlink" => std::os::unix::fs::symlink(&victim, &path).unwrap(),
            _ => fs::write(&path, "other\n").unwrap(),
        }
        child.stdin.take().unwrap().write_all(b"g").unwrap();
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
        let status = child.wait().unwrap();
        assert!(status.success() && rest == "done\n", "{status} {rest:?}");

        assert_eq!(fs::read_to_string(&victim).unwrap(), "secret\n", "{how}");
        if how == "file" {
            assert_eq!(fs::read_to_string(&path).unwrap(), "other\n");
        }
        let old = fs::read_to_string(&moved).unwrap();
        assert!(
            old.contains("libcudnn_before") && !old.contains("libcudnn_after"),
            "{old}"
        );
        // The rest of the trace, in a file the shim made for it.
        let next = traces.join(format!("{pid}.1.jsonl"));
        let md = fs::symlink_metadata(&next)
            .unwrap_or_else(|e| panic!("{}: {e} ({how})", next.display()));
        assert!(md.file_type().is_file());
        let header = lines(&next)[0].clone().expect("header");
        assert_eq!(header["ev"], "process");
        assert_eq!(header["origin"], "reopen", "{header}");
        let (found, notes) = has_note(&next, &[&format!("{pid}.jsonl"), "replaced"]);
        assert!(found, "{notes:?}");
        let failed = events(&next, "load_failed");
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert_eq!(failed[0]["name"], "libcudnn_after.so.9");
    }
}

// ---------------------------------------------------------------------------
// 8. Permissions of the trace files

#[test]
fn trace_files_are_readable_by_their_owner_only() {
    let d = work_dir("prod-mode");
    let prog = d.join("tree");
    compile("tree.c", &prog, &[]);
    fs::create_dir(d.join("t")).unwrap();
    // A permissive umask: the mode must not come from it.
    let mut cmd = Command::new("bash");
    cudnn_trace_integration::run::clear_env(&mut cmd);
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    cmd.current_dir(&d)
        .args(["-c", "umask 000; exec ./tree 2"])
        .env("LD_AUDIT", &t.shim)
        .env("LD_PRELOAD", &t.preload)
        .env("CUDNN_TRACE_DIR", d.join("t"));
    let o = run(cmd, None);
    assert!(o.status.success(), "{}", o.show());
    let files = jsonl_files(&d.join("t"));
    assert!(files.len() >= 3, "{files:?}");
    for f in files {
        let mode = fs::metadata(&f).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o600, "{}", f.display());
    }
}

// ---------------------------------------------------------------------------
// 9. A relative trace directory

#[test]
fn relative_trace_dir_survives_a_change_of_directory() {
    let d = work_dir("prod-relative");
    let prog = d.join("chdir");
    compile("chdir.c", &prog, &[]);
    fs::create_dir(d.join("rel")).unwrap();
    let o = run(traced(&prog, &d, b"rel"), None);
    assert!(o.status.success(), "{}", o.show());
    assert!(shim_lines(&o).is_empty(), "{}", o.show());
    let child: u32 = o
        .out()
        .trim()
        .strip_prefix("child ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{}", o.show()));
    let f = d.join("rel").join(format!("{child}.jsonl"));
    let failed = events(&f, "load_failed");
    assert_eq!(failed.len(), 1, "{}", f.display());
    assert_eq!(failed[0]["name"], "libcudnn_child.so.9");
    // The header says where the file is, absolute.
    assert!(!Path::new("/rel").exists());
}

// ---------------------------------------------------------------------------
// 7. One message per process tree, escaped

/// A name no terminal should get raw: a newline, an escape sequence, a
/// byte that is not UTF-8 and a right-to-left override.
const NASTY: &[u8] = b"/nonexistent-cdt/a\nb\x1b[31mred\xff\xe2\x80\xaeevil";

fn assert_one_clean_line(o: &Output, what: &str) {
    let err = &o.stderr;
    let text = String::from_utf8(err.clone())
        .unwrap_or_else(|_| panic!("{what}: stderr is not UTF-8: {:?}", o.err()));
    assert_eq!(
        text.matches("cudnn-trace").count(),
        1,
        "{what}: one message expected:\n{}",
        o.show()
    );
    assert_eq!(text.lines().count(), 1, "{what}:\n{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{202e}'),
        "{what}: raw control characters:\n{text:?}"
    );
    assert!(
        text.contains("\\n") && text.contains("\\xff"),
        "{what}: {text:?}"
    );
}

#[test]
fn bad_trace_dir_is_said_once_per_process_tree() {
    let d = work_dir("prod-bad-dir");
    let prog = d.join("tree");
    compile("tree.c", &prog, &[]);
    let o = run(traced(&prog, &d, NASTY), None);
    assert!(o.status.success(), "{}", o.show());
    assert_eq!(o.out(), "tree of 4 done\n", "{}", o.show());
    assert_one_clean_line(&o, "bad CUDNN_TRACE_DIR");
}

#[test]
fn unreadable_pin_dir_is_said_once_per_process_tree() {
    let d = work_dir("prod-bad-pin");
    let prog = d.join("tree");
    compile("tree.c", &prog, &[]);
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = Command::new(&prog);
    cudnn_trace_integration::run::clear_env(&mut cmd);
    cmd.current_dir(&d)
        .env("LD_AUDIT", &t.shim)
        .env("CUDNN_TRACE_PIN", std::ffi::OsStr::from_bytes(NASTY));
    let o = run(cmd, None);
    assert!(o.status.success(), "{}", o.show());
    assert_one_clean_line(&o, "unreadable CUDNN_TRACE_PIN");
}

// ---------------------------------------------------------------------------
// 3. Secure execution (setuid, setcap)

/// Builds `tests/production/fake_cudnn.c` as `dir/libcudnn.so.9`.
fn fake_cudnn(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    let mut cmd = cc();
    cmd.args(["-shared", "-fPIC", "-Wl,-soname,libcudnn.so.9", "-o"])
        .arg(dir.join("libcudnn.so.9"))
        .arg(tools::package_dir().join("production/fake_cudnn.c"));
    run_cc(&mut cmd, "fake_cudnn.c", false);
}

/// glibc loads an audit module into a secure-execution process only from a
/// system directory, and only when the file is setuid (ld.so(8)): so an
/// administrator who installed the shim that way would have it in every
/// setuid program. It must then do nothing at all: the environment belongs
/// to the unprivileged caller, who must not choose where a root process
/// writes (CUDNN_TRACE_DIR) nor which cuDNN it runs (CUDNN_TRACE_PIN).
///
/// Reproduced without touching the system: in a private mount namespace a
/// setuid-root copy of the shim is bind-mounted over `libanl.so.1` (a
/// library nothing here uses), named in `LD_AUDIT` without a slash, and a
/// setuid-root program is run by `nobody` with a root-only trace directory
/// and a pin directory that holds a `libcudnn.so.9`.
#[test]
fn setuid_program_is_neither_traced_nor_pinned() {
    if !is_root() {
        eprintln!("skipped: needs root (a setuid-root program, a mount namespace)");
        return;
    }
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    let d = work_dir_for_others("prod-secure");
    let prog = d.join("secure");
    compile("secure.c", &prog, &[]);
    fs::set_permissions(&prog, fs::Permissions::from_mode(0o4755)).unwrap();
    let shim = d.join("libcdtrace-suid.so");
    fs::copy(&t.shim, &shim).unwrap();
    let probe = d.join("audit-probe-suid.so");
    let mut cmd = cc();
    cmd.args(["-shared", "-fPIC", "-o"])
        .arg(&probe)
        .arg(tools::package_dir().join("production/audit_probe.c"));
    run_cc(&mut cmd, "audit_probe.c", false);
    for f in [&shim, &probe] {
        fs::set_permissions(f, fs::Permissions::from_mode(0o4755)).unwrap();
    }
    fake_cudnn(&d.join("pin"));
    let traces = d.join("root-only");
    fs::create_dir(&traces).unwrap();
    fs::set_permissions(&traces, fs::Permissions::from_mode(0o700)).unwrap();
    // nobody must reach the programs.
    fs::set_permissions(&d, fs::Permissions::from_mode(0o755)).unwrap();

    let script = r#"
        set -eu
        prog=$1 shim=$2 probe=$3 pin=$4 traces=$5 out=$6
        target=
        for dir in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64 /lib /usr/lib; do
            if [ -f "$dir/libanl.so.1" ]; then target=$dir/libanl.so.1; break; fi
        done
        [ -n "$target" ] || { echo "SKIP: no libanl.so.1 in a system directory"; exit 0; }
        as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
        set +e
        as_nobody "$prog" >"$out/bare.out" 2>"$out/bare.err"
        echo $? >"$out/bare.rc"
        # The control: an audit module installed this way is loaded.
        mount --bind "$probe" "$target"
        as_nobody env LD_AUDIT=libanl.so.1 "$prog" >/dev/null 2>"$out/probe.err"
        umount "$target"
        mount --bind "$shim" "$target"
        as_nobody env LD_AUDIT=libanl.so.1 CUDNN_TRACE_DIR="$traces" CUDNN_TRACE_PIN="$pin" \
            "$prog" >"$out/traced.out" 2>"$out/traced.err"
        echo $? >"$out/traced.rc"
        # The same program without setuid, as nobody into a directory it may
        # write: the shim under that name does trace.
        cp "$prog" "$out/plain"; chmod 0755 "$out/plain"
        mkdir -m 0777 "$out/open"
        as_nobody env LD_AUDIT=libanl.so.1 CUDNN_TRACE_DIR="$out/open" "$out/plain" >/dev/null 2>&1 || true
    "#;
    let unshare = format!(
        "unshare --mount --propagation private bash -c '{}' bash \"$@\"",
        script.replace('\'', "'\\''")
    );
    let args: [&Path; 6] = [&prog, &shim, &probe, &d.join("pin"), &traces, &d];
    let result = bash(&unshare, &args);
    let _ = fs::remove_file(&shim);
    let _ = fs::remove_file(&probe);
    let Some(o) = result else {
        eprintln!("skipped: unshare/mount/setpriv did not work here");
        return;
    };
    if o.out().contains("SKIP:") {
        eprintln!("skipped: {}", o.out().trim());
        return;
    }
    let read = |n: &str| fs::read_to_string(d.join(n)).unwrap_or_default();
    if !read("bare.out").contains("secure=1 euid=0") {
        eprintln!(
            "skipped: the setuid bit does not take effect here (nosuid?): {}",
            read("bare.out")
        );
        return;
    }
    assert_eq!(
        read("probe.err"),
        "audit module loaded\n",
        "glibc must load a setuid audit module from a system directory here"
    );
    assert!(
        !jsonl_files(&d.join("open")).is_empty(),
        "the shim must trace a plain program under that name"
    );
    assert_eq!(
        read("traced.out"),
        read("bare.out"),
        "the pin must not apply"
    );
    assert!(read("traced.out").contains("libcudnn.so.9: not loaded"));
    assert_eq!(read("traced.err"), read("bare.err"));
    assert_eq!(read("traced.rc"), read("bare.rc"));
    assert_eq!(read("traced.rc").trim(), "3");
    let written: Vec<_> = fs::read_dir(&traces).unwrap().flatten().collect();
    assert!(
        written.is_empty(),
        "files written by a setuid program: {written:?}"
    );
}

// ---------------------------------------------------------------------------
// 4. A full disk

/// Runs `script` in a private mount namespace with a fresh tmpfs of
/// `size` at `$1`; the files the script leaves there are copied to `out`
/// (the tmpfs itself goes away with the namespace). None (and why, on the
/// test's stderr) when that cannot be done here.
fn in_small_tmpfs(size: &str, out: &Path, script: &str, args: &[&Path]) -> Option<Output> {
    if !is_root() {
        eprintln!("skipped: a small tmpfs needs root (mount namespace, mount -t tmpfs)");
        return None;
    }
    let mnt = out.join("mnt");
    fs::create_dir_all(&mnt).unwrap();
    let copy = out.join("disk");
    fs::create_dir_all(&copy).unwrap();
    let inner = format!(
        "set -u; mount -t tmpfs -o size={size},mode=0777 cdt-small \"$1\" || exit 99; \
         (cd \"$1\"; {script}); rc=$?; cp -a \"$1\"/. \"$2\"/; exit $rc"
    );
    let mut cmd = Command::new("unshare");
    cudnn_trace_integration::run::clear_env(&mut cmd);
    cmd.args(["--mount", "--propagation", "private", "bash", "-c"])
        .arg(inner)
        .arg("bash")
        .arg(&mnt)
        .arg(&copy)
        .args(args);
    let o = run(cmd, None);
    if o.code() == Some(99) || o.err().contains("unshare: ") {
        eprintln!("skipped: cannot mount a tmpfs here:\n{}", o.show());
        return None;
    }
    Some(o)
}

/// The header's fixed-width loss record (`lost`, `lost_errno`), read as
/// written.
fn lost(header: &Value) -> (u64, i64) {
    (
        header["lost"]
            .as_u64()
            .unwrap_or_else(|| panic!("no lost count: {header}")),
        header["lost_errno"]
            .as_i64()
            .unwrap_or_else(|| panic!("no errno: {header}")),
    )
}

/// A program fills a 64 KiB tmpfs with its trace, forks a child on the
/// full disk, frees some room, and goes on. Every event is either on disk,
/// whole, or counted as lost in the header, the parent's count is also in a
/// note written once there was room again, and stderr gets one line for
/// the whole process tree.
#[test]
fn full_disk_is_counted_and_said_once() {
    let d = work_dir("prod-full");
    let prog = d.join("fill");
    compile("fill.c", &prog, &[]);
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    let script = r#"
        head -c 24576 /dev/zero > filler
        env LD_AUDIT="$3" LD_PRELOAD="$4" CUDNN_TRACE_DIR="$PWD" "$5" 200 "$PWD/filler" 10 \
            >"$2/../fill.out" 2>"$2/../fill.err"
    "#;
    let Some(o) = in_small_tmpfs("64k", &d, script, &[&t.shim, &t.preload, &prog]) else {
        return;
    };
    assert!(o.status.success(), "{}", o.show());
    let out = fs::read_to_string(d.join("fill.out")).unwrap();
    let err = fs::read_to_string(d.join("fill.err")).unwrap();
    assert_eq!(out, "done, child ok\n", "{err}");
    let said: Vec<&str> = err.lines().filter(|l| l.contains("cudnn-trace")).collect();
    assert_eq!(said.len(), 1, "one line for the process tree:\n{err}");
    assert!(
        said[0].contains("No space left on device") && said[0].contains("lost"),
        "{}",
        said[0]
    );
    let disk = d.join("disk");
    let files = jsonl_files(&disk);
    assert_eq!(files.len(), 2, "{files:?}");
    let mut parent = None;
    for f in &files {
        let ls = lines(f);
        if ls.is_empty() {
            continue; // the child's header found no room at all
        }
        let header = ls[0]
            .clone()
            .unwrap_or_else(|| panic!("{}: torn header", f.display()));
        if header["ppid"].as_u64() != Some(u64::from(o_pid(&header))) {
            parent = Some((f.clone(), header));
        }
    }
    let (f, header) = parent.unwrap_or_else(|| panic!("no parent trace in {files:?}"));
    let (lost_n, errno) = lost(&header);
    assert_eq!(errno, libc::ENOSPC as i64, "{header}");
    let whole = events(&f, "load_failed").len() as u64;
    assert!(lost_n > 0 && whole > 0, "lost {lost_n}, whole {whole}");
    assert_eq!(whole + lost_n, 210, "every event is on disk or counted");
    let torn = lines(&f).iter().filter(|l| l.is_none()).count();
    assert!(torn <= 1, "{torn} torn lines");
    let notes = events(&f, "note");
    let loss_notes: Vec<&Value> = notes.iter().filter(|n| n["lost"].is_u64()).collect();
    assert_eq!(loss_notes.len(), 1, "{notes:?}");
    assert_eq!(loss_notes[0]["lost"].as_u64(), Some(lost_n));
    assert!(loss_notes[0]["msg"]
        .as_str()
        .unwrap()
        .contains("No space left on device"));
}

fn o_pid(header: &Value) -> u32 {
    header["pid"].as_u64().unwrap_or(0) as u32
}

/// The start-up window (startup.rs) cannot be allocated on a nearly full
/// disk: the events are then written one by one, and the trace says the
/// window was lost, and why.
#[test]
fn start_up_window_that_finds_no_room_is_recorded() {
    let d = work_dir("prod-window");
    fake_cudnn(&d.join("lib"));
    let prog = d.join("window");
    compile(
        "window.c",
        &prog,
        &[
            d.join("lib/libcudnn.so.9").to_str().unwrap(),
            &format!("-Wl,-rpath,{}", d.join("lib").display()),
        ],
    );
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    let script = r#"
        head -c 45056 /dev/zero > filler
        env LD_AUDIT="$3" LD_PRELOAD="$4" CUDNN_TRACE_DIR="$PWD" "$5" \
            >"$2/../window.out" 2>"$2/../window.err"
    "#;
    let Some(o) = in_small_tmpfs("64k", &d, script, &[&t.shim, &t.preload, &prog]) else {
        return;
    };
    assert!(o.status.success(), "{}", o.show());
    assert_eq!(
        fs::read_to_string(d.join("window.out")).unwrap(),
        "cudnn 91900\n"
    );
    let files = jsonl_files(&d.join("disk"));
    assert_eq!(files.len(), 1, "{files:?}");
    let header = lines(&files[0])[0].clone().expect("header");
    assert_eq!(lost(&header), (0, libc::ENOSPC as i64), "{header}");
    let (found, notes) = has_note(&files[0], &["start-up", "No space left on device"]);
    assert!(found, "{notes:?}");
    assert!(
        events(&files[0], "load").iter().any(|l| l["path"]
            .as_str()
            .unwrap_or_default()
            .ends_with("libcudnn.so.9")),
        "the start-up events are still written"
    );
}

// ---------------------------------------------------------------------------
// What the shim caches (issue 10)

/// The shim caches its pid and tid and each file's identity and build-id
/// (no system call each time): every kind of child still records its own
/// pid, and a file replaced at the same path, or rewritten in place, after
/// the parent read it is identified afresh (`tests/production/caches.c`).
#[test]
fn cached_ids_and_identities_are_right_in_every_child() {
    let d = work_dir("prod-caches");
    let prog = d.join("caches");
    compile("caches.c", &prog, &[]);
    let lib = d.join("lib");
    fs::create_dir_all(&lib).unwrap();
    for (name, id) in [("a", "0xaaaaaaaa"), ("b", "0xbbbbbbbb")] {
        let mut cmd = cc();
        cmd.args(["-shared", "-fPIC", &format!("-Wl,--build-id={id}"), "-o"])
            .arg(lib.join(format!("libcudnn_{name}.so")))
            .arg(tools::package_dir().join("production/caches_lib.c"));
        run_cc(&mut cmd, "caches_lib.c", false);
    }
    let work = lib.join("libcudnn_work.so");
    fs::copy(lib.join("libcudnn_a.so"), &work).unwrap();
    let t = d.join("t");
    fs::create_dir_all(&t).unwrap();
    let mut cmd = traced(&prog, &d, t.as_os_str().as_bytes());
    cmd.arg(&work)
        .arg(lib.join("libcudnn_a.so"))
        .arg(lib.join("libcudnn_b.so"));
    let o = run(cmd, None);
    assert!(o.status.success(), "{}", o.show());
    let pid_of = |what: &str| -> u64 {
        o.out()
            .lines()
            .find_map(|l| l.strip_prefix(what)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {what} line: {}", o.show()))
    };
    let file = |what: &str| t.join(format!("{}.jsonl", pid_of(what)));
    let files = jsonl_files(&t);
    assert_eq!(files.len(), 4, "{files:?}");
    // Every line of every file carries that file's own process, and each
    // child's file says how it began.
    for f in &files {
        let all: Vec<Value> = lines(f).into_iter().flatten().collect();
        let pid = all[0]["pid"].as_u64().unwrap();
        assert_eq!(f, &t.join(format!("{pid}.jsonl")));
        for e in &all {
            assert_eq!(e["pid"], pid, "{}: {e}", f.display());
            assert_eq!(e["tid"], pid, "{}: {e}", f.display());
        }
    }
    let origin = |what: &str| lines(&file(what))[0].clone().unwrap()["origin"].clone();
    assert_eq!(origin("parent "), "exec");
    assert_eq!(origin("fork "), "fork");
    assert_eq!(origin("clone "), "fork");
    assert_eq!(origin("vfork "), "exec");
    let loads = |what: &str| -> Vec<(String, u64)> {
        events(&file(what), "load")
            .iter()
            .map(|e| {
                (
                    e["build_id"].as_str().unwrap_or("").to_string(),
                    e["ino"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let ino_now = fs::metadata(&work).unwrap().ino();
    // The fork child: B under the name, then A's bytes in B's inode.
    let child = loads("fork ");
    assert_eq!(
        child,
        vec![("bbbbbbbb".into(), ino_now), ("aaaaaaaa".into(), ino_now)],
        "fork child"
    );
    // The parent read the first file before the child replaced it.
    let parent = loads("parent ");
    assert_eq!(parent.len(), 2, "{parent:?}");
    assert_eq!(parent[0].0, "aaaaaaaa");
    assert_ne!(parent[0].1, ino_now);
    assert_eq!(parent[1], ("aaaaaaaa".into(), ino_now));
    assert_eq!(loads("clone "), vec![("aaaaaaaa".into(), ino_now)]);
    assert_eq!(loads("vfork "), vec![("aaaaaaaa".into(), ino_now)]);
}

// ---------------------------------------------------------------------------
// Memory the shim's namespace keeps (issue 10)

/// Start-up touches the audit namespace's code (the shim's and its second
/// libc's) here and there, and the kernel maps the cached pages around each
/// touch: most of both ended up resident for good, about 1 MB of a small
/// program's RSS. Once start-up is over the shim gives those read-only
/// pages back; the program's own libc keeps what it uses, and the shim
/// still works afterwards (its code comes back from the page cache).
#[test]
fn read_only_pages_of_the_shim_namespace_are_given_back_after_start_up() {
    let d = work_dir("prod-resident");
    let prog = d.join("resident");
    compile("resident.c", &prog, &[]);
    let lib = d.join("lib");
    fake_cudnn(&lib);
    let t = d.join("t");
    fs::create_dir_all(&t).unwrap();
    let mut cmd = traced(&prog, &d, t.as_os_str().as_bytes());
    cmd.arg(lib.join("libcudnn.so.9"));
    let o = run(cmd, None);
    assert!(o.status.success(), "{}", o.show());
    // (name, size KiB, resident KiB) of each executable mapping.
    let maps: Vec<(String, u64, u64)> = o
        .out()
        .lines()
        .filter_map(|l| {
            let mut w = l.split(' ');
            let name = w.next()?.to_string();
            Some((name, w.next()?.parse().ok()?, w.next()?.parse().ok()?))
        })
        .collect();
    let shim: Vec<_> = maps.iter().filter(|m| m.0 == "libcdtrace.so").collect();
    let libcs: Vec<_> = maps.iter().filter(|m| m.0 == "libc").collect();
    assert_eq!((shim.len(), libcs.len()), (1, 2), "{}", o.show());
    // A fault brings back up to 64 KiB around it: the code that runs after
    // the pages went (the return from `la_preinit`, the helper's start)
    // comes back in a few such windows, more of them when more of the file
    // is in the page cache. Before: 83 % resident (release build), 100 %
    // (debug); now 19 % and 40 to 51 %.
    let (_, size, rss) = shim[0];
    assert!(
        rss * 10 <= *size * 7,
        "the shim keeps {rss} of {size} KiB of code resident"
    );
    let audit_libc = libcs.iter().map(|m| m.2).min().unwrap();
    assert!(
        audit_libc <= 64,
        "the audit namespace's libc keeps {audit_libc} KiB of code resident"
    );
    assert!(o.out().ends_with("version 91900\n"), "{}", o.show());
    let files = jsonl_files(&t);
    assert_eq!(files.len(), 1, "{files:?}");
    let loads = events(&files[0], "load");
    assert!(
        loads.iter().any(|e| e["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("libcudnn.so.9"))),
        "no load event of the cuDNN after the pages were given back: {loads:?}"
    );
}

// ---------------------------------------------------------------------------
// A bug in the shim

/// With `CUDNN_TRACE_SELF_TEST=panic` the shim panics in its first
/// `la_objopen`. Its guard must catch the panic (the unwinder the shim
/// links has to work in the audit namespace), the program must run as it
/// would (its output, its exit status, nothing on stderr), the trace must
/// say so in a note, and what comes after must be traced: the development
/// build of the shim, and the one the CLI embeds (a release build).
#[test]
fn a_panic_in_the_shim_costs_a_note_never_the_program() {
    let d = work_dir("prod-selftest");
    compile("selftest.c", &d.join("selftest"), &[]);
    fake_cudnn(&d.join("lib"));
    let lib = d.join("lib/libcudnn.so.9");
    let dev = d.join("dev-trace");
    fs::create_dir_all(&dev).unwrap();
    let mut dev_cmd = traced(&d.join("selftest"), &d, dev.as_os_str().as_bytes());
    dev_cmd.env("CUDNN_TRACE_SELF_TEST", "panic").arg(&lib);
    let release = d.join("release-trace");
    let mut release_cmd = launcher(&d);
    release_cmd
        .env("CUDNN_TRACE_SELF_TEST", "panic")
        .args(["-q", "--out"])
        .arg(&release)
        .arg("--")
        .arg(d.join("selftest"))
        .arg(&lib);
    for (what, cmd, dir) in [
        ("development", dev_cmd, dev),
        ("embedded", release_cmd, release),
    ] {
        let o = run(cmd, None);
        assert_eq!(o.code(), Some(3), "{what}: {}", o.show());
        assert_eq!(o.out(), "ran to the end\n", "{what}");
        assert!(o.err().is_empty(), "{what}: stderr: {}", o.err());
        let files = jsonl_files(&dir);
        assert_eq!(files.len(), 1, "{what}: {files:?}");
        let (found, notes) = has_note(&files[0], &["cudnn-trace shim bug", "self-test"]);
        assert!(found, "{what}: no note of the panic: {notes:?}");
        let loads = events(&files[0], "load");
        assert!(
            loads
                .iter()
                .any(|l| l["path"].as_str() == Some(lib.to_str().unwrap())),
            "{what}: the load after the panic was not traced: {loads:?}"
        );
    }
}
