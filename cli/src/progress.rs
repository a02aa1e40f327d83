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

/// When and where a bar shows: stderr, past [`QUIET_FOR`], in
/// [`Bar::new`]; a recording terminal and shorter waits in the tests.
struct Rules {
    quiet_for: Duration,
    quiet_below: u64,
    /// Asked only once the input is large enough (one `ioctl`).
    on_terminal: fn() -> bool,
    /// Where the bar draws once it shows; taken by the one wait there is.
    /// (A boxed function item allocates nothing: a report that never
    /// gets a bar pays nothing for it.)
    target: Option<Box<dyn FnOnce() -> ProgressDrawTarget + Send>>,
}

impl Rules {
    fn stderr() -> Rules {
        Rules {
            quiet_for: QUIET_FOR,
            quiet_below: QUIET_BELOW,
            on_terminal: || std::io::stderr().is_terminal(),
            target: Some(Box::new(ProgressDrawTarget::stderr)),
        }
    }
}

/// A progress bar that shows itself after [`QUIET_FOR`], from a small
/// thread that waits for that long (or for the end, whichever comes first),
/// so that it appears even during a long stage that reports nothing.
pub struct Bar {
    rules: Rules,
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
        Bar::with(Rules::stderr())
    }

    fn with(rules: Rules) -> Bar {
        Bar {
            rules,
            bar: None,
            stage: "reading",
            done: None,
            waiter: None,
        }
    }

    /// Starts the wait after which the bar shows, when stderr is a
    /// terminal and the input is large enough to take a while.
    fn arm(&mut self, total: u64) {
        if self.waiter.is_some() || total < self.rules.quiet_below || !(self.rules.on_terminal)() {
            return;
        }
        let Some(target) = self.rules.target.take() else {
            return;
        };
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
        let (shown, quiet_for) = (bar.clone(), self.rules.quiet_for);
        self.bar = Some(bar);
        self.waiter = Some(thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(quiet_for) {
                shown.set_draw_target(target());
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

#[cfg(test)]
mod tests {
    use super::*;
    use indicatif::TermLike;
    use std::io;
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    /// A terminal that keeps what was drawn on it: "clear" for a cleared
    /// line, the text otherwise.
    #[derive(Debug, Clone, Default)]
    struct Screen(Arc<Mutex<Vec<String>>>);

    impl Screen {
        fn seen(&self) -> Vec<String> {
            self.0.lock().unwrap().clone()
        }
        fn put(&self, s: &str) -> io::Result<()> {
            self.0.lock().unwrap().push(s.to_string());
            Ok(())
        }
    }

    impl TermLike for Screen {
        fn width(&self) -> u16 {
            100
        }
        fn move_cursor_up(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> io::Result<()> {
            self.put(s)
        }
        fn write_str(&self, s: &str) -> io::Result<()> {
            self.put(s)
        }
        fn clear_line(&self) -> io::Result<()> {
            self.put("clear")
        }
        fn flush(&self) -> io::Result<()> {
            Ok(())
        }
    }

    fn bar_on(screen: &Screen, quiet_for: Duration, terminal: bool) -> Bar {
        let screen = screen.clone();
        Bar::with(Rules {
            quiet_for,
            quiet_below: QUIET_BELOW,
            on_terminal: if terminal { || true } else { || false },
            target: Some(Box::new(move || {
                ProgressDrawTarget::term_like(Box::new(screen))
            })),
        })
    }

    const BIG: u64 = 64 << 20;

    #[test]
    fn a_report_done_within_the_wait_draws_nothing_and_does_not_wait() {
        let screen = Screen::default();
        let mut bar = bar_on(&screen, Duration::from_secs(600), true);
        let t = Instant::now();
        bar.read(0, BIG);
        bar.stage("analysing");
        bar.read(BIG, BIG);
        bar.finish();
        // Finishing ends the wait at once: a quick report is not held for
        // the bar's ten minutes.
        assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
        assert!(screen.seen().is_empty(), "{:?}", screen.seen());
    }

    #[test]
    fn a_long_report_shows_its_bar_then_leaves_no_line() {
        let screen = Screen::default();
        let mut bar = bar_on(&screen, Duration::from_millis(20), true);
        bar.read(BIG / 4, BIG);
        let t = Instant::now();
        while !screen.seen().iter().any(|s| s.contains("reading")) {
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "no bar: {:?}",
                screen.seen()
            );
            thread::sleep(Duration::from_millis(10));
        }
        let drawn = screen.seen().join("\n");
        assert!(drawn.contains("16.00 MiB/64.00 MiB"), "{drawn}");
        bar.stage("analysing");
        bar.finish();
        let seen = screen.seen();
        assert_eq!(seen.last().map(String::as_str), Some("clear"), "{seen:?}");
    }

    #[test]
    fn no_bar_off_a_terminal_nor_for_a_small_input() {
        for (terminal, total) in [(false, BIG), (true, QUIET_BELOW - 1)] {
            let screen = Screen::default();
            let mut bar = bar_on(&screen, Duration::ZERO, terminal);
            bar.read(0, total);
            // Not even made: a small report pays nothing for the bar.
            assert!(bar.bar.is_none() && bar.waiter.is_none());
            thread::sleep(Duration::from_millis(50));
            bar.read(total, total);
            bar.finish();
            assert!(
                screen.seen().is_empty(),
                "{terminal} {total}: {:?}",
                screen.seen()
            );
        }
    }
}
