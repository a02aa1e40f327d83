//! The CLI side of the cuDNN pin (`docs/pin.md`): `cudnn-trace --pin DIR`
//! and `cudnn-trace env --pin DIR`, run as the real binary on fake cuDNN
//! installs built by `tests/fixtures/build-stack.sh` (once per test process),
//! with work directories `<target>/cdt-launcher/pin-*`.
//!
//! ```sh
//! cargo test -p cudnn-trace-integration --test pin_cli
//! ```
//!
//! What is checked: which directories are accepted (pip and versioned cuDNN
//! 9 layouts, cuDNN 8) and what `launcher.json` records for them; every
//! refusal (exact message, exit status 125 from the launcher and 1 from
//! `env`, the program not run, no trace directory made), including the
//! version mismatch only the libraries themselves reveal; warnings; the
//! pin's variables in the program's environment, also when the trace
//! directory cannot be made; and `env`'s output in its three syntaxes.

use cudnn_trace_integration::launcher_support::{
    copy_executable, launcher, launcher_record, run, stack, work_dir, Output,
};
use serde_json::{json, Value};
use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

// ---------------------------------------------------------------------------
// Fake cuDNN installs, each built once per test process

fn pip919() -> &'static Path {
    stack("cudnn9", &["--version", "9.19.0"])
}

fn pip914() -> &'static Path {
    stack("cudnn9", &["--version", "9.14.0"])
}

fn deb919() -> &'static Path {
    stack("cudnn9", &["--version", "9.19.0", "--versioned-files"])
}

fn deb914() -> &'static Path {
    stack("cudnn9", &["--version", "9.14.0", "--versioned-files"])
}

fn v8pip897() -> &'static Path {
    stack("cudnn8", &["--version", "8.9.7"])
}

fn v8pip896() -> &'static Path {
    stack("cudnn8", &["--version", "8.9.6"])
}

fn v8tar897() -> &'static Path {
    stack(
        "cudnn8",
        &[
            "--version",
            "8.9.7",
            "--versioned-files",
            "--no-sublib-runpath",
        ],
    )
}

/// Copies an install (files and relative symlinks as they are) into `dst`.
fn copy_stack(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    fs::set_permissions(dst, fs::Permissions::from_mode(0o755)).unwrap();
    for e in fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(e.path()).unwrap(), &to).unwrap();
        } else {
            fs::copy(e.path(), &to).unwrap();
        }
    }
}

/// A fresh work directory holding a copy of `src` as `lib`.
fn copy_of(name: &str, src: &Path) -> (PathBuf, PathBuf) {
    let d = work_dir(name);
    let lib = d.join("lib");
    copy_stack(src, &lib);
    (d, lib)
}

// ---------------------------------------------------------------------------
// Running the CLI

/// `cudnn-trace` in `cwd`, with no pin inherited from the test's environment.
fn cli(cwd: &Path) -> Command {
    let mut c = launcher(cwd);
    c.env_remove("CUDNN_TRACE_PIN")
        .env_remove("CUDNN_TRACE_PIN_MODE");
    c
}

/// The program the pinned runs start: prints the pin's variables, leaves a
/// marker file `ran`.
const SHOW_ENV: &str =
    r#"printf '%s|%s|%s\n' "$CUDNN_TRACE_PIN" "$CUDNN_TRACE_PIN_MODE" "$LD_AUDIT"; : > ran"#;

/// `cudnn-trace -q --out t [PIN OPTIONS...] -- /bin/sh -c SHOW_ENV` in `cwd`.
fn pinned_run<S: AsRef<OsStr>>(cwd: &Path, pin_args: &[S]) -> Output {
    let mut c = cli(cwd);
    c.args(["-q", "--out", "t"])
        .args(pin_args)
        .args(["--", "/bin/sh", "-c", SHOW_ENV]);
    run(c, None)
}

/// `cudnn-trace env ARGS...` in `cwd`.
fn env_cmd<S: AsRef<OsStr>>(cwd: &Path, args: &[S]) -> Output {
    let mut c = cli(cwd);
    c.arg("env").args(args);
    run(c, None)
}

fn canon(p: &Path) -> String {
    fs::canonicalize(p).unwrap().to_str().unwrap().to_string()
}

