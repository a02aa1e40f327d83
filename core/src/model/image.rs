//! What a trace set holds once read: the process images (one per trace
//! file, its repeated events folded, `fold.rs`), the launcher records, and
//! what could not be read.

use super::fold::Folded;
use super::{io_msg, LauncherRecord};
use cudnn_trace_format::read::{
    Call, CallCounts, DriverClient, Load, LoadFailed, Note, Pin, Process, Unload, Version,
};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;

/// Something that could not be read, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub file: String,
    /// 1-based line number, when the problem is one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub what: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file, self.what),
            None => write!(f, "{}: {}", self.file, self.what),
        }
    }
}

/// A failed load with the error texts the program read for it: identical
/// failures folded (like [`Folded`]), `ev` the first of them.
#[derive(Debug, Clone)]
pub struct Failed {
    pub ev: LoadFailed,
    /// Texts of the `dlerror` events whose `req` is one of these failures'
    /// `seq`, without repeats.
    pub dlerror: Vec<String>,
    /// How many identical failures this stands for (1 for one).
    pub count: u64,
    /// `seq` of the last of them.
    pub last_seq: u64,
}

impl Failed {
    /// One failure, seen once.
    pub fn one(ev: LoadFailed) -> Self {
        let last_seq = ev.seq;
        Failed {
            ev,
            dlerror: Vec::new(),
            count: 1,
            last_seq,
        }
    }

    /// A `dlerror` text the program read for one of these failures.
    pub fn add_dlerror(&mut self, text: &str) {
        if !self.dlerror.iter().any(|e| e == text) {
            self.dlerror.push(text.to_string());
        }
    }

    /// The loader's error text: the one the program received when the shim
    /// saw it, else the one recorded with the failure.
    pub fn errors(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for e in self.ev.error.iter().chain(self.dlerror.iter()) {
            if !e.is_empty() && !v.contains(&e.as_str()) {
                v.push(e);
            }
        }
        v
    }
}

/// One trace file: one process image: its header, and its events
/// ([`Events`], read through `Deref`: `img.loads`).
///
/// Images whose content is the same but for who and when (a fleet of
/// identical workers: the same header but for pid, ppid, times, and the
/// same events in the same order with the same counts) share one
/// [`Events`] and one [`Image::class`]: 10,000 such workers cost one copy
/// of their events, and the analysis of one stands for all.
#[derive(Debug, Clone)]
pub struct Image {
    pub file: PathBuf,
    /// `n` of `<pid>.<n>.jsonl` (0 for `<pid>.jsonl`).
    pub index: u32,
    pub header: Process,
    /// The events, shared with the images of the same class.
    pub events: Arc<Events>,
    /// Images of one class have the same content but for identity: the
    /// header's `pid`, `ppid`, `tid`, `t_ns`, `wall_ms` and rank variables
    /// ([`RANK_ENV`]), the events' `t_ns`, `tid`, `pid`, `ppid` (an image's times are those of the
    /// first image of its class; `report --format chrome` reads without
    /// classes). Unique per image unless the reader found its twin.
    pub class: u32,
}

/// An image's events. Each list holds distinct events in the order they
/// first happened, identical repeats folded into a count ([`Folded`]).
#[derive(Debug, Clone, Default)]
pub struct Events {
    pub loads: Vec<Folded<Load>>,
    pub failed: Vec<Failed>,
    pub unloads: Vec<Folded<Unload>>,
    pub notes: Vec<Folded<Note>>,
    /// The pin's decisions, in order (`docs/pin.md`).
    pub pins: Vec<Folded<Pin>>,
    /// What the libraries said about their versions (`docs/versions-and-calls.md`).
    pub versions: Vec<Folded<Version>>,
    /// The program's first calls per function and library.
    pub calls: Vec<Folded<Call>>,
    /// Call totals (at exit, or when a library was unloaded).
    pub call_counts: Vec<Folded<CallCounts>>,
    /// The objects that asked the driver for its entry points (a CUDA
    /// runtime, shared or linked into another object).
    pub driver_clients: Vec<Folded<DriverClient>>,
}

impl Events {
    /// Gives back the room the lists grew into while being read.
    pub fn shrink_to_fit(&mut self) {
        self.loads.shrink_to_fit();
        self.failed.shrink_to_fit();
        self.unloads.shrink_to_fit();
        self.notes.shrink_to_fit();
        self.pins.shrink_to_fit();
        self.versions.shrink_to_fit();
        self.calls.shrink_to_fit();
        self.call_counts.shrink_to_fit();
        self.driver_clients.shrink_to_fit();
    }

    /// `other`'s events after these (a file continued after a reopen).
    pub fn append(&mut self, other: &Events) {
        self.loads.extend(other.loads.iter().cloned());
        self.failed.extend(other.failed.iter().cloned());
        self.unloads.extend(other.unloads.iter().cloned());
        self.notes.extend(other.notes.iter().cloned());
        self.pins.extend(other.pins.iter().cloned());
        self.versions.extend(other.versions.iter().cloned());
        self.calls.extend(other.calls.iter().cloned());
        self.call_counts.extend(other.call_counts.iter().cloned());
        self.driver_clients
            .extend(other.driver_clients.iter().cloned());
    }
}

