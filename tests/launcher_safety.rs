//! Production safety of the launcher and of `report` (issue 11): the
//! `cudnn-trace` binary, often run as root, around other people's
//! programs, reading traces other people's programs wrote.
//!
//! - `stderr.txt` is never written through a symlink (item 2);
//! - as root, children that drop privileges still write their traces,
//!   while other users cannot list the run directory, and every file is
//!   0600 (items 6, 8);
//! - no copy of the shim is left behind in `/tmp` per run (item 9);
//! - a full disk is said in the summary, never blamed on a kill (item 4),
//!   and a file system without `fallocate` still gets whole records;
//! - a pin directory that vanished mid-run is named by CDT006 (item 9);
//! - arguments and paths reach the trace byte for byte, and the summary
//!   escapes controls, bidi overrides and bytes that are not UTF-8
//!   (item 9);
//! - `report` reads no trace file through a symlink or a hard link.
//!
//! Root-only tests say why they are skipped otherwise.
//!
//! ```sh
//! cargo test -p cudnn-trace-integration --test launcher_safety
//! ```

use cudnn_trace_integration::launcher_support::{
    build_stack, cc, launcher, launcher_record, run, run_cc, work_dir, work_dir_for_others, Output,
};
use cudnn_trace_integration::tools;
use serde_json::Value;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

fn compile(source: &str, out: &Path) {
    let src = tools::package_dir().join("production").join(source);
    let mut cmd = cc();
    cmd.args(["-std=gnu11", "-O2", "-Wall", "-o"])
        .arg(out)
        .arg(&src)
        .arg("-ldl");
    run_cc(&mut cmd, source, false);
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `bash -c SCRIPT bash CLI DIR` in a private mount namespace; None
/// (and why, on the test's stderr) when no namespace or tmpfs can be made
/// here (the script exits 99 when its `mount` fails).
fn in_mount_namespace(script: &str, cli: &Path, dir: &Path) -> Option<Output> {
    let mut cmd = Command::new("unshare");
    cudnn_trace_integration::run::clear_env(&mut cmd);
    cmd.args([
        "--mount",
        "--propagation",
        "private",
        "bash",
        "-c",
        script,
        "bash",
    ])
    .arg(cli)
    .arg(dir);
    let o = run(cmd, None);
    if o.code() == Some(99) || o.err().starts_with("unshare: ") {
        eprintln!(
            "skipped: cannot make a mount namespace with a tmpfs here:\n{}",
            o.show()
        );
        return None;
    }
    Some(o)
}

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|x| x == "jsonl"));
    v.sort();
    v
}