/// A valid directory: the launcher runs the program with the pin's
/// variables, says nothing (-q, no warnings), and records the pin; `env`
/// accepts it too. Returns launcher.json's `pin`.
fn accepted(cwd: &Path, dir: &Path, mode: Option<&str>) -> Value {
    let mut args: Vec<&OsStr> = vec![OsStr::new("--pin"), dir.as_os_str()];
    if let Some(m) = mode {
        args.extend([OsStr::new("--pin-mode"), OsStr::new(m)]);
    }
    let o = pinned_run(cwd, &args);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    assert_eq!(o.err(), "", "nothing on stderr expected:\n{}", o.show());
    let line = o.out();
    let fields: Vec<&str> = line.trim_end().split('|').collect();
    assert_eq!(fields.len(), 3, "{line}");
    assert_eq!(fields[0], canon(dir), "CUDNN_TRACE_PIN");
    assert_eq!(fields[1], mode.unwrap_or("strict"), "CUDNN_TRACE_PIN_MODE");
    assert!(fields[2].ends_with("/libcdtrace.so"), "LD_AUDIT: {line}");
    assert!(cwd.join("ran").exists());
    let rec = launcher_record(&cwd.join("t"));

    let e = env_cmd(cwd, &args);
    assert_eq!(e.code(), Some(0), "{}", e.show());
    assert!(e.out().contains("export CUDNN_TRACE_PIN="), "{}", e.show());
    rec["pin"].clone()
}

/// An invalid directory: the launcher prints exactly `cudnn-trace: refusing
/// to pin cuDNN to DIR: REASON`, exits 125, runs nothing and makes no trace
/// directory; `env` prints the same line and exits 1.
fn refused(cwd: &Path, dir: &OsStr, reason: &str) {
    let want = format!(
        "cudnn-trace: refusing to pin cuDNN to {}: {reason}\n",
        Path::new(dir).display()
    );
    let o = pinned_run(cwd, &[OsStr::new("--pin"), dir]);
    assert_eq!(o.code(), Some(125), "{}", o.show());
    assert_eq!(o.err(), want, "{}", o.show());
    assert_eq!(o.out(), "");
    assert!(!cwd.join("ran").exists(), "the program ran");
    assert!(!cwd.join("t").exists(), "a trace directory was made");

    let e = env_cmd(cwd, &[OsStr::new("--pin"), dir]);
    assert_eq!(e.code(), Some(1), "{}", e.show());
    assert_eq!(e.err(), want, "{}", e.show());
    assert_eq!(e.out(), "");
}

fn names(v: &[&str]) -> Value {
    json!(v)
}

/// The eight files of a pip-layout cuDNN 9, sorted.
const V9_PIP_FILES: [&str; 8] = [
    "libcudnn.so.9",
    "libcudnn_adv.so.9",
    "libcudnn_cnn.so.9",
    "libcudnn_engines_precompiled.so.9",
    "libcudnn_engines_runtime_compiled.so.9",
    "libcudnn_graph.so.9",
    "libcudnn_heuristic.so.9",
    "libcudnn_ops.so.9",
];

// ---------------------------------------------------------------------------
// Accepted directories

#[test]
fn valid_v9_pip_layout() {
    let d = work_dir("pin-valid-pip");
    let lib = pip919();
    let pin = accepted(&d, lib, None);
    assert_eq!(
        pin,
        json!({
            "dir": canon(lib),
            "mode": "strict",
            "major": 9,
            "version": "9.19.0",
            "cuda_build": 13000,
            "max_device": 1210,
            "files": names(&V9_PIP_FILES),
            "warnings": [],
        })
    );
    // env: the finding on stderr.
    let e = env_cmd(&d, &[OsStr::new("--pin"), lib.as_os_str()]);
    assert_eq!(
        e.err(),
        format!(
            "cudnn-trace: {}: cuDNN 9.19.0 built with CUDA 13.0, 8 files; the pin is valid\n",
            canon(lib)
        )
    );
}

#[test]
fn valid_v9_versioned_layout_and_warn_mode() {
    let d = work_dir("pin-valid-deb");
    let lib = deb919();
    let pin = accepted(&d, lib, Some("warn"));
    let mut files = Vec::new();
    for f in V9_PIP_FILES {
        let stem = f.trim_end_matches(".so.9");
        files.extend([
            format!("{stem}.so"),
            format!("{stem}.so.9"),
            format!("{stem}.so.9.19.0"),
        ]);
    }
    files.sort();
    assert_eq!(
        pin,
        json!({
            "dir": canon(lib),
            "mode": "warn",
            "major": 9,
            "version": "9.19.0",
            "cuda_build": 13000,
            "max_device": 1210,
            "files": files,
            "warnings": [],
        })
    );
}

