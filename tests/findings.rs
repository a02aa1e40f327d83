//! End-to-end tests of the findings (`cudnn-trace explain` lists the codes):
//! each test builds the fake CUDA stack a real-world situation needs
//! (`tests/fixtures/build-stack.sh`), compiles the situation's C program
//! (`tests/findings/NN_name/`, which says what it reproduces and its
//! sources, ids of `data/sources.toml`), runs it under the real launcher
//! (`cudnn-trace -q --out DIR -- PROG`), then reads the real
//! `cudnn-trace report --json DIR` and checks the finding's code, severity
//! and evidence (paths, versions, reasons), and that nothing else of error
//! level was said. The clean run must have no error or warning finding.
//!
//! ```sh
//! cargo test -p cudnn-trace-integration --test findings
//! ```
//!
//! Work directories: `<target>/cdt-launcher/findings-*`. Framework messages
//! (CDT010) are read from the program's stderr, which the launcher keeps as
//! `stderr.txt` in the trace directory.

use cudnn_trace_integration::case_dir::{link_rpath, machine_provides, CaseDir, PY};
use cudnn_trace_integration::launcher_support::{
    cc, launcher, launcher_record, report_json, report_ok, run, run_cc, stderr_copy, trace_files,
    Output,
};
use cudnn_trace_integration::tools;
use serde_json::Value;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------
// Building and running a situation

/// The C sources of the situations (`tests/findings`).
/// Whether the shim records calls and the libraries' own version answers
/// on this machine: glibc 2.35 or later (docs/glibc.md). The findings of a
/// test that rest on them (cuDNN's create status, the versions the
/// libraries report, the device's compute capability) cannot be made on an
/// older glibc, where the summary says so once (tests/launcher_safety.rs);
/// the test is then skipped, saying so.
fn calls_recorded_here(test: &str) -> bool {
    let v = cudnn_trace_integration::spec::glibc_version();
    if v >= (2, 35) {
        return true;
    }
    eprintln!(
        "{test} skipped: glibc {}.{} records no calls nor in-library versions (needs 2.35), which its findings rest on",
        v.0, v.1
    );
    false
}

fn s(p: &Path) -> String {
    p.to_str().expect("UTF-8 path").to_string()
}

/// One situation: a fresh work directory `<target>/cdt-launcher/findings-NAME`.
/// A situation's work directory (`findings-NAME`), with the runs.
struct Case(CaseDir);

/// A traced run: how the launcher ended and the trace directory.
struct Traced {
    out: Output,
    trace: PathBuf,
}

impl std::ops::Deref for Case {
    type Target = CaseDir;
    fn deref(&self) -> &CaseDir {
        &self.0
    }
}

impl Case {
    fn new(name: &str) -> Case {
        Case(CaseDir::new(&format!("findings-{name}")))
    }

    /// [`Case::trace`] without options; the launcher must exit with `exit`.
    /// Returns the run and its `report --json`.
    fn run(
        &self,
        label: &str,
        env: &[(&str, String)],
        prog: &Path,
        args: &[String],
        exit: i32,
    ) -> (Traced, Value) {
        let t = self.trace(label, &[], env, prog, args);
        assert_exit(&t, exit);
        let doc = report(&t);
        (t, doc)
    }

    /// `cudnn-trace -q [OPTS...] --out LABEL -- PROG ARGS...` in the work
    /// directory, with `env` (LD_LIBRARY_PATH, …) set for the program.
    fn trace(
        &self,
        label: &str,
        opts: &[&str],
        env: &[(&str, String)],
        prog: &Path,
        args: &[String],
    ) -> Traced {
        let mut cmd = launcher(&self.dir);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.arg("-q")
            .args(opts)
            .args(["--out", label, "--"])
            .arg(prog)
            .args(args);
        Traced {
            out: run(cmd, None),
            trace: self.p(label),
        }
    }
}

/// Directories joined for LD_LIBRARY_PATH.
fn path_list(dirs: &[&Path]) -> String {
    dirs.iter().map(|d| s(d)).collect::<Vec<_>>().join(":")
}

/// `-Wl,--enable-new-dtags,-rpath,DIR`: a DT_RUNPATH (loses to LD_LIBRARY_PATH).
fn runpath(dir: &Path) -> Vec<String> {
    vec![format!("-Wl,--enable-new-dtags,-rpath,{}", s(dir))]
}

// ---------------------------------------------------------------------------
// Reading the report

/// `cudnn-trace report --json TRACE`, which must succeed.
fn report(t: &Traced) -> Value {
    report_ok(t.trace.parent().unwrap(), &t.trace)
}

fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// Every finding of every process.
fn all(doc: &Value) -> Vec<&Value> {
    arr(&doc["processes"])
        .iter()
        .flat_map(|p| arr(&p["findings"]).iter())
        .collect()
}

/// One line per finding, for assertion messages.
fn show(doc: &Value) -> String {
    let mut out = String::new();
    for f in all(doc) {
        out += &format!(
            "{} {} {}\n    fix: {}\n",
            text(&f["severity"]),
            text(&f["code"]),
            text(&f["title"]),
            remedies(f)
        );
        for e in arr(&f["evidence"]) {
            out += &format!("    {e}\n");
        }
    }
    out
}

/// A finding's fix and its alternatives, one text (`fix | or | or`): the
/// fix comes first.
fn remedies(f: &Value) -> String {
    std::iter::once(text(&f["fix"]))
        .chain(arr(&f["alternatives"]).iter().map(text))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The findings with `code`.
fn with_code<'a>(doc: &'a Value, code: &str) -> Vec<&'a Value> {
    all(doc).into_iter().filter(|f| f["code"] == code).collect()
}

/// The one finding with `code` whose title contains `title_part`.
fn one<'a>(doc: &'a Value, code: &str, title_part: &str) -> &'a Value {
    let v: Vec<&Value> = with_code(doc, code)
        .into_iter()
        .filter(|f| text(&f["title"]).contains(title_part))
        .collect();
    assert_eq!(
        v.len(),
        1,
        "want exactly one {code} finding with {title_part:?} in its title, got {}:\n{}",
        v.len(),
        show(doc)
    );
    v[0]
}

/// The pieces of evidence of a finding whose `what` is `what`.
fn evidence<'a>(f: &'a Value, what: &str) -> Vec<&'a Value> {
    arr(&f["evidence"])
        .iter()
        .filter(|e| e["what"] == what)
        .collect()
}

/// The evidence `what` about `path`; panics when there is none.
fn ev<'a>(f: &'a Value, what: &str, path: &Path) -> &'a Value {
    let p = s(path);
    arr(&f["evidence"])
        .iter()
        .find(|e| e["what"] == what && e["path"] == p.as_str())
        .unwrap_or_else(|| panic!("no {what:?} evidence for {p} in {f:#}"))
}

/// Whether some evidence of `f` has a `detail` containing `part`.
fn detail_has(f: &Value, part: &str) -> bool {
    arr(&f["evidence"])
        .iter()
        .any(|e| text(&e["detail"]).contains(part))
}

/// Findings of a severity, from the document's total.
fn total(doc: &Value, severity: &str) -> u64 {
    doc["findings_total"][severity].as_u64().unwrap_or(u64::MAX)
}

/// The codes of the error findings, sorted, deduplicated.
fn error_codes(doc: &Value) -> Vec<String> {
    let mut v: Vec<String> = all(doc)
        .into_iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| text(&f["code"]).to_string())
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The error codes must be exactly `want` (nothing else went wrong).
fn assert_errors(doc: &Value, want: &[&str]) {
    assert_eq!(error_codes(doc), want, "error findings:\n{}", show(doc));
}

fn assert_exit(t: &Traced, code: i32) {
    assert_eq!(t.out.code(), Some(code), "{}", t.out.show());
}

/// The program's stderr as the launcher kept it (`stderr.txt`).
fn kept_stderr(t: &Traced) -> String {
    String::from_utf8_lossy(&stderr_copy(&t.trace)).into_owned()
}

// ---------------------------------------------------------------------------
// Situations shared by several tests

/// The pip CUDA 13 runtime (`SITE/nvidia/cu13/lib/libcudart.so.13`).
fn pip_cudart13(case: &Case) -> PathBuf {
    case.stack(
        "venv/lib/python3.12/site-packages/nvidia/cu13/lib",
        &["cudart", "--version", "13.0"],
    )
}

/// Situation 02: the pip cuDNN 9.19 dispatcher through the program's
/// DT_RPATH, the system's 9.14 graph and engines (without ops/cnn/adv)
/// first on LD_LIBRARY_PATH. Returns (pip dir, graph dir, program, env).
fn two_installs_v9(case: &Case) -> (PathBuf, PathBuf, PathBuf, Vec<(&'static str, String)>) {
    let pip = case.pip_cudnn("9.19.0", "13.0", &[]);
    let system = case.stack(
        "usr/lib/x86_64-linux-gnu",
        &["cudnn9", "--version", "9.14.0", "--versioned-files"],
    );
    let drv = case.driver("580.159.04", "13.0", &[]);
    let graph = case.p("opt/cudnn-9.14-graph/lib");
    fs::create_dir_all(&graph).unwrap();
    for e in fs::read_dir(&system).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        let keep = ["libcudnn_graph", "libcudnn_engines", "libcudnn_heuristic"];
        if keep.iter().any(|k| name.starts_with(k)) {
            std::os::unix::fs::symlink(system.join(&name), graph.join(&name)).unwrap();
        }
    }
    let prog = case.compile(
        "02_cudnn9_two_installs/main.c",
        PY,
        &link_rpath(&pip, "libcudnn.so.9"),
    );
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&graph, &drv]))];
    (pip, graph, prog, env)
}

/// Situation 16: one pip install of everything, driver 580, SM 9.0.
fn clean_pip(case: &Case) -> (PathBuf, PathBuf, PathBuf, Vec<(&'static str, String)>) {
    let pip = case.pip_cudnn("9.19.0", "13.0", &[]);
    let rt = pip_cudart13(case);
    let drv = case.driver("580.159.04", "13.0", &[]);
    let mut flags = link_rpath(&rt, "libcudart.so.13");
    flags.extend(link_rpath(&pip, "libcudnn.so.9"));
    let prog = case.compile("16_clean_pip/main.c", PY, &flags);
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&drv]))];
    (pip, rt, prog, env)
}

// ---------------------------------------------------------------------------
// 1. CDT001: two files of one cuDNN library

#[test]
fn two_files_of_one_cudnn_library_v9_and_v8() {
    if !calls_recorded_here("two_files_of_one_cudnn_library_v9_and_v8") {
        return;
    }
    for major in [9, 8] {
        let case = Case::new(&format!("duplicate-v{major}"));
        let (pip, system, other, soname) = if major == 9 {
            let pip = case.pip_cudnn("9.19.0", "13.0", &[]);
            let sys = case.stack(
                "usr/lib/x86_64-linux-gnu",
                &["cudnn9", "--version", "9.14.0", "--versioned-files"],
            );
            let other = sys.join("libcudnn.so.9.14.0");
            (pip, sys, other, "libcudnn.so.9")
        } else {
            let pip = case.pip_cudnn("8.9.7", "12.2", &[]);
            let sys = case.stack(
                "usr/lib/x86_64-linux-gnu",
                &["cudnn8", "--version", "8.9.2", "--versioned-files"],
            );
            let other = sys.join("libcudnn.so.8.9.2");
            (pip, sys, other, "libcudnn.so.8")
        };
        let drv = case.driver("580.159.04", "13.0", &[]);
        let prog = case.compile("01_duplicate_cudnn/main.c", PY, &link_rpath(&pip, soname));
        let env = vec![("LD_LIBRARY_PATH", path_list(&[&drv]))];
        let (_, doc) = case.run("t", &env, &prog, &[s(&other)], 0);

        let f = one(&doc, "CDT001", "files of libcudnn (cuDNN)");
        assert_eq!(f["severity"], "error", "{f:#}");
        let want = if major == 9 { "9.14.0" } else { "8.9.2" };
        assert!(text(&f["title"]).starts_with("2 different files"), "{f:#}");
        assert!(text(&f["title"]).ends_with(want), "{f:#}");
        let first = ev(f, "loaded", &pip.join(soname));
        assert_eq!(first["reason"], "RPATH");
        assert_eq!(first["requester"], s(&prog).as_str());
        let second = ev(f, "loaded", &other);
        assert_eq!(second["reason"], "path");
        assert_eq!(second["version"]["text"], want);
        assert_eq!(second["requester"], s(&prog).as_str());
        assert!(
            remedies(f).contains(&format!("the first one loaded ({})", s(&pip.join(soname))))
                && remedies(f).contains(&format!("loads {} by its path", s(&other))),
            "{f:#}"
        );
        if major == 9 {
            // The second dispatcher opened its own graph (it asks for
            // libcudnn_graph.so.9.14.0 first, which no loaded object is).
            let g = one(&doc, "CDT001", "files of libcudnn_graph (cuDNN)");
            assert_eq!(
                text(&g["title"]),
                "2 different files of libcudnn_graph (cuDNN) in one process: 9.19.0, 9.14.0"
            );
            ev(g, "loaded", &system.join("libcudnn_graph.so.9.14.0"));
        } else {
            // The v8 dispatcher opens ops_infer by soname: the one loaded
            // already serves both, so only the dispatcher is doubled, and
            // dispatchers of two versions over one ops_infer work (E5):
            // CDT002 says so as a warning.
            assert_eq!(with_code(&doc, "CDT001").len(), 1, "{}", show(&doc));
            let w = one(&doc, "CDT002", "cuDNN 8");
            assert_eq!(w["severity"], "warning", "{w:#}");
        }
        let more = if major == 9 {
            &["CDT001", "CDT002"][..]
        } else {
            &["CDT001"][..]
        };
        assert_errors(&doc, more);

        // The same file again through a symlink is one object: no finding.
        let alias = case.p("alias");
        fs::create_dir_all(&alias).unwrap();
        std::os::unix::fs::symlink(pip.join(soname), alias.join(soname)).unwrap();
        let (_, doc) = case.run("same", &env, &prog, &[s(&alias.join(soname))], 0);
        assert!(all(&doc).is_empty(), "{}", show(&doc));
    }
}