fn mode(p: &Path) -> u32 {
    fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

// ---------------------------------------------------------------------------
// 2. stderr.txt

/// An `--out` directory that exists already may hold a symlink named
/// `stderr.txt` (left by anyone who can write there): the copy of the
/// program's stderr must go into a file the launcher created, never
/// through the link.
#[test]
fn stderr_copy_is_never_written_through_a_symlink() {
    let d = work_dir("safety-stderr");
    compile("noisy.c", &d.join("noisy"));
    let out = d.join("out");
    fs::create_dir(&out).unwrap();
    let victim = d.join("victim");
    fs::write(&victim, "secret\n").unwrap();
    std::os::unix::fs::symlink(&victim, out.join("stderr.txt")).unwrap();
    let mut cmd = launcher(&d);
    cmd.arg("--out").arg(&out).args(["--", "./noisy", "1"]);
    let o = run(cmd, None);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    assert_eq!(fs::read_to_string(&victim).unwrap(), "secret\n");
    assert_eq!(fs::read_link(out.join("stderr.txt")).unwrap(), victim);
    let rec = launcher_record(&out);
    let file = rec["stderr"]["file"]
        .as_str()
        .unwrap_or_else(|| panic!("no stderr copy recorded: {rec}"));
    assert_ne!(file, "stderr.txt", "{rec}");
    let copy = out.join(file);
    assert!(fs::symlink_metadata(&copy).unwrap().file_type().is_file());
    assert_eq!(mode(&copy), 0o600);
    assert_eq!(fs::read_to_string(&copy).unwrap(), "to-stderr\n");
}

// ---------------------------------------------------------------------------
// 6, 8. The run directory

/// As root, a program run through `setpriv` (as `gosu` and `su-exec` do)
/// drops to nobody: its trace must be written all the same. No other user
/// may list the run directory, and every file in it is 0600.
#[test]
fn children_that_drop_privileges_are_traced_and_others_cannot_list() {
    if !is_root() {
        eprintln!("skipped: needs root (a program that drops root's privileges)");
        return;
    }
    let d = work_dir_for_others("safety-drop");
    fs::set_permissions(&d, fs::Permissions::from_mode(0o755)).unwrap();
    compile("noisy.c", &d.join("noisy"));
    for (name, out) in [("--out", Some(d.join("run"))), ("default", None)] {
        let mut cmd = launcher(&d);
        if let Some(o) = &out {
            cmd.arg("--out").arg(o);
        }
        cmd.args([
            "--",
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
        ])
        .args(["--", "./noisy", "3"]);
        let o = run(cmd, None);
        assert_eq!(o.code(), Some(0), "{name}: {}", o.show());
        assert!(
            !o.err().contains("cannot create trace files"),
            "{name}: {}",
            o.show()
        );
        let run_dir = match &out {
            Some(o) => o.clone(),
            None => {
                let parent = d.join("cudnn-trace-out");
                // Others may pass through it, not list it.
                assert_eq!(mode(&parent) & 0o007, 0o001, "{}", parent.display());
                fs::read_dir(&parent)
                    .unwrap()
                    .flatten()
                    .next()
                    .unwrap()
                    .path()
            }
        };
        let m = mode(&run_dir);
        assert_eq!(m & 0o004, 0, "{name}: others can list {:o}", m);
        assert_eq!(
            m & 0o1003,
            0o1003,
            "{name}: sticky, others may add files: {:o}",
            m
        );
        let files = jsonl_files(&run_dir);
        let mut by_nobody = 0;
        for f in &files {
            let md = fs::metadata(f).unwrap();
            assert_eq!(md.mode() & 0o7777, 0o600, "{}", f.display());
            if md.uid() == 65534 {
                by_nobody += 1;
                let text = fs::read_to_string(f).unwrap();
                assert_eq!(text.matches("\"load_failed\"").count(), 3, "{text}");
            }
        }
        assert_eq!(by_nobody, 1, "{name}: the program's own trace: {files:?}");
        for f in fs::read_dir(&run_dir).unwrap().flatten() {
            assert_eq!(mode(&f.path()) & 0o077, 0, "{name}: {}", f.path().display());
        }
    }
}

/// A launcher run by an ordinary user makes its run directory 0700: no
/// process it starts can become another user (a setuid program is not
/// traced at all).
#[test]
fn a_users_run_directory_is_private() {
    if !is_root() {
        eprintln!("skipped: needs root (to run the launcher as another user)");
        return;
    }
    let d = work_dir_for_others("safety-user");
    fs::set_permissions(&d, fs::Permissions::from_mode(0o777)).unwrap();
    compile("noisy.c", &d.join("noisy"));
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = Command::new("setpriv");
    cudnn_trace_integration::run::clear_env(&mut cmd);
    cmd.current_dir(&d)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&t.cli)
        .args(["--out", "run", "--", "./noisy", "1"])
        .env("XDG_CACHE_HOME", d.join("cache"))
        .env("HOME", &d);
    let o = run(cmd, None);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    assert_eq!(mode(&d.join("run")), 0o700);
    for f in fs::read_dir(d.join("run")).unwrap().flatten() {
        assert_eq!(mode(&f.path()) & 0o077, 0, "{}", f.path().display());
    }
}

// ---------------------------------------------------------------------------
// 9. The shim's copy

