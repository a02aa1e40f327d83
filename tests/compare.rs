//! End-to-end tests of comparing runs (issue 13): `cudnn-trace diff`, the
//! fleet view of `report --fleet`, and the `report --format chrome`
//! timeline. Each builds the fake CUDA stack (`tests/fixtures/build-stack.sh`),
//! compiles a PyTorch-like C program (`tests/findings/02_cudnn9_two_installs`:
//! libcudnn.so.9 through its DT_RPATH, then cudnnGetVersion and
//! cudnnOpsVersionCheck), runs it under the real launcher and reads the
//! traces with the real CLI.
//!
//! ```sh
//! cargo test -p cudnn-trace-integration --test compare
//! ```
//!
//! Work directories: `<target>/cdt-launcher/compare-*`.

use cudnn_trace_integration::launcher_support::{launcher, run, work_dir, Output};
use cudnn_trace_integration::two_installs::TwoInstalls;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn s(p: &Path) -> String {
    p.to_str().expect("UTF-8 path").to_string()
}

/// The two-installs situation (`cudnn_trace_integration::two_installs`):
/// a good run has the driver only on LD_LIBRARY_PATH, a bad one the system
/// 9.14's graph directory first.
struct Stack(TwoInstalls);

impl std::ops::Deref for Stack {
    type Target = TwoInstalls;
    fn deref(&self) -> &TwoInstalls {
        &self.0
    }
}

impl Stack {
    fn new(name: &str) -> Stack {
        Stack(TwoInstalls::build(work_dir(&format!("compare-{name}"))))
    }

    /// `cudnn-trace -q --out OUT -- PROG` with `env`; must exit 0.
    fn trace(&self, out: &str, bad: bool, env: &[(&str, &str)]) -> PathBuf {
        let mut cmd = launcher(&self.dir);
        cmd.env("LD_LIBRARY_PATH", self.ld_path(bad));
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.args(["-q", "--out", out, "--"]).arg(&self.prog);
        let o = run(cmd, None);
        assert_eq!(o.code(), Some(0), "traced run {out}:\n{}", o.show());
        self.dir.join(out)
    }

    /// `cudnn-trace ARGS...` in the work directory.
    fn cli(&self, args: &[&str]) -> Output {
        let mut cmd = launcher(&self.dir);
        cmd.args(args);
        run(cmd, None)
    }
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", o.show()))
}

fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

fn calls_recorded_here() -> bool {
    cudnn_trace_integration::spec::glibc_version() >= (2, 35)
}

// ---------------------------------------------------------------------------
// diff