// ---------------------------------------------------------------------------
// 2. CDT002 + CDT008: cuDNN 9 sub-libraries from two installs

#[test]
fn cudnn9_sublibraries_from_two_installs() {
    if !calls_recorded_here("cudnn9_sublibraries_from_two_installs") {
        return;
    }
    let case = Case::new("two-installs-v9");
    let (pip, graph, prog, env) = two_installs_v9(&case);
    let (t, doc) = case.run("t", &env, &prog, &[], 0);
    assert_eq!(
        t.out.out(),
        "cudnnGetVersion=91400\ncudnnOpsVersionCheck=1002\n",
        "the mix-up must happen"
    );
    assert_errors(&doc, &["CDT002", "CDT008"]);

    let f = one(&doc, "CDT002", "cuDNN 9");
    assert_eq!(
        text(&f["title"]),
        "cuDNN 9 sub-libraries do not match libcudnn_graph 9.14.0: libcudnn_ops"
    );
    let r = ev(
        f,
        "reference (libcudnn_graph)",
        &graph.join("libcudnn_graph.so.9"),
    );
    assert_eq!(r["version"]["text"], "9.14.0");
    assert_eq!(r["reason"], "LD_LIBRARY_PATH");
    assert_eq!(r["search_dir"], s(&graph).as_str());
    let ops = ev(f, "loaded", &pip.join("libcudnn_ops.so.9"));
    assert_eq!(ops["reason"], "RUNPATH");
    let check = ev(f, "version check", &pip.join("libcudnn_ops.so.9"));
    assert!(
        text(&check["detail"]).contains("returned 1002 (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)"),
        "{check:#}"
    );
    let call = ev(f, "call", &pip.join("libcudnn.so.9"));
    assert_eq!(
        text(&call["detail"]),
        "cudnnOpsVersionCheck() returned 1002 (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)"
    );
    assert_eq!(
        text(&f["fix"]),
        format!(
            "remove {} from LD_LIBRARY_PATH, so that every cuDNN 9 file comes from one install, {}",
            s(&graph),
            s(&pip)
        ),
        "{f:#}"
    );

    let f = one(
        &doc,
        "CDT008",
        "libcudnn_graph.so.9 9.14.0 came from LD_LIBRARY_PATH",
    );
    assert_eq!(f["severity"], "error");
    // A short title; the directories, the other copy and its package are
    // in the evidence.
    assert_eq!(
        text(&f["title"]),
        "libcudnn_graph.so.9 9.14.0 came from LD_LIBRARY_PATH although the RUNPATH of libcudnn.so.9 holds 9.19.0"
    );
    assert_eq!(
        ev(f, "loaded", &graph.join("libcudnn_graph.so.9"))["search_dir"],
        s(&graph).as_str()
    );
    let other = ev(f, "on disk", &pip.join("libcudnn_graph.so.9"));
    assert_eq!(other["version"]["text"], "9.19.0, pip nvidia_cudnn_cu13");
    assert_eq!(
        (&other["version"]["major"], &other["version"]["minor"]),
        (&Value::from(9), &Value::from(19))
    );
    assert_eq!(
        text(&other["detail"]),
        format!("RUNPATH entry $ORIGIN of {}", s(&pip.join("libcudnn.so.9")))
    );
    assert!(
        remedies(f).contains(&format!("cudnn-trace --pin {}", s(&pip))),
        "{f:#}"
    );
}

// ---------------------------------------------------------------------------
// 3. CDT002: cuDNN 8 sub-libraries from two installs (status 14)

#[test]
fn cudnn8_sublibraries_from_two_installs() {
    if !calls_recorded_here("cudnn8_sublibraries_from_two_installs") {
        return;
    }
    let case = Case::new("two-installs-v8");
    let pip = case.pip_cudnn("8.9.7", "12.2", &[]);
    let toolkit = case.stack(
        "usr/local/cuda-12.2/lib64",
        &["cudnn8", "--version", "8.9.2", "--versioned-files"],
    );
    // A stray ops_infer of another build in a directory on LD_LIBRARY_PATH.
    let stray = case.p("opt/stray/lib");
    fs::create_dir_all(&stray).unwrap();
    std::os::unix::fs::symlink(
        toolkit.join("libcudnn_ops_infer.so.8.9.2"),
        stray.join("libcudnn_ops_infer.so.8"),
    )
    .unwrap();
    let drv = case.driver("535.104.05", "12.2", &[]);
    let prog = case.compile(
        "03_cudnn8_two_installs/main.c",
        PY,
        &link_rpath(&pip, "libcudnn.so.8"),
    );
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&stray, &drv]))];
    let (t, doc) = case.run("t", &env, &prog, &[], 0);
    assert_eq!(
        t.out.out(),
        "cudnnGetVersion=8902\ncudnnCnnInferVersionCheck=14\n"
    );
    assert_errors(&doc, &["CDT002", "CDT008"]);
    let f = one(&doc, "CDT002", "cuDNN 8");
    assert_eq!(
        text(&f["title"]),
        "cuDNN 8 sub-libraries do not match libcudnn_ops_infer 8.9.2: libcudnn_cnn_infer"
    );
    let r = ev(
        f,
        "reference (libcudnn_ops_infer)",
        &stray.join("libcudnn_ops_infer.so.8"),
    );
    assert_eq!(r["version"]["text"], "8.9.2");
    assert_eq!(r["reason"], "LD_LIBRARY_PATH");
    let check = ev(f, "version check", &pip.join("libcudnn_cnn_infer.so.8"));
    assert!(
        text(&check["detail"]).contains("returned 14 (CUDNN_STATUS_VERSION_MISMATCH)"),
        "{check:#}"
    );
    let call = ev(f, "call", &pip.join("libcudnn.so.8"));
    assert_eq!(
        text(&call["detail"]),
        "cudnnCnnInferVersionCheck() returned 14 (CUDNN_STATUS_VERSION_MISMATCH)"
    );
    assert!(
        remedies(f).contains(&format!("remove {} from LD_LIBRARY_PATH", s(&stray))),
        "{f:#}"
    );
    let f = one(&doc, "CDT008", "libcudnn_ops_infer.so.8");
    ev(f, "on disk", &pip.join("libcudnn_ops_infer.so.8"));
    // The other copy's version (asked, with its pip package) in the
    // title, its path and package in the evidence.
    assert!(text(&f["title"]).ends_with("holds 8.9.7"), "{f:#}");
    assert_eq!(
        ev(f, "on disk", &pip.join("libcudnn_ops_infer.so.8"))["version"]["text"],
        "8.9.7, pip nvidia_cudnn_cu12"
    );
}

// ---------------------------------------------------------------------------
// 4. CDT003: cuDNN built for another CUDA major than the runtime

#[test]
fn cudnn_built_for_another_cuda_major_than_the_runtime() {
    if !calls_recorded_here("cudnn_built_for_another_cuda_major_than_the_runtime") {
        return;
    }
    // (cuDNN, its CUDA build, runtime dir, runtime version, runtime soname, driver, driver CUDA)
    let cases = [
        (
            "9.19.0",
            "12.9",
            "nvidia/cu13/lib",
            "13.0",
            "libcudart.so.13",
            "580.159.04",
            "13.0",
        ),
        (
            "8.9.7",
            "11.8",
            "nvidia/cuda_runtime/lib",
            "12.2",
            "libcudart.so.12",
            "535.104.05",
            "12.2",
        ),
    ];
    for (cudnn, build, rt_dir, rt_ver, rt_so, driver, driver_cuda) in cases {
        let major = &cudnn[..1];
        let case = Case::new(&format!("build-vs-runtime-v{major}"));
        let pip = case.pip_cudnn(cudnn, build, &[]);
        let rt = case.stack(
            &format!("venv/lib/python3.12/site-packages/{rt_dir}"),
            &["cudart", "--version", rt_ver],
        );
        let drv = case.driver(driver, driver_cuda, &[]);
        let mut flags = link_rpath(&rt, rt_so);
        flags.extend(link_rpath(&pip, &format!("libcudnn.so.{major}")));
        let prog = case.compile("04_cudnn_build_vs_cudart/main.c", PY, &flags);
        let env = vec![("LD_LIBRARY_PATH", path_list(&[&drv]))];
        let (_, doc) = case.run("t", &env, &prog, &[], 0);
        assert_errors(&doc, &[]);
        let rt_major = &rt_ver[..2];
        let f = one(&doc, "CDT003", "cuDNN built for CUDA");
        assert_eq!(f["severity"], "warning");
        assert_eq!(
            text(&f["title"]),
            format!(
                "cuDNN built for CUDA {build}, but the process loaded the CUDA {rt_major} runtime"
            )
        );
        let core = if major == "9" {
            "libcudnn_graph.so.9"
        } else {
            "libcudnn_ops_infer.so.8"
        };
        let v = ev(f, "version", &pip.join(core));
        assert_eq!(v["version"]["text"], build);
        assert!(
            text(&v["detail"]).starts_with("cudnnGetCudartVersion() = "),
            "{v:#}"
        );
        let r = ev(f, "loaded", &rt.join(rt_so));
        assert_eq!(r["version"]["text"], rt_ver);
        assert_eq!(r["reason"], "RPATH");
        assert!(
            remedies(f).contains(&format!("nvidia-cudnn-cu{rt_major}")),
            "{f:#}"
        );
        assert_eq!(all(&doc).len(), 1, "{}", show(&doc));
    }
}

// ---------------------------------------------------------------------------
// 5. CDT004: the driver is too old for the runtime

