//! Synthetic traces for the rules' tests: a builder that writes the JSONL a
//! shim would (process header, `load`, `load_failed`, `unload`, `version`,
//! `call` lines), parses it the way `report` does, and evaluates the rules
//! against a fake machine.

use super::facts::StderrFacts;
use super::{evaluate, Context, Facts, Knowledge};
pub use super::{Finding, Severity};
pub use crate::machine::FakeDisk;
use crate::machine::Machine;
use crate::model::elf::DynInfo;
use crate::model::trace::{parse_trace, Image};
use serde_json::json;
use std::path::Path;

pub struct Trace {
    lines: Vec<String>,
    seq: u64,
    pub stderr: Option<String>,
    pub machine: FakeDisk,
    env: serde_json::Map<String, serde_json::Value>,
    exe: String,
    host: String,
}

fn dirname(p: &str) -> &str {
    crate::analysis::findings::facts::dirname(p)
}

impl Default for Trace {
    fn default() -> Self {
        Self::new()
    }
}

impl Trace {
    pub fn new() -> Self {
        Trace {
            lines: Vec::new(),
            seq: 0,
            stderr: None,
            machine: FakeDisk::default(),
            env: serde_json::Map::new(),
            exe: "/usr/bin/python3.12".into(),
            host: "node1".into(),
        }
    }

    fn next(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.env.insert(k.into(), json!(v));
        self
    }

    pub fn exe(mut self, e: &str) -> Self {
        self.exe = e.into();
        self
    }

    pub fn stderr(mut self, s: &str) -> Self {
        self.stderr = Some(s.into());
        self
    }

    pub fn machine(mut self, f: impl FnOnce(&mut FakeDisk)) -> Self {
        f(&mut self.machine);
        self
    }

    /// A new load of `path` (its own real path), found by `reason` in its
    /// directory, asked for by `requester` through DT_NEEDED.
    pub fn load(self, path: &str, reason: &str, requester: &str) -> Self {
        let ino = path.bytes().map(u64::from).sum::<u64>() + path.len() as u64 * 1000;
        self.load_id(path, path, ino, reason, requester)
    }

    /// A load with an explicit real path and inode.
    pub fn load_id(
        mut self,
        path: &str,
        real: &str,
        ino: u64,
        reason: &str,
        requester: &str,
    ) -> Self {
        let seq = self.next();
        let name = path.rsplit('/').next().unwrap_or(path);
        let search = matches!(
            reason,
            "LD_LIBRARY_PATH"
                | "RUNPATH"
                | "RPATH"
                | "RPATH/RUNPATH"
                | "ld.so.cache"
                | "default-dir"
                | "pin"
        );
        let owner = matches!(reason, "RUNPATH" | "RPATH").then_some(requester);
        let fam = cudnn_trace_format::cuda_family(path.as_bytes());
        self.lines.push(
            json!({
                "ev": "load", "seq": seq, "t_ns": seq * 10, "pid": 100, "ppid": 1, "tid": 100,
                "name": if reason == "path" { path } else { name },
                "path": path, "realpath": real, "reason": reason,
                "reason_owner": owner,
                "search_dir": if search { Some(dirname(path)) } else { None },
                "requester": requester, "via": "needed", "mode": null, "lmid": 0,
                "soname": name, "dev": 2049, "ino": ino, "size": 1000, "build_id": null,
                "family": fam, "tried": [], "new": true
            })
            .to_string(),
        );
        self
    }

    /// A load requested by `name` (a bare name), with `tried` candidates.
    pub fn load_named(
        mut self,
        name: &str,
        path: &str,
        reason: &str,
        requester: &str,
        via: &str,
    ) -> Self {
        let seq = self.next();
        let fam = cudnn_trace_format::cuda_family(path.as_bytes());
        let ino = path.bytes().map(u64::from).sum::<u64>() + path.len() as u64 * 1000;
        self.lines.push(
            json!({
                "ev": "load", "seq": seq, "t_ns": seq * 10, "pid": 100, "ppid": 1, "tid": 100,
                "name": name, "path": path, "realpath": path, "reason": reason,
                "reason_owner": matches!(reason, "RUNPATH" | "RPATH").then_some(requester),
                "search_dir": dirname(path), "requester": requester, "via": via, "mode": 2, "lmid": 0,
                "soname": null, "dev": 2049, "ino": ino, "size": 1000, "build_id": null,
                "family": fam, "tried": [{"path": path, "reason": reason, "result": "used"}], "new": true
            })
            .to_string(),
        );
        self
    }

    pub fn unload(mut self, path: &str) -> Self {
        let seq = self.next();
        let fam = cudnn_trace_format::cuda_family(path.as_bytes());
        self.lines.push(
            json!({"ev": "unload", "seq": seq, "t_ns": seq * 10, "pid": 100, "ppid": 1, "tid": 100,
                   "path": path, "lmid": 0, "family": fam})
            .to_string(),
        );
        self
    }

