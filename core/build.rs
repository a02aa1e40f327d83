//! Builds the shim (`libcdtrace.so`, the audit library, and
//! `libcdtrace_preload.so`, its preload helper) and the version probe
//! helper (`cdtrace-probe`), and embeds the three in this library, and so in
//! the CLI binary (and any other front end) that links it.
//!
//! `cargo install --path cli` installs only the binary, so the shim has to
//! travel inside it. This script runs a nested `cargo build --release -p
//! cudnn-trace-shim` with its own target directory (the outer build holds the
//! lock on the normal one), and `cargo build --release --manifest-path
//! shim/preload/Cargo.toml` and `--manifest-path probe/Cargo.toml` (the
//! helpers are workspaces of their own: they are built with panic = "abort"
//! and without std), and copies the results to `$OUT_DIR`, which
//! `src/launch/shim.rs` includes with `include_bytes!`.
//!
//! When the shim cannot be built (the workspace is not there, or the shim does
//! not compile), an empty file is embedded and a cargo warning says why; the
//! launcher then refuses to run and points at `CUDNN_TRACE_SHIM_PATH`.
//!
//! It also parses the knowledge tables (`data/*.toml`) with the library's own
//! types and embeds them in a compact form, with the needles of the message
//! patterns (`$OUT_DIR/knowledge.bin`, read by
//! `src/analysis/findings/knowledge.rs`): reading that costs a fraction of
//! parsing the TOML at every run (issue 10). A table that does not parse
//! fails the build, with the file and the line.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

// The library's own table types and needle derivation, compiled here too:
// one definition for the build-time parse and the run-time read.
#[path = "src/analysis/findings/knowledge/needles.rs"]
mod needles;
#[path = "src/analysis/findings/knowledge/tables.rs"]
mod tables;

/// Environment variables that the outer cargo sets (or that configure the
/// outer build) and that must not leak into the nested build.
const SCRUB: &[&str] = &[
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_ENCODED_RUSTDOCFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CARGO_MAKEFLAGS",
    "MAKEFLAGS",
    "MFLAGS",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_MANIFEST_LINKS",
    "CARGO_PKG_NAME",
    "CARGO_CRATE_NAME",
    "OUT_DIR",
    "TARGET",
    "HOST",
    "OPT_LEVEL",
    "PROFILE",
    "DEBUG",
    "NUM_JOBS",
    "RUSTC_WORKSPACE_WRAPPER",
    "CLIPPY_ARGS",
    "CLIPPY_CONF_DIR",
    "__CARGO_FIX_PLZ",
    "__CARGO_DEFAULT_LIB_METADATA",
    "CARGO_PROFILE_RELEASE_DEBUG",
    "CARGO_INCREMENTAL",
];