#[test]
fn driver_too_old_for_the_runtime() {
    if !calls_recorded_here("driver_too_old_for_the_runtime") {
        return;
    }
    let case = Case::new("driver-too-old");
    let rt = pip_cudart13(&case);
    let drv = case.driver("535.104.05", "12.2", &[]);
    let prog = case.compile(
        "05_driver_too_old/main.c",
        PY,
        &link_rpath(&rt, "libcudart.so.13"),
    );
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&drv]))];
    let (t, doc) = case.run("t", &env, &prog, &[], 1);
    let msg = "CUDA driver version is insufficient for CUDA runtime version";
    assert!(kept_stderr(&t).contains(msg), "{}", t.out.show());
    assert_errors(&doc, &["CDT004"]);
    let f = one(&doc, "CDT004", "driver");
    assert_eq!(
        text(&f["title"]),
        "the driver supports CUDA 12.2, the CUDA 13.0 runtime needs CUDA 13.x"
    );
    let r = ev(f, "loaded", &rt.join("libcudart.so.13"));
    assert_eq!(r["version"]["text"], "13.0");
    let libcuda = drv.join("libcuda.so.1");
    let by_query = evidence(f, "driver")
        .into_iter()
        .find(|e| e["version"]["text"] == "12.2")
        .unwrap_or_else(|| panic!("no driver 12.2 evidence: {f:#}"));
    assert_eq!(by_query["path"], s(&libcuda).as_str());
    let by_name = evidence(f, "driver")
        .into_iter()
        .find(|e| e["detail"] == "from the file name")
        .unwrap_or_else(|| panic!("no driver file evidence: {f:#}"));
    assert_eq!(by_name["version"]["text"], "535.104.05");
    let m = evidence(f, "message");
    assert!(
        m.iter().any(|e| text(&e["detail"]).contains(msg)
            && text(&e["detail"]).contains("35 (cudaErrorInsufficientDriver)")),
        "{f:#}"
    );
    assert!(
        remedies(f).starts_with("upgrade the NVIDIA driver to 580 or newer"),
        "{f:#}"
    );
}

// ---------------------------------------------------------------------------
// 6. CDT005: forward-compatibility libcuda, 804 and 803

#[test]
fn forward_compatibility_libcuda_804_803_and_working() {
    if !calls_recorded_here("forward_compatibility_libcuda_804_803_and_working") {
        return;
    }
    for init in ["804", "803", "0"] {
        let case = Case::new(&format!("forward-compat-{init}"));
        let rt = pip_cudart13(&case);
        let compat = case.stack(
            "usr/local/cuda-13.0/compat",
            &[
                "cuda",
                "--driver",
                "580.95.05",
                "--cuda",
                "13.0",
                "--init-result",
                init,
            ],
        );
        // The host's own driver, after the compat directory.
        let drv = case.driver("570.172.08", "12.8", &[]);
        let prog = case.compile(
            "06_forward_compat/main.c",
            PY,
            &link_rpath(&rt, "libcudart.so.13"),
        );
        let env = vec![("LD_LIBRARY_PATH", path_list(&[&compat, &drv]))];
        let t = case.trace("t", &[], &env, &prog, &[]);
        let doc = report(&t);
        let f = one(&doc, "CDT005", "libcuda");
        let l = ev(f, "loaded", &compat.join("libcuda.so.1"));
        assert_eq!(l["reason"], "LD_LIBRARY_PATH");
        assert_eq!(l["search_dir"], s(&compat).as_str());
        let leave = format!("remove {} from LD_LIBRARY_PATH", s(&compat));
        match init {
            "804" => {
                assert_exit(&t, 1);
                assert_eq!(f["severity"], "error");
                assert_eq!(
                    text(&f["title"]),
                    format!("forward compatibility on a GPU that does not support it (804): libcuda 580.95.05 from {}", s(&compat))
                );
                assert!(detail_has(f, "cuInit() returned 804 (cudaErrorCompatNotSupportedOnDevice / CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)"), "{f:#}");
                assert!(
                    detail_has(f, "forward compatibility was attempted on non supported HW"),
                    "{f:#}"
                );
                assert!(remedies(f).contains(&leave), "{f:#}");
                // cuInit's 804 belongs to CDT005, not to CDT007.
                assert_errors(&doc, &["CDT005"]);
            }
            "803" => {
                assert_exit(&t, 1);
                assert_eq!(f["severity"], "error");
                assert!(
                    text(&f["title"]).starts_with(
                        "the forward-compatibility libcuda 580.95.05 does not match the kernel module"
                    ) && text(&f["title"]).ends_with("(803)"),
                    "{f:#}"
                );
                assert!(detail_has(f, "cuInit() returned 803 (cudaErrorSystemDriverMismatch / CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)"), "{f:#}");
                assert!(remedies(f).contains(&leave), "{f:#}");
                assert_errors(&doc, &["CDT005"]);
            }
            _ => {
                assert_exit(&t, 0);
                // Working: worth knowing (a warning when this host's kernel
                // module is newer than the compat package), never an error.
                assert_ne!(f["severity"], "error", "{f:#}");
                assert!(
                    text(&f["title"]).contains("forward-compatibility libcuda 580.95.05"),
                    "{f:#}"
                );
                assert_errors(&doc, &[]);
                assert_eq!(all(&doc).len(), 1, "{}", show(&doc));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// 7. CDT006 (+ CDT010): "Unable to load any of {libcudnn_graph.so.9.1.0, …}"

#[test]
fn dispatcher_cannot_load_its_core_library_v9_and_v8() {
    for major in [9, 8] {
        let probe = if major == 9 {
            "libcudnn_graph.so"
        } else {
            "libcudnn_ops_infer.so.8"
        };
        if machine_provides(probe) {
            eprintln!("skipped (cuDNN {major}): this machine's loader finds a {probe}* by itself");
            continue;
        }
        let case = Case::new(&format!("missing-core-v{major}"));
        let (pip, soname, core) = if major == 9 {
            let pip = case.pip_cudnn("9.1.0", "12.2", &[]);
            (pip, "libcudnn.so.9", "libcudnn_graph.so.9")
        } else {
            let pip = case.pip_cudnn("8.9.7", "12.2", &[]);
            (pip, "libcudnn.so.8", "libcudnn_ops_infer.so.8")
        };
        let drv = case.driver("580.159.04", "13.0", &[]);
        let prog = case.compile(
            "07_missing_sublibrary/main.c",
            PY,
            &link_rpath(&pip, soname),
        );
        // The core library is gone from the wheel's directory (kept where
        // nothing looks, to be put back elsewhere below).
        let held = case.p("held");
        fs::create_dir_all(&held).unwrap();
        fs::rename(pip.join(core), held.join(core)).unwrap();
        let env = vec![("LD_LIBRARY_PATH", path_list(&[&drv]))];
        let t = case.trace("t", &[], &env, &prog, &[]);
        assert_eq!(
            t.out.signal(),
            Some(6),
            "SIGABRT, as cuDNN aborts: {}",
            t.out.show()
        );
        let (message, names) = if major == 9 {
            (
                "Unable to load any of {libcudnn_graph.so.9.1.0, libcudnn_graph.so.9.1, libcudnn_graph.so.9, libcudnn_graph.so}",
                vec![
                    "libcudnn_graph.so.9.1.0",
                    "libcudnn_graph.so.9.1",
                    "libcudnn_graph.so.9",
                    "libcudnn_graph.so",
                ],
            )
        } else {
            (
                "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file: No such file or directory",
                vec!["libcudnn_ops_infer.so.8"],
            )
        };
        assert!(kept_stderr(&t).contains(message), "{}", t.out.show());

        let check = |doc: &Value| {
            assert_errors(doc, &["CDT006", "CDT010"]);
            let f = one(doc, "CDT006", names[0]);
            let also = if names.len() > 1 {
                format!("; also as {}", names[1..].join(", "))
            } else {
                String::new()
            };
            assert_eq!(
                text(&f["title"]),
                format!(
                    "{} could not be loaded (dlopen by {soname}{also})",
                    names[0]
                )
            );
            let failed = evidence(f, "failed");
            assert_eq!(failed.len(), 1, "{f:#}");
            assert_eq!(failed[0]["requester"], s(&pip.join(soname)).as_str());
            if major == 8 {
                assert!(
                    text(&failed[0]["detail"])
                        .contains("libcudnn_ops_infer.so.8: cannot open shared object file"),
                    "{f:#}"
                );
            }
            // Every place tried: each name in the dispatcher's RUNPATH
            // directory and on LD_LIBRARY_PATH.
            let tried = evidence(f, "tried");
            for n in &names {
                for (dir, reason) in [(&pip, "RUNPATH"), (&drv, "LD_LIBRARY_PATH")] {
                    let p = s(&dir.join(n));
                    assert!(
                        tried.iter().any(|e| e["path"] == p.as_str()
                            && e["reason"] == reason
                            && e["detail"]
                                .as_str()
                                .is_some_and(|d| d.starts_with("missing"))),
                        "{p} ({reason}) not among the places tried: {f:#}"
                    );
                }
            }
            // cuDNN's own message, explained with the same failures.
            let m = one(doc, "CDT010", "could not be loaded");
            assert!(
                evidence(m, "message")
                    .iter()
                    .any(|e| text(&e["detail"]).contains(message)),
                "{m:#}"
            );
            assert!(!evidence(m, "failed").is_empty(), "{m:#}");
            f.clone()
        };

        // Nothing on this machine (unless it has a cuDNN of its own).
        let doc = report(&t);
        let f = check(&doc);
        let here = s(&case.dir);
        let on_disk = evidence(&f, "on disk");
        assert!(
            on_disk.iter().all(|e| !text(&e["path"]).starts_with(&here)),
            "{f:#}"
        );
        if on_disk.is_empty() {
            assert!(
                remedies(&f).starts_with("no copy was found on this machine: install cuDNN"),
                "{f:#}"
            );
        } else {
            eprintln!(
                "note: this machine has a {core} of its own; the no-copy remedy is not checked"
            );
        }

        // A copy in site-packages/torch/lib (where large wheels bundle
        // cuDNN), which the dispatcher does not search: named on disk.
        let torch = case.site().join("torch/lib");
        fs::create_dir_all(&torch).unwrap();
        fs::rename(held.join(core), torch.join(core)).unwrap();
        let doc = report(&t);
        let f = check(&doc);
        let c = ev(&f, "on disk", &torch.join(core));
        assert_eq!(c["detail"], "found via pip");
        // Its version as the copy says it when asked (its name has the
        // major only), and the dispatcher's RUNPATH as written.
        let version = if major == 9 { "9.1.0" } else { "8.9.7" };
        assert_eq!(c["version"]["text"], version, "{c:#}");
        assert_eq!(
            remedies(&f),
            format!(
                "a copy exists at {} ({version}): make it findable for {soname}, e.g. LD_LIBRARY_PATH={}:$LD_LIBRARY_PATH set before the program starts (glibc reads it once at start-up: os.environ or setenv inside the program changes nothing for the loader), or load it first by its absolute path (ctypes.CDLL), or install the library where {soname} looks (its RUNPATH entry $ORIGIN)",
                s(&torch.join(core)),
                s(&torch)
            )
        );
        let m = one(&doc, "CDT010", "could not be loaded");
        ev(m, "on disk", &torch.join(core));
    }
}

// ---------------------------------------------------------------------------
// 8. CDT006: cuDNN's dlopen of NVRTC fails

#[test]
fn cudnn_cannot_load_nvrtc() {
    if machine_provides("libnvrtc.so") {
        eprintln!("skipped: this machine's loader finds a libnvrtc.so* by itself");
        return;
    }
    let case = Case::new("nvrtc");
    let pip = case.pip_cudnn("9.19.0", "12.9", &["--nvrtc"]);
    let drv = case.driver("580.159.04", "13.0", &[]);
    // nvidia-cuda-nvrtc-cu12's directory, which cuDNN's RUNPATH does not name.
    let nvrtc = case.site().join("nvidia/cuda_nvrtc/lib");
    fs::create_dir_all(&nvrtc).unwrap();
    let mut cmd = cc();
    cmd.args([
        "-shared",
        "-fPIC",
        "-xc",
        "/dev/null",
        "-Wl,-soname,libnvrtc.so.12",
        "-o",
    ])
    .arg(nvrtc.join("libnvrtc.so.12"));
    run_cc(&mut cmd, "libnvrtc.so.12", false);
    let prog = case.compile(
        "08_nvrtc_missing/main.c",
        PY,
        &link_rpath(&pip, "libcudnn.so.9"),
    );
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&drv]))];
    let (_, doc) = case.run("t", &env, &prog, &[], 0);
    assert_errors(&doc, &["CDT006"]);
    let f = one(&doc, "CDT006", "libnvrtc");
    assert_eq!(
        text(&f["title"]),
        "libnvrtc.so.12 could not be loaded (dlopen by libcudnn_graph.so.9; also as libnvrtc.so)"
    );
    let failed = evidence(f, "failed");
    assert_eq!(
        failed[0]["requester"],
        s(&pip.join("libcudnn_graph.so.9")).as_str()
    );
    assert!(
        text(&failed[0]["detail"])
            .contains("libnvrtc.so: cannot open shared object file: No such file or directory"),
        "{f:#}"
    );
    let tried = evidence(f, "tried");
    for n in ["libnvrtc.so.12", "libnvrtc.so"] {
        let p = s(&pip.join(n));
        assert!(
            tried
                .iter()
                .any(|e| e["path"] == p.as_str() && e["reason"] == "RUNPATH"),
            "{p} not tried: {f:#}"
        );
    }
    let c = ev(f, "on disk", &nvrtc.join("libnvrtc.so.12"));
    assert_eq!(c["detail"], "found via pip");
    assert!(
        remedies(f).starts_with(&format!(
            "a copy exists at {}",
            s(&nvrtc.join("libnvrtc.so.12"))
        )) && remedies(f).contains(&format!("LD_LIBRARY_PATH={}:", s(&nvrtc))),
        "{f:#}"
    );

    // With that directory on LD_LIBRARY_PATH, NVRTC loads: nothing to say.
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&nvrtc, &drv]))];
    let (_, doc) = case.run("fixed", &env, &prog, &[], 0);
    assert!(all(&doc).is_empty(), "{}", show(&doc));
}

