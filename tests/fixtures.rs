//! The fake CUDA stack behaves like the real one where the other suites rely
//! on it: sonames, RUNPATH `$ORIGIN`, cuDNN 9's versioned-name dlopen order,
//! LD_LIBRARY_PATH beating RUNPATH, version queries and status codes.
//! The checks themselves live in `tests/fixtures/selftest.sh` (shell, so that
//! they can also run by hand on a GPU machine next to the real libraries).

use std::process::Command;

#[test]
fn fake_stack_selftest_passes() {
    let script = cudnn_trace_integration::tools::package_dir().join("fixtures/selftest.sh");
    let out = Command::new("bash")
        .arg(&script)
        .output()
        .expect("run selftest.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with("# "))
        .unwrap_or("");
    assert!(
        out.status.success() && summary.contains(" passed, 0 failed"),
        "selftest.sh failed ({:?}), summary {summary:?}\n{stdout}\n{stderr}",
        out.status
    );
    let passed: usize = summary
        .trim_start_matches("# ")
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    // The suite has 66 checks; a handful skip where a real cuDNN or driver is
    // installed system-wide (GPU machines). Far fewer means it did not run.
    assert!(
        passed >= 60,
        "only {passed} fixture checks passed\n{stdout}"
    );
}
