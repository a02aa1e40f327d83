//! Asking library files their versions at report time, in a separate
//! process ([`super::probe`]'s `--ask` form), for what the trace could not
//! say without a side effect in the traced program (issue 14): a cuDNN
//! sub-library's own version (its `*VersionCheck` loads the driver and
//! calls `cuInit`), the driver's CUDA version (`cuDriverGetVersion` reads
//! driver state), an 11.x runtime's (`cudaRuntimeGetVersion` initialises),
//! or a core library nobody asked.
//!
//! The analysis says which files it wants asked ([`Wanted`]: the file, the
//! question, and the identity the trace recorded). For each, this module
//!
//! 1. compares the file on disk with the trace's identity (device, inode,
//!    size, build-id): a file that is gone or has changed is not asked, and
//!    the answer says so ([`Asked::Gone`], [`Asked::Changed`]);
//! 2. looks the question up in the per-user cache (`super::cache`), keyed
//!    by the file's identity;
//! 3. asks the rest in probe processes: one per cuDNN directory and major
//!    (its core library first, so that each sub-library's check runs
//!    against the core library of its own install, the way the install's
//!    own dispatcher would load them), one per runtime or driver file, a
//!    few at a time; and stores the answers.
//!
//! Nothing here loads a cuDNN dispatcher (`libcudnn.so.N`): its calls load
//! sub-libraries through the loader's search, which would answer for other
//! files than the one asked.

use super::cache::{Cache, Key, Stamp};
use super::probe::{self, Answer, Ask};
use super::Disk;
use crate::model::dirname;
use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Duration;

/// Turns probing off: `CUDNN_TRACE_PROBE=0` (the report then says what the
/// trace says, and that nothing was asked).
pub const PROBE_ENV: &str = "CUDNN_TRACE_PROBE";

/// Probe processes run at once.
const PARALLEL: usize = 4;

/// What to ask a file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// A cuDNN core library (`libcudnn_graph.so.9`, `libcudnn_ops_infer.so.8`).
    CudnnCore { major: u32 },
    /// A cuDNN sub-library with a `*VersionCheck` (`function`).
    CudnnCheck { major: u32, function: String },
    /// A CUDA runtime (`cudaRuntimeGetVersion`).
    Runtime,
    /// The driver (`cuDriverGetVersion`).
    Driver,
}

/// The identity the trace recorded for a file (a `load` event's fields).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct TraceId {
    pub dev: Option<u64>,
    pub ino: Option<u64>,
    pub size: Option<u64>,
    pub build_id: Option<String>,
}

/// A file the analysis wants asked.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Wanted {
    /// Where the file is (the trace's real path).
    pub path: String,
    pub role: Role,
    pub trace: TraceId,
}

/// What asking gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// The file answered, now or in an earlier report (`cached`). For a
    /// sub-library's check, `core` is the core library it ran against and
    /// what that one answered.
    Answered {
        answer: Answer,
        cached: bool,
        core: Option<(String, Answer)>,
    },
    /// The file on disk is not the one traced: not asked.
    Changed(String),
    /// No file at that path any more.
    Gone,
    /// The report does not load this file (someone other than this user
    /// or root could have changed it).
    Refused(String),
    /// Asking failed: the probe process failed, or the library did not load.
    Failed(String),
    /// Probing is off.
    Off,
}

/// Runs probe processes. The real one starts an executable that knows the
/// hidden subcommand ([`ExeProber`]); tests answer from a table.
pub trait Prober: Sync {
    /// Asks in one process, in order; one answer per ask.
    fn ask(&self, asks: &[Ask]) -> Result<Vec<Answer>, String>;
}

/// The real prober: `EXE __probe-cudnn --ask …`, which becomes the probe
/// helper (`machine::probe`).
#[derive(Debug, Clone)]
pub struct ExeProber {
    pub exe: PathBuf,
    pub timeout: Duration,
}

impl ExeProber {
    /// A prober running `exe` (which must understand
    /// [`probe::SUBCOMMAND`]): a front end that is not the `cudnn-trace`
    /// binary names the binary here.
    pub fn new(exe: impl Into<PathBuf>) -> ExeProber {
        ExeProber {
            exe: exe.into(),
            timeout: probe::TIMEOUT,
        }
    }

