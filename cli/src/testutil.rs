//! Helpers for unit tests.

use std::path::PathBuf;
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