fn main() {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let dest = out_dir.join("libcdtrace.so");
    let dest_preload = out_dir.join("libcdtrace_preload.so");
    let dest_probe = out_dir.join("cdtrace-probe");
    let ws = manifest_dir
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();

    println!("cargo:rerun-if-changed=build.rs");
    embed_knowledge(&ws, &out_dir);
    println!("cargo:rerun-if-env-changed=CUDNN_TRACE_SKIP_SHIM_BUILD");
    for p in [
        "shim/src",
        "shim/Cargo.toml",
        "shim/abi/src",
        "shim/abi/Cargo.toml",
        "shim/preload/src",
        "shim/preload/Cargo.toml",
        "shim/preload/Cargo.lock",
        "probe/src",
        "probe/build.rs",
        "probe/Cargo.toml",
        "probe/Cargo.lock",
        "format/src",
        "format/Cargo.toml",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        let p = ws.join(p);
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }

    let result = if env::var_os("CUDNN_TRACE_SKIP_SHIM_BUILD").is_some() {
        Err("CUDNN_TRACE_SKIP_SHIM_BUILD is set".to_string())
    } else {
        build_shim(&ws, &out_dir).and_then(|audit| {
            let preload = build_helper(&ws, &out_dir, "shim/preload", "libcdtrace_preload.so")?;
            let probe = build_helper(&ws, &out_dir, "probe", "cdtrace-probe")?;
            Ok([audit, preload, probe])
        })
    };
    // All or none: the launcher needs the pair, and what needs the probe
    // needs the shim's extraction directory.
    let copied = result.and_then(|built| {
        for (from, to) in built.iter().zip([&dest, &dest_preload, &dest_probe]) {
            fs::copy(from, to).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
        }
        Ok(())
    });
    if let Err(why) = copied {
        warn_empty(&dest, &why);
        fs::write(&dest_preload, b"").expect("write empty preload placeholder");
        fs::write(&dest_probe, b"").expect("write empty probe placeholder");
    }
    // The name of the extraction directory, hashed here rather than at every
    // start of the launcher (a few million instructions: issue 10).
    // `launch::shim::content_hash` is the same function; a test holds them
    // together.
    let mut all = fs::read(&dest).unwrap_or_default();
    all.extend(fs::read(&dest_preload).unwrap_or_default());
    all.extend(fs::read(&dest_probe).unwrap_or_default());
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in &all {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    fs::write(out_dir.join("embedded.hash"), format!("{h:016x}")).expect("write embedded.hash");
}

/// `data/*.toml` parsed into [`tables::Embedded`], written to
/// `$OUT_DIR/knowledge.bin`. Panics (fails the build) on a table that does
/// not parse: the binary must not ship without its knowledge.
fn embed_knowledge(ws: &Path, out_dir: &Path) {
    for p in [
        "core/src/analysis/findings/knowledge/needles.rs",
        "core/src/analysis/findings/knowledge/tables.rs",
    ] {
        println!("cargo:rerun-if-changed={}", ws.join(p).display());
    }
    let data = ws.join("data");
    let mut parsed = Vec::new();
    for name in tables::FILES {
        let path = data.join(name);
        println!("cargo:rerun-if-changed={}", path.display());
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let table =
            tables::Table::parse(name, &text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        parsed.push(table);
    }
    let message_needles = parsed
        .iter()
        .find_map(|t| match t {
            tables::Table::Frameworks(f) => Some(
                f.message
                    .iter()
                    .map(|m| needles::of_pattern(&needles::multi_line(&m.pattern)))
                    .collect(),
            ),
            _ => None,
        })
        .unwrap_or_default();
    let embedded = tables::Embedded {
        tables: parsed,
        message_needles,
    };
    let bytes = embedded
        .encode()
        .unwrap_or_else(|e| panic!("knowledge tables: cannot encode: {e}"));
    // Read back here rather than at run time: a serde attribute that the
    // compact form cannot carry (it is not self-describing) fails the build.
    let again = tables::Embedded::decode(&bytes).and_then(|e| e.encode());
    if again.as_deref() != Ok(&bytes[..]) {
        panic!("knowledge tables: the compact form does not read back ({again:?})");
    }
    fs::write(out_dir.join("knowledge.bin"), bytes).expect("write knowledge.bin");
}

fn warn_empty(dest: &Path, why: &str) {
    for line in why.lines().filter(|l| !l.trim().is_empty()) {
        println!("cargo:warning=shim: {line}");
    }
    println!(
        "cargo:warning=the shim (libcdtrace.so) is NOT embedded: the launcher will refuse to run \
         unless CUDNN_TRACE_SHIM_PATH names a built libcdtrace.so"
    );
    fs::write(dest, b"").expect("write empty shim placeholder");
}

fn build_shim(ws: &Path, out_dir: &Path) -> Result<PathBuf, String> {
    let manifest = ws.join("Cargo.toml");
    if !manifest.is_file() || !ws.join("shim/Cargo.toml").is_file() {
        return Err(format!(
            "workspace with shim/ not found next to the CLI ({})",
            ws.display()
        ));
    }
    nested_build(
        &manifest,
        Some("cudnn-trace-shim"),
        &out_dir.join("shim-target"),
        "libcdtrace.so",
    )
}

/// A helper that is a workspace of its own (`shim/preload`, `probe`): the
/// path of the built `file`.
fn build_helper(ws: &Path, out_dir: &Path, dir: &str, file: &str) -> Result<PathBuf, String> {
    let manifest = ws.join(dir).join("Cargo.toml");
    if !manifest.is_file() {
        return Err(format!("{} not found", manifest.display()));
    }
    let target = out_dir.join(format!("{}-target", dir.rsplit('/').next().unwrap_or(dir)));
    nested_build(&manifest, None, &target, file)
}

/// `cargo build --release [-p PACKAGE] --manifest-path MANIFEST` into
/// `target_dir`; returns the path of the built `file`.
fn nested_build(
    manifest: &Path,
    package: Option<&str>,
    target_dir: &Path,
    file: &str,
) -> Result<PathBuf, String> {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target_dir = target_dir.to_path_buf();
    let target = env::var("TARGET").unwrap_or_default();
    let host = env::var("HOST").unwrap_or_default();

    let mut cmd = Command::new(&cargo);
    cmd.arg("build").arg("--release");
    if let Some(p) = package {
        cmd.arg("-p").arg(p);
    }
    cmd.arg("--manifest-path")
        .arg(manifest)
        .arg("--target-dir")
        .arg(&target_dir)
        .arg("--color")
        .arg("never");
    // Cross builds: the shim must match the binary that embeds it.
    let cross = !target.is_empty() && target != host;
    if cross {
        cmd.arg("--target").arg(&target);
    }
    for var in SCRUB {
        cmd.env_remove(var);
    }
    if !cross {
        // A native build links the shim with the host's own linker, even
        // when the CLI is linked by another (cargo-zigbuild's glibc 2.17
        // stubs, scripts/release-build.sh): the shim's floor comes from
        // shim/build.rs, and those stubs would put libpthread.so.0 and
        // libdl.so.2 in the audit namespace, where on glibc before 2.34
        // (NODELETE libpthread) the shim could no longer refuse itself
        // (shim/src/lib.rs, la_version).
        for (key, _) in env::vars_os() {
            if let Some(k) = key.to_str() {
                let k_up = k.to_ascii_uppercase();
                if (k_up.starts_with("CARGO_TARGET_") && k_up.ends_with("_LINKER"))
                    || k_up.starts_with("CC_")
                    || k_up.starts_with("CXX_")
                    || k_up.starts_with("AR_")
                    || k_up == "TARGET_CC"
                    || k_up == "TARGET_AR"
                {
                    cmd.env_remove(k);
                }
            }
        }
    }
    for (key, _) in env::vars_os() {
        if let Some(k) = key.to_str() {
            if k.starts_with("CARGO_FEATURE_")
                || k.starts_with("CARGO_CFG_")
                || k.starts_with("DEP_")
                || k.starts_with("CARGO_PKG_")
            {
                cmd.env_remove(k);
            }
        }
    }
    let output = cmd
        .output()
        .map_err(|e| format!("cannot run {cargo:?}: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let mut lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.len() > 30 {
            lines.drain(..lines.len() - 30);
        }
        return Err(format!(
            "nested `cargo build` of {} failed ({}):\n{}",
            manifest.display(),
            output.status,
            lines.join("\n")
        ));
    }
    let mut built = target_dir;
    if cross {
        built.push(&target);
    }
    built.push("release");
    built.push(file);
    if !built.is_file() {
        return Err(format!(
            "build succeeded but {} is missing",
            built.display()
        ));
    }
    Ok(built)
}
