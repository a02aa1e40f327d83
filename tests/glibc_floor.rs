//! The glibc floor (issue 11): both shim files and the version probe
//! helper, exactly as the CLI embeds and extracts them, need no `GLIBC_`
//! symbol version newer than 2.17, so that `env --shim` can put the shim into
//! any image with glibc 2.17 or later (RHEL 7, Debian 10/11, Ubuntu
//! 18.04/20.04), and the probe runs there, whatever glibc built them.
//!
//! Checked with `scripts/glibc-floor.sh --cli`, which CI also runs on the
//! release build (`scripts/release-build.sh`), where the CLI itself is held
//! to 2.17 too. The development build of the CLI (this one) follows the
//! host's glibc, and is not checked here.

use cudnn_trace_integration::tools;
use std::process::Command;

#[test]
fn embedded_shim_files_need_nothing_newer_than_glibc_2_17() {
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    let text = floor_2_17(&["--cli"], &t.cli);
    // The three files were looked at.
    for file in [
        "/libcdtrace.so\n",
        "/libcdtrace_preload.so\n",
        "/cdtrace-probe\n",
    ] {
        assert!(text.contains(file), "{file:?} not checked:\n{text}");
    }
    // The audit library brings nothing into its namespace but the C
    // library (and the loader it already shares; built on glibc before
    // 2.34, std also needs libpthread, libdl, librt): its unwinder is
    // linked in, not `libgcc_s.so.1`, whose loading and constructor (a
    // dozen `cpuid`, each a trap on a virtual machine) cost every traced
    // process about 0.1 ms on the development VM (docs/benchmarks.md,
    // session 12).
    let needed = text
        .lines()
        .skip_while(|l| !l.ends_with("/libcdtrace.so"))
        .find_map(|l| l.trim().strip_prefix("needed: "))
        .unwrap_or_else(|| panic!("no needed line for the shim:\n{text}"));
    let glibc = [
        "libc.so.6",
        "ld-linux-x86-64.so.2",
        "libpthread.so.0",
        "libdl.so.2",
        "librt.so.1",
    ];
    for lib in needed.split_whitespace() {
        assert!(glibc.contains(&lib), "the shim needs {lib}:\n{text}");
    }
}

/// The development build of the audit library (`target/debug/libcdtrace.so`,
/// which tests and developers load with `CUDNN_TRACE_SHIM_PATH`) is held to
/// the same floor: unoptimised, it keeps std code the release build drops.
#[test]
fn development_shim_needs_nothing_newer_than_glibc_2_17() {
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    floor_2_17(&[], &t.shim);
}

/// `scripts/glibc-floor.sh --max 2.17 OPTS... FILE`, which must succeed: its
/// output.
fn floor_2_17(opts: &[&str], file: &std::path::Path) -> String {
    let script = tools::workspace_root().join("scripts/glibc-floor.sh");
    let out = Command::new("bash")
        .arg(&script)
        .args(["--max", "2.17"])
        .args(opts)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", script.display()));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{} failed:\n{text}", script.display());
    text
}
