//! The version probe helper (`probe/`, `cdtrace-probe`), reached the way
//! the report and the pin check reach it: `cudnn-trace __probe-cudnn --ask
//! JSON` in a process of its own, which becomes the helper extracted beside
//! the shim. Run on fake cuDNN 9, runtime and driver installs
//! (`tests/fixtures/build-stack.sh`) and a small library that prints from
//! its constructor (`tests/launcher/noisy_driver.c`).
//!
//! ```sh
//! cargo test -p cudnn-trace-integration --test probe_helper
//! ```

use cudnn_trace_core::machine::probe::{Answer, Ask, NOT_RUN};
use cudnn_trace_integration::launcher_support::{compile, launcher, run, stack, work_dir, Output};
use std::fs;
use std::path::Path;

/// `cudnn-trace __probe-cudnn --ask JSON` for `asks`: the run, and the
/// answers when its stdout parsed.
fn ask(asks: &[Ask]) -> (Output, Option<Vec<Answer>>) {
    let json = serde_json::to_string(asks).unwrap();
    let mut cmd = launcher(Path::new("/"));
    cmd.args(["__probe-cudnn", "--ask", &json]);
    let out = run(cmd, None);
    let answers = serde_json::from_slice(&out.stdout).ok();
    (out, answers)
}

/// The answers, which must have come, one per ask.
fn answers(asks: &[Ask]) -> (Output, Vec<Answer>) {
    let (out, a) = ask(asks);
    assert_eq!(out.code(), Some(0), "{}", out.show());
    let a = a.unwrap_or_else(|| panic!("no answers:\n{}", out.show()));
    assert_eq!(a.len(), asks.len(), "{}", out.show());
    (out, a)
}

fn at(dir: &Path, file: &str) -> String {
    dir.join(file).to_string_lossy().into_owned()
}

fn check(dir: &Path, stem: &str, function: &str) -> Ask {
    Ask::CudnnCheck {
        path: at(dir, &format!("{stem}.so.9")),
        function: function.into(),
    }
}

#[test]
fn each_ask_is_answered_in_order_from_the_libraries_themselves() {
    let cudnn = stack("cudnn9", &["--version", "9.19.0", "--cuda", "13.0"]);
    let cudart = stack("cudart", &["--version", "13.0"]);
    let driver = stack("cuda", &["--driver", "580.65.06"]);
    let asks = [
        Ask::CudnnCore {
            path: at(cudnn, "libcudnn_graph.so.9"),
        },
        check(cudnn, "libcudnn_ops", "cudnnOpsVersionCheck"),
        check(cudnn, "libcudnn_cnn", "cudnnCnnVersionCheck"),
        check(cudnn, "libcudnn_adv", "cudnnAdvVersionCheck"),
        check(cudnn, "libcudnn_adv", "cudnnNoSuchCheck"),
        Ask::Runtime {
            path: at(cudart, "libcudart.so.13"),
        },
        Ask::Driver {
            path: at(driver, "libcuda.so.1"),
        },
    ];
    let (out, a) = answers(&asks);
    assert_eq!(
        (a[0].version, a[0].cudart, a[0].error.as_deref()),
        (Some(91900), Some(13000), None),
        "{a:?}"
    );
    assert!(a[0].max_device.is_some(), "{a:?}");
    for c in &a[1..4] {
        assert_eq!((c.status, c.error.as_deref()), (Some(0), None), "{a:?}");
    }
    assert_eq!(a[4].error.as_deref(), Some("it has no cudnnNoSuchCheck"));
    assert_eq!((a[5].status, a[5].version), (Some(0), Some(13000)), "{a:?}");
    assert_eq!(a[6].status, Some(0), "{a:?}");
    assert_eq!(a[6].version, Some(13000), "{a:?}");
    assert!(out.err().is_empty(), "{}", out.show());
}

#[test]
fn checks_after_a_core_library_that_did_not_load_are_not_run() {
    let d = work_dir("probe-no-core");
    let from = stack("cudnn9", &["--version", "9.19.0"]);
    for e in fs::read_dir(from).unwrap().flatten() {
        let name = e.file_name();
        if name != "libcudnn_graph.so.9" {
            fs::copy(e.path(), d.join(&name)).unwrap();
        }
    }
    let asks = [
        Ask::CudnnCore {
            path: at(&d, "libcudnn_graph.so.9"),
        },
        check(&d, "libcudnn_ops", "cudnnOpsVersionCheck"),
        // A later core library that loads: the checks after it run again.
        Ask::CudnnCore {
            path: at(from, "libcudnn_graph.so.9"),
        },
        check(from, "libcudnn_ops", "cudnnOpsVersionCheck"),
    ];
    let (_, a) = answers(&asks);
    let e = a[0].error.as_deref().unwrap_or_default();
    assert!(e.contains("libcudnn_graph.so.9"), "{a:?}");
    // The helper's words are the constant the parent recognises.
    assert_eq!(a[1].error.as_deref(), Some(NOT_RUN), "{a:?}");
    assert_eq!(a[1].status, None);
    assert_eq!((a[2].version, a[3].status), (Some(91900), Some(0)), "{a:?}");
}

#[test]
fn what_a_library_prints_and_what_an_error_says_cannot_break_the_result() {
    let d = work_dir("probe-noisy");
    let lib = d.join("libnoisy.so");
    compile("noisy_driver.c", &lib, &["-shared", "-fPIC"]);
    // A directory whose name holds a quote, a backslash and a newline: the
    // loader's message names it, and the answer must still parse.
    let odd = d.join("we\"ird\\di\nr");
    fs::create_dir_all(&odd).unwrap();
    let asks = [
        Ask::Driver {
            path: lib.to_string_lossy().into_owned(),
        },
        Ask::Runtime {
            path: at(&odd, "libcudart.so.13"),
        },
    ];
    let (out, a) = answers(&asks);
    assert_eq!((a[0].status, a[0].version), (Some(0), Some(12345)), "{a:?}");
    // The constructor's line went to stderr instead.
    assert!(out.err().contains("[{\"version\":1}]"), "{}", out.show());
    let e = a[1].error.as_deref().unwrap_or_default();
    assert!(e.contains(&at(&odd, "libcudart.so.13")), "{e:?}");
}

#[test]
fn arguments_it_cannot_read_end_it_with_a_usage_line() {
    for args in [
        &["__probe-cudnn", "/some/dir", "9"][..],
        &["__probe-cudnn", "--ask", "not json"],
        &["__probe-cudnn"],
    ] {
        let mut cmd = launcher(Path::new("/"));
        cmd.args(args);
        let out = run(cmd, None);
        assert_eq!(out.code(), Some(2), "{args:?}: {}", out.show());
        assert!(out.out().is_empty(), "{}", out.show());
        assert!(out.err().contains("usage:"), "{}", out.show());
    }
    // No asks: an empty list.
    let (_, a) = answers(&[]);
    assert!(a.is_empty());
}