#[test]
fn valid_v8_pip_and_tarball_layouts() {
    let d = work_dir("pin-valid-v8");
    let pin = accepted(&d, v8pip897(), None);
    assert_eq!(
        pin,
        json!({
            "dir": canon(v8pip897()),
            "mode": "strict",
            "major": 8,
            "version": "8.9.7",
            "cuda_build": 12020,
            "max_device": 900,
            "files": names(&[
                "libcudnn.so.8",
                "libcudnn_adv_infer.so.8",
                "libcudnn_adv_train.so.8",
                "libcudnn_cnn_infer.so.8",
                "libcudnn_cnn_train.so.8",
                "libcudnn_ops_infer.so.8",
                "libcudnn_ops_train.so.8",
            ]),
            "warnings": [],
        })
    );
    // NVIDIA's tarball: versioned files, no RUNPATH on the sub-libraries
    // (the probe loads them in dependency order, so they still bind to this
    // directory's copies).
    let d = work_dir("pin-valid-v8tar");
    let pin = accepted(&d, v8tar897(), None);
    assert_eq!(pin["version"], "8.9.7");
    assert_eq!(pin["files"].as_array().unwrap().len(), 21);
    assert_eq!(pin["warnings"], json!([]));
}

// ---------------------------------------------------------------------------
// Refused directories

#[test]
fn missing_directory_and_file_instead_of_directory() {
    let d = work_dir("pin-no-dir");
    refused(&d, OsStr::new("no-such-dir"), "it does not exist");
    fs::write(d.join("afile"), b"x").unwrap();
    refused(&d, OsStr::new("afile"), "it is not a directory");
    fs::create_dir(d.join("empty")).unwrap();
    refused(
        &d,
        OsStr::new("empty"),
        "it holds no cuDNN dispatcher (libcudnn.so.8 or libcudnn.so.9)",
    );
}

#[test]
fn no_dispatcher() {
    let (d, lib) = copy_of("pin-no-dispatcher", pip919());
    fs::remove_file(lib.join("libcudnn.so.9")).unwrap();
    refused(
        &d,
        OsStr::new("lib"),
        "it holds no cuDNN dispatcher (libcudnn.so.8 or libcudnn.so.9)",
    );
    // Both majors.
    copy_stack(v8pip897(), &lib);
    copy_stack(pip919(), &lib);
    refused(
        &d,
        OsStr::new("lib"),
        "it holds both libcudnn.so.8 and libcudnn.so.9; a pin directory must hold one cuDNN version",
    );
}

#[test]
fn missing_sublibrary_is_named() {
    let (d, lib) = copy_of("pin-missing-v9", pip919());
    fs::remove_file(lib.join("libcudnn_adv.so.9")).unwrap();
    refused(
        &d,
        lib.as_os_str(),
        "libcudnn_adv.so.9 is missing (cuDNN 9 needs libcudnn_graph, libcudnn_engines_precompiled, \
         libcudnn_engines_runtime_compiled, libcudnn_heuristic, libcudnn_ops, libcudnn_cnn and \
         libcudnn_adv, each as NAME.so.9)",
    );
    let (d, lib) = copy_of("pin-missing-v8", v8pip897());
    fs::remove_file(lib.join("libcudnn_cnn_train.so.8")).unwrap();
    refused(
        &d,
        lib.as_os_str(),
        "libcudnn_cnn_train.so.8 is missing (cuDNN 8 needs libcudnn_ops_infer, libcudnn_ops_train, \
         libcudnn_cnn_infer, libcudnn_cnn_train, libcudnn_adv_infer and libcudnn_adv_train, each as \
         NAME.so.8)",
    );
    // Versioned layout: the file is there, the name the loader asks for is not.
    let (d, lib) = copy_of("pin-missing-link", deb919());
    fs::remove_file(lib.join("libcudnn_heuristic.so.9")).unwrap();
    fs::remove_file(lib.join("libcudnn_heuristic.so")).unwrap();
    refused(
        &d,
        OsStr::new("lib"),
        "libcudnn_heuristic.so.9 is missing (there is libcudnn_heuristic.so.9.19.0, but the loader asks for libcudnn_heuristic.so.9)",
    );
}

