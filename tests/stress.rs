//! The shim under load (issue 11, what the review found held, kept as a
//! test): threads that load and unload libraries while the process forks
//! children, half of which exec. Every process must finish (a hang fails
//! the run at its timeout, `CDT_TIMEOUT`, 60 s by default), every line of
//! every trace file must be whole, the `seq` numbers of each file must be
//! 1..N without a gap or a repeat, and each thread's loads and unloads must
//! be recorded exactly, one event each.
//!
//! `CDT_STRESS=THREADS,ITERATIONS,FORKS` sets the size (default 16,1000,200:
//! about 35,000 events in 201 files, a few seconds on two cores; the review
//! ran 16,2000,500).
//!
//! ```sh
//! cargo test -p cudnn-trace-integration --test stress
//! CDT_STRESS=16,2000,500 cargo test --release -p cudnn-trace-integration --test stress
//! ```

use cudnn_trace_integration::launcher_support::{cc, run, run_cc, work_dir};
use cudnn_trace_integration::tools;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;

fn size() -> (usize, usize, usize) {
    let v: Vec<usize> = std::env::var("CDT_STRESS")
        .unwrap_or_default()
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    match v[..] {
        [t, i, f] => (t.clamp(1, 256), i, f),
        _ => (16, 1000, 200),
    }
}

fn compile(args: &[&std::ffi::OsStr], what: &str) {
    let mut cmd = cc();
    cmd.args(["-std=gnu11", "-O2", "-Wall"]).args(args);
    run_cc(&mut cmd, what, false);
}

#[test]
fn threads_forks_and_execs_lose_and_tear_nothing() {
    let (threads, iterations, forks) = size();
    let d = work_dir("stress");
    let src = tools::package_dir().join("production");
    let prog = d.join("stress");
    compile(
        &[
            "-o".as_ref(),
            prog.as_os_str(),
            src.join("stress.c").as_os_str(),
            "-lpthread".as_ref(),
            "-ldl".as_ref(),
        ],
        "stress.c",
    );
    let libs = d.join("lib");
    fs::create_dir(&libs).unwrap();
    let lib0 = libs.join("libcudnn_stress_0.so.9");
    compile(
        &[
            "-shared".as_ref(),
            "-fPIC".as_ref(),
            "-o".as_ref(),
            lib0.as_os_str(),
            src.join("stress_lib.c").as_os_str(),
        ],
        "stress_lib.c",
    );
    // One file per thread.
    for i in 1..threads {
        fs::copy(&lib0, libs.join(format!("libcudnn_stress_{i}.so.9"))).unwrap();
    }
    let traces = d.join("t");
    fs::create_dir(&traces).unwrap();

    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = Command::new(&prog);
    cudnn_trace_integration::run::clear_env(&mut cmd);
    cmd.current_dir(&d)
        .arg(&libs)
        .args([threads, iterations, forks].map(|n| n.to_string()))
        .env("LD_AUDIT", &t.shim)
        .env("LD_PRELOAD", &t.preload)
        .env("CUDNN_TRACE_DIR", &traces);
    let o = run(cmd, None);
    assert!(o.status.success(), "{}", o.show());
    assert_eq!(
        o.out(),
        format!("threads done, 0 of {forks} children failed\n"),
        "{}",
        o.show()
    );
    assert!(!o.err().contains("cudnn-trace"), "{}", o.show());

    let mut files: Vec<_> = fs::read_dir(&traces)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 1 + forks, "{files:?}");
    let mut origins: BTreeMap<String, usize> = BTreeMap::new();
    let mut events = 0;
    for f in &files {
        let (header, evs) = read_whole(f);
        assert_eq!(header["lost"], 0, "{}: {header}", f.display());
        let mut seqs: Vec<u64> = evs.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
        seqs.sort_unstable();
        let want: Vec<u64> = (1..=evs.len() as u64).collect();
        assert!(seqs == want, "{}: seq gaps or repeats", f.display());
        events += evs.len();
        let origin = header["origin"].as_str().unwrap().to_string();
        let expect: Vec<(usize, usize)> = match origin.as_str() {
            "exec" if header["argv"].as_array().unwrap().len() == 5 => {
                (0..threads).map(|i| (i, iterations)).collect()
            }
            "exec" => vec![(0, 5)],
            "fork" => {
                // Five failed searches, one event each.
                let failed = evs.iter().filter(|e| e["ev"] == "load_failed").count();
                assert_eq!(failed, 5, "{}", f.display());
                vec![]
            }
            other => panic!("{}: origin {other}", f.display()),
        };
        *origins.entry(origin).or_default() += 1;
        for (lib, n) in expect {
            let name = format!("/libcudnn_stress_{lib}.so.9");
            let count = |kind: &str| {
                evs.iter()
                    .filter(|e| e["ev"] == kind && e["path"].as_str().unwrap().ends_with(&name))
                    .filter(|e| kind != "load" || e["new"] == true)
                    .count()
            };
            assert_eq!(count("load"), n, "{}: loads of {name}", f.display());
            assert_eq!(count("unload"), n, "{}: unloads of {name}", f.display());
        }
    }
    let execs = forks.div_ceil(2);
    assert_eq!(origins.get("exec"), Some(&(1 + execs)), "{origins:?}");
    assert_eq!(origins.get("fork").copied().unwrap_or(0), forks - execs);
    eprintln!(
        "stress: {threads} threads x {iterations}, {forks} children: {events} events in {} files",
        files.len()
    );
}

/// The header and the events of a trace file; panics on a line that is not
/// whole JSON (a torn line).
fn read_whole(f: &Path) -> (Value, Vec<Value>) {
    let text = fs::read_to_string(f).unwrap();
    let mut lines = text.lines().filter(|l| !l.is_empty()).map(|l| {
        serde_json::from_str::<Value>(l)
            .unwrap_or_else(|e| panic!("{}: torn or bad line ({e}): {l}", f.display()))
    });
    let header = lines
        .next()
        .unwrap_or_else(|| panic!("{}: empty", f.display()));
    assert_eq!(header["ev"], "process", "{}", f.display());
    (header, lines.collect())
}