    /// This executable (the `cudnn-trace` binary).
    pub fn this_program() -> Option<ExeProber> {
        std::env::current_exe().ok().map(ExeProber::new)
    }
}

impl Prober for ExeProber {
    fn ask(&self, asks: &[Ask]) -> Result<Vec<Answer>, String> {
        probe::ask_with(&self.exe, asks, self.timeout)
    }
}

/// Whether `CUDNN_TRACE_PROBE` turns probing off (`0`, `no`, `off`, `false`).
pub fn probing_disabled() -> bool {
    std::env::var(PROBE_ENV).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "no" | "off" | "false"
        )
    })
}

/// The probing state of a [`super::Machine`]: who asks, the cache, and
/// what was asked already in this report.
pub(super) struct Versions {
    prober: Option<Box<dyn Prober>>,
    cache_dir: Option<PathBuf>,
    cache: OnceCell<Option<Cache>>,
    memo: RefCell<HashMap<Wanted, Asked>>,
}

impl Versions {
    pub(super) fn new(prober: Option<Box<dyn Prober>>, cache_dir: Option<PathBuf>) -> Self {
        Versions {
            prober,
            cache_dir,
            cache: OnceCell::new(),
            memo: RefCell::new(HashMap::new()),
        }
    }

    /// The cache, opened (and created) the first time it is needed.
    fn cache(&self) -> Option<&Cache> {
        self.cache
            .get_or_init(|| self.cache_dir.as_deref().and_then(Cache::open))
            .as_ref()
    }

    /// Asks every wanted file (see the module documentation); one answer
    /// each, in order.
    pub(super) fn ask(&self, disk: &dyn Disk, wanted: &[Wanted]) -> Vec<Asked> {
        let todo: Vec<&Wanted> = {
            let memo = self.memo.borrow();
            let mut v: Vec<&Wanted> = wanted.iter().filter(|w| !memo.contains_key(w)).collect();
            v.dedup();
            v
        };
        if !todo.is_empty() {
            let found = match &self.prober {
                Some(p) => self.ask_new(disk, p.as_ref(), &todo),
                None => todo.iter().map(|w| ((*w).clone(), Asked::Off)).collect(),
            };
            self.memo.borrow_mut().extend(found);
        }
        let memo = self.memo.borrow();
        wanted
            .iter()
            .map(|w| memo.get(w).cloned().unwrap_or(Asked::Off))
            .collect()
    }

    fn ask_new(
        &self,
        disk: &dyn Disk,
        prober: &dyn Prober,
        todo: &[&Wanted],
    ) -> Vec<(Wanted, Asked)> {
        let mut out: Vec<(Wanted, Asked)> = Vec::new();
        let mut jobs: BTreeMap<JobKey, Job> = BTreeMap::new();
        for &w in todo {
            let Some(stamp) = disk.stamp(&w.path) else {
                out.push((w.clone(), Asked::Gone));
                continue;
            };
            if let Some(why) = changed(&w.trace, &stamp) {
                out.push((w.clone(), Asked::Changed(why)));
                continue;
            }
            // Loading runs the file's code: only code nobody else could
            // have put there (a trace may come from anywhere).
            if let Err(why) = disk.loadable(&w.path) {
                out.push((w.clone(), Asked::Refused(why)));
                continue;
            }
            let key = match &w.role {
                Role::CudnnCore { major } | Role::CudnnCheck { major, .. } => {
                    JobKey::Cudnn(dirname(&w.path).to_string(), *major)
                }
                _ => JobKey::File(w.path.clone()),
            };
            jobs.entry(key).or_default().files.push((w.clone(), stamp));
        }
        let jobs: Vec<(JobKey, Job)> = jobs.into_iter().collect();
        let mut results: Vec<Vec<(Wanted, Asked)>> = Vec::new();
        for chunk in jobs.chunks(PARALLEL) {
            std::thread::scope(|s| {
                let handles: Vec<_> = chunk
                    .iter()
                    .map(|(k, j)| {
                        let plan = self.plan(disk, k, j);
                        s.spawn(move || plan.run(prober))
                    })
                    .collect();
                for h in handles {
                    results.push(h.join().unwrap_or_default());
                }
            });
        }
        for r in results {
            out.extend(r);
        }
        out
    }