#[test]
fn mixed_versions_by_file_name() {
    let (d, lib) = copy_of("pin-mixed-names", deb919());
    fs::copy(
        deb914().join("libcudnn_ops.so.9.14.0"),
        lib.join("libcudnn_ops.so.9.14.0"),
    )
    .unwrap();
    refused(
        &d,
        OsStr::new("lib"),
        "libcudnn_ops.so.9.14.0 is cuDNN 9.14.0, but libcudnn_graph.so.9.19.0 is cuDNN 9.19.0 \
         (by their file names); a pin directory must hold one cuDNN version",
    );
}

#[test]
fn mixed_versions_found_only_by_the_probe() {
    // pip layout: every name says only "9"; the 9.14 ops library reports
    // the mismatch through cudnnOpsVersionCheck.
    let (d, lib) = copy_of("pin-mixed-probe", pip919());
    fs::copy(
        pip914().join("libcudnn_ops.so.9"),
        lib.join("libcudnn_ops.so.9"),
    )
    .unwrap();
    refused(
        &d,
        OsStr::new("lib"),
        "libcudnn_ops.so.9 is not the same version as libcudnn_graph.so.9 (9.19.0): \
         cudnnOpsVersionCheck returned 1002 (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)",
    );
    // The core library itself from another version: the others disagree
    // with it.
    let (d, lib) = copy_of("pin-mixed-core", pip919());
    fs::copy(
        pip914().join("libcudnn_graph.so.9"),
        lib.join("libcudnn_graph.so.9"),
    )
    .unwrap();
    refused(
        &d,
        OsStr::new("lib"),
        "libcudnn_ops.so.9 is not the same version as libcudnn_graph.so.9 (9.14.0): \
         cudnnOpsVersionCheck returned 1002 (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)",
    );
    // cuDNN 8: status 14.
    let (d, lib) = copy_of("pin-mixed-v8", v8pip897());
    fs::copy(
        v8pip896().join("libcudnn_cnn_train.so.8"),
        lib.join("libcudnn_cnn_train.so.8"),
    )
    .unwrap();
    refused(
        &d,
        OsStr::new("lib"),
        "libcudnn_cnn_train.so.8 is not the same version as libcudnn_ops_infer.so.8 (8.9.7): \
         cudnnCnnTrainVersionCheck returned 14 (CUDNN_STATUS_VERSION_MISMATCH)",
    );
}

/// The 64-bit libraries this machine loads, as the messages name them.
fn host() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "64-bit aarch64"
    } else {
        "64-bit x86-64"
    }
}

#[test]
fn files_that_are_not_shared_libraries_of_this_machine() {
    let (d, lib) = copy_of("pin-not-elf", pip919());
    let adv = lib.join("libcudnn_adv.so.9");
    fs::write(&adv, b"this is not a library\n").unwrap();
    refused(
        &d,
        OsStr::new("lib"),
        "libcudnn_adv.so.9 is not an ELF file (not a shared library)",
    );
    // A 32-bit library: an ELF header with ELFCLASS32 (i386).
    let mut h = vec![0u8; 52];
    h[..4].copy_from_slice(b"\x7fELF");
    h[4] = 1; // ELFCLASS32
    h[5] = 1; // little endian
    h[6] = 1;
    h[16] = 3; // ET_DYN
    h[18] = 3; // EM_386
    fs::write(&adv, &h).unwrap();
    refused(
        &d,
        OsStr::new("lib"),
        &format!(
            "libcudnn_adv.so.9 is a 32-bit ELF file; this machine loads {} libraries",
            host()
        ),
    );
    // An executable, not a library.
    let mut exe = fs::read(lib.join("libcudnn_cnn.so.9")).unwrap();
    exe[16] = 2; // ET_EXEC
    fs::write(&adv, &exe).unwrap();
    refused(
        &d,
        OsStr::new("lib"),
        "libcudnn_adv.so.9 is an executable, not a shared library",
    );
}

// ---------------------------------------------------------------------------
// Warnings

