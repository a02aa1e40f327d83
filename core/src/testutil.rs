//! Helpers for unit tests.

use crate::model::trace::{parse_trace, Image};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A fresh, empty directory under the system temp dir.
pub fn tempdir(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "cudnn-trace-test-{}-{name}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A process header line.
pub fn header(pid: u32, ppid: u32, origin: &str) -> String {
    format!(
        r#"{{"ev":"process","v":1,"shim":"0.1.0","pid":{pid},"ppid":{ppid},"tid":{pid},"t_ns":{t},"wall_ms":1763700000000,"exe":"/usr/bin/python3.11","argv":["python","train.py"],"hostname":"node1","cwd":"/w","env":{{"LD_LIBRARY_PATH":"/usr/local/cuda/lib64"}},"mode":"cuda","origin":"{origin}","glibc":"2.36","preload":true}}"#,
        t = u64::from(pid) * 1000
    )
}

/// A `load` event line (family from the path, identity from its bytes).
#[allow(clippy::too_many_arguments)]
pub fn load(
    pid: u32,
    seq: u64,
    path: &str,
    real: &str,
    reason: &str,
    owner: &str,
    req: &str,
    via: &str,
    new: bool,
) -> String {
    let fam = cudnn_trace_format::cuda_family(path.as_bytes())
        .map(|f| format!("\"{f}\""))
        .unwrap_or_else(|| "null".into());
    format!(
        r#"{{"ev":"load","seq":{seq},"t_ns":1,"pid":{pid},"ppid":1,"tid":{pid},"name":"x","path":"{path}","realpath":"{real}","reason":"{reason}","reason_owner":{owner},"search_dir":null,"requester":"{req}","via":"{via}","mode":null,"lmid":0,"soname":null,"dev":1,"ino":{ino},"size":3,"build_id":null,"family":{fam},"tried":[],"new":{new}}}"#,
        ino = path.bytes().map(u64::from).sum::<u64>(),
        owner = if owner.is_empty() {
            "null".to_string()
        } else {
            format!("\"{owner}\"")
        }
    )
}

/// One process image parsed from `header(pid, ppid, origin)` and `lines`.
pub fn image(pid: u32, ppid: u32, origin: &str, lines: &[String], file: &str) -> Image {
    let mut s = header(pid, ppid, origin);
    s.push('\n');
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    let (img, probs) = parse_trace(s.as_bytes(), Path::new(file));
    assert!(probs.is_empty(), "{probs:?}");
    img.unwrap()
}

/// A directory of traces: a trainer (pid 10) with forked workers
/// 11–13 alike, worker 14 that loaded cuDNN once more, and two alike
/// processes 20 and 21 of another parent (5); each failed to load
/// libcudnn_adv.so.9 once.
pub fn alike_fleet() -> PathBuf {
    let d = tempdir("alike");
    let cudnn = |pid: u32, seq: u64| {
        load(
            pid,
            seq,
            "/l/libcudnn.so.9",
            "/l/libcudnn.so.9.1.0",
            "LD_LIBRARY_PATH",
            "",
            "/usr/bin/python3.11",
            "dlopen",
            true,
        )
    };
    let write = |pid: u32, ppid: u32, origin: &str, loads: u64| {
        let mut t = header(pid, ppid, origin);
        for seq in 1..=loads {
            t += &format!("\n{}", cudnn(pid, seq));
        }
        let seq = loads + 1;
        t += &format!(
            r#"
{{"ev":"load_failed","seq":{seq},"t_ns":{pid}{seq},"pid":{pid},"ppid":{ppid},"tid":{pid},"name":"libcudnn_adv.so.9","requester":"/l/libcudnn.so.9","via":"dlopen","mode":2,"lmid":0,"family":"cudnn","tried":[{{"path":"/l/libcudnn_adv.so.9","reason":"LD_LIBRARY_PATH","result":"missing"}}],"error":null,"errno":2}}
{{"ev":"dlerror","seq":{},"t_ns":{pid}{seq},"pid":{pid},"ppid":{ppid},"tid":{pid},"req":{seq},"error":"libcudnn_adv.so.9: cannot open shared object file: No such file or directory"}}"#,
            seq + 1
        );
        std::fs::write(d.join(format!("{pid}.jsonl")), t + "\n").unwrap();
    };
    write(10, 1, "exec", 1);
    for pid in 11..=13 {
        write(pid, 10, "fork", 2);
    }
    write(14, 10, "fork", 3);
    write(20, 5, "exec", 1);
    write(21, 5, "exec", 1);
    d
}