    /// What to ask in one job: the questions and how to read the answers
    /// back (the cache is looked at when it runs).
    fn plan(&self, disk: &dyn Disk, key: &JobKey, job: &Job) -> Plan<'_> {
        let mut plan = Plan {
            cache: self.cache(),
            ..Default::default()
        };
        if let JobKey::Cudnn(dir, major) = key {
            plan.core = core_of(disk, dir, *major, job).map(|(path, stamp, wanted)| Core {
                item: Item {
                    ask: Ask::CudnnCore { path },
                    key: Key::new("cudnn-core", None, stamp, None),
                },
                wanted,
            });
        }
        for (w, stamp) in &job.files {
            let item = match &w.role {
                // The core library is the plan's own.
                Role::CudnnCore { .. } => continue,
                Role::CudnnCheck { function, major } => {
                    let Some(core) = &plan.core else {
                        let core_file = probe::core_stem(*major)
                            .map(|s| format!("{s}.so.{major}"))
                            .unwrap_or_else(|| "core library".into());
                        plan.done.push((
                            w.clone(),
                            Asked::Failed(format!(
                                "no {core_file} next to it to run its version check against"
                            )),
                        ));
                        continue;
                    };
                    Item {
                        ask: Ask::CudnnCheck {
                            path: w.path.clone(),
                            function: function.clone(),
                        },
                        key: Key::new(
                            "cudnn-check",
                            Some(function),
                            stamp.clone(),
                            Some(core.item.key.file.clone()),
                        ),
                    }
                }
                Role::Runtime => Item {
                    ask: Ask::Runtime {
                        path: w.path.clone(),
                    },
                    key: Key::new("runtime", None, stamp.clone(), None),
                },
                Role::Driver => Item {
                    ask: Ask::Driver {
                        path: w.path.clone(),
                    },
                    key: Key::new("driver", None, stamp.clone(), None),
                },
            };
            plan.items.push((w.clone(), item));
        }
        plan
    }
}

/// A group of files asked in one process.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum JobKey {
    /// The cuDNN files of one directory and major.
    Cudnn(String, u32),
    /// One runtime or driver file.
    File(String),
}

#[derive(Debug, Default)]
struct Job {
    files: Vec<(Wanted, Stamp)>,
}

/// The core library a cuDNN directory's checks run against: the one asked
/// for (with its [`Wanted`]), else the directory's `<core>.so.<major>` when
/// it is there.
fn core_of(
    disk: &dyn Disk,
    dir: &str,
    major: u32,
    job: &Job,
) -> Option<(String, Stamp, Option<Wanted>)> {
    if let Some((w, s)) = job
        .files
        .iter()
        .find(|(w, _)| matches!(w.role, Role::CudnnCore { .. }))
    {
        return Some((w.path.clone(), s.clone(), Some(w.clone())));
    }
    let path = format!("{dir}/{}.so.{major}", probe::core_stem(major)?);
    disk.loadable(&path).ok()?;
    disk.stamp(&path).map(|s| (path, s, None))
}

/// One question and its cache key.
#[derive(Debug, Clone)]
struct Item {
    ask: Ask,
    key: Key,
}

/// The core library of a cuDNN job, and whether it was itself wanted.
#[derive(Debug, Clone)]
struct Core {
    item: Item,
    wanted: Option<Wanted>,
}

/// The questions of one job and what is already settled.
#[derive(Default)]
struct Plan<'c> {
    cache: Option<&'c Cache>,
    /// The core library of a cuDNN job: asked first, the checks bind to it.
    core: Option<Core>,
    items: Vec<(Wanted, Item)>,
    done: Vec<(Wanted, Asked)>,
}