/// With no cache of its own that it can use ($HOME unusable, /var/cache
/// read-only, /tmp/cudnn-trace-0 taken), the launcher puts the shim in a
/// fresh directory in /tmp: it must not leave one per run there. Run in a
/// private mount namespace with a tmpfs on /tmp.
#[test]
fn no_copy_of_the_shim_is_left_in_tmp_per_run() {
    if !is_root() {
        eprintln!("skipped: needs root (a mount namespace with its own /tmp)");
        return;
    }
    let d = work_dir("safety-tmp");
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    // The namespace's new /tmp would hide a checkout that lives under /tmp
    // (a `mktemp -d` clone): the CLI and the work directory with it.
    if [&d, &t.cli].iter().any(|p| p.starts_with("/tmp")) {
        eprintln!("skipped: the checkout is under /tmp, which this test replaces with a tmpfs");
        return;
    }
    let script = r#"
        set -eu
        cli=$1 out=$2
        mount -t tmpfs -o mode=1777 cdt-tmp /tmp || exit 99
        mount -t tmpfs -o ro cdt-cache /var/cache || exit 99
        echo taken > /tmp/cudnn-trace-0
        for i in 1 2 3; do
            env -u XDG_CACHE_HOME -u TMPDIR -u XDG_RUNTIME_DIR HOME=/nonexistent \
                "$cli" --out "$out/run$i" -- true >"$out/run$i.log" 2>&1
        done
        ls -A /tmp
    "#;
    let Some(o) = in_mount_namespace(script, &t.cli, &d) else {
        return;
    };
    assert!(o.status.success(), "{}", o.show());
    for i in 1..=3 {
        let log = fs::read_to_string(d.join(format!("run{i}.log"))).unwrap();
        assert!(
            !jsonl_files(&d.join(format!("run{i}"))).is_empty(),
            "run {i} was not traced:\n{log}"
        );
    }
    let listing = o.out();
    let left: Vec<&str> = listing.lines().filter(|l| *l != "cudnn-trace-0").collect();
    assert!(left.is_empty(), "left in /tmp after 3 runs: {left:?}");
}

// ---------------------------------------------------------------------------
// 4. A full disk, as the summary says it

/// The trace directory is a 96 KiB tmpfs and the program makes 2,000
/// events: the summary must say that the disk filled up, where, and how
/// many events were lost, and must not say the launcher was killed.
#[test]
fn full_disk_is_said_in_the_summary_and_not_blamed_on_a_kill() {
    full_disk_is_said_once("safety-full", "");
}

/// The disk has only 48 KiB left when the launcher starts, so the
/// program's first events fill it at once, racing the launcher's first
/// `launcher.json` (written once the program has started): that record
/// and the last ones must still be written (from room set aside before the
/// program starts), and the full disk said once.
#[test]
fn disk_full_from_the_programs_first_events_still_gets_the_launchers_records() {
    let d = full_disk_is_said_once("safety-full-early", &leaving_kib(48));
    let Some(d) = d else { return };
    records_of_the_whole_run(&d);
}

/// The `fill` script that leaves `kib` KiB free on the small tmpfs.
fn leaving_kib(kib: u32) -> String {
    format!(
        r#"
        avail=$(df --output=avail -B1 "$d/mnt" | tail -1)
        fallocate -l $((avail - {kib} * 1024)) "$d/mnt/filler" || exit 99
    "#
    )
}

/// `record` in `d`, the run's last `launcher.json`, has the start (pid),
/// the end (exit code) and the summary (findings).
fn records_of_the_whole_run(d: &Path) {
    let rec: Value =
        serde_json::from_str(&fs::read_to_string(d.join("record")).unwrap_or_default())
            .unwrap_or_else(|e| panic!("launcher.json after the run: {e}"));
    assert_eq!(rec["exit_code"], 0, "{rec}");
    assert!(rec["pid"].as_u64().is_some(), "{rec}");
    assert!(rec["findings"].is_object(), "the summary's record: {rec}");
}

/// The disk has room only for the record's file when the launcher starts
/// (the room it allocates before the program starts): the records of the
/// start, the end and the summary all go into it.
#[test]
fn disk_with_room_only_for_the_record_still_gets_the_launchers_records() {
    let fill = leaving_kib(16);
    let Some(d) = run_on_small_tmpfs("safety-full-record-only", &fill, "./noisy 2000") else {
        return;
    };
    // No event fits: the program's trace file stays empty.
    for what in ["err", "report"] {
        let text = fs::read_to_string(d.join(what)).unwrap_or_default();
        let full = said_full_once(what, &text);
        assert!(
            full.contains("/mnt/run") && full.contains("empty"),
            "{full}"
        );
    }
    records_of_the_whole_run(&d);
}