// ---------------------------------------------------------------------------
// 9. CDT001 (warning): two CUDA runtime majors

/// Situation 09: a cudart 13 program that loads a CUDA 12 plugin with its
/// own cudart 12. Returns (cudart 13 dir, cudart 12 dir, plugin, program, env).
fn two_runtimes(
    case: &Case,
) -> (
    PathBuf,
    PathBuf,
    PathBuf,
    PathBuf,
    Vec<(&'static str, String)>,
) {
    let rt13 = pip_cudart13(case);
    let rt12 = case.stack(
        "venv/lib/python3.12/site-packages/nvidia/cuda_runtime/lib",
        &["cudart", "--version", "12.8"],
    );
    let drv = case.driver("580.159.04", "13.0", &[]);
    let mut flags = vec![
        "-shared".to_string(),
        "-fPIC".to_string(),
        format!("-L{}", s(&rt12)),
        "-l:libcudart.so.12".to_string(),
    ];
    flags.extend(runpath(&rt12));
    let plugin = case.compile(
        "09_two_cudart_majors/plugin.c",
        "venv/lib/python3.12/site-packages/plugin_cu12/libplugin_cu12.so",
        &flags,
    );
    let prog = case.compile(
        "09_two_cudart_majors/main.c",
        PY,
        &link_rpath(&rt13, "libcudart.so.13"),
    );
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&drv]))];
    (rt13, rt12, plugin, prog, env)
}

#[test]
fn two_cuda_runtime_majors_in_one_process() {
    if !calls_recorded_here("two_cuda_runtime_majors_in_one_process") {
        return;
    }
    let case = Case::new("two-cudart");
    let (rt13, rt12, plugin, prog, env) = two_runtimes(&case);
    let (t, doc) = case.run("t", &env, &prog, &[s(&plugin)], 0);
    assert_eq!(
        t.out.out(),
        "framework runtime=13000\nplugin runtime=12080\n"
    );
    assert_errors(&doc, &[]);
    assert_eq!(all(&doc).len(), 1, "{}", show(&doc));
    let f = one(&doc, "CDT001", "libcudart");
    assert_eq!(f["severity"], "warning");
    assert_eq!(
        text(&f["title"]),
        "2 files of libcudart (CUDA runtime) of different majors (12, 13) in one process"
    );
    let a = ev(f, "loaded", &rt13.join("libcudart.so.13"));
    assert_eq!(
        (a["version"]["text"].clone(), a["reason"].clone()),
        ("13.0".into(), "RPATH".into())
    );
    let b = ev(f, "loaded", &rt12.join("libcudart.so.12"));
    assert_eq!(b["version"]["text"], "12.8");
    assert_eq!(b["reason"], "RUNPATH");
    assert_eq!(b["requester"], s(&plugin).as_str());
    // Answered by purpose (issue 9, class 7): the plugin is a CUDA 12
    // build in a CUDA 13 process and needs a CUDA 13 build; hiding the
    // directory its RUNPATH names would only make it fail to load.
    let plugin_file = plugin.file_name().unwrap().to_string_lossy().to_string();
    let r = remedies(f);
    assert!(
        r.contains(&format!("{plugin_file} is a CUDA 12 build"))
            && r.contains("it needs a CUDA 13 build")
            && !r.contains(&format!("remove {}", s(&rt12))),
        "{f:#}"
    );
}

// ---------------------------------------------------------------------------
// 10. CDT007: cudnnCreate fails with NOT_INITIALIZED (v9 1001, v8 1)

#[test]
fn cudnn_create_not_initialized_v9_and_v8() {
    if !calls_recorded_here("cudnn_create_not_initialized_v9_and_v8") {
        return;
    }
    for major in [9, 8] {
        let case = Case::new(&format!("create-fails-v{major}"));
        let pip = if major == 9 {
            case.pip_cudnn("9.19.0", "13.0", &[])
        } else {
            case.pip_cudnn("8.9.7", "12.2", &[])
        };
        let soname = format!("libcudnn.so.{major}");
        let drv = case.driver("580.159.04", "13.0", &["--init-result", "100"]);
        let prog = case.compile(
            "10_cudnn_create_fails/main.c",
            PY,
            &link_rpath(&pip, &soname),
        );
        let env = vec![
            ("LD_LIBRARY_PATH", path_list(&[&drv])),
            ("CUDA_VISIBLE_DEVICES", String::new()),
        ];
        let (t, doc) = case.run("t", &env, &prog, &[], 1);
        let status = if major == 9 { 1001 } else { 1 };
        assert_eq!(
            t.out.out(),
            format!("cudnnCreate={status} CUDNN_STATUS_NOT_INITIALIZED\n")
        );
        assert_errors(&doc, &["CDT007"]);
        assert_eq!(with_code(&doc, "CDT007").len(), 2, "{}", show(&doc));

        let f = one(&doc, "CDT007", "cudnnCreate failed");
        assert_eq!(
            text(&f["title"]),
            format!("cudnnCreate failed: {status} CUDNN_STATUS_NOT_INITIALIZED (cuDNN {major} numbering)")
        );
        let c = ev(f, "call", &pip.join(&soname));
        assert_eq!(
            text(&c["detail"]),
            format!("cudnnCreate() returned {status}")
        );
        ev(f, "loaded", &pip.join(&soname));
        assert!(detail_has(f, "CUDA_VISIBLE_DEVICES=\"\""), "{f:#}");
        assert!(!evidence(f, "likely cause").is_empty(), "{f:#}");
        assert_eq!(
            remedies(f),
            "CUDA_VISIBLE_DEVICES hides every GPU: unset it or name a GPU; cuInit itself failed (100 CUDA_ERROR_NO_DEVICE): fix that first"
        );

        // cuDNN's own cuInit (through dlsym) is reported too.
        let f = one(&doc, "CDT007", "cuInit failed");
        assert_eq!(text(&f["title"]), "cuInit failed: 100 CUDA_ERROR_NO_DEVICE");
        let c = ev(f, "call", &drv.join("libcuda.so.1"));
        assert_eq!(c["detail"], "cuInit() returned 100");
    }
}

// ---------------------------------------------------------------------------
// 11. CDT009: a GPU older than the loaded cuDNN supports

#[test]
fn gpu_older_than_cudnn_supports() {
    if !calls_recorded_here("gpu_older_than_cudnn_supports") {
        return;
    }
    // (cuDNN, CUDA build, runtime dir, runtime, soname, driver, driver CUDA, GPU, minimum SM)
    let cases = [
        (
            "9.19.0",
            "13.0",
            "nvidia/cu13/lib",
            "13.0",
            "libcudart.so.13",
            "580.159.04",
            "13.0",
            "7.0",
            "7.5",
        ),
        (
            "8.9.7",
            "12.2",
            "nvidia/cuda_runtime/lib",
            "12.2",
            "libcudart.so.12",
            "535.104.05",
            "12.2",
            "3.7",
            "5.0",
        ),
    ];
    for (cudnn, build, rt_dir, rt_ver, rt_so, driver, driver_cuda, sm, min) in cases {
        let major = &cudnn[..1];
        let case = Case::new(&format!("old-gpu-v{major}"));
        let pip = case.pip_cudnn(cudnn, build, &[]);
        let rt = case.stack(
            &format!("venv/lib/python3.12/site-packages/{rt_dir}"),
            &["cudart", "--version", rt_ver],
        );
        let drv = case.driver(driver, driver_cuda, &["--cc", sm]);
        let mut flags = link_rpath(&rt, rt_so);
        flags.extend(link_rpath(&pip, &format!("libcudnn.so.{major}")));
        let prog = case.compile("11_gpu_too_old/main.c", PY, &flags);
        let env = vec![("LD_LIBRARY_PATH", path_list(&[&drv]))];
        let t = case.trace("t", &[], &env, &prog, &[]);
        let doc = report(&t);
        let f = one(&doc, "CDT009", "older than");
        assert_eq!(f["severity"], "error");
        let build_major = &build[..2];
        assert_eq!(
            text(&f["title"]),
            format!("the GPU (SM {sm}) is older than cuDNN {cudnn} for CUDA {build_major} supports (SM {min}+)")
        );
        let core = if major == "9" {
            "libcudnn_graph.so.9"
        } else {
            "libcudnn_ops_infer.so.8"
        };
        assert_eq!(ev(f, "loaded", &pip.join(core))["version"]["text"], cudnn);
        let g = evidence(f, "gpu");
        assert_eq!(g.len(), 1, "{f:#}");
        assert_eq!(g[0]["version"]["text"], format!("SM {sm}").as_str());
        assert!(
            text(&g[0]["detail"]).contains("cudaDeviceGetAttribute()"),
            "{f:#}"
        );
        assert!(
            detail_has(f, &format!("supports SM {min} and newer")),
            "{f:#}"
        );
        if major == "9" {
            // PyTorch refuses it too, and says so.
            assert_exit(&t, 1);
            let m = one(&doc, "CDT010", "refuses this GPU");
            assert_eq!(text(&m["title"]), "PyTorch: cuDNN 9.19.0 refuses this GPU");
            assert_errors(&doc, &["CDT009", "CDT010"]);
        } else {
            assert_exit(&t, 0);
            assert_errors(&doc, &["CDT009"]);
        }
    }
}

// ---------------------------------------------------------------------------
// 12. CDT010: the frameworks' own messages, explained from the trace

/// A venv with the pip cuDNN (`SITE/nvidia/cudnn/lib` + dist-info), a
/// system cuDNN of another version in `usr/lib/x86_64-linux-gnu` (Debian
/// layout) and the driver; LD_LIBRARY_PATH names the system directory first.
struct Mismatch {
    pip: PathBuf,
    system: PathBuf,
    env: Vec<(&'static str, String)>,
    driver: PathBuf,
}

fn mismatch(case: &Case, pip_version: &str, pip_cuda: &str, sys_version: &str) -> Mismatch {
    let pip = case.pip_cudnn(pip_version, pip_cuda, &[]);
    let kind = if sys_version.starts_with("8.") {
        "cudnn8"
    } else {
        "cudnn9"
    };
    let system = case.stack(
        "usr/lib/x86_64-linux-gnu",
        &[kind, "--version", sys_version, "--versioned-files"],
    );
    let driver = case.driver("580.159.04", "13.0", &[]);
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&system, &driver]))];
    Mismatch {
        pip,
        system,
        env,
        driver,
    }
}

/// What a framework-message finding must say (`check_cudnn_version_message`).
struct Expected<'a> {
    framework: &'a str,
    runtime: &'a str,
    build: &'a str,
    /// A part of the quoted message.
    message: &'a str,
    /// The loaded file that has the run-time version.
    runtime_file: PathBuf,
    /// The copy on disk that fits the build, and the version it shows.
    good_copy: PathBuf,
    good_version: &'a str,
}