    /// A failed `dlopen(name)` by `requester`: candidates `(path, reason,
    /// result)` and the loader's error text.
    pub fn failed(
        mut self,
        name: &str,
        requester: &str,
        tried: &[(&str, &str, &str)],
        error: Option<&str>,
    ) -> Self {
        let seq = self.next();
        let fam = cudnn_trace_format::cuda_family(name.as_bytes());
        let tried: Vec<serde_json::Value> = tried
            .iter()
            .map(|(p, r, x)| json!({"path": p, "reason": r, "result": x}))
            .collect();
        self.lines.push(
            json!({
                "ev": "load_failed", "seq": seq, "t_ns": seq * 10, "pid": 100, "ppid": 1, "tid": 100,
                "name": name, "requester": requester, "via": "dlopen", "mode": 2, "lmid": 0,
                "family": fam, "tried": tried, "error": error, "errno": 2
            })
            .to_string(),
        );
        self
    }

    /// A `version` event of source `query`.
    pub fn version_query(
        mut self,
        path: &str,
        family: &str,
        version: &str,
        cuda_build: Option<i64>,
        max_device: Option<i64>,
        check: Option<i64>,
    ) -> Self {
        let seq = self.next();
        self.lines.push(
            json!({
                "ev": "version", "seq": seq, "t_ns": seq * 10, "pid": 100, "ppid": 1, "tid": 100,
                "path": path, "family": family, "source": "query", "version": version,
                "raw": null, "cuda_build": cuda_build, "max_device": max_device, "check": check,
                "core": null, "status": null, "driver_file": null
            })
            .to_string(),
        );
        self
    }

    /// A `version` event for libcuda: driver CUDA version and file version.
    pub fn driver_version(mut self, path: &str, cuda: &str, driver_file: Option<&str>) -> Self {
        let seq = self.next();
        self.lines.push(
            json!({
                "ev": "version", "seq": seq, "t_ns": seq * 10, "pid": 100, "ppid": 1, "tid": 100,
                "path": path, "family": "cuda", "source": "query", "version": cuda,
                "raw": null, "cuda_build": null, "max_device": null, "check": null,
                "core": null, "status": null, "driver_file": driver_file
            })
            .to_string(),
        );
        self
    }

    /// A `call` event.
    pub fn call(
        mut self,
        func: &str,
        lib: &str,
        status: Option<i64>,
        value: Option<serde_json::Value>,
    ) -> Self {
        let seq = self.next();
        self.lines.push(
            json!({
                "ev": "call", "seq": seq, "t_ns": seq * 10, "pid": 100, "ppid": 1, "tid": 100,
                "fn": func, "lib": lib, "n": 1, "status": status, "value": value,
                "prop": null, "dur_ns": 1000, "via": "plt"
            })
            .to_string(),
        );
        self
    }

    /// Any other line, as JSON (fields merged over the common ones).
    pub fn raw(mut self, v: serde_json::Value) -> Self {
        let seq = self.next();
        let mut base = json!({"seq": seq, "t_ns": seq * 10, "pid": 100, "ppid": 1, "tid": 100});
        if v.get("ev").and_then(|e| e.as_str()) == Some("call") {
            base = json!({"seq": seq, "t_ns": seq * 10, "pid": 100, "ppid": 1, "tid": 100,
                          "lib": "/x/libcudart.so", "n": 1, "via": "plt", "status": 0,
                          "value": null, "prop": null, "dur_ns": null});
        }
        if let (Some(b), Some(o)) = (base.as_object_mut(), v.as_object()) {
            for (k, x) in o {
                b.insert(k.clone(), x.clone());
            }
        }
        self.lines.push(base.to_string());
        self
    }

    /// The JSONL text of the trace file.
    pub fn text(&self) -> String {
        let header = json!({
            "ev": "process", "v": 1, "shim": "0.1.0", "pid": 100, "ppid": 1, "tid": 100,
            "t_ns": 1, "wall_ms": 1763700000000u64, "exe": self.exe, "argv": ["python", "train.py"],
            "hostname": self.host, "cwd": "/w", "env": self.env, "mode": "cuda",
            "origin": "exec", "glibc": "2.39", "preload": true
        });
        let mut s = header.to_string();
        s.push('\n');
        for l in &self.lines {
            s.push_str(l);
            s.push('\n');
        }
        s
    }

    pub fn image(&self) -> Image {
        let (img, probs) = parse_trace(self.text().as_bytes(), Path::new("100.jsonl"));
        assert!(probs.is_empty(), "{probs:?}");
        img.unwrap()
    }

    pub fn findings(&self) -> Vec<Finding> {
        let k = Knowledge::embedded().unwrap();
        let img = self.image();
        let stderr = self.stderr.as_deref().map(|s| StderrFacts::new(s, &k));
        let facts = Facts::new(&img, stderr.as_ref());
        let machine = Machine::with_disk(self.machine.clone());
        let ctx = Context {
            knowledge: &k,
            machine: &machine,
        };
        evaluate(&facts, &ctx)
    }
}

