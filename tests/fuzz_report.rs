//! Fuzzing the trace reader and `report` (issue 11), bounded, on stable
//! Rust: random bytes become damaged trace directories
//! (`cudnn_trace_integration::fuzz`), read two ways:
//!
//! - in this process, through the report pipeline (`cudnn_trace_core`),
//!   fast (hundreds of directories a second): no panic, no control or bidi
//!   character in the text or the JSON (the traces are written by other
//!   people's programs, and the output goes to a terminal), JSON that parses;
//! - by the real `cudnn-trace report` and `report --json`, fewer: each must
//!   end by itself within 10 s with status 0 or 1 (never 101, a panic, nor a
//!   signal), with the same checks on what it prints.
//!
//! `CDT_FUZZ_SECS` (default 10) bounds each loop; `CDT_FUZZ_SEED` replays
//! one. A failing input is kept under `<target>/cdt-fuzz/` with the command
//! that shows the failure. The coverage-guided long run is `fuzz/afl` (see
//! its README).
//!
//! ```sh
//! cargo test -p cudnn-trace-integration --test fuzz_report
//! CDT_FUZZ_SECS=600 cargo test -p cudnn-trace-integration --test fuzz_report -- --nocapture
//! ```

use arbitrary::{Arbitrary, Unstructured};
use cudnn_trace_integration::fuzz::{report_in_process, unsafe_for_terminal, TraceDir};
use cudnn_trace_integration::launcher_support::{launcher, run};
use cudnn_trace_integration::tools;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

/// xorshift64*: enough to turn a seed into bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn bytes(&mut self) -> Vec<u8> {
        let n = 64 + (self.next() % 4096) as usize;
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Why `report` on `dir` is wrong, if it is.
fn check(dir: &Path) -> Option<String> {
    for json in [false, true] {
        let mut cmd = launcher(dir);
        cmd.arg("report");
        if json {
            cmd.arg("--json");
        }
        cmd.arg(dir);
        let start = Instant::now();
        let o = run(cmd, None);
        let what = if json { "report --json" } else { "report" };
        if start.elapsed() > Duration::from_secs(10) {
            return Some(format!("{what} took {:?}", start.elapsed()));
        }
        if !matches!(o.code(), Some(0 | 1)) {
            return Some(format!("{what} ended with {}:\n{}", o.status, o.show()));
        }
        for (stream, text) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
            if let Some(bad) = unsafe_for_terminal(text) {
                return Some(format!("{what} printed {bad} on {stream}:\n{}", o.show()));
            }
        }
        // A byte that is not UTF-8 is `\udcNN`, which serde_json refuses:
        // read as the trace reader reads (docs/trace-format.md).
        let text = String::from_utf8_lossy(&o.stdout);
        let decoded = cudnn_trace_format::read::decode_byte_escapes(&text);
        if json && o.code() == Some(0) {
            if let Err(e) = serde_json::from_str::<serde_json::Value>(&decoded) {
                return Some(format!("{what} printed no JSON ({e}):\n{}", o.show()));
            }
        }
    }
    None
}

/// The loop's seed and time limit: `CDT_FUZZ_SEED` (a replay: 200 inputs),
/// `CDT_FUZZ_SECS`.
fn budget() -> (u64, Option<u64>, Duration) {
    let secs: u64 = std::env::var("CDT_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let fixed = std::env::var("CDT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    let seed = fixed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
            | 1
    });
    (seed, fixed, Duration::from_secs(secs))
}

#[test]
fn report_pipeline_survives_damaged_and_hostile_traces_in_process() {
    let (seed, fixed, secs) = budget();
    let root = tools::target_dir().join("cdt-fuzz");
    let dir = root.join(format!("inproc-{}", std::process::id()));
    let mut rng = Rng(seed);
    let deadline = Instant::now() + secs;
    let mut runs = 0u64;
    loop {
        let case_seed = rng.next() | 1;
        let data = Rng(case_seed).bytes();
        let Ok(trace) = TraceDir::arbitrary(&mut Unstructured::new(&data)) else {
            continue;
        };
        trace.write(&dir).unwrap();
        let outcome = std::panic::catch_unwind(|| report_in_process(&dir)).unwrap_or_else(|p| {
            Err(format!(
                "panicked: {}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            ))
        });
        if let Err(why) = outcome {
            let keep = root.join(format!("failure-{case_seed}"));
            let _ = std::fs::remove_dir_all(&keep);
            std::fs::rename(&dir, &keep).unwrap();
            panic!(
                "{why}\ninput kept in {} (CDT_FUZZ_SEED={seed}); show it with: cudnn-trace report {}",
                keep.display(),
                keep.display()
            );
        }
        runs += 1;
        if fixed.is_some() && runs >= 200 || Instant::now() > deadline {
            break;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("fuzz_report (in process): {runs} trace directories (CDT_FUZZ_SEED={seed})");
    assert!(runs > 0);
}

#[test]
fn report_survives_damaged_and_hostile_traces() {
    let secs: u64 = std::env::var("CDT_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let fixed = std::env::var("CDT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    let seed: u64 = fixed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
            | 1
    });
    tools::tools().unwrap_or_else(|e| panic!("{e}"));
    let root = tools::target_dir().join("cdt-fuzz");
    let dir = root.join(format!("run-{}", std::process::id()));
    let mut rng = Rng(seed);
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut runs = 0u64;
    loop {
        let case_seed = rng.next() | 1;
        let data = Rng(case_seed).bytes();
        let Ok(trace) = TraceDir::arbitrary(&mut Unstructured::new(&data)) else {
            continue;
        };
        trace.write(&dir).unwrap();
        if let Some(why) = check(&dir) {
            let keep = root.join(format!("failure-{case_seed}"));
            let _ = std::fs::remove_dir_all(&keep);
            std::fs::rename(&dir, &keep).unwrap();
            panic!(
                "{why}\ninput kept in {} (CDT_FUZZ_SEED={seed}, case {case_seed}); \
                 show it with: cudnn-trace report {}",
                keep.display(),
                keep.display()
            );
        }
        runs += 1;
        if fixed.is_some() && runs >= 200 || Instant::now() > deadline {
            break;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("fuzz_report: {runs} trace directories (CDT_FUZZ_SEED={seed})");
    assert!(runs > 0);
}