/// What every framework-message finding must show: the quoted message, the
/// framework's rule re-checked, the loaded file of the run-time version (and
/// why it was chosen: `m.system` on LD_LIBRARY_PATH), and where a copy that
/// fits the build is.
fn check_cudnn_version_message(doc: &Value, m: &Mismatch, want: Expected<'_>) {
    let Expected {
        framework,
        runtime,
        build,
        message: message_part,
        runtime_file,
        good_copy,
        good_version,
    } = want;
    let system = &m.system;
    let f = one(doc, "CDT010", &format!("{framework} was built"));
    assert_eq!(f["severity"], "error");
    assert_eq!(
        text(&f["title"]),
        format!("{framework} was built with cuDNN {build} but loaded {runtime} at run time")
    );
    assert!(
        evidence(f, "message")
            .iter()
            .any(|e| text(&e["detail"]).contains(message_part)),
        "{f:#}"
    );
    assert!(
        detail_has(
            f,
            &format!("build {build}, run time {runtime}: incompatible")
        ),
        "{f:#}"
    );
    let r = ev(f, "runtime version from", &runtime_file);
    assert_eq!(r["version"]["text"], runtime);
    assert_eq!(r["reason"], "LD_LIBRARY_PATH");
    assert_eq!(r["search_dir"], s(system).as_str());
    assert!(
        detail_has(
            f,
            &format!(
                "a cuDNN that fits the build ({build}): {} [{good_version}]",
                s(&good_copy)
            )
        ),
        "{f:#}"
    );
    // The fix takes the directory out of LD_LIBRARY_PATH; how the files
    // came is evidence; a copy that fits is the first alternative.
    assert_eq!(
        text(&f["fix"]),
        format!("remove {} from LD_LIBRARY_PATH", s(system)),
        "{f:#}"
    );
    assert!(
        evidence(f, "fact").iter().any(|e| text(&e["detail"])
            .ends_with(&format!("came through LD_LIBRARY_PATH from {}", s(system)))),
        "{f:#}"
    );
    assert_eq!(
        text(&f["alternatives"][0]),
        format!(
            "put {} first on LD_LIBRARY_PATH (its cuDNN {good_version} fits the build)",
            s(good_copy.parent().unwrap())
        ),
        "{f:#}"
    );
}

#[test]
fn pytorch_message_explained() {
    if !calls_recorded_here("pytorch_message_explained") {
        return;
    }
    let case = Case::new("msg-pytorch");
    let m = mismatch(&case, "9.19.0", "13.0", "9.14.0");
    let prog = case.compile(
        "12_pytorch_message/main.c",
        PY,
        &link_rpath(&m.pip, "libcudnn.so.9"),
    );
    let (t, doc) = case.run("t", &m.env, &prog, &[], 1);
    let msg = "PyTorch was compiled  against (9, 19, 0) but found runtime version (9, 14, 0)";
    assert!(kept_stderr(&t).contains(msg), "{}", t.out.show());
    assert_errors(&doc, &["CDT008", "CDT010"]);
    check_cudnn_version_message(
        &doc,
        &m,
        Expected {
            framework: "PyTorch",
            runtime: "9.14.0",
            build: "9.19.0",
            message: msg,
            runtime_file: m.system.join("libcudnn_graph.so.9"),
            good_copy: m.pip.join("libcudnn_graph.so.9"),
            good_version: "9.19.0",
        },
    );
    let f = one(&doc, "CDT010", "PyTorch was built");
    let c = ev(f, "call", &m.pip.join("libcudnn.so.9"));
    assert_eq!(
        c["version"]["text"], "9.14.0",
        "what cudnnGetProperty answered: {f:#}"
    );
    assert!(
        remedies(f).contains("PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK=1"),
        "{f:#}"
    );
    one(
        &doc,
        "CDT008",
        "libcudnn_graph.so.9 9.14.0 came from LD_LIBRARY_PATH",
    );

    // The same program without the system directory: no message, nothing.
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&m.driver]))];
    let (t, doc) = case.run("fixed", &env, &prog, &[], 0);
    assert_eq!(t.out.out(), "runtime cuDNN (9, 19, 0)\n");
    assert!(all(&doc).is_empty(), "{}", show(&doc));
}

#[test]
fn xla_message_explained() {
    let case = Case::new("msg-xla");
    let m = mismatch(&case, "9.19.0", "13.0", "9.14.0");
    let prog = case.compile("13_xla_message/main.c", PY, &runpath(&m.pip));
    let (t, doc) = case.run("t", &m.env, &prog, &[], 1);
    let msg = "Loaded runtime CuDNN library: 9.14.0 but source was compiled with: 9.19.0.";
    assert!(kept_stderr(&t).contains(msg), "{}", t.out.show());
    assert_errors(&doc, &["CDT008", "CDT010"]);
    check_cudnn_version_message(
        &doc,
        &m,
        Expected {
            framework: "TensorFlow/XLA",
            runtime: "9.14.0",
            build: "9.19.0",
            message: msg,
            runtime_file: m.system.join("libcudnn_graph.so.9.14.0"),
            good_copy: m.pip.join("libcudnn_graph.so.9"),
            good_version: "9.19.0",
        },
    );
    // The dispatcher itself came from LD_LIBRARY_PATH, although the
    // program's RUNPATH names the wheel's directory.
    let f = one(
        &doc,
        "CDT008",
        "libcudnn.so.9 9.14.0 came from LD_LIBRARY_PATH",
    );
    let l = ev(f, "loaded", &m.system.join("libcudnn.so.9"));
    assert_eq!(l["requester"], s(&prog).as_str());
    let o = ev(f, "on disk", &m.pip.join("libcudnn.so.9"));
    assert_eq!(
        text(&o["detail"]),
        format!("RUNPATH entry {} of {}", s(&m.pip), s(&prog))
    );
}

#[test]
fn tensorflow1_compatibility_version_message_explained() {
    let case = Case::new("msg-tf1");
    let m = mismatch(&case, "8.9.7", "12.2", "8.6.0");
    let prog = case.compile("14_tf1_message/main.c", PY, &runpath(&m.pip));
    let (t, doc) = case.run("t", &m.env, &prog, &[], 1);
    let msg = "Loaded runtime CuDNN library: 8600 (compatibility version 8600) but source was compiled with 8907 (compatibility version 8900)";
    assert!(kept_stderr(&t).contains(msg), "{}", t.out.show());
    assert_errors(&doc, &["CDT008", "CDT010"]);
    check_cudnn_version_message(
        &doc,
        &m,
        Expected {
            framework: "TensorFlow 1.x",
            runtime: "8.6.0",
            build: "8.9.7",
            message: msg,
            runtime_file: m.system.join("libcudnn_ops_infer.so.8"),
            good_copy: m.pip.join("libcudnn_ops_infer.so.8"),
            good_version: "8.9.7",
        },
    );
    let f = one(&doc, "CDT010", "TensorFlow 1.x was built");
    assert!(
        detail_has(f, "the \"compatibility version\" (v/100)*100"),
        "TF's old rule: {f:#}"
    );
}

#[test]
fn jax_message_explained() {
    if !calls_recorded_here("jax_message_explained") {
        return;
    }
    let case = Case::new("msg-jax");
    let m = mismatch(&case, "9.19.0", "13.0", "9.14.0");
    let prog = case.compile("15_jax_message/main.c", PY, &[]);
    let (t, doc) = case.run("t", &m.env, &prog, &[s(&m.pip.join("libcudnn.so.9"))], 1);
    let msg = "Outdated cuDNN installation found.\nVersion JAX was built against: 91900\nMinimum supported: 919\nInstalled version: 91400";
    assert!(kept_stderr(&t).contains(msg), "{}", t.out.show());
    assert_errors(&doc, &["CDT008", "CDT010"]);
    check_cudnn_version_message(
        &doc,
        &m,
        Expected {
            framework: "JAX",
            runtime: "9.14.0",
            build: "9.19.0",
            message: "Installed version: 91400",
            runtime_file: m.system.join("libcudnn_graph.so.9"),
            good_copy: m.pip.join("libcudnn_graph.so.9"),
            good_version: "9.19.0",
        },
    );
    let f = one(&doc, "CDT010", "JAX was built");
    assert!(
        remedies(f).contains("JAX_SKIP_CUDA_CONSTRAINTS_CHECK=1"),
        "{f:#}"
    );
    // JAX loads the wheel's dispatcher by its path; graph still came from
    // LD_LIBRARY_PATH, before the dispatcher's RUNPATH.
    let disp = ev(f, "call", &m.pip.join("libcudnn.so.9"));
    assert_eq!(disp["version"]["text"], "9.14.0");
    one(
        &doc,
        "CDT008",
        "libcudnn_graph.so.9 9.14.0 came from LD_LIBRARY_PATH",
    );
}

// ---------------------------------------------------------------------------
// 13. A clean pip-layout run: nothing to say

#[test]
fn clean_pip_run_has_no_findings() {
    if !calls_recorded_here("clean_pip_run_has_no_findings") {
        return;
    }
    let case = Case::new("clean");
    let (_pip, _rt, prog, env) = clean_pip(&case);
    let (t, doc) = case.run("t", &env, &prog, &[], 0);
    assert_eq!(
        t.out.out(),
        "runtime=13000 driver=13000 sm=9.0\ncudnnGetVersion=91900 cudart=13000\nchecks=0 0 0 0\ncudnnCreate=0\n"
    );
    // XLA's success line was captured, and must not read as a mismatch.
    assert!(
        kept_stderr(&t).contains("Loaded cuDNN version 91900"),
        "{}",
        t.out.show()
    );
    assert_eq!(total(&doc, "error"), 0, "{}", show(&doc));
    assert_eq!(total(&doc, "warning"), 0, "{}", show(&doc));
    assert!(all(&doc).is_empty(), "{}", show(&doc));
    // The trace did have what the rules look at: versions, the calls, the
    // compute capability (so CDT003/4/9 were evaluated, not skipped).
    let p = &arr(&doc["processes"])[0];
    assert!(
        arr(&p["libraries"]).len() >= 10,
        "cuDNN, cudart and libcuda all traced: {p:#}"
    );
    let raw = fs::read_to_string(&trace_files(&t.trace)[0]).unwrap();
    for want in [
        r#""fn":"cudaDeviceGetAttribute""#,
        r#""fn":"cudnnCreate""#,
        r#""cuda_build":13000"#,
        r#""driver_file":"580.159.04""#,
    ] {
        assert!(raw.contains(want), "{want} not in the trace");
    }
}

// ---------------------------------------------------------------------------
// 14. --fail-on: report's and the launcher's

#[test]
fn fail_on_gates_exit_3() {
    if !calls_recorded_here("fail_on_gates_exit_3") {
        return;
    }
    let broken = Case::new("gate-broken");
    let (_, _, prog_b, env_b) = two_installs_v9(&broken);
    let clean = Case::new("gate-clean");
    let (_, _, prog_c, env_c) = clean_pip(&clean);
    let warn = Case::new("gate-warning");
    let (_, _, plugin, prog_w, env_w) = two_runtimes(&warn);

    // report --fail-on.
    let tb = broken.trace("t", &[], &env_b, &prog_b, &[]);
    let tc = clean.trace("t", &[], &env_c, &prog_c, &[]);
    let tw = warn.trace("t", &[], &env_w, &prog_w, &[s(&plugin)]);
    for (t, level, want) in [
        (&tb, "error", 3),
        (&tb, "warning", 3),
        (&tc, "error", 0),
        (&tc, "warning", 0),
        (&tc, "info", 0),
        (&tw, "error", 0),
        (&tw, "warning", 3),
    ] {
        let (out, doc) = report_json(
            &broken.dir,
            &[
                OsString::from("--fail-on"),
                level.into(),
                t.trace.clone().into(),
            ],
        );
        assert_eq!(
            out.code(),
            Some(want),
            "report --fail-on {level} {}:\n{}",
            t.trace.display(),
            out.show()
        );
        assert!(doc.is_some(), "the document is printed either way");
    }
    let mut cmd = launcher(&broken.dir);
    cmd.args(["report", "--fail-on", "error"]).arg(&tb.trace);
    let text_run = run(cmd, None);
    assert_eq!(text_run.code(), Some(3), "{}", text_run.show());

    // The launcher's --fail-on: 3 only when the program itself exited 0.
    let t = broken.trace("gated", &["--fail-on", "error"], &env_b, &prog_b, &[]);
    assert_exit(&t, 3);
    let rec = launcher_record(&t.trace);
    assert_eq!(rec["exit_code"], 0, "{rec:#}");
    assert_eq!(rec["status"], 3, "{rec:#}");
    assert_eq!(rec["findings"]["tripped"], true, "{rec:#}");
    assert_eq!(rec["findings"]["fail_on"], "error", "{rec:#}");
    assert_eq!(rec["findings"]["error"], 2, "{rec:#}");

    let t = clean.trace("gated", &["--fail-on", "info"], &env_c, &prog_c, &[]);
    assert_exit(&t, 0);
    let rec = launcher_record(&t.trace);
    assert_eq!(rec["findings"]["tripped"], false, "{rec:#}");
    assert_eq!(rec["status"], 0, "{rec:#}");

    let t = warn.trace(
        "gated-error",
        &["--fail-on", "error"],
        &env_w,
        &prog_w,
        &[s(&plugin)],
    );
    assert_exit(&t, 0);
    let t = warn.trace(
        "gated-warning",
        &["--fail-on", "warning"],
        &env_w,
        &prog_w,
        &[s(&plugin)],
    );
    assert_exit(&t, 3);

    // A program that fails by itself keeps its own status.
    let old = Case::new("gate-own-failure");
    let rt = pip_cudart13(&old);
    let drv = old.driver("535.104.05", "12.2", &[]);
    let prog = old.compile(
        "05_driver_too_old/main.c",
        PY,
        &link_rpath(&rt, "libcudart.so.13"),
    );
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&drv]))];
    let t = old.trace("gated", &["--fail-on", "error"], &env, &prog, &[]);
    assert_exit(&t, 1);
    let rec = launcher_record(&t.trace);
    assert_eq!(rec["findings"]["tripped"], true, "{rec:#}");
    assert_eq!(rec["status"], 1, "{rec:#}");
}

