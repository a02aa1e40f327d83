//! Lays out the launcher's hot functions together, at the start of its text.
//!
//! Every traced run starts the launcher, and the launcher pays for its code
//! page by page: the kernel maps a file's pages 64 KiB at a time around each
//! page fault. The ~700 functions of an ordinary run lay in 59 such windows
//! of the 5.4 MB text; in the order of `link/hot-functions.txt` (made by
//! `scripts/hot-functions.sh` from callgrind runs) they take 21, which
//! saves 0.05 to 0.09 ms of every run of `/bin/true` (docs/benchmarks.md).
//!
//! The list goes to the linker as lld's `--symbol-ordering-file`. It is used
//! only where that is the linker for sure: a release build for
//! x86_64-unknown-linux-gnu by rustc 1.90 or later (whose default linker
//! there is its own lld), with no linker chosen in the cargo configuration
//! or the flags. GNU ld does not know the option; any other build links as
//! before, and the layout is only a matter of speed. Names the binary does
//! not have (a stale list) are skipped without a warning.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let list = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("link/hot-functions.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    if lld_is_the_linker() && usable(&list) {
        println!(
            "cargo:rustc-link-arg-bin=cudnn-trace=-Wl,--symbol-ordering-file={}",
            list.display()
        );
        println!("cargo:rustc-link-arg-bin=cudnn-trace=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether this build is linked by rustc's own lld (see the module docs).
fn lld_is_the_linker() -> bool {
    let var = |k: &str| env::var(k).unwrap_or_default();
    if var("PROFILE") != "release" || var("TARGET") != "x86_64-unknown-linux-gnu" {
        return false;
    }
    // A linker set in the configuration, or flags that choose one.
    if env::var_os("RUSTC_LINKER").is_some() {
        return false;
    }
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if ["linker", "fuse-ld", "link-self-contained"]
        .iter()
        .any(|k| flags.contains(k))
    {
        return false;
    }
    rustc_minor().is_some_and(|minor| minor >= 90)
}

/// The minor version of the rustc that builds this (1.MINOR.PATCH).
fn rustc_minor() -> Option<u32> {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc).arg("-vV").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let release = text.lines().find_map(|l| l.strip_prefix("release: "))?;
    let mut parts = release.split('.');
    (parts.next()? == "1").then_some(())?;
    parts.next()?.parse().ok()
}

/// A list the linker can be given: it exists, and its path has no comma
/// (`-Wl,` would split the path there).
fn usable(list: &Path) -> bool {
    list.is_file() && !list.to_string_lossy().contains(',')
}
