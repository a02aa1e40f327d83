//! Lays out the launcher's hot functions together, at the start of its text.
//!
//! Every traced run starts the launcher, and the launcher pays for its code
//! page by page: the kernel maps a file's pages 64 KiB at a time around each
//! page fault. The ~780 functions of an ordinary run lay in 59 such windows
//! of the 5.4 MB text; in the order of `link/hot-functions.txt` (made by
//! `scripts/hot-functions.sh` from callgrind runs) they take 21, which
//! saves 0.01 to 0.09 ms of every traced `/bin/true` on the 2-core VM and
//! 0.10 to 0.12 ms on an H200 host (docs/benchmarks.md, session 16).
//!
//! The list goes to the linker as lld's `--symbol-ordering-file`, with
//! rustc's own lld asked for by name (`-fuse-ld=lld` and its `gcc-ld`
//! directory, which is what rustc 1.90 and later pass there by default): GNU
//! ld does not know the option. That is done only for a release build for
//! x86_64-unknown-linux-gnu on such a host, by a rustc that ships its lld,
//! with no linker chosen in the cargo configuration or in RUSTFLAGS, and
//! only once the C compiler has been seen to link with that lld through
//! these flags (gcc before 9 rejects `-fuse-ld=lld`; rustc before 1.90 does
//! not use lld otherwise). Any other build links as before, and the layout
//! is only a matter of speed. Names the binary does not have (a stale list)
//! are skipped without a warning.
//!
//! Flags given to rustc after `--` (`cargo rustc -- ...`, maturin's
//! `rustc-args`) are not visible to a build script, and ours come after
//! them: whoever turns rustc's lld off there (`-C linker-features=-lld`, a
//! `-fuse-ld` of their own) sets `CUDNN_TRACE_NO_SYMBOL_ORDER=1` as well.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Set (to anything but an empty string): no layout, whatever the build.
const OPT_OUT: &str = "CUDNN_TRACE_NO_SYMBOL_ORDER";

fn main() {
    let list = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("link/hot-functions.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    // Cargo runs this script again by itself when the linker configuration
    // or RUSTFLAGS change (both are in the build's fingerprint); the opt-out
    // is a variable of cargo's own environment, which it must be told of.
    println!("cargo:rerun-if-env-changed={OPT_OUT}");
    for arg in ordering_args(&list).unwrap_or_default() {
        println!("cargo:rustc-link-arg-bin=cudnn-trace={arg}");
    }
}

/// The linker arguments that lay the list's functions out first, where this
/// build may have them (see the module docs).
fn ordering_args(list: &Path) -> Option<Vec<String>> {
    if !wanted() || !usable(list) {
        return None;
    }
    // Not `display()`, which would hand the linker a lossy path.
    let list = list.to_str()?;
    let gcc_ld = rust_lld()?;
    let use_lld = [
        "-fuse-ld=lld".to_string(),
        format!("-B{}", gcc_ld.to_str()?),
    ];
    if !links_with_lld(&use_lld) {
        return None;
    }
    let mut args = use_lld.to_vec();
    args.push(format!("-Wl,--symbol-ordering-file={list}"));
    args.push("-Wl,--no-warn-symbol-ordering".to_string());
    Some(args)
}

/// A release build for x86_64 Linux on such a host, not opted out, with no
/// linker chosen in the configuration (cargo then sets RUSTC_LINKER) or in
/// RUSTFLAGS.
fn wanted() -> bool {
    let var = |k: &str| env::var(k).unwrap_or_default();
    let target = var("TARGET");
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    env::var_os(OPT_OUT).is_none_or(|v| v.is_empty())
        && var("PROFILE") == "release"
        && target == "x86_64-unknown-linux-gnu"
        && var("HOST") == target
        && env::var_os("RUSTC_LINKER").is_none()
        && !["linker", "fuse-ld", "link-self-contained"]
            .iter()
            .any(|k| flags.contains(k))
}

/// The directory of rustc's `ld.lld` wrapper (`gcc-ld`), when the sysroot
/// has it and the `rust-lld` it runs.
fn rust_lld() -> Option<PathBuf> {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let sysroot = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    let bin = sysroot
        .join("lib/rustlib")
        .join(env::var("TARGET").ok()?)
        .join("bin");
    let dir = bin.join("gcc-ld");
    (sysroot.is_absolute() && dir.join("ld.lld").is_file() && bin.join("rust-lld").is_file())
        .then_some(dir)
}

/// Whether `cc`, which rustc links with when no linker is configured, runs
/// lld when given `use_lld`: it must accept the flags and the linker it
/// starts must say it is LLD.
fn links_with_lld(use_lld: &[String]) -> bool {
    Command::new("cc")
        .args(use_lld)
        .arg("-Wl,--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("LLD"))
}

/// A list the linker can be given: it exists, and its path has no comma
/// (`-Wl,` would split the path there).
fn usable(list: &Path) -> bool {
    list.is_file() && !list.to_string_lossy().contains(',')
}