// ---------------------------------------------------------------------------
// 15. The text report's findings section, and `explain`

#[test]
fn text_findings_section_and_explain() {
    if !calls_recorded_here("text_findings_section_and_explain") {
        return;
    }
    let case = Case::new("text");
    let (_, graph, prog, env) = two_installs_v9(&case);
    let (t, doc) = case.run("t", &env, &prog, &[], 0);
    let codes: Vec<String> = all(&doc)
        .iter()
        .map(|f| text(&f["code"]).to_string())
        .collect();
    assert_eq!(codes, ["CDT002", "CDT008"], "errors first, then by code");

    let mut cmd = launcher(&case.dir);
    cmd.arg("report").arg(&t.trace);
    let out = run(cmd, None);
    assert_eq!(out.code(), Some(0), "{}", out.show());
    let text_out = out.out();
    // The verdict opens the findings and ends the output: the counts, the
    // first finding's title and its fix.
    let verdict = format!(
        "cudnn-trace: 2 errors: {}: fix: {}",
        text(&all(&doc)[0]["title"]),
        text(&all(&doc)[0]["fix"])
    );
    let verdict = verdict.replace(&format!("{}/", s(&case.dir)), "…/");
    assert!(
        text_out.contains(&format!("\n\n{verdict}\n\nerror[")),
        "{verdict}\n{text_out}"
    );
    assert_eq!(
        text_out.lines().last(),
        Some(verdict.as_str()),
        "{text_out}"
    );
    let pid = &doc["findings"][0]["pids"][0];
    for code in &codes {
        assert!(
            text_out.contains(&format!(
                "\n  pid {pid} · more: cudnn-trace explain {code}\n"
            )),
            "{code}: {text_out}"
        );
    }
    let head = text_out
        .lines()
        .find(|l| l.starts_with("error[CDT008]: "))
        .unwrap_or_else(|| panic!("no CDT008 line: {text_out}"));
    assert!(
        head.contains("libcudnn_graph.so.9 9.14.0 came from LD_LIBRARY_PATH"),
        "{head}"
    );
    // Paths with the summary's legend, never the whole prefix again.
    let rel = graph.strip_prefix(&case.dir).unwrap();
    assert!(
        text_out.contains(&format!("paths: …/ stands for {}/\n", s(&case.dir))),
        "{text_out}"
    );
    assert!(
        text_out.contains("(LD_LIBRARY_PATH, asked by libcudnn.so.9)"),
        "{text_out}"
    );
    assert!(
        text_out.contains(&format!(
            "  - loaded: …/{}/libcudnn_graph.so.9 [9.14.0]",
            s(rel)
        )),
        "{text_out}"
    );
    assert_eq!(
        text_out.matches(s(&case.dir).as_str()).count(),
        2,
        "{text_out}"
    );
    assert!(text_out.contains("\n  fix: remove …/"), "{text_out}");

    // A clean run says so.
    let clean = Case::new("text-clean");
    let (_, _, prog, env) = clean_pip(&clean);
    let tc = clean.trace("t", &[], &env, &prog, &[]);
    let mut cmd = launcher(&clean.dir);
    cmd.arg("report").arg(&tc.trace);
    let out = run(cmd, None);
    assert_eq!(out.code(), Some(0), "{}", out.show());
    assert_eq!(
        out.out().lines().last(),
        Some("cudnn-trace: clean: no findings in the 1 process traced"),
        "{}",
        out.out()
    );

    // explain: every code of the report, lower case too; the list; unknown.
    for code in codes
        .iter()
        .map(String::as_str)
        .chain(["cdt006", "duplicate-library"])
    {
        let mut cmd = launcher(&case.dir);
        cmd.args(["explain", code]);
        let out = run(cmd, None);
        assert_eq!(out.code(), Some(0), "explain {code}: {}", out.show());
        assert!(out.out().starts_with("CDT0"), "{}", out.out());
        assert!(out.out().contains("\nSources:\n"), "{}", out.out());
        assert!(!out.out().contains("compat-facts"), "{}", out.out());
    }
    let mut cmd = launcher(&case.dir);
    cmd.arg("explain");
    let out = run(cmd, None);
    assert_eq!(out.code(), Some(0), "{}", out.show());
    let list = out.out();
    // One line per code of data/findings.toml.
    let toml =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/findings.toml"))
            .expect("data/findings.toml");
    let codes = toml
        .lines()
        .filter(|l| l.starts_with("code = \"CDT"))
        .count();
    assert!(codes >= 12, "{codes} codes in data/findings.toml");
    assert_eq!(list.lines().count(), codes, "{list}");
    for (i, l) in list.lines().enumerate() {
        assert!(l.starts_with(&format!("CDT{:03}  ", i + 1)), "{l}");
    }
    let mut cmd = launcher(&case.dir);
    cmd.args(["explain", "CDT999"]);
    let out = run(cmd, None);
    assert_eq!(out.code(), Some(2), "{}", out.show());
    assert!(out.out().is_empty(), "{}", out.show());
}

// ---------------------------------------------------------------------------
// 17. Versions the program never asked, asked at report time (issue 14)

/// The library of the first process whose path is `path`.
fn library<'a>(doc: &'a Value, path: &Path) -> &'a Value {
    let p = s(path);
    arr(&doc["processes"])
        .iter()
        .flat_map(|pr| arr(&pr["libraries"]).iter())
        .find(|l| l["path"] == p.as_str())
        .unwrap_or_else(|| panic!("no library {p} in {doc:#}"))
}

/// `(kind, version)` of a library's version in the report.
fn version_of(doc: &Value, path: &Path) -> (String, String) {
    let v = &library(doc, path)["version"];
    (text(&v["kind"]).to_string(), text(&v["text"]).to_string())
}

#[test]
fn versions_are_asked_in_a_separate_process_by_identity() {
    let case = Case::new("versions-asked");
    let pip = case.pip_cudnn("9.19.0", "13.0", &[]);
    let drv = case.driver("580.159.04", "13.0", &[]);
    let prog = case.compile(
        "17_versions_asked/main.c",
        PY,
        &link_rpath(&pip, "libcudnn.so.9"),
    );
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&drv]))];
    let (t, doc) = case.run("t", &env, &prog, &[], 0);
    assert_eq!(t.out.out(), "cudnnCreate=0\n");
    // Inside the process nothing was asked that has a side effect: no
    // sub-library check, no driver version.
    let raw = fs::read_to_string(&trace_files(&t.trace)[0]).unwrap();
    assert!(
        !raw.contains(r#""check":0"#),
        "a check was asked in the process"
    );
    assert!(!raw.contains(r#""fn":"cuDriverGetVersion""#));

    let asked = |p: &Path, want: &str| {
        let l = library(&doc, p);
        assert_eq!(
            (text(&l["version"]["kind"]), text(&l["version"]["text"])),
            ("asked", want),
            "{l:#}"
        );
        assert_eq!(l["found"]["source"], "asked", "{l:#}");
        l
    };
    let g = asked(&pip.join("libcudnn_graph.so.9"), "9.19.0");
    assert_eq!(g["found"]["cuda_build"], 13000);
    for (f, func) in [
        ("libcudnn_ops.so.9", "cudnnOpsVersionCheck"),
        ("libcudnn_cnn.so.9", "cudnnCnnVersionCheck"),
        ("libcudnn_adv.so.9", "cudnnAdvVersionCheck"),
    ] {
        let l = asked(&pip.join(f), "9.19.0");
        assert_eq!(
            text(&l["found"]["detail"]),
            format!("{func}() returned 0 against libcudnn_graph.so.9 (9.19.0) of its directory")
        );
    }
    // The dispatcher answers no version query of its own: the names it
    // asked for carry its version.
    assert_eq!(
        version_of(&doc, &pip.join("libcudnn.so.9")),
        ("requested".into(), "9.19.0".into())
    );
    let d = library(&doc, &drv.join("libcuda.so.1"));
    // The driver's version, and the CUDA version it supports as asked.
    assert_eq!(
        text(&d["version"]["text"]),
        "driver 580.159.04, CUDA 13.0",
        "{d:#}"
    );
    assert_eq!(d["version"]["cuda"]["major"], 13, "{d:#}");
    assert_eq!(d["found"]["detail"], "cuDriverGetVersion() = 13000");
    assert!(all(&doc).is_empty(), "{}", show(&doc));

    // Asked once: the next report reads the answers from the cache.
    let doc = report(&t);
    let g = library(&doc, &pip.join("libcudnn_graph.so.9"));
    assert_eq!(g["found"]["source"], "asked-cached", "{g:#}");

    // A file replaced since the trace is not asked (it is not the one the
    // process loaded), and a file that is gone neither; the report says so.
    let ops = pip.join("libcudnn_ops.so.9");
    let copy = case.p("ops-copy");
    fs::copy(&ops, &copy).unwrap();
    fs::remove_file(&ops).unwrap();
    fs::write(&ops, b"\x7fELF not the same file any more").unwrap();
    fs::remove_file(pip.join("libcudnn_cnn.so.9")).unwrap();
    let doc = report(&t);
    let p = &arr(&doc["processes"])[0];
    let why = |f: &str| {
        arr(&p["versions_not_asked"])
            .iter()
            .find(|n| n["path"] == s(&pip.join(f)).as_str())
            .map(|n| text(&n["why"]).to_string())
            .unwrap_or_else(|| panic!("{f} not in versions_not_asked: {p:#}"))
    };
    // (The inode may be reused: the size and the build-id tell.)
    let w = why("libcudnn_ops.so.9");
    assert!(
        w.starts_with("changed since the trace (")
            && w.contains("size ")
            && w.ends_with(": not asked"),
        "{w}"
    );
    assert_eq!(why("libcudnn_cnn.so.9"), "no longer on disk: not asked");
    assert_eq!(version_of(&doc, &ops), ("major-only".into(), "9.x".into()));
    // The text report says it too.
    let mut cmd = launcher(&case.dir);
    cmd.arg("report").arg(&t.trace);
    let out = run(cmd, None);
    assert!(
        out.out()
            .contains("version libcudnn_cnn.so.9: no longer on disk: not asked"),
        "{}",
        out.out()
    );
    fs::rename(&copy, &ops).unwrap();

    // CUDNN_TRACE_PROBE=0: nothing is asked.
    let (_, off) = {
        let mut cmd = launcher(&case.dir);
        cmd.env("CUDNN_TRACE_PROBE", "0")
            .args(["report", "--json"])
            .arg(&t.trace);
        let out = run(cmd, None);
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        (out, doc)
    };
    assert_eq!(
        version_of(&off, &pip.join("libcudnn_adv.so.9")),
        ("major-only".into(), "9.x".into())
    );
}

/// What asking tells the rules: a cuDNN built for CUDA 13.0 on a CUDA 12.2
/// driver, in a program that asked neither version itself.
#[test]
fn asked_versions_feed_the_driver_rule() {
    let case = Case::new("versions-asked-driver");
    let pip = case.pip_cudnn("9.19.0", "13.0", &[]);
    let drv = case.driver("535.104.05", "12.2", &[]);
    let prog = case.compile(
        "17_versions_asked/main.c",
        PY,
        &link_rpath(&pip, "libcudnn.so.9"),
    );
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&drv]))];
    let (_, doc) = case.run("t", &env, &prog, &[], 0);
    assert_errors(&doc, &["CDT004"]);
    let f = one(&doc, "CDT004", "driver");
    assert_eq!(
        text(&f["title"]),
        "the driver supports CUDA 12.2, cuDNN (built with CUDA 13.0) needs CUDA 13.x",
        "{f:#}"
    );
    let libcuda = s(&drv.join("libcuda.so.1"));
    assert!(
        evidence(f, "driver")
            .iter()
            .any(|e| e["path"] == libcuda.as_str()
                && e["version"]["text"] == "12.2"
                && text(&e["detail"]).contains("asked in a separate process at report time")),
        "{f:#}"
    );
}

