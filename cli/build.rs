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
//! with no linker chosen in the cargo configuration or the flags; any other
//! build links as before, and the layout is only a matter of speed. Names the
//! binary does not have (a stale list) are skipped without a warning.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let list = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("link/hot-functions.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let Some(gcc_ld) = rust_lld().filter(|_| usable(&list)) else {
        return;
    };
    for arg in [
        "-fuse-ld=lld".to_string(),
        format!("-B{}", gcc_ld.display()),
        format!("-Wl,--symbol-ordering-file={}", list.display()),
        "-Wl,--no-warn-symbol-ordering".to_string(),
    ] {
        println!("cargo:rustc-link-arg-bin=cudnn-trace={arg}");
    }
}

/// The directory of rustc's `ld.lld` wrapper (`gcc-ld`), where this build
/// may use it (see the module docs).
fn rust_lld() -> Option<PathBuf> {
    let var = |k: &str| env::var(k).unwrap_or_default();
    let target = var("TARGET");
    if var("PROFILE") != "release" || target != "x86_64-unknown-linux-gnu" || var("HOST") != target
    {
        return None;
    }
    // A linker set in the configuration, or flags that choose one.
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if env::var_os("RUSTC_LINKER").is_some()
        || ["linker", "fuse-ld", "link-self-contained"]
            .iter()
            .any(|k| flags.contains(k))
    {
        return None;
    }
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let sysroot = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    let dir = sysroot.join("lib/rustlib").join(&target).join("bin/gcc-ld");
    dir.join("ld.lld").is_file().then_some(dir)
}

/// A list the linker can be given: it exists, and its path has no comma
/// (`-Wl,` would split the path there).
fn usable(list: &Path) -> bool {
    list.is_file() && !list.to_string_lossy().contains(',')
}