#[test]
fn world_writable_directory_is_a_warning() {
    let (d, lib) = copy_of("pin-open-dir", pip919());
    fs::set_permissions(&lib, fs::Permissions::from_mode(0o777)).unwrap();
    let warning = format!(
        "pin directory {} is writable by group or others (mode 777): whoever can write there can \
         put code into every pinned process",
        canon(&lib)
    );
    let o = pinned_run(&d, &["--pin", "lib"]);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    assert_eq!(o.err(), format!("cudnn-trace: warning: {warning}\n"));
    assert!(d.join("ran").exists());
    let pin = launcher_record(&d.join("t"))["pin"].clone();
    assert_eq!(pin["warnings"], json!([warning]));
    assert_eq!(pin["version"], "9.19.0");

    let e = env_cmd(&d, &["--pin", "lib"]);
    assert_eq!(e.code(), Some(0), "{}", e.show());
    assert_eq!(
        e.err(),
        format!(
            "cudnn-trace: warning: {warning}\n\
             cudnn-trace: {}: cuDNN 9.19.0 built with CUDA 13.0, 8 files; the pin is valid (1 warning)\n",
            canon(&lib)
        )
    );
    fs::set_permissions(&lib, fs::Permissions::from_mode(0o755)).unwrap();
}

// ---------------------------------------------------------------------------
// The launcher

#[test]
fn pin_survives_an_unusable_trace_directory() {
    let d = work_dir("pin-untraced");
    fs::write(d.join("afile"), b"not a directory\n").unwrap();
    let lib = pip919();
    let mut c = cli(&d);
    c.args(["-q", "--out", "afile", "--pin"])
        .arg(lib)
        .args([
            "--",
            "/bin/sh",
            "-c",
            r#"printf '%s|%s|%s|%s|%s\n' "$CUDNN_TRACE_PIN" "$CUDNN_TRACE_PIN_MODE" "$LD_AUDIT" "${LD_PRELOAD-unset}" "${CUDNN_TRACE_DIR-unset}""#,
        ]);
    let o = run(c, None);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let line = o.out();
    let f: Vec<&str> = line.trim_end().split('|').collect();
    assert_eq!(f.len(), 5, "{line}");
    assert_eq!(f[0], canon(lib));
    assert_eq!(f[1], "strict");
    assert!(f[2].ends_with("/libcdtrace.so"), "{line}");
    // Only the audit role (the pin), nothing written.
    assert_eq!(f[3], "unset", "{line}");
    assert_eq!(f[4], "unset", "{line}");
    let err = o.err();
    assert!(
        err.starts_with("cudnn-trace: cannot create the trace directory afile: ")
            && err.ends_with(&format!(
                "; running /bin/sh untraced, still pinned to {}\n",
                canon(lib)
            ))
            && err.lines().count() == 1,
        "{}",
        o.show()
    );
}

#[test]
fn usage_errors() {
    let d = work_dir("pin-usage");
    // Usage errors are worded and laid out by clap (`error: …`, then the
    // usage); the checks of the launcher itself keep their `cudnn-trace:`.
    let cases: &[(&[&str], &str)] = &[
        (&["--pin-mode", "warn", "true"], "error: --pin-mode needs --pin DIR"),
        (
            &["--pin", "x", "--pin-mode", "lax", "true"],
            "error: invalid value 'lax' for '--pin-mode <MODE>'",
        ),
        (
            &["--pin=", "true"],
            "error: a value is required for '--pin <DIR>' but none was supplied",
        ),
        (
            &["env"],
            "error: the following required arguments were not provided:",
        ),
        (
            &["env", "--pin", "x", "--shim", "/a b/libcdtrace.so"],
            "cudnn-trace: env: --shim /a b/libcdtrace.so: LD_AUDIT cannot take a path with a space, colon or '$'",
        ),
    ];
    for (args, first) in cases {
        let mut c = cli(&d);
        c.args(*args);
        let o = run(c, None);
        assert_eq!(o.code(), Some(2), "{args:?}: {}", o.show());
        assert_eq!(
            o.err().lines().next(),
            Some(*first),
            "{args:?}: {}",
            o.show()
        );
        assert_eq!(o.out(), "");
    }
}

// ---------------------------------------------------------------------------
// env