#[test]
fn diff_finds_the_sublibrary_directory_that_differs() {
    let st = Stack::new("diff");
    let good = st.trace("good", false, &[]);
    let again = st.trace("good-again", false, &[]);
    let bad = st.trace("bad", true, &[]);

    // Two runs of the same setup: pids, times and trace files differ,
    // nothing that matters does.
    for (a, b) in [(&good, &again), (&good, &good), (&bad, &bad)] {
        let o = st.cli(&["diff", &s(a), &s(b)]);
        assert_eq!(o.code(), Some(0), "{}", o.show());
        assert!(o.out().contains("SAME STACK"), "{}", o.show());
    }

    let o = st.cli(&["diff", "--json", &s(&good), &s(&bad)]);
    assert_eq!(o.code(), Some(1), "{}", o.show());
    let d = json(&o);
    assert_eq!(d["diff_version"], 1);
    assert_eq!(d["matters"], true);
    let procs = arr(&d["processes"]);
    assert_eq!(procs.len(), 1, "{d:#}");
    let p = &procs[0];
    assert_eq!(p["role"], "python3.12");
    assert_eq!(p["matters"], true);
    let libs = arr(&p["libraries"]);
    let graph = libs
        .iter()
        .find(|l| l["key"] == "libcudnn_graph")
        .unwrap_or_else(|| panic!("no libcudnn_graph difference: {p:#}"));
    assert_eq!(graph["change"], "other-file", "{graph:#}");
    assert_eq!(graph["matters"], true);
    let field = |name: &str| {
        arr(&graph["fields"])
            .iter()
            .find(|f| f["field"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} field: {graph:#}"))
    };
    assert_eq!(field("reason")["good"], "RUNPATH");
    assert_eq!(field("reason")["bad"], "LD_LIBRARY_PATH");
    assert_eq!(field("search_dir")["bad"], s(&st.graph).as_str());
    assert!(field("realpath")["bad"]
        .as_str()
        .unwrap()
        .ends_with("libcudnn_graph.so.9.14.0"));
    if calls_recorded_here() {
        // The version graph reported in the process (9.19.0) against the
        // system file's (9.14.0).
        assert_eq!(field("version")["good"], "9.19.0", "{graph:#}");
        assert_eq!(field("version")["bad"], "9.14.0", "{graph:#}");
    }
    let because = arr(&graph["because"]);
    assert!(
        because
            .iter()
            .any(|b| b.as_str().unwrap().contains(&format!(
                "LD_LIBRARY_PATH entry {}, which GOOD's LD_LIBRARY_PATH does not have",
                s(&st.graph)
            ))),
        "{graph:#}"
    );
    // The same dispatcher in both: not listed.
    assert!(!libs.iter().any(|l| l["key"] == "libcudnn"), "{p:#}");
    // Most important first: every listed library matters before any that
    // does not.
    let m: Vec<bool> = libs.iter().map(|l| l["matters"] == true).collect();
    assert!(m.windows(2).all(|w| w[0] >= w[1]), "{m:?}");
    // The environment that explains it.
    let env = arr(&p["environment"]);
    let ld = env
        .iter()
        .find(|e| e["name"] == "LD_LIBRARY_PATH")
        .expect("LD_LIBRARY_PATH differs");
    assert_eq!(ld["only_bad"], serde_json::json!([s(&st.graph)]));
    // Findings of the bad run only (the mix-up's).
    let only_bad: Vec<&str> = arr(&p["findings_only_bad"])
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(only_bad.contains(&"CDT008"), "{only_bad:?}");
    assert!(arr(&p["findings_only_good"]).is_empty(), "{p:#}");

    // Text: the verdict, the library, the explanation, the findings.
    let o = st.cli(&["diff", "--color", "never", &s(&good), &s(&bad)]);
    assert_eq!(o.code(), Some(1), "{}", o.show());
    let t = o.out();
    assert!(t.contains("DIFFERENT:"), "{t}");
    assert!(t.contains("libcudnn_graph (cudnn): another file"), "{t}");
    assert!(t.contains("reason      RUNPATH → LD_LIBRARY_PATH\n"), "{t}");
    // Paths under the work directory are written …/ (the legend says so).
    assert!(
        t.contains("LD_LIBRARY_PATH  + …/opt/cudnn-9.14-graph/lib  (only in BAD)"),
        "{t}"
    );
    assert!(t.contains(&format!("…/ = {}/", s(&st.dir))), "{t}");
    // The library whose version differs first; the engines graph loaded
    // from the same directory after it.
    let first = t.find("libcudnn_graph (cudnn)").unwrap();
    assert!(
        t.find("libcudnn_heuristic (cudnn)")
            .is_some_and(|i| i > first),
        "{t}"
    );
    // libcudnn_ops is the same file in both (only its version was asked
    // in one): no difference.
    assert!(!t.contains("libcudnn_ops (cudnn)"), "{t}");
    assert!(t.contains("findings only in BAD:"), "{t}");
    // Markdown: a table row per field.
    let o = st.cli(&["diff", "--format", "markdown", &s(&good), &s(&bad)]);
    assert_eq!(o.code(), Some(1), "{}", o.show());
    assert!(
        o.out().contains(
            "| `libcudnn_graph` | another file | reason | `RUNPATH` | `LD_LIBRARY_PATH` |"
        ),
        "{}",
        o.out()
    );
    // Read errors and usage errors: 2.
    let o = st.cli(&["diff", &s(&good), &s(&st.dir.join("missing"))]);
    assert_eq!(o.code(), Some(2), "{}", o.show());
    assert!(o.err().contains("BAD"), "{}", o.show());
    let o = st.cli(&["diff", "--format", "chrome", &s(&good), &s(&bad)]);
    assert_eq!(o.code(), Some(2), "{}", o.show());
}

// ---------------------------------------------------------------------------
// fleet

#[test]
fn fleet_view_shows_the_two_odd_ranks() {
    let st = Stack::new("fleet");
    let host = String::from_utf8_lossy(&run(std::process::Command::new("hostname"), None).stdout)
        .trim()
        .to_string();
    // Eight ranks, one launcher each, as `srun cudnn-trace --out DIR/%h-%p`
    // runs them; ranks 3 and 5 have the 9.14 graph directory on their path.
    let mut dirs = BTreeSet::new();
    for rank in 0..8 {
        let r = rank.to_string();
        let bad = rank == 3 || rank == 5;
        let env = [("RANK", r.as_str()), ("LOCAL_RANK", r.as_str())];
        let mut cmd = launcher(&st.dir);
        cmd.env("LD_LIBRARY_PATH", st.ld_path(bad));
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.args(["-q", "--out", "job/%h-%p", "--"]).arg(&st.prog);
        let o = run(cmd, None);
        assert_eq!(o.code(), Some(0), "{}", o.show());
        let _ = bad;
    }
    for e in fs::read_dir(st.dir.join("job")).unwrap() {
        dirs.insert(e.unwrap().file_name().into_string().unwrap());
    }
    assert_eq!(dirs.len(), 8, "one directory per launcher: {dirs:?}");
    for d in &dirs {
        let (h, pid) = d.rsplit_once('-').unwrap();
        assert_eq!(h, host, "%h");
        assert!(pid.parse::<u32>().is_ok(), "%p: {d}");
    }

    let o = st.cli(&["report", "--fleet", "--json", "job"]);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let v = json(&o);
    assert_eq!(v["runs"], 8, "{v:#}");
    assert_eq!(v["processes"], 8);
    assert_eq!(v["odd_processes"], 2);
    let roles = arr(&v["roles"]);
    assert_eq!(roles.len(), 1, "{v:#}");
    let r = &roles[0];
    assert_eq!(r["majority"]["count"], 6);
    assert_eq!(r["majority"]["ranks"], "0-2,4,6-7");
    let odd = arr(&r["odd"]);
    assert_eq!(odd.len(), 1, "{r:#}");
    assert_eq!(odd[0]["count"], 2);
    assert_eq!(odd[0]["ranks"], "3,5");
    assert_eq!(odd[0]["subset"], false);
    let members: Vec<(&str, &str)> = arr(&odd[0]["members"])
        .iter()
        .map(|m| (m["rank"].as_str().unwrap(), m["host"].as_str().unwrap()))
        .collect();
    assert_eq!(members.len(), 2);
    assert!(members.iter().all(|(_, h)| *h == host));
    let graph = arr(&odd[0]["differs"])
        .iter()
        .find(|d| d["key"] == "libcudnn_graph")
        .unwrap_or_else(|| panic!("{:#}", odd[0]));
    assert_eq!(graph["bad"]["search_dir"], s(&st.graph).as_str());
    assert_eq!(graph["good"]["reason"], "RUNPATH");

    // Text: majority first, then the odd group with its ranks and why.
    let o = st.cli(&["report", "--fleet", "--color", "never", "job"]);
    let t = o.out();
    assert!(t.contains("ODD ONES OUT: 2 processes of 8"), "{t}");
    let maj = t.find("majority").expect("majority line");
    let oddl = t.find("odd ").expect("odd line");
    assert!(maj < oddl, "{t}");
    assert!(t.contains("2 processes, ranks 3,5 on"), "{t}");
    assert!(
        t.contains("libcudnn_graph: another file (majority → here)"),
        "{t}"
    );
    assert!(t.contains("reason      RUNPATH → LD_LIBRARY_PATH"), "{t}");
    assert!(
        t.contains(
            "because this group found it through LD_LIBRARY_PATH entry …/opt/cudnn-9.14-graph/lib"
        ),
        "{t}"
    );
    // Markdown.
    let o = st.cli(&["report", "--fleet", "--format", "markdown", "job"]);
    assert!(o.out().contains("| 2 | 3,5 |"), "{}", o.out());
}

// ---------------------------------------------------------------------------
// chrome

/// The structure `docs/output.md` documents for `--format chrome`,
/// checked as Perfetto's and catapult's importers read it. Returns the
/// events.
fn validate_chrome(raw: &str) -> Vec<Value> {
    let doc: Value = serde_json::from_str(raw).expect("JSON");
    for key in [
        "displayTimeUnit",
        "baseTimeNanoseconds",
        "traceName",
        "otherData",
        "metadata",
        "traceEvents",
    ] {
        assert!(doc.get(key).is_some(), "top-level {key} missing");
    }
    assert_eq!(doc["displayTimeUnit"], "ms");
    let base = doc["baseTimeNanoseconds"].as_u64().expect("integer base");
    assert!(base > 1_600_000_000_000_000_000, "epoch ns: {base}");
    // Perfetto keeps `metadata` flat and scalar.
    for (k, v) in doc["metadata"].as_object().unwrap() {
        assert!(
            !v.is_object() && !v.is_array(),
            "metadata.{k} is not a scalar"
        );
    }
    // Never a key HTA's rank regex would take for the run's rank.
    assert!(doc.get("distributedInfo").is_none());
    assert!(!raw.contains("\"rank\": "), "HTA's regex must not match");
    // ts and dur: numbers with three decimals, written without a float.
    let ts_re = regex_lite_ts(raw);
    assert!(ts_re > 0, "no ts found");
    let events = doc["traceEvents"].as_array().unwrap().clone();
    let mut named = BTreeSet::new();
    let mut used = BTreeSet::new();
    let mut slices: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    for e in &events {
        let ph = e["ph"].as_str().expect("ph");
        let pid = e["pid"].as_u64().expect("integer pid");
        let tid = e["tid"].as_u64().expect("integer tid");
        assert!(pid <= u32::MAX as u64 && tid <= u32::MAX as u64, "{e}");
        assert!(e["name"].is_string(), "{e}");
        match ph {
            "M" => {
                let name = e["name"].as_str().unwrap();
                match name {
                    "process_name" => {
                        assert!(!e["args"]["name"].as_str().unwrap().is_empty());
                        named.insert(pid);
                    }
                    "process_labels" => assert!(e["args"]["labels"].is_string(), "{e}"),
                    "process_sort_index" => assert!(e["args"]["sort_index"].is_u64(), "{e}"),
                    other => panic!("unexpected metadata {other}"),
                }
            }
            "i" | "X" => {
                let ts = e["ts"].as_f64().expect("numeric ts");
                assert!(ts >= 0.0, "{e}");
                assert!(
                    e["cat"].as_str().unwrap().starts_with("cudnn-trace,"),
                    "{e}"
                );
                assert!(e["args"].is_object(), "{e}");
                used.insert(pid);
                if ph == "i" {
                    assert!(matches!(e["s"].as_str(), Some("t" | "p" | "g")), "{e}");
                } else {
                    let dur = e["dur"].as_f64().expect("numeric dur");
                    assert!(dur >= 0.0, "{e}");
                    slices.entry((pid, tid)).or_default().push((ts, ts + dur));
                }
            }
            other => panic!("unexpected phase {other}: {e}"),
        }
    }
    assert!(
        used.is_subset(&named),
        "every process is named: {used:?} {named:?}"
    );
    // Slices on one thread nest or follow each other, never overlap in
    // part (Perfetto moves those to an overflow track).
    for ((pid, tid), mut v) in slices {
        v.sort_by(|a, b| {
            a.0.partial_cmp(&b.0)
                .unwrap()
                .then(b.1.partial_cmp(&a.1).unwrap())
        });
        let mut open: Vec<f64> = Vec::new();
        for (start, end) in v {
            while open.last().is_some_and(|&e| e <= start) {
                open.pop();
            }
            if let Some(&outer) = open.last() {
                assert!(end <= outer, "partial overlap on {pid}/{tid}");
            }
            open.push(end);
        }
    }
    events
}

/// How many `"ts":` values have exactly three decimals; panics on one
/// that has not.
fn regex_lite_ts(raw: &str) -> usize {
    let mut n = 0;
    for (i, _) in raw.match_indices("\"ts\":") {
        let v: String = raw[i + 5..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let (_, frac) = v
            .split_once('.')
            .unwrap_or_else(|| panic!("ts {v} without decimals"));
        assert_eq!(frac.len(), 3, "ts {v}");
        n += 1;
    }
    n
}

#[test]
fn chrome_timeline_has_the_documented_structure() {
    let st = Stack::new("chrome");
    let bad = st.trace("bad", true, &[("RANK", "3")]);
    let o = st.cli(&["report", "--format", "chrome", &s(&bad)]);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let raw = o.out();
    let events = validate_chrome(&raw);
    let doc: Value = serde_json::from_str(&raw).unwrap();
    let base = doc["baseTimeNanoseconds"].as_u64().unwrap();
    assert_eq!(base % (7_889_238 * 1_000_000_000), 0, "Kineto's base rule");
    let pid = fs::read_dir(&bad)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .find_map(|n| n.strip_suffix(".jsonl").and_then(|p| p.parse::<u64>().ok()))
        .expect("a trace file");
    let name = events
        .iter()
        .find(|e| e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == pid)
        .expect("process_name of the program");
    let pname = name["args"]["name"].as_str().unwrap();
    assert!(
        pname.starts_with(&format!("python3.12 (pid {pid}, rank 3")),
        "{pname}"
    );
    assert!(events
        .iter()
        .any(|e| e["name"] == "process_sort_index" && e["args"]["sort_index"] == 3));
    // The graph load from the 9.14 directory: a slice on its thread, from
    // the start of the loader's search to the mapping.
    let load = events
        .iter()
        .find(|e| e["ph"] == "X" && e["name"] == "load libcudnn_graph.so.9")
        .expect("the graph load, as a slice");
    assert!(load["dur"].as_f64().is_some_and(|d| d > 0.0), "{load}");
    // Every recorded load and failed load is a slice: the shim knows when
    // each search began.
    for e in events
        .iter()
        .filter(|e| e["cat"] == "cudnn-trace,load" || e["cat"] == "cudnn-trace,load_failed")
    {
        let already = e["name"]
            .as_str()
            .is_some_and(|n| n.ends_with("(already loaded)"));
        assert!(e["ph"] == "X" || already, "a load without its start: {e}");
    }
    assert_eq!(load["args"]["search_dir"], s(&st.graph).as_str());
    assert_eq!(load["args"]["reason"], "LD_LIBRARY_PATH");
    let start = events
        .iter()
        .find(|e| e["name"] == "process start (exec)")
        .expect("process start");
    assert!(load["ts"].as_f64() >= start["ts"].as_f64());
    // The findings, on the process, at their evidence.
    let finding = events
        .iter()
        .find(|e| {
            e["cat"].as_str().is_some_and(|c| c.contains(",finding,"))
                && e["args"]["code"] == "CDT008"
        })
        .expect("the CDT008 finding");
    assert_eq!(finding["s"], "p");
    assert!(
        finding["ts"].as_f64() >= load["ts"].as_f64(),
        "at or after its evidence"
    );
    if calls_recorded_here() {
        assert!(
            events.iter().any(|e| e["cat"] == "cudnn-trace,call"),
            "calls"
        );
    }

    // --align-to: another trace's base; the same instants, shifted.
    let torch = st.dir.join("torch.json");
    let other_base = base - 7_889_238 * 1_000_000_000;
    fs::write(
        &torch,
        format!("{{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": {other_base}, \"traceEvents\": []}}"),
    )
    .unwrap();
    let o = st.cli(&[
        "report",
        "--format",
        "chrome",
        "--align-to",
        &s(&torch),
        &s(&bad),
    ]);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let aligned_raw = o.out();
    let aligned = validate_chrome(&aligned_raw);
    let adoc: Value = serde_json::from_str(&aligned_raw).unwrap();
    assert_eq!(adoc["baseTimeNanoseconds"].as_u64(), Some(other_base));
    let ns = |raw: &str, name: &str| -> u128 {
        let i = raw.find(&format!("\"name\":\"{name}\"")).expect(name);
        let j = raw[i..].find("\"ts\":").unwrap() + i + 5;
        let v: String = raw[j..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        v.replace('.', "").parse().unwrap()
    };
    let name = "load libcudnn_graph.so.9";
    assert_eq!(
        ns(&raw, name) + base as u128,
        ns(&aligned_raw, name) + other_base as u128,
        "the same wall-clock instant to the nanosecond"
    );
    assert!(!aligned.iter().any(|e| e["name"] == "process_sort_index"));
    let o = st.cli(&[
        "report",
        "--format",
        "chrome",
        "--align-to",
        &s(&st.dir.join("nope.json")),
        &s(&bad),
    ]);
    assert_eq!(o.code(), Some(2), "{}", o.show());

    // Two hosts: pids that would collide become host_index << 22 | pid.
    let other = st.dir.join("other-host");
    fs::create_dir_all(&other).unwrap();
    for e in fs::read_dir(&bad).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "jsonl") {
            let text = fs::read_to_string(&p).unwrap();
            let moved = text.replacen("\"hostname\":\"", "\"hostname\":\"zz-other-", 1);
            fs::write(other.join(p.file_name().unwrap()), moved).unwrap();
        }
    }
    let o = st.cli(&["report", "--format", "chrome", &s(&bad), &s(&other)]);
    assert_eq!(o.code(), Some(0), "{}", o.show());
    let events = validate_chrome(&o.out());
    let pids: BTreeSet<u64> = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "{pids:?}");
    assert!(pids.iter().all(|p| p & 0x3f_ffff == pid), "{pids:?}");
}
