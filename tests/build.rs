//! Generates one #[test] per directory under scenarios/ (see scenarios.rs).
use std::fmt::Write as _;

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    println!("cargo:rerun-if-changed=scenarios");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| {
                    e.path().join("build.sh").is_file() && e.path().join("scenario.env").is_file()
                })
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut out = String::new();
    for n in &names {
        // a new scenario directory must re-run this script
        println!("cargo:rerun-if-changed=scenarios/{n}");
        let ident: String = n
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        let _ = writeln!(
            out,
            "#[test]\nfn scenario_{ident}() {{\n    cudnn_trace_integration::assert_scenario({n:?});\n}}\n"
        );
    }
    let _ = writeln!(out, "/// Every scenario directory, as discovered at build time.\npub const SCENARIOS: &[&str] = &{names:?};");
    let path = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("scenario_tests.rs");
    std::fs::write(path, out).unwrap();
}