/// The disk fills, then takes writes again (the program removes a file):
/// the shim ends the line the disk cut, notes the loss and goes on. The
/// summary and the report still say the loss once, and call no line
/// corrupt.
#[test]
fn disk_that_takes_writes_again_is_said_once() {
    let fill = r#"head -c 24576 /dev/zero > "$d/mnt/filler""#;
    full_disk_is_said_once_by(
        "safety-full-again",
        fill,
        r#"./fill 200 "$d/mnt/filler" 10"#,
    );
}

/// The same race on a file system without `fallocate`: the record's room
/// is written as zeros before the program starts, so the records still fit
/// once the program has filled the disk, each filling the room.
#[test]
fn disk_full_without_fallocate_still_gets_the_launchers_records() {
    // Its own directory: `full_disk_is_said_once` starts its own afresh.
    let d = work_dir("safety-full-nofallocate-lib");
    let (lib, refused) = no_fallocate(&d);
    let fill = format!(
        r#"
        avail=$(df --output=avail -B1 "$d/mnt" | tail -1)
        fallocate -l $((avail - 48 * 1024)) "$d/mnt/filler" || exit 99
        export LD_PRELOAD={} NOFALLOCATE_LOG={}
    "#,
        lib.display(),
        refused.display()
    );
    let Some(d) = full_disk_is_said_once("safety-full-nofallocate", &fill) else {
        return;
    };
    records_fill_the_room_without_fallocate(&refused, &d.join("record"));
}

/// Runs `noisy 2000` traced into a 96 KiB tmpfs after the `fill` script
/// (bash, `$d/mnt` mounted) and checks that the summary and the report
/// say the full disk once, with where and how many events were lost, and
/// blame no kill. Returns the work directory (with `record`, the run's
/// `launcher.json`), None when skipped.
fn full_disk_is_said_once(name: &str, fill: &str) -> Option<PathBuf> {
    full_disk_is_said_once_by(name, fill, "./noisy 2000")
}

/// [`full_disk_is_said_once`] for another `program` (`noisy.c` and
/// `fill.c` are built into the work directory).
fn full_disk_is_said_once_by(name: &str, fill: &str, program: &str) -> Option<PathBuf> {
    let d = run_on_small_tmpfs(name, fill, program)?;
    let read = |n: &str| fs::read_to_string(d.join(n)).unwrap_or_default();
    for (what, text) in [("summary", read("err")), ("report", read("report"))] {
        let full = said_full_once(what, &text);
        assert!(
            full.contains("/mnt/run") && full.contains("events") && full.contains("lost"),
            "{what}: {full}"
        );
    }
    Some(d)
}

/// The one line of `text` (the summary or the report) that says the disk
/// was full; it blames no kill and calls no line corrupt.
fn said_full_once<'a>(what: &str, text: &'a str) -> &'a str {
    assert!(!text.contains("killed"), "{what} blames a kill:\n{text}");
    assert!(
        !text.contains("not a JSON object"),
        "{what} calls a line the full disk cut corrupt:\n{text}"
    );
    let full: Vec<&str> = text
        .lines()
        .filter(|l| l.to_lowercase().contains("no space left on device"))
        .collect();
    assert_eq!(full.len(), 1, "{what}: said once:\n{text}");
    full[0]
}