impl Plan<'_> {
    fn cached(&self, item: &Item) -> Option<Answer> {
        self.cache?.get(&item.key)
    }

    /// Keeps an answer (never a failure: it may not happen again).
    fn store(&self, item: &Item, a: &Answer) {
        if let (Some(c), None) = (self.cache, &a.error) {
            c.put(&item.key, item.ask.path(), a);
        }
    }

    /// Answers from the cache, the rest from one probe process.
    fn run(self, prober: &dyn Prober) -> Vec<(Wanted, Asked)> {
        let mut got = self.cached_answers();
        got.failed = self.ask_rest(prober, &mut got);
        self.outcomes(got)
    }

    /// What the cache answers. The core library's answer is taken from it
    /// only when no check needs the core library loaded.
    fn cached_answers(&self) -> Got {
        let answers: Vec<Option<(Answer, bool)>> = self
            .items
            .iter()
            .map(|(_, item)| self.cached(item).map(|a| (a, true)))
            .collect();
        let checks = self
            .items
            .iter()
            .zip(&answers)
            .any(|((_, item), a)| a.is_none() && matches!(item.ask, Ask::CudnnCheck { .. }));
        let core = self
            .core
            .as_ref()
            .map(|c| self.cached(&c.item).filter(|_| !checks).map(|a| (a, true)));
        Got {
            answers,
            core,
            failed: None,
        }
    }

    /// Asks what the cache did not answer in one probe process (the core
    /// library first) and stores the answers; Some: why the process gave
    /// none.
    fn ask_rest(&self, prober: &dyn Prober, got: &mut Got) -> Option<String> {
        let core_first = matches!(got.core, Some(None));
        let mut asks: Vec<Ask> = Vec::new();
        if let (true, Some(c)) = (core_first, &self.core) {
            asks.push(c.item.ask.clone());
        }
        for ((_, item), a) in self.items.iter().zip(&got.answers) {
            if a.is_none() {
                asks.push(item.ask.clone());
            }
        }
        if asks.is_empty() {
            return None;
        }
        if asks.len() > probe::MAX_ASKS {
            return Some(format!(
                "more than {} files to ask in one directory",
                probe::MAX_ASKS
            ));
        }
        let mut answers = match prober.ask(&asks) {
            Ok(a) => a.into_iter(),
            Err(e) => return Some(e),
        };
        if let (true, Some(c)) = (core_first, &self.core) {
            let a = answers.next()?;
            self.store(&c.item, &a);
            got.core = Some(Some((a, false)));
        }
        for ((_, item), slot) in self.items.iter().zip(got.answers.iter_mut()) {
            if slot.is_none() {
                let a = answers.next()?;
                self.store(item, &a);
                *slot = Some((a, false));
            }
        }
        None
    }

    /// The outcome for every wanted file of the job.
    fn outcomes(mut self, got: Got) -> Vec<(Wanted, Asked)> {
        let core_answer = got.core.flatten();
        let core_said: Option<(String, Answer)> = self
            .core
            .as_ref()
            .zip(core_answer.as_ref())
            .map(|(c, (a, _))| (c.item.ask.path().to_string(), a.clone()));
        let mut out = std::mem::take(&mut self.done);
        if let Some(w) = self.core.as_ref().and_then(|c| c.wanted.clone()) {
            out.push((w, settle(core_answer, &got.failed, None)));
        }
        for ((w, item), a) in self.items.into_iter().zip(got.answers) {
            let with_core = matches!(item.ask, Ask::CudnnCheck { .. })
                .then(|| core_said.clone())
                .flatten();
            out.push((w, settle(a, &got.failed, with_core)));
        }
        out
    }
}

/// The answers of one job as they come in: per item, and the core
/// library's (None: no core library; Some(None): not answered yet), each
/// with whether it came from the cache.
struct Got {
    answers: Vec<Option<(Answer, bool)>>,
    core: Option<Option<(Answer, bool)>>,
    failed: Option<String>,
}

/// The outcome of one question: its answer (and whether from the cache),
/// else why the process gave none.
fn settle(
    a: Option<(Answer, bool)>,
    failed: &Option<String>,
    core: Option<(String, Answer)>,
) -> Asked {
    match a {
        Some((answer, _)) if answer.error.is_some() => {
            Asked::Failed(answer.error.unwrap_or_default())
        }
        Some((answer, cached)) => Asked::Answered {
            answer,
            cached,
            core,
        },
        None => Asked::Failed(
            failed
                .clone()
                .unwrap_or_else(|| "the probe process gave no answer".into()),
        ),
    }
}