/// The block of `env`'s output that starts with `# label`.
fn block<'a>(text: &'a str, label: &str) -> &'a str {
    text.split("\n\n")
        .find(|b| b.starts_with(&format!("# {label}")))
        .unwrap_or_else(|| panic!("no block '# {label}' in:\n{text}"))
}

#[test]
fn env_blocks_quoting_and_shim_install() {
    let d = work_dir("pin-env");
    // A directory name with everything the three syntaxes treat specially.
    let weird = r#"pin 'sq' "dq" $HOME %h \b"#;
    copy_stack(pip919(), &d.join(weird));
    let dir = canon(&d.join(weird));
    let shim = d.join("inst/lib/libcdtrace.so");
    let e = env_cmd(
        &d,
        &[
            OsStr::new("--pin"),
            OsStr::new(weird),
            OsStr::new("--shim"),
            shim.as_os_str(),
            OsStr::new("--out"),
            OsStr::new("trace dir"),
        ],
    );
    assert_eq!(e.code(), Some(0), "{}", e.show());
    let s = shim.to_str().unwrap();
    // LD_PRELOAD names the preload helper installed next to the shim.
    let helper = shim.with_file_name("libcdtrace_preload.so");
    let h = helper.to_str().unwrap();
    let out = format!("{}/trace dir", canon(&d));
    let sh_dir = dir.replace('\'', r"'\''");
    let dk_dir = dir
        .replace('\\', r"\\")
        .replace('"', r#"\""#)
        .replace('$', r"\$");
    let sd_dir = dir
        .replace('\\', r"\\")
        .replace('"', r#"\""#)
        .replace('%', "%%");
    assert_eq!(
        e.out(),
        format!(
            r#"# cuDNN 9.19.0 pinned to {dir} (strict mode), by cudnn-trace {v}
# These lines replace LD_AUDIT and LD_PRELOAD: if you set your own, join them with ':'.
# CUDNN_TRACE_DIR and LD_PRELOAD also trace the processes into that directory.

# shell (sh, bash, zsh)
export LD_AUDIT={s}
export CUDNN_TRACE_PIN='{sh_dir}'
export CUDNN_TRACE_PIN_MODE=strict
export CUDNN_TRACE_DIR='{out}'
export LD_PRELOAD={h}

# Dockerfile
ENV LD_AUDIT="{s}" \
    CUDNN_TRACE_PIN="{dk_dir}" \
    CUDNN_TRACE_PIN_MODE="strict" \
    CUDNN_TRACE_DIR="{out}" \
    LD_PRELOAD="{h}"

# systemd unit (or a drop-in: systemctl edit UNIT)
[Service]
Environment="LD_AUDIT={s}"
Environment="CUDNN_TRACE_PIN={sd_dir}"
Environment="CUDNN_TRACE_PIN_MODE=strict"
Environment="CUDNN_TRACE_DIR={out}"
Environment="LD_PRELOAD={h}"
"#,
            v = env!("CARGO_PKG_VERSION")
        )
    );
    // The shell block, run by a shell, gives back the exact values.
    let text = e.out();
    let check = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "{}\nprintf '%s\\n%s\\n%s\\n' \"$CUDNN_TRACE_PIN\" \"$CUDNN_TRACE_DIR\" \"$LD_AUDIT\"",
            block(&text, "shell")
        ))
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&check.stdout),
        format!("{dir}\n{out}\n{s}\n")
    );
    // The installed shim and its preload helper: 64-bit shared libraries,
    // mode 0644, nothing else left in their directory.
    for lib in [&shim, &helper] {
        let md = fs::symlink_metadata(lib).unwrap();
        assert!(md.is_file());
        assert_eq!(md.mode() & 0o7777, 0o644);
        let head = fs::read(lib).unwrap();
        assert!(
            head.starts_with(b"\x7fELF\x02") && head[16] == 3,
            "{} is not an ELF shared library",
            lib.display()
        );
    }
    let head = fs::read(&shim).unwrap();
    assert_eq!(fs::read_dir(shim.parent().unwrap()).unwrap().count(), 2);
    // Installing again replaces it (same content, same path).
    let again = env_cmd(
        &d,
        &[
            OsStr::new("--pin"),
            OsStr::new(weird),
            OsStr::new("--shim"),
            shim.as_os_str(),
        ],
    );
    assert_eq!(again.code(), Some(0), "{}", again.show());
    assert_eq!(fs::read(&shim).unwrap(), head);

    // Never written through a symlink.
    let link = d.join("link.so");
    std::os::unix::fs::symlink(d.join("victim.so"), &link).unwrap();
    let e = env_cmd(
        &d,
        &[
            OsStr::new("--pin"),
            OsStr::new(weird),
            OsStr::new("--shim"),
            link.as_os_str(),
        ],
    );
    assert_eq!(e.code(), Some(1), "{}", e.show());
    assert_eq!(
        e.err().lines().last(),
        Some(
            format!(
                "cudnn-trace: env: cannot install the shim: {} is a symbolic link; not writing through it (remove it, or give the path it leads to)",
                link.display()
            )
            .as_str()
        )
    );
    assert_eq!(e.out(), "");
    assert!(!d.join("victim.so").exists());
}