/// Runs `program` traced into a 96 KiB tmpfs after the `fill` script
/// (bash, `$d/mnt` mounted), then `report` on its trace; checks that the
/// program ran to its end. Returns the work directory (`out`, `err`,
/// `report`, and `record`: the run's `launcher.json`), None when skipped.
fn run_on_small_tmpfs(name: &str, fill: &str, program: &str) -> Option<PathBuf> {
    if !is_root() {
        eprintln!("skipped: a small tmpfs needs root (mount namespace, mount -t tmpfs)");
        return None;
    }
    let d = work_dir(name);
    compile("noisy.c", &d.join("noisy"));
    compile("fill.c", &d.join("fill"));
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    let script = format!(
        r#"
        set -u
        cli=$1 d=$2
        mkdir -p "$d/mnt"
        mount -t tmpfs -o size=96k cdt-full "$d/mnt" || exit 99
        {fill}
        cd "$d"
        XDG_CACHE_HOME="$d/cache" "$cli" --out "$d/mnt/run" -- {program} >"$d/out" 2>"$d/err"
        echo "rc=$?" >>"$d/out"
        XDG_CACHE_HOME="$d/cache" "$cli" report "$d/mnt/run" >"$d/report" 2>&1
        cp "$d/mnt/run/launcher.json" "$d/record"
        exit 0
    "#
    );
    in_mount_namespace(&script, &t.cli, &d)?;
    let read = |n: &str| fs::read_to_string(d.join(n)).unwrap_or_default();
    assert!(
        read("out").starts_with("done") && read("out").ends_with("\nrc=0\n"),
        "{}\n{}",
        read("out"),
        read("err")
    );
    Some(d)
}

/// `tests/production/nofallocate.c` built into `d`: the library to preload
/// into the launcher, and the log of the calls it refused.
fn no_fallocate(d: &Path) -> (PathBuf, PathBuf) {
    let lib = d.join("libnofallocate.so");
    let src = tools::package_dir()
        .join("production")
        .join("nofallocate.c");
    let mut cmd = cc();
    cmd.args(["-std=gnu11", "-O2", "-Wall", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src);
    run_cc(&mut cmd, "nofallocate.c", false);
    (lib, d.join("refused"))
}

/// The launcher met a file system without `fallocate` (`refused` logs
/// it) and `record`, its last `launcher.json`, is that of a whole run,
/// filling the room of zeros set aside for it (the JSON, then spaces: no
/// zero left after it).
fn records_fill_the_room_without_fallocate(refused: &Path, record: &Path) {
    let refusals = fs::read_to_string(refused).unwrap_or_default();
    assert!(
        !refusals.is_empty(),
        "the launcher never met a file system without fallocate (refusals: {refusals:?})"
    );
    let bytes = fs::read(record).unwrap_or_default();
    assert!(
        bytes.len() == 16 << 10 && bytes.ends_with(b"\n") && !bytes.contains(&0),
        "launcher.json does not fill its room ({} bytes)",
        bytes.len()
    );
    assert!(bytes.trim_ascii_end().ends_with(b"}"));
    let rec: Value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("launcher.json after the run: {e}"));
    assert_eq!(rec["exit_code"], 0, "{rec}");
    assert!(rec["findings"].is_object(), "the summary's record: {rec}");
}

/// A file system without `fallocate` (NFS before 4.2, some FUSE file
/// systems): the file set aside for `launcher.json` gets zeros as its room
/// instead, and each version of the record fills it.
#[test]
fn without_fallocate_each_record_fills_its_room() {
    let d = work_dir("safety-nofallocate");
    compile("noisy.c", &d.join("noisy"));
    let (lib, refused) = no_fallocate(&d);
    let run_dir = d.join("run");
    let mut cmd = launcher(&d);
    cmd.env("LD_PRELOAD", &lib)
        .env("NOFALLOCATE_LOG", &refused)
        .arg("--out")
        .arg(&run_dir)
        .args(["--", "./noisy", "20"]);
    let out = run(cmd, None);
    assert_eq!(out.code(), Some(0), "{}", out.show());
    records_fill_the_room_without_fallocate(&refused, &run_dir.join("launcher.json"));
    let left: Vec<String> = fs::read_dir(&run_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".launcher.json"))
        .collect();
    assert!(left.is_empty(), "files left behind: {left:?}");
}

// ---------------------------------------------------------------------------
// 9. CDT006 for a pin directory that vanished