/// How the file on disk differs from the one traced, if it does. Device
/// and inode alone do not make another file when the build-id and the size
/// are the same: an overlay or network mount made again between the run and
/// the report (a container's root, a shared directory) numbers the same
/// file anew, and the same build answers the same.
pub fn changed(t: &TraceId, s: &Stamp) -> Option<String> {
    let mut what = Vec::new();
    let same_build = matches!((&t.build_id, &s.build_id), (Some(a), Some(b)) if a == b)
        && t.size.is_none_or(|n| n == s.size);
    let moved = t.dev.is_some_and(|d| d != s.dev) || t.ino.is_some_and(|i| i != s.ino);
    if moved && !same_build {
        what.push("another file (device and inode differ)".to_string());
    }
    if let Some(size) = t.size.filter(|&n| n != s.size) {
        what.push(format!("size {size} → {}", s.size));
    }
    if let (Some(a), Some(b)) = (&t.build_id, &s.build_id) {
        if a != b {
            what.push(format!("build-id {} → {}", short(a), short(b)));
        }
    } else if t.build_id.is_some() && s.build_id.is_none() {
        what.push("it has no build-id now".to_string());
    }
    (!what.is_empty()).then(|| what.join(", "))
}

fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

#[cfg(test)]
pub mod fake {
    //! A prober for tests: answers from a table, counts processes.
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    pub struct FakeProber {
        /// Path → answer; a path not listed answers "cannot open".
        pub answers: BTreeMap<String, Answer>,
        /// Makes every process fail with this message.
        pub fail: Option<String>,
        /// The asks of each process started.
        pub processes: Mutex<Vec<Vec<Ask>>>,
    }

    impl Prober for FakeProber {
        fn ask(&self, asks: &[Ask]) -> Result<Vec<Answer>, String> {
            self.processes.lock().unwrap().push(asks.to_vec());
            if let Some(e) = &self.fail {
                return Err(e.clone());
            }
            Ok(asks
                .iter()
                .map(|a| {
                    self.answers.get(a.path()).cloned().unwrap_or(Answer {
                        error: Some(format!("{}: cannot open shared object file", a.path())),
                        ..Default::default()
                    })
                })
                .collect())
        }
    }