#[test]
fn env_without_shim_names_the_cached_copy() {
    let d = work_dir("pin-env-cache");
    let lib = pip919();
    let e = env_cmd(
        &d,
        &[
            OsStr::new("--pin"),
            lib.as_os_str(),
            OsStr::new("--pin-mode"),
            OsStr::new("warn"),
        ],
    );
    assert_eq!(e.code(), Some(0), "{}", e.show());
    let text = e.out();
    let shell = block(&text, "shell");
    let audit = shell
        .lines()
        .find_map(|l| l.strip_prefix("export LD_AUDIT="))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(audit.ends_with("/libcdtrace.so"), "{audit}");
    assert!(Path::new(audit).is_file(), "{audit}");
    assert!(
        text.contains(&format!(
            "# LD_AUDIT names cudnn-trace's cached copy of the shim ({audit}),\n"
        )),
        "{text}"
    );
    assert!(text.contains("cudnn-trace env --shim PATH"), "{text}");
    assert!(
        shell
            .lines()
            .any(|l| l == "export CUDNN_TRACE_PIN_MODE=warn"),
        "{shell}"
    );
    assert!(!text.contains("CUDNN_TRACE_DIR"), "{text}");
    assert!(!text.contains("LD_PRELOAD="), "{text}");
}

/// A setuid program owned by another user runs in secure-execution mode,
/// where the loader ignores LD_AUDIT: a strict pin cannot apply, so the
/// launcher refuses to run it and says why; warn mode runs it (unpinned,
/// with the usual warning). Needs root (to chown the copy to nobody).
#[test]
fn strict_pin_refuses_a_setuid_program() {
    let d = work_dir("pin-setuid");
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        panic!("this test needs root to make a file owned by another user (CI runs as root)");
    }
    let prog = d.join("true-nobody");
    copy_executable(Path::new("/bin/true"), &prog);
    std::os::unix::fs::chown(&prog, Some(65534), Some(65534)).unwrap();
    // chown clears the setuid bit: set it afterwards.
    fs::set_permissions(&prog, fs::Permissions::from_mode(0o4755)).unwrap();
    let lib = pip919();
    let mut c = cli(&d);
    c.args(["-q", "--out", "t", "--pin"])
        .arg(lib)
        .arg("--")
        .arg(&prog);
    let o = run(c, None);
    let _ = fs::remove_file(&prog);
    assert_eq!(o.code(), Some(125), "{}", o.show());
    assert_eq!(
        o.err(),
        format!(
            "cudnn-trace: refusing to run {} under a strict cuDNN pin: it is setuid (owner uid 65534), \
             so the loader ignores LD_AUDIT and the pin could not apply (--pin-mode warn runs it unpinned)\n",
            prog.display()
        )
    );
    assert!(!d.join("t").exists(), "nothing may be started or written");

    copy_executable(Path::new("/bin/true"), &prog);
    std::os::unix::fs::chown(&prog, Some(65534), Some(65534)).unwrap();
    fs::set_permissions(&prog, fs::Permissions::from_mode(0o4755)).unwrap();
    let mut c = cli(&d);
    c.args(["-q", "--out", "t", "--pin-mode", "warn", "--pin"])
        .arg(lib)
        .arg("--")
        .arg(&prog);
    let o = run(c, None);
    let _ = fs::remove_file(&prog);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    assert!(
        o.err().contains("it is setuid (owner uid 65534)")
            && o.err()
                .contains("the cuDNN pin does not apply to it either"),
        "{}",
        o.show()
    );
}