#[test]
fn cdt006_names_a_pin_directory_that_vanished() {
    let d = work_dir("safety-pin-gone");
    compile("pin_vanish.c", &d.join("prog"));
    let pin = d.join("pin");
    build_stack("cudnn9", &pin, &["--version", "9.19.0", "--cuda", "13.0"]);
    let mut cmd = launcher(&d);
    cmd.arg("--pin")
        .arg(&pin)
        .args(["--out", "t", "--", "./prog"])
        .arg(&pin);
    let o = run(cmd, None);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    assert_eq!(o.out(), "libcudnn_ops.so.9: not loaded\n", "{}", o.show());
    let text = o.err();
    let cdt006: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains("CDT006"))
        .take_while(|l| !l.trim().is_empty())
        .collect();
    assert!(!cdt006.is_empty(), "no CDT006:\n{text}");
    let block = cdt006.join("\n");
    assert!(
        block.contains(&pin.display().to_string()) && block.contains("no longer exists"),
        "CDT006 must name the vanished pin directory:\n{block}"
    );
    assert!(!block.contains("install cuDNN"), "{block}");
}

// ---------------------------------------------------------------------------
// 9. Bytes and escapes

/// Arguments that are not UTF-8 are recorded byte for byte (docs/trace-
/// format.md: a byte that is not UTF-8 is the escape `\udcXX`, as Python's
/// `surrogateescape`), `report --json` keeps them so, and the summary
/// shows them, and every control or bidi character, escaped.
#[test]
fn arguments_are_recorded_losslessly_and_shown_escaped() {
    let d = work_dir("safety-bytes");
    compile("args.c", &d.join("args"));
    let args: [&[u8]; 4] = [
        b"plain",
        b"caf\xc3\xa9 \xff\xfe",
        "rtl\u{202e}txt.exe".as_bytes(),
        b"esc\x1b[2Jx",
    ];
    let mut cmd = launcher(&d);
    cmd.args(["--out", "t", "--", "./args"])
        .args(args.iter().map(|a| OsStr::from_bytes(a)));
    let o = run(cmd, None);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    // The header, as written.
    let trace = jsonl_files(&d.join("t"));
    assert_eq!(trace.len(), 1);
    let header = fs::read_to_string(&trace[0]).unwrap();
    let header = header.lines().next().unwrap();
    assert!(
        header.contains(r#""caf\u00e9 \udcff\udcfe""#) || header.contains(r#""café \udcff\udcfe""#),
        "{header}"
    );
    // report --json: the same strings (escapes are JSON's, decoded by any
    // reader into the same text; Python's os.fsencode gives the bytes).
    let mut cmd = launcher(&d);
    cmd.args(["report", "--json", "t"]);
    let r = run(cmd, None);
    assert_eq!(r.code(), Some(0), "{}", r.show());
    let raw = String::from_utf8(r.stdout.clone()).expect("report --json is UTF-8");
    assert!(raw.contains(r"\udcff\udcfe"), "{raw}");
    assert!(
        !raw.contains('\u{202e}') && !raw.contains('\u{1b}'),
        "raw controls in JSON"
    );
    // serde_json refuses a lone surrogate: read it as the trace reader does.
    let doc: Value =
        serde_json::from_str(&cudnn_trace_format::read::decode_byte_escapes(&raw)).unwrap();
    let argv = doc.to_string();
    assert!(
        argv.contains("rtl\u{202e}txt.exe"),
        "the JSON string keeps U+202E: {argv}"
    );
    // The summary: one line per argument, nothing raw.
    let err = o.err();
    assert!(
        !err.contains('\u{202e}') && !err.contains('\u{1b}'),
        "{err:?}"
    );
    assert!(
        err.contains(r"caf\xc3\xa9") || err.contains("café"),
        "{err}"
    );
    assert!(
        err.contains(r"\xff\xfe") && err.contains(r"\u{202e}") && err.contains(r"\x1b[2J"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// report reads only trace files

/// A trace directory others could write (1733) may hold a symlink or a hard
/// link named like a trace file: `report` (often run as root) must not read
/// through them, and must say so.
#[test]
fn report_reads_no_trace_file_through_a_link() {
    let d = work_dir("safety-links");
    let t = d.join("t");
    fs::create_dir(&t).unwrap();
    let secret = d.join("secret");
    fs::write(&secret, "root:SECRET-HASH:19000:0:99999:7:::\n").unwrap();
    std::os::unix::fs::symlink(&secret, t.join("1.jsonl")).unwrap();
    fs::hard_link(&secret, t.join("2.jsonl")).unwrap();
    let mut cmd = launcher(&d);
    cmd.args(["report", "t"]);
    let o: Output = run(cmd, None);
    let all = format!("{}{}", o.out(), o.err());
    assert!(!all.contains("SECRET"), "{all}");
    assert!(all.contains("1.jsonl") && all.contains("2.jsonl"), "{all}");
}

// ---------------------------------------------------------------------------
// Reading: old glibc, continued files

/// A header line as the shim writes it (padded loss fields first).
fn header(pid: u32, origin: &str, glibc: &str, calls: &str) -> String {
    format!(
        r#"{{"ev":"process","lost":0                   ,"lost_errno":0    ,"v":1,"shim":"0.1.0","pid":{pid},"ppid":1,"tid":{pid},"t_ns":1,"wall_ms":1,"exe":"/bin/prog","argv":["prog"],"hostname":"h","cwd":"/","env":{{}},"mode":"cuda","origin":"{origin}","glibc":"{glibc}","calls":"{calls}","preload":true}}"#
    )
}

fn failed(pid: u32, seq: u64, name: &str) -> String {
    format!(
        r#"{{"ev":"load_failed","seq":{seq},"t_ns":2,"pid":{pid},"ppid":1,"tid":{pid},"name":"{name}","requester":"/bin/prog","via":"dlopen","mode":2,"lmid":0,"family":"cudnn","tried":[],"error":null,"errno":2}}"#
    )
}

/// On glibc before 2.35 calls and in-library versions are not recorded
/// (docs/glibc.md): the summary says it once for the run, not per process.
#[test]
fn old_glibc_is_said_once_per_run() {
    let d = work_dir("safety-old-glibc");
    let t = d.join("t");
    fs::create_dir(&t).unwrap();
    for pid in [10, 11, 12] {
        fs::write(
            t.join(format!("{pid}.jsonl")),
            format!("{}\n", header(pid, "exec", "2.31", "needs-glibc-2.35")),
        )
        .unwrap();
    }
    let mut cmd = launcher(&d);
    cmd.args(["report", "t"]);
    let o = run(cmd, None);
    let said: Vec<String> = o
        .out()
        .lines()
        .filter(|l| l.contains("glibc 2.31"))
        .map(str::to_string)
        .collect();
    assert_eq!(said.len(), 1, "{}", o.show());
    assert!(
        said[0].contains("3 process images") && said[0].contains("2.35"),
        "{}",
        said[0]
    );
}

/// A file the shim started when the process's own file was replaced
/// (origin "reopen", tests/production.rs) continues that process image:
/// one image, with the events of both files and the note that says why.
#[test]
fn a_continued_trace_file_joins_its_image() {
    let d = work_dir("safety-reopen");
    let t = d.join("t");
    fs::create_dir(&t).unwrap();
    fs::write(
        t.join("20.jsonl"),
        format!(
            "{}\n{}\n",
            header(20, "exec", "2.36", "on"),
            failed(20, 1, "libcudnn_a.so.9")
        ),
    )
    .unwrap();
    let note = r#"{"ev":"note","seq":1,"t_ns":3,"pid":20,"ppid":1,"tid":20,"level":"warning","msg":"the trace file /t/20.jsonl was replaced by another file or a symlink"}"#;
    fs::write(
        t.join("20.1.jsonl"),
        format!(
            "{}\n{note}\n{}\n",
            header(20, "reopen", "2.36", "on"),
            failed(20, 2, "libcudnn_b.so.9")
        ),
    )
    .unwrap();
    let mut cmd = launcher(&d);
    cmd.args(["report", "--json", "t"]);
    let o = run(cmd, None);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let procs = doc["processes"].as_array().unwrap();
    assert_eq!(procs.len(), 1, "{}", o.out());
    let text = procs[0].to_string();
    assert!(
        text.contains("libcudnn_a.so.9")
            && text.contains("libcudnn_b.so.9")
            && text.contains("was replaced"),
        "{text}"
    );
}