    /// A prober shared with the test that made it.
    impl Prober for std::sync::Arc<FakeProber> {
        fn ask(&self, asks: &[Ask]) -> Result<Vec<Answer>, String> {
            self.as_ref().ask(asks)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fake::FakeProber;
    use super::*;
    use crate::machine::{FakeDisk, Machine};
    use std::sync::Arc;

    const PIP: &str = "/v/site-packages/nvidia/cudnn/lib";

    fn stamp(ino: u64) -> Stamp {
        Stamp {
            dev: 7,
            ino,
            size: 1000,
            mtime_ns: 1,
            ctime_ns: 1,
            build_id: Some(format!("b{ino}")),
        }
    }

    fn tid(ino: u64) -> TraceId {
        TraceId {
            dev: Some(7),
            ino: Some(ino),
            size: Some(1000),
            build_id: Some(format!("b{ino}")),
        }
    }

    fn want(file: &str, role: Role, ino: u64) -> Wanted {
        Wanted {
            path: format!("{PIP}/{file}"),
            role,
            trace: tid(ino),
        }
    }

    fn check(f: &str) -> Role {
        Role::CudnnCheck {
            major: 9,
            function: f.into(),
        }
    }

    fn machine(prober: &Arc<FakeProber>, cache: Option<PathBuf>) -> Machine {
        let mut d = FakeDisk::default();
        d.with_stamp(&format!("{PIP}/libcudnn_graph.so.9"), stamp(1))
            .with_stamp(&format!("{PIP}/libcudnn_ops.so.9"), stamp(2))
            .with_stamp(&format!("{PIP}/libcudnn_cnn.so.9"), stamp(3));
        Machine::with_disk(d).with_prober(Some(Box::new(prober.clone())), cache)
    }

    fn core_answer() -> Answer {
        Answer {
            version: Some(91900),
            cudart: Some(13000),
            max_device: Some(1210),
            ..Default::default()
        }
    }

    fn fake() -> Arc<FakeProber> {
        let mut p = FakeProber::default();
        p.answers
            .insert(format!("{PIP}/libcudnn_graph.so.9"), core_answer());
        for f in ["libcudnn_ops.so.9", "libcudnn_cnn.so.9"] {
            p.answers.insert(
                format!("{PIP}/{f}"),
                Answer {
                    status: Some(0),
                    ..Default::default()
                },
            );
        }
        Arc::new(p)
    }

    #[test]
    fn checks_run_against_their_directory_core_in_one_process_and_are_cached() {
        let cache = crate::testutil::tempdir("versions-cache");
        let p = fake();
        let m = machine(&p, Some(cache.clone()));
        let wanted = vec![
            want("libcudnn_ops.so.9", check("cudnnOpsVersionCheck"), 2),
            want("libcudnn_cnn.so.9", check("cudnnCnnVersionCheck"), 3),
        ];
        let got = m.ask_versions(&wanted);
        let procs = p.processes.lock().unwrap().clone();
        assert_eq!(procs.len(), 1, "{procs:?}");
        assert_eq!(
            procs[0][0],
            Ask::CudnnCore {
                path: format!("{PIP}/libcudnn_graph.so.9")
            },
            "the directory's core library first"
        );
        assert_eq!(procs[0].len(), 3);
        for a in &got {
            let Asked::Answered {
                answer,
                cached,
                core,
            } = a
            else {
                panic!("{a:?}")
            };
            assert_eq!(answer.status, Some(0));
            assert!(!cached);
            assert_eq!(core.as_ref().unwrap().1.version, Some(91900));
        }
        // Asked again in this report: the memo; in a new report: the cache.
        let _ = m.ask_versions(&wanted);
        let m2 = machine(&p, Some(cache));
        let again = m2.ask_versions(&wanted);
        assert_eq!(p.processes.lock().unwrap().len(), 1, "no new process");
        assert!(matches!(
            &again[0],
            Asked::Answered { cached: true, core: Some((_, c)), .. } if c.version == Some(91900)
        ));
    }

    /// A file whose device number changed but whose build and size did not
    /// is the same file seen through another mount (an overlay or NFS mount
    /// made again between the run and the report: a container's root, a
    /// cluster's shared directory): its answers still hold. Another build
    /// at the same place is still another file.
    #[test]
    fn a_remounted_file_of_the_same_build_is_the_same_file() {
        let traced = TraceId {
            dev: Some(40),
            ino: Some(7),
            size: Some(10),
            build_id: Some("b7".into()),
        };
        let mut s = Stamp {
            dev: 41,
            ino: 7,
            size: 10,
            mtime_ns: 5,
            ctime_ns: 6,
            build_id: Some("b7".into()),
        };
        assert_eq!(changed(&traced, &s), None);
        s.ino = 8;
        assert_eq!(
            changed(&traced, &s),
            None,
            "overlayfs may renumber inodes too"
        );
        s.size = 11;
        assert_eq!(
            changed(&traced, &s).as_deref(),
            Some("another file (device and inode differ), size 10 → 11")
        );
        s.size = 10;
        s.build_id = Some("b8".into());
        assert_eq!(
            changed(&traced, &s).as_deref(),
            Some("another file (device and inode differ), build-id b7 → b8")
        );
        let no_id = TraceId {
            build_id: None,
            ..traced
        };
        s.build_id = None;
        assert_eq!(
            changed(&no_id, &s).as_deref(),
            Some("another file (device and inode differ)"),
            "without a build-id, device and inode are all there is"
        );
    }

    #[test]
    fn changed_gone_failed_and_off() {
        let p = fake();
        let m = machine(&p, None);
        let wanted = vec![
            // The trace saw inode 99: the file has been replaced.
            want("libcudnn_ops.so.9", check("cudnnOpsVersionCheck"), 99),
            want("libcudnn_adv.so.9", check("cudnnAdvVersionCheck"), 4),
            Wanted {
                path: "/other/libcudnn_cnn.so.9".into(),
                role: check("cudnnCnnVersionCheck"),
                trace: TraceId::default(),
            },
        ];
        let mut d = FakeDisk::default();
        d.with_stamp(&format!("{PIP}/libcudnn_ops.so.9"), stamp(2))
            .with_stamp("/other/libcudnn_cnn.so.9", stamp(5));
        let m2 = Machine::with_disk(d).with_prober(Some(Box::new(p.clone())), None);
        let got = m2.ask_versions(&wanted);
        assert_eq!(
            got[0],
            Asked::Changed("another file (device and inode differ), build-id b99 → b2".into())
        );
        assert_eq!(got[1], Asked::Gone);
        // A file someone else could have written is not loaded.
        let mut d = FakeDisk::default();
        d.with_stamp(&format!("{PIP}/libcudnn_graph.so.9"), stamp(1));
        d.not_loadable.insert(
            format!("{PIP}/libcudnn_graph.so.9"),
            "writable by others".into(),
        );
        let m3 = Machine::with_disk(d).with_prober(Some(Box::new(p.clone())), None);
        assert_eq!(
            m3.ask_versions(&[want("libcudnn_graph.so.9", Role::CudnnCore { major: 9 }, 1)]),
            vec![Asked::Refused("writable by others".into())]
        );
        assert_eq!(
            got[2],
            Asked::Failed(
                "no libcudnn_graph.so.9 next to it to run its version check against".into()
            )
        );
        drop(m);
        // A probe process that fails: every file of it says why.
        let failing = Arc::new(FakeProber {
            fail: Some("the probe process did not finish within 20 s".into()),
            ..Default::default()
        });
        let m = machine(&failing, None);
        let got = m.ask_versions(&[want("libcudnn_graph.so.9", Role::CudnnCore { major: 9 }, 1)]);
        assert_eq!(
            got[0],
            Asked::Failed("the probe process did not finish within 20 s".into())
        );
        // No prober: nothing asked.
        let m = Machine::with_disk(FakeDisk::default());
        assert_eq!(
            m.ask_versions(&[want("libcudnn_graph.so.9", Role::CudnnCore { major: 9 }, 1)]),
            vec![Asked::Off]
        );
    }

    /// The same file through another mount of an overlay: a new device
    /// number, the same inode, size and build-id (the cases' namespaces;
    /// a container started again). Without a build-id, another device is
    /// another file.
    #[test]
    fn a_remounted_overlay_is_the_same_file() {
        let on_disk = Stamp {
            dev: 47,
            ..stamp(5)
        };
        assert_eq!(changed(&tid(5), &on_disk), None);
        let no_id = TraceId {
            build_id: None,
            ..tid(5)
        };
        let on_disk_no_id = Stamp {
            build_id: None,
            ..on_disk.clone()
        };
        assert!(changed(&no_id, &on_disk_no_id).is_some());
        // Another inode, or another build, is another file whatever the device.
        assert!(changed(&tid(6), &on_disk).is_some());
        let rebuilt = Stamp {
            build_id: Some("other".into()),
            ..on_disk
        };
        assert!(changed(&tid(5), &rebuilt).is_some());
    }

    #[test]
    fn runtime_and_driver_each_in_their_own_process() {
        let mut p = FakeProber::default();
        p.answers.insert(
            "/d/libcuda.so.1".into(),
            Answer {
                version: Some(13000),
                status: Some(0),
                ..Default::default()
            },
        );
        let p = Arc::new(p);
        let mut d = FakeDisk::default();
        d.with_stamp("/d/libcuda.so.1", stamp(10))
            .with_stamp("/r/libcudart.so.11.0", stamp(11));
        let m = Machine::with_disk(d).with_prober(Some(Box::new(p.clone())), None);
        let got = m.ask_versions(&[
            Wanted {
                path: "/d/libcuda.so.1".into(),
                role: Role::Driver,
                trace: tid(10),
            },
            Wanted {
                path: "/r/libcudart.so.11.0".into(),
                role: Role::Runtime,
                trace: tid(11),
            },
        ]);
        assert_eq!(p.processes.lock().unwrap().len(), 2);
        assert!(matches!(&got[0], Asked::Answered { answer, .. } if answer.version == Some(13000)));
        assert!(matches!(&got[1], Asked::Failed(e) if e.contains("cannot open")));
    }
}