impl std::ops::Deref for Image {
    type Target = Events;
    fn deref(&self) -> &Events {
        &self.events
    }
}

/// Variables of the header's `env` that name which worker of a job a
/// process is (torch.distributed, Slurm, Open MPI, MPICH, PMIx, MVAPICH,
/// JAX; the same as `analysis::compare`'s rank variables): like the pid,
/// no part of what makes two images alike (no rule reads them, and the
/// summary does not show them; the JSON lists each process's own).
pub const RANK_ENV: &[&str] = &[
    "RANK",
    "LOCAL_RANK",
    "GROUP_RANK",
    "SLURM_PROCID",
    "SLURM_LOCALID",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "MV2_COMM_WORLD_RANK",
    "JAX_PROCESS_ID",
];

/// A class no other image has (see [`Image::class`]).
pub const UNIQUE: u32 = u32::MAX;

impl Image {
    /// The notes a summary shows: all but those that count lost events
    /// when the header counts them too (the summary's "trace incomplete"
    /// line says that loss once for the whole run).
    pub fn shown_notes(&self) -> impl Iterator<Item = &Folded<Note>> {
        let counted = self.header.lost > 0;
        self.notes
            .iter()
            .filter(move |n| !(counted && n.ev.lost.is_some()))
    }

    /// An image with its header and no event yet, in a class of its own.
    pub fn new(file: PathBuf, index: u32, header: Process) -> Self {
        Image {
            file,
            index,
            header,
            events: Arc::default(),
            class: UNIQUE,
        }
    }

    /// The events, to change them (copied first when shared).
    pub fn events_mut(&mut self) -> &mut Events {
        Arc::make_mut(&mut self.events)
    }

    /// Whether `other` is of this image's class (its content but for
    /// identity and times, see [`Image::class`]).
    pub fn alike(&self, other: &Image) -> bool {
        self.class != UNIQUE && self.class == other.class
    }

    pub fn host(&self) -> &str {
        self.header.hostname.as_deref().unwrap_or("")
    }

    /// The process's `LD_LIBRARY_PATH`, split (empty entries left out).
    pub fn ld_library_path(&self) -> Vec<String> {
        self.header
            .env
            .get("LD_LIBRARY_PATH")
            .map(|v| {
                v.split(':')
                    .filter(|d| !d.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Everything read from the paths given.
#[derive(Debug, Default)]
pub struct TraceSet {
    pub images: Vec<Image>,
    pub launchers: Vec<(PathBuf, LauncherRecord)>,
    pub problems: Vec<Problem>,
    /// The directories and files read.
    pub sources: Vec<PathBuf>,
    /// Trace files that were empty: a process that could not write even
    /// its first line (a full disk), or not a trace.
    pub empty_files: Vec<PathBuf>,
    /// Directories in which the shim left its "disk full" marker
    /// (`.cudnn-trace-full.*`, docs/trace-format.md).
    pub full_dirs: Vec<PathBuf>,
}

/// What a full disk (or a quota, an I/O error) cost the traces read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Loss {
    /// Events the shim could not write (the headers' `lost`).
    pub events: u64,
    /// Process images that lost events.
    pub images: usize,
    /// The first failed write's errno, as its text (`No space left on device`).
    pub error: Option<String>,
    /// Trace files left empty.
    pub empty_files: usize,
    /// The directories concerned.
    pub dirs: Vec<String>,
}

impl TraceSet {
    /// What the disk did not take, when it did not take something.
    pub fn loss(&self) -> Option<Loss> {
        let lossy: Vec<&Image> = self
            .images
            .iter()
            .filter(|i| i.header.lost > 0 || i.header.lost_errno != 0)
            .collect();
        let full = !self.full_dirs.is_empty();
        if lossy.is_empty() && !full {
            return None;
        }
        let errno = lossy
            .iter()
            .map(|i| i.header.lost_errno)
            .find(|&e| e != 0)
            .or(full.then_some(libc::ENOSPC));
        let mut dirs: Vec<String> = lossy
            .iter()
            .filter_map(|i| i.file.parent())
            .chain(self.full_dirs.iter().map(PathBuf::as_path))
            .map(|d| d.display().to_string())
            .collect();
        dirs.sort();
        dirs.dedup();
        Some(Loss {
            events: lossy.iter().map(|i| i.header.lost).sum(),
            images: lossy.iter().filter(|i| i.header.lost > 0).count(),
            error: errno.map(|e| io_msg(&std::io::Error::from_raw_os_error(e))),
            empty_files: if full { self.empty_files.len() } else { 0 },
            dirs,
        })
    }
}
