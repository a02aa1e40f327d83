//! The progress bar of `report` and of the launcher's end-of-run summary:
//! on stderr, only when stderr is a terminal, and only once reading and
//! analysing have taken more than a second (a quick report stays as quiet
//! as it always was; a piped or redirected one never gets one, nor does
//! an input under 16 MiB).

use cudnn_trace_core::pipeline::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// How long a report runs before its bar appears.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// Less input than this never gets a bar: it is read in a fraction of a
/// second (32 MiB takes 0.2 s on the 2-core machine, docs/benchmarks.md),
/// and a bar drawn into the small reports of a run on a slow, loaded
/// machine (the knowledge tables take a moment to load) would only be
/// noise between the program's output and the summary.
const QUIET_BELOW: u64 = 16 << 20;

/// A progress bar that shows itself after [`QUIET_FOR`], from a small
/// thread that waits for that long (or for the end, whichever comes first),
/// so that it appears even during a long stage that reports nothing.
pub struct Bar {
    /// indicatif's bar, made once it may show (`arm`): making it and its
    /// style cost a small report (every launcher run's summary) a twentieth
    /// of its instructions, for a bar few reports ever get.
    bar: Option<ProgressBar>,
    /// The stage, for the bar's message.
    stage: &'static str,
    /// Dropped (or sent on) when the report is done: the thread ends.
    done: Option<mpsc::Sender<()>>,
    waiter: Option<thread::JoinHandle<()>>,
}

impl Bar {
    /// A bar for a report, hidden until [`Progress::read`] says how much
    /// there is to read (then see `arm`).
    pub fn new() -> Bar {
        Bar {
            bar: None,
            stage: "reading",
            done: None,
            waiter: None,
        }
    }

    /// Starts the wait after which the bar shows, when stderr is a
    /// terminal and the input is large enough to take a while.
    fn arm(&mut self, total: u64) {
        if self.waiter.is_some() || total < QUIET_BELOW || !std::io::stderr().is_terminal() {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "{msg:9} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ({eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_message(self.stage);
        let (tx, rx) = mpsc::channel::<()>();
        let shown = bar.clone();
        self.bar = Some(bar);
        self.waiter = Some(thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(QUIET_FOR) {
                shown.set_draw_target(ProgressDrawTarget::stderr());
                shown.enable_steady_tick(Duration::from_millis(200));
            }
        }));
        self.done = Some(tx);
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
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Progress for Bar {
    fn read(&mut self, done: u64, total: u64) {
        self.arm(total);
        if let Some(bar) = &self.bar {
            bar.set_length(total.max(done));
            bar.set_position(done);
        }
    }

    fn stage(&mut self, name: &'static str) {
        self.stage = name;
        if let Some(bar) = &self.bar {
            bar.set_message(name);
        }
    }
}