// ---------------------------------------------------------------------------
// 18. A CUDA runtime missing at start-up: exit 127, one summary line, CDT006

/// Situation 18: `venv/bin/python3.12` needs `libtorchlike.so` (its
/// RUNPATH), which needs `libcudart.so.12` through its RUNPATH
/// `$ORIGIN/../rt`, where it is no more. Returns (program, libtorchlike).
fn startup_missing_runtime(case: &Case) -> (PathBuf, PathBuf) {
    let site = "venv/lib/python3.12/site-packages/torchlike";
    let rt = case.stack(&format!("{site}/rt"), &["cudart", "--version", "12.4"]);
    let flags: Vec<String> = vec![
        "-shared".into(),
        "-fPIC".into(),
        "-Wl,--no-as-needed".into(),
        format!("-L{}", s(&rt)),
        "-l:libcudart.so.12".into(),
        "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../rt".into(),
    ];
    let lib = case.compile(
        "18_startup_missing_runtime/lib.c",
        &format!("{site}/lib/libtorchlike.so"),
        &flags,
    );
    let libdir = lib.parent().unwrap().to_path_buf();
    let prog = case.compile(
        "18_startup_missing_runtime/main.c",
        PY,
        &[
            format!("-L{}", s(&libdir)),
            "-ltorchlike".into(),
            format!("-Wl,--enable-new-dtags,-rpath,{}", s(&libdir)),
        ],
    );
    fs::remove_file(rt.join("libcudart.so.12")).unwrap();
    (prog, lib)
}

/// The launcher, not quiet: its summary on stderr.
fn run_loud(case: &Case, label: &str, env: &[(&str, String)], prog: &Path) -> Traced {
    let mut cmd = launcher(&case.dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(["--out", label, "--"]).arg(prog);
    Traced {
        out: run(cmd, None),
        trace: case.p(label),
    }
}

/// The summary's start-up line.
/// `report --format markdown` of a run, which must succeed.
fn markdown(case: &Case, t: &Traced) -> String {
    let mut cmd = launcher(&case.dir);
    cmd.args(["report", "--format", "markdown"]).arg(&t.trace);
    let out = run(cmd, None);
    assert_eq!(out.code(), Some(0), "{}", out.show());
    out.out().to_string()
}

fn startup_line(t: &Traced) -> String {
    let err = t.out.err();
    err.lines()
        .find(|l| l.trim_start().starts_with("start-up: "))
        .unwrap_or_else(|| panic!("no start-up line:\n{}", t.out.show()))
        .trim()
        .to_string()
}

#[test]
fn runtime_missing_at_startup() {
    if machine_provides("libcudart.so.12") {
        eprintln!("skipped: this machine's loader finds a libcudart.so.12 by itself");
        return;
    }
    let case = Case::new("startup-missing");
    let (prog, lib) = startup_missing_runtime(&case);
    // The RUNPATH entry $ORIGIN/../rt, as the loader spells the candidate.
    let rt = lib.parent().unwrap().join("../rt");

    // Nothing anywhere: the loader's own message, its 127, and one line.
    let t = run_loud(&case, "none", &[], &prog);
    assert_exit(&t, 127);
    assert!(
        t.out.err().contains(
            "error while loading shared libraries: libcudart.so.12: cannot open shared object file"
        ),
        "{}",
        t.out.show()
    );
    let line = startup_line(&t);
    assert!(
        line.starts_with(
            "start-up: the loader could not find libcudart.so.12 (needed by libtorchlike.so) and ended the program before main (exit status 127); "
        ),
        "{line}"
    );
    // The block for a bug report says it too.
    let md = markdown(&case, &t);
    assert!(
        md.contains(
            "\n- start-up: the loader could not find libcudart.so.12 (needed by libtorchlike.so) and ended the program before main (exit status 127); "
        ),
        "{md}"
    );
    let doc = report(&t);
    assert_errors(&doc, &["CDT006"]);
    let f = one(&doc, "CDT006", "libcudart.so.12");
    assert_eq!(
        text(&f["title"]),
        "libcudart.so.12 was not found at start-up (needed by libtorchlike.so): the loader ended the program before main, exit status 127"
    );
    let failed = &evidence(f, "failed")[0];
    assert_eq!(failed["requester"], s(&lib).as_str());
    assert!(text(&failed["detail"]).contains("at start-up"), "{f:#}");
    let tried = evidence(f, "tried");
    assert!(
        tried
            .iter()
            .any(|e| e["path"] == s(&rt.join("libcudart.so.12")).as_str()
                && e["reason"] == "RUNPATH"
                && e["detail"]
                    .as_str()
                    .is_some_and(|d| d.starts_with("missing"))),
        "{f:#}"
    );
    let on_disk: Vec<&Value> = evidence(f, "on disk")
        .into_iter()
        .filter(|e| !text(&e["path"]).starts_with(&s(&case.dir)))
        .collect();
    if on_disk.is_empty() {
        assert!(line.ends_with("; no copy on this machine"), "{line}");
        assert!(
            remedies(f)
                .starts_with("no copy was found on this machine: install the CUDA 12 runtime"),
            "{f:#}"
        );
    } else {
        eprintln!("note: this machine has CUDA runtimes of its own; 'no copy' not checked");
    }
    // The JSON document marks the failure fatal.
    let p = &arr(&doc["processes"])[0];
    assert_eq!(p["failed_loads"][0]["fatal"], true, "{p:#}");

    // Only CUDA 13 on the loader's path: another major, which does not fit.
    let cu13 = case.stack("opt/cuda-13/lib", &["cudart", "--version", "13.0"]);
    let env = vec![("LD_LIBRARY_PATH", s(&cu13))];
    let t = run_loud(&case, "cu13", &env, &prog);
    assert_exit(&t, 127);
    let line = startup_line(&t);
    let c13 = s(&cu13.join("libcudart.so.13"));
    assert!(
        line.contains(&format!(
            "only another major on this machine: {c13} (13.0), which does not fit"
        )),
        "{line}"
    );
    let doc = report(&t);
    let f = one(&doc, "CDT006", "libcudart.so.12");
    let c = ev(f, "on disk", &cu13.join("libcudart.so.13"));
    assert!(
        text(&c["detail"]).contains("another major (13): it does not fit libcudart.so.12"),
        "{c:#}"
    );
    let remedy = remedies(f);
    assert!(!remedy.contains("make it findable"), "{remedy}");
    assert!(
        remedy.starts_with(
            "only another major of it is on this machine (listed below; it does not fit libcudart.so.12, and a link to it would not either): install the CUDA 12 runtime"
        ),
        "{remedy}"
    );
    // The other major's file is evidence, never offered in the fix.
    assert!(!remedy.contains(c13.as_str()), "{remedy}");

    // A CUDA 12 runtime where the loader does not look (a pip wheel's
    // directory): the copy to make findable.
    let pip = case.stack(
        "venv/lib/python3.12/site-packages/nvidia/cuda_runtime/lib",
        &["cudart", "--version", "12.4"],
    );
    let t = run_loud(&case, "pip12", &[], &prog);
    assert_exit(&t, 127);
    let line = startup_line(&t);
    let c12 = s(&pip.join("libcudart.so.12"));
    assert!(
        line.ends_with(&format!(
            "; a copy that fits: {c12} (12.4), in a directory the loader did not search"
        )),
        "{line}"
    );
    let doc = report(&t);
    let f = one(&doc, "CDT006", "libcudart.so.12");
    let remedy = remedies(f);
    assert!(
        remedy.starts_with(&format!(
            "a copy exists at {c12} (12.4): make it findable for libtorchlike.so, e.g. LD_LIBRARY_PATH={}:$LD_LIBRARY_PATH",
            s(&pip)
        )),
        "{remedy}"
    );
    assert!(
        remedy.ends_with(
            "or install the library where libtorchlike.so looks (its RUNPATH entry $ORIGIN/../rt)"
        ),
        "{remedy}"
    );
}

// ---------------------------------------------------------------------------
// 19. A static CUDA runtime: said, with its version where one can be found

/// Compiles `19_static_runtime/SRC` with the fake runtime linked in
/// (`-DFAKE_STATIC_RUNTIME`, CUDA 13.2) into `<dir>/OUT`; `shared`: a
/// module rather than a program.
fn with_static_runtime(case: &Case, src: &str, out: &str, shared: bool) -> PathBuf {
    let mut flags: Vec<String> = Vec::new();
    if shared {
        flags.extend([
            "-shared".into(),
            "-fPIC".into(),
            "-fvisibility=hidden".into(),
        ]);
    }
    flags.extend([
        s(&tools::package_dir().join("fixtures/stack/cudart.c")),
        "-DFAKE_STATIC_RUNTIME".into(),
        "-DFAKE_CUDART=13020".into(),
        "-DFAKE_CUDART_MAJOR=13".into(),
        "-pthread".into(),
    ]);
    case.compile(&format!("19_static_runtime/{src}"), out, &flags)
}

/// A pip `RECORD` listing `file` (under `site`) with its size.
fn record(case: &Case, dist: &str, file: &Path) {
    let rel = file.strip_prefix(case.site()).unwrap();
    let dir = case.site().join(format!("{dist}.dist-info"));
    fs::create_dir_all(&dir).unwrap();
    let size = fs::metadata(file).unwrap().len();
    fs::write(
        dir.join("RECORD"),
        format!("{},sha256=AAAA,{size}\n{dist}.dist-info/RECORD,,\n", s(rel)),
    )
    .unwrap();
}

#[test]
fn static_cuda_runtime_is_said_with_its_version() {
    if !calls_recorded_here("static_cuda_runtime_is_said_with_its_version") {
        return;
    }
    let case = Case::new("static-runtime");
    let module = with_static_runtime(
        &case,
        "app.c",
        "venv/lib/python3.12/site-packages/cupy_backends/cuda/api/runtime.cpython-312-x86_64-linux-gnu.so",
        true,
    );
    // An NVIDIA library carries one too: a fact, not news.
    let cublas = with_static_runtime(
        &case,
        "app.c",
        "venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublasLt.so.13",
        true,
    );
    record(&case, "cupy_cuda13x-13.6.0", &module);
    let prog = case.compile("19_static_runtime/main.c", PY, &[]);
    let drv = case.driver("580.159.04", "13.0", &[]);
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&drv]))];
    let mut cmd = launcher(&case.dir);
    cmd.env("LD_LIBRARY_PATH", path_list(&[&drv]))
        .args(["--out", "t", "--"])
        .arg(&prog)
        .arg(&module)
        .arg(&cublas);
    let t = Traced {
        out: run(cmd, None),
        trace: case.p("t"),
    };
    assert_exit(&t, 0);
    assert_eq!(t.out.out(), "1 device(s)\n1 device(s)\n");
    let err = t.out.err();
    // (The summary may write a long common directory as `…/`.)
    let said = |text: &str, file: &Path, what: &str| {
        text.lines().any(|l| {
            let l = l.trim();
            l.starts_with("static  ")
                && l.contains(&s(file.strip_prefix(&case.dir).unwrap()))
                && l.ends_with(&format!(" carries a static CUDA runtime ({what})"))
        })
    };
    assert!(
        said(
            &err,
            &module,
            "CUDA 13.x, from its pip package cupy_cuda13x 13.6.0"
        ),
        "{}",
        t.out.show()
    );
    assert!(
        !err.contains("libcublasLt.so.13 carries"),
        "NVIDIA's libraries are no news: {err}"
    );
    // The block for a bug report: no libcudart file to put in its table.
    let md = markdown(&case, &t);
    assert!(
        md.contains("cuda/api/runtime.cpython-312-x86_64-linux-gnu.so` carries a static CUDA runtime (CUDA 13.x, from its pip package cupy_cuda13x 13.6.0)."),
        "{md}"
    );
    assert!(!md.contains("libcublasLt.so.13` carries"), "{md}");
    let doc = report(&t);
    assert!(all(&doc).is_empty(), "{}", show(&doc));
    let p = &arr(&doc["processes"])[0];
    let rts = arr(&p["static_runtimes"]);
    assert_eq!(rts.len(), 2, "{p:#}");
    let cupy = rts
        .iter()
        .find(|r| r["path"] == s(&module).as_str())
        .unwrap();
    assert_eq!(
        (cupy["nvidia"].clone(), cupy["version"]["text"].clone()),
        (Value::Bool(false), Value::from("13.x"))
    );
    let nv = rts
        .iter()
        .find(|r| r["path"] == s(&cublas).as_str())
        .unwrap();
    assert_eq!(nv["nvidia"], true);
    // No libcudart file in the process, and none is made up.
    assert!(
        !arr(&p["libraries"]).iter().any(|l| l["family"] == "cudart"),
        "{p:#}"
    );

    // On a CUDA 12.2 driver, the CUDA 13 runtime in CuPy's module cannot
    // work: the driver rule counts it.
    let old = case.stack(
        "old-driver",
        &["cuda", "--driver", "535.104.05", "--cuda", "12.2"],
    );
    let env_old = vec![("LD_LIBRARY_PATH", path_list(&[&old]))];
    let t_old = case.trace("old", &[], &env_old, &prog, &[s(&module)]);
    let doc = report(&t_old);
    assert_errors(&doc, &["CDT004"]);
    let f = one(&doc, "CDT004", "driver");
    assert!(
        text(&f["title"]).starts_with(
            "the driver supports CUDA 12.2, the static CUDA 13.x runtime in runtime.cpython-312-x86_64-linux-gnu.so needs CUDA 13.x"
        ),
        "{f:#}"
    );
    ev(f, "static runtime", &module);

    // Without the package's RECORD: the runtime is still said, version unknown.
    fs::remove_dir_all(case.site().join("cupy_cuda13x-13.6.0.dist-info")).unwrap();
    let t2 = case.trace("t2", &[], &env, &prog, &[s(&module)]);
    let mut cmd = launcher(&case.dir);
    cmd.arg("report").arg(&t2.trace);
    let out = run(cmd, None);
    assert!(
        said(&out.out(), &module, "version unknown"),
        "{}",
        out.out()
    );

    // nvcc's default: the runtime inside the executable itself.
    let nvcc = with_static_runtime(&case, "nvcc_main.c", "app/nvcc_prog", false);
    let t3 = case.trace("nvcc", &[], &env, &nvcc, &[]);
    assert_exit(&t3, 0);
    assert_eq!(t3.out.out(), "status 0, 1 device(s)\n");
    let mut cmd = launcher(&case.dir);
    cmd.arg("report").arg(&t3.trace);
    let out = run(cmd, None);
    assert!(said(&out.out(), &nvcc, "version unknown"), "{}", out.out());
    assert!(!out.out().contains("no CUDA library"), "{}", out.out());
}

