//! The preload helper, `libcdtrace_preload.so`, as built (issue 14): it is
//! loaded into the program's own namespace, so it must bring nothing with
//! it and be unable to take the program down.
//!
//! - no DT_NEEDED at all (not even libc.so.6, whose place in the program's
//!   breadth-first load order a preload's DT_NEEDED would change);
//! - no undefined symbol but ld.so's `_r_debug` (and the weak ones of the C
//!   runtime's start files, which resolve to nothing); in particular no
//!   reference to the symbol its panic handler names, so no panic path was
//!   left in the code;
//! - no symbol version requirement (no `GLIBC_*`: issue 11 needs 2.17);
//! - it exports its three hooks and the two bridge symbols, nothing else.
//!
//! Read with `readelf` (binutils, which the C compiler's linker comes with).

use cudnn_trace_integration::tools;
use std::process::Command;

fn readelf(args: &[&str]) -> String {
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new("readelf")
        .args(args)
        .arg(&t.preload)
        .output()
        .unwrap_or_else(|e| panic!("running readelf: {e}"));
    assert!(out.status.success(), "readelf {args:?} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// (binding, defined, name) of each dynamic symbol.
fn dyn_syms() -> Vec<(String, bool, String)> {
    readelf(&["--dyn-syms", "-W"])
        .lines()
        .filter_map(|l| {
            // Num: Value Size Type Bind Vis Ndx Name
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 8 || !f[0].ends_with(':') || f[0] == "Num:" {
                return None;
            }
            let name = f[7].split('@').next().unwrap_or_default().to_string();
            (!name.is_empty()).then(|| (f[4].to_string(), f[6] != "UND", name))
        })
        .collect()
}

#[test]
fn helper_needs_no_library() {
    let d = readelf(&["-d", "-W"]);
    let needed: Vec<&str> = d.lines().filter(|l| l.contains("(NEEDED)")).collect();
    assert!(needed.is_empty(), "DT_NEEDED entries: {needed:#?}");
    let v = readelf(&["-V", "-W"]);
    assert!(
        !v.contains("GLIBC_") && !v.contains(".gnu.version_r"),
        "symbol version requirements:\n{v}"
    );
}

#[test]
fn helper_imports_only_r_debug_and_exports_only_its_hooks() {
    let syms = dyn_syms();
    let undefined: Vec<&str> = syms
        .iter()
        .filter(|(bind, def, _)| !def && bind != "WEAK")
        .map(|(_, _, n)| n.as_str())
        .collect();
    assert_eq!(undefined, vec!["_r_debug"], "undefined symbols: {syms:#?}");
    let mut exported: Vec<&str> = syms
        .iter()
        .filter(|(_, def, _)| *def)
        .map(|(_, _, n)| n.as_str())
        .collect();
    exported.sort();
    assert_eq!(
        exported,
        vec![
            "cdtrace_preload_abi",
            "cdtrace_preload_bridge",
            "cdtrace_preload_unloads",
            "dlerror",
            "dlmopen",
            "dlopen"
        ],
        "{syms:#?}"
    );
}
