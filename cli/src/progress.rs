//! The progress bar of `report` and of the launcher's end-of-run summary:
//! on stderr, only when stderr is a terminal, and only once reading and
//! analysing have taken more than a second (a quick report stays as quiet
//! as it always was; a piped or redirected one never gets one).

use cudnn_trace_core::pipeline::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// How long a report runs before its bar appears.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// A progress bar that shows itself after [`QUIET_FOR`], from a small
/// thread that waits for that long (or for the end, whichever comes first),
/// so that it appears even during a long stage that reports nothing.
pub struct Bar {
    bar: ProgressBar,
    /// Dropped (or sent on) when the report is done: the thread ends.
    done: Option<mpsc::Sender<()>>,
    waiter: Option<thread::JoinHandle<()>>,
}

impl Bar {
    /// A bar for a report; hidden, and never shown, when stderr is not a
    /// terminal.
    pub fn new() -> Bar {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "{msg:9} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ({eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_message("reading");
        let (done, waiter) = if std::io::stderr().is_terminal() {
            let (tx, rx) = mpsc::channel::<()>();
            let shown = bar.clone();
            let h = thread::spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(QUIET_FOR) {
                    shown.set_draw_target(ProgressDrawTarget::stderr());
                    shown.enable_steady_tick(Duration::from_millis(200));
                }
            });
            (Some(tx), Some(h))
        } else {
            (None, None)
        };
        Bar { bar, done, waiter }
    }

    /// The report is read and analysed: the bar goes (and leaves no line).
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        // Dropping the sender ends the wait at once.
        self.done.take();
        if let Some(h) = self.waiter.take() {
            let _ = h.join();
        }
        self.bar.finish_and_clear();
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Progress for Bar {
    fn read(&mut self, done: u64, total: u64) {
        self.bar.set_length(total.max(done));
        self.bar.set_position(done);
    }

    fn stage(&mut self, name: &'static str) {
        self.bar.set_message(name);
    }
}