// ---------------------------------------------------------------------------
// 20. CDT011: the toolkit's stub libcuda; a stub is never a second copy

#[test]
fn stub_libcuda_is_said_and_never_a_second_copy() {
    if !calls_recorded_here("stub_libcuda_is_said_and_never_a_second_copy") {
        return;
    }
    let case = Case::new("stub-libcuda");
    let rt = pip_cudart13(&case);
    let drv = case.driver("580.159.04", "13.0", &[]);
    let stubs = case.stack("usr/local/cuda-13.0/lib64/stubs", &["cuda", "--stub"]);
    // What a Dockerfile adds so that the link step's output runs.
    std::os::unix::fs::symlink("libcuda.so", stubs.join("libcuda.so.1")).unwrap();
    let prog = case.compile(
        "20_stub_libcuda/main.c",
        PY,
        &link_rpath(&rt, "libcudart.so.13"),
    );
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&stubs, &drv]))];
    let libcuda = drv.join("libcuda.so.1");
    let t = case.trace("t", &[], &env, &prog, &[s(&libcuda)]);
    assert_exit(&t, 1);
    assert_eq!(t.out.out(), "cudaGetDeviceCount=34\ndriver loaded\n");
    let doc = report(&t);
    // Both libcuda objects are in the process; the stub is no second copy.
    assert!(with_code(&doc, "CDT001").is_empty(), "{}", show(&doc));
    assert_errors(&doc, &["CDT011"]);
    let f = one(&doc, "CDT011", "stub");
    assert_eq!(
        text(&f["title"]),
        format!(
            "the CUDA toolkit's stub libcuda was loaded: {}",
            s(&stubs.join("libcuda.so.1"))
        )
    );
    assert!(
        remedies(f).starts_with(&format!(
            "the stubs are for linking only: remove {} from LD_LIBRARY_PATH",
            s(&stubs)
        )),
        "{f:#}"
    );
    assert!(
        evidence(f, "call")
            .iter()
            .any(|e| text(&e["detail"]).contains("returned 34")),
        "{f:#}"
    );
    // Labelled a stub in the document and the summary; never asked.
    let stub = library(&doc, &stubs.join("libcuda.so.1"));
    assert_eq!(stub["stub"], true, "{stub:#}");
    assert!(stub["found"].is_null(), "a stub is not asked: {stub:#}");
    let mut cmd = launcher(&case.dir);
    cmd.arg("report").arg(&t.trace);
    let out = run(cmd, None);
    assert!(
        out.out()
            .lines()
            .any(|l| l.contains("libcuda.so.1 (stub)") && l.contains("LD_LIBRARY_PATH")),
        "{}",
        out.out()
    );
    // And in the block for a bug report.
    let md = markdown(&case, &t);
    assert!(md.contains("\n| libcuda.so.1 (stub) | "), "{md}");
}

// ---------------------------------------------------------------------------
// 21. Remedies name the search-list entry, as written

/// The system cuDNN's graph in the `x86_64` subdirectory of an
/// LD_LIBRARY_PATH entry (glibc 2.36 still searches it): the entry to
/// remove is the LD_LIBRARY_PATH entry as the variable has it, not the
/// subdirectory the loader found the file in.
#[test]
fn remedies_name_the_ld_library_path_entry_as_written() {
    let case = Case::new("search-entry");
    let pip = case.pip_cudnn("9.19.0", "13.0", &[]);
    let system = case.stack(
        "usr/lib/x86_64-linux-gnu",
        &["cudnn9", "--version", "9.14.0", "--versioned-files"],
    );
    let drv = case.driver("580.159.04", "13.0", &[]);
    let entry = case.p("opt/cudnn-9.14/lib");
    let sub = entry.join("x86_64");
    fs::create_dir_all(&sub).unwrap();
    for e in fs::read_dir(&system).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        let keep = ["libcudnn_graph", "libcudnn_engines", "libcudnn_heuristic"];
        if keep.iter().any(|k| name.starts_with(k)) {
            std::os::unix::fs::symlink(system.join(&name), sub.join(&name)).unwrap();
        }
    }
    let prog = case.compile(
        "02_cudnn9_two_installs/main.c",
        PY,
        &link_rpath(&pip, "libcudnn.so.9"),
    );
    // The entry written with a trailing slash, as people do.
    let written = format!("{}/", s(&entry));
    let env = vec![("LD_LIBRARY_PATH", format!("{written}:{}", s(&drv)))];
    let (t, doc) = case.run("t", &env, &prog, &[], 0);
    let raw = fs::read_to_string(&trace_files(&t.trace)[0]).unwrap();
    if !raw.contains(&format!(r#""search_dir":"{}""#, s(&sub))) {
        eprintln!("skipped: this glibc does not search the x86_64 subdirectory");
        return;
    }
    let f = one(
        &doc,
        "CDT008",
        "libcudnn_graph.so.9 9.14.0 came from LD_LIBRARY_PATH",
    );
    let remedy = remedies(f);
    assert!(
        remedy.starts_with(&format!("remove {written} from LD_LIBRARY_PATH")),
        "{remedy}"
    );
    assert!(!remedy.contains("x86_64 from"), "{remedy}");
    let f = one(&doc, "CDT002", "cuDNN 9");
    assert!(
        remedies(f).contains(&format!("remove {written} from LD_LIBRARY_PATH")),
        "{f:#}"
    );
}

// ---------------------------------------------------------------------------
// 22. Renamed copies: under their family, with their real file name

/// The fake CUDA runtime (`fixtures/stack/cudart.c`, CUDA `version`) built
/// as `<dir>/OUT` with SONAME `soname`.
fn renamed_runtime(case: &Case, out: &str, soname: &str, version: &str) -> PathBuf {
    let (maj, min) = version.split_once('.').unwrap();
    let code = maj.parse::<u32>().unwrap() * 1000 + min.parse::<u32>().unwrap() * 10;
    let path = case.p(out);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut cmd = cc();
    cmd.args(["-shared", "-fPIC", "-fvisibility=hidden", "-pthread"])
        .arg(format!(
            "-I{}",
            s(&tools::package_dir().join("fixtures/stack"))
        ))
        .arg(format!("-DFAKE_CUDART={code}"))
        .arg(format!("-DFAKE_CUDART_MAJOR={maj}"))
        .arg(format!("-Wl,-soname,{soname}"))
        .arg("-o")
        .arg(&path)
        .arg(tools::package_dir().join("fixtures/stack/cudart.c"))
        .arg("-ldl");
    run_cc(&mut cmd, out, false);
    path
}

#[test]
fn renamed_copies_are_shown_under_their_family() {
    let case = Case::new("renamed");
    let rt13 = pip_cudart13(&case);
    let site = "venv/lib/python3.12/site-packages";
    let audit = renamed_runtime(
        &case,
        &format!("{site}/foo.libs/libcudart-8a3b2c1d.so.12"),
        "libcudart-8a3b2c1d.so.12",
        "12.4",
    );
    let vendored = renamed_runtime(
        &case,
        &format!("{site}/vendor/_cudart.so"),
        "_cudart.so",
        "13.0",
    );
    let drv = case.driver("580.159.04", "13.0", &[]);
    let prog = case.compile("22_renamed_copies/main.c", PY, &[]);
    let env = vec![("LD_LIBRARY_PATH", path_list(&[&drv]))];
    let libs = [
        rt13.join("libcudart.so.13"),
        audit.clone(),
        vendored.clone(),
    ];
    let args: Vec<String> = libs.iter().map(|p| s(p)).collect();
    let (t, doc) = case.run("t", &env, &prog, &args, 0);
    assert_eq!(
        t.out.out(),
        "runtime 13000 (status 0)\nruntime 12040 (status 0)\nruntime 13000 (status 0)\n"
    );
    // In the document: each a cudart library, the vendored one known by
    // what it exports.
    let v = library(&doc, &vendored);
    assert_eq!(
        (v["family"].clone(), v["family_by"].clone()),
        ("cudart".into(), "symbol".into()),
        "{v:#}"
    );
    assert_eq!(library(&doc, &audit)["family"], "cudart");
    assert_eq!(version_of(&doc, &audit).1, "12.4");
    assert_eq!(version_of(&doc, &vendored).1, "13.0");
    // Three runtimes, two majors: the rule sees the renamed ones too.
    let f = one(&doc, "CDT001", "libcudart");
    ev(f, "loaded", &audit);
    ev(f, "loaded", &vendored);
    // In the summary: under cudart, by their real file names.
    let mut cmd = launcher(&case.dir);
    cmd.arg("report").arg(&t.trace);
    let out = run(cmd, None);
    let text_out = out.out();
    let rows: Vec<&str> = text_out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("cudart"))
        .take(3)
        .collect();
    assert_eq!(rows.len(), 3, "{text_out}");
    assert!(
        rows[0].trim_start().starts_with("cudart  libcudart.so.13 "),
        "{text_out}"
    );
    assert!(
        rows.iter()
            .any(|r| r.contains(" libcudart-8a3b2c1d.so.12 ") && r.contains("12.4")),
        "{text_out}"
    );
    assert!(
        rows.iter()
            .any(|r| r.contains(" _cudart.so (by its exports) ") && r.contains("13.0")),
        "{text_out}"
    );
}
