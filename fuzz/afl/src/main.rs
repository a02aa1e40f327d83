//! AFL++ target: the bytes AFL++ gives become a damaged trace directory
//! (`cudnn_trace_integration::fuzz::TraceDir`, the same generator as the
//! bounded loop of `tests/fuzz_report.rs`), read by the report pipeline in
//! this process. A panic (a bug of the reader or the report, or output that
//! is unsafe on a terminal or not JSON) is a crash for AFL++.

use arbitrary::{Arbitrary, Unstructured};
use cudnn_trace_integration::fuzz::{report_in_process, TraceDir};

fn main() {
    let dir = std::env::temp_dir().join(format!("cdt-afl-{}", std::process::id()));
    afl::fuzz!(|data: &[u8]| {
        let Ok(trace) = TraceDir::arbitrary(&mut Unstructured::new(data)) else {
            return;
        };
        if trace.write(&dir).is_err() {
            return;
        }
        if let Err(why) = report_in_process(&dir) {
            panic!("{why}");
        }
    });
}