/// The one finding with `code` (fails the test when there are none or several).
pub fn only<'a>(fs: &'a [Finding], code: &str) -> &'a Finding {
    let v: Vec<&Finding> = fs.iter().filter(|f| f.code == code).collect();
    assert_eq!(v.len(), 1, "want one {code}, got {}: {fs:#?}", v.len());
    v[0]
}

/// All findings with `code`.
pub fn all<'a>(fs: &'a [Finding], code: &str) -> Vec<&'a Finding> {
    fs.iter().filter(|f| f.code == code).collect()
}

/// No finding with `code`.
pub fn none(fs: &[Finding], code: &str) -> bool {
    let v = all(fs, code);
    assert!(v.is_empty(), "want no {code}: {v:#?}");
    true
}

/// The PyTorch mix-up of the GPU probe ([E-probe], E-probe):
/// pip cuDNN 9.19 with PyTorch, the system 9.14 first on LD_LIBRARY_PATH.
pub fn probe_trace() -> Trace {
    let sp = "/opt/torch/.venv/lib/python3.12/site-packages";
    let pip = format!("{sp}/nvidia/cudnn/lib");
    let disp = format!("{pip}/libcudnn.so.9");
    let sys = "/usr/lib/x86_64-linux-gnu";
    Trace::new()
        .exe("/opt/torch/.venv/bin/python3.12")
        .env("LD_LIBRARY_PATH", &format!("{sys}:/usr/local/nvidia/lib64"))
        .load(&format!("{sp}/nvidia/cu13/lib/libcudart.so.13"), "RPATH", &format!("{sp}/torch/lib/libtorch_cuda.so"))
        .load(&disp, "RPATH", &format!("{sp}/torch/lib/libtorch_cuda.so"))
        .load_named("libcudnn_graph.so.9", &format!("{sys}/libcudnn_graph.so.9.14.0"), "LD_LIBRARY_PATH", &disp, "dlopen")
        .version_query(&format!("{sys}/libcudnn_graph.so.9.14.0"), "cudnn", "9.14.0", Some(13000), Some(1210), None)
        .load_named("libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1", "LD_LIBRARY_PATH", &format!("{sys}/libcudnn_graph.so.9.14.0"), "dlopen")
        .driver_version("/usr/local/nvidia/lib64/libcuda.so.1", "13.0", None)
        .call("cudnnGetProperty", &disp, Some(0), Some(serde_json::json!(9)))
        .stderr("RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 19, 0) but found runtime version (9, 14, 0). PyTorch already comes bundled with cuDNN. One option to resolving this error is to ensure PyTorch can find the bundled cuDNN. one possibility is that there is a conflicting cuDNN in LD_LIBRARY_PATH.\n")
        .machine(move |m| {
            m.elf(&disp, DynInfo { runpath: vec!["$ORIGIN".into()], ..Default::default() });
            m.file(&format!("{pip}/libcudnn_graph.so.9"));
            m.dir(&format!("{sp}/nvidia_cudnn_cu13-9.19.0.56.dist-info"));
            m.file(&format!("{sys}/libcudnn_graph.so.9.14.0"));
        })
}

/// A trace of nonsense (absurd versions, empty names, a huge stderr cut in
/// a character): nothing in it may make the rules or the rendering panic.
pub fn hostile_trace() -> Trace {
    let big = format!(
        "{}é{}",
        "x".repeat(super::facts::MAX_STDERR),
        "Unable to load any of {"
    );
    Trace::new()
        .load("/x/libcudnn.so.99999999999", "LD_LIBRARY_PATH", "")
        .load("/x/libcudnn_graph.so", "weird", "/")
        .load("/x/libcuda.so.1.2.3.4.5.6.7.8.9.10", "path", "/x")
        .load("libcudart.so", "ld.so.cache", "relative")
        .version_query(
            "/x/libcudnn_graph.so",
            "cudnn",
            "not.a.version",
            Some(-5),
            Some(i64::MAX),
            Some(i64::MIN),
        )
        .driver_version("/x/libcuda.so.1.2.3.4.5.6.7.8.9.10", "", Some("garbage"))
        .call("cudnnCreate", "/nowhere", Some(i64::MIN), None)
        .call("cuInit", "", Some(-1), None)
        .call(
            "cudnnGetVersion",
            "/x/libcudnn.so",
            None,
            Some(serde_json::json!(-1)),
        )
        .call(
            "cudaGetDeviceProperties",
            "/x",
            Some(0),
            Some(serde_json::json!(-700)),
        )
        .failed(
            "",
            "",
            &[("", "", "")],
            Some(": undefined symbol: , version libcudnn"),
        )
        .failed(
            "libcudnn.so",
            "/x",
            &[],
            Some("x: undefined symbol: y, version libcudnn_ops_infer.so.8"),
        )
        .stderr(&big)
}
