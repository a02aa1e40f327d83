//! The rtld-audit role: sees every search step and every object the loader
//! maps, in every namespace, without wrapping anything.
//!
//! glibc calls `la_objsearch` with `LA_SER_ORIG` for each name it is asked to
//! load (a DT_NEEDED entry, a `dlopen` name or path), then once per candidate
//! path with the search step that produced it (`LA_SER_LIBPATH`,
//! `LA_SER_RUNPATH`, `LA_SER_CONFIG`, `LA_SER_DEFAULT`), and `la_objopen` when
//! one candidate was mapped (glibc 2.36 `elf/dl-load.c` `_dl_map_object`).
//! Searches on one thread are strictly sequential, so a per-thread "current
//! search" is enough to know which candidate won and why.
//!
//! What the loader does not tell an audit module is that a search *failed*
//! or was served without mapping anything (a request for a name already
//! loaded never reaches `la_objsearch`). The preload role reports the result
//! of each `dlopen`/`dlmopen` through [`crate::bridge`]; without it, an
//! unfinished search is judged at the thread's next loader activity.
//!
//! At start-up a failed search ends the process with no callback at all
//! (ld.so prints `error while loading shared libraries` and `_exit(127)`s),
//! so a recorded start-up search is also drawn, candidate by candidate, as
//! the `load_failed` event it becomes if the process ends during it
//! (`fatal: true`, [`crate::startup`]).
//!
//! `search_dir` is the directory of the candidate the loader took, exactly;
//! the owner of an RPATH/RUNPATH directory follows glibc's list order over
//! the candidates as they come ([`Lists`]).
//!
//! Everything here runs in the audit namespace (its own libc, malloc, errno),
//! and only with the loader's own lock held or from the bridge; nothing here
//! calls back into the loader.

use crate::elf::{self, Candidate};
use crate::lock::ForkSafeLock;
use crate::reuses::{self, Reuses};
use crate::sys::*;
use crate::trace;
use cudnn_trace_format::{basename, cuda_family, ev, json::Line, reason, tried, via};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// One `la_objsearch` candidate, with the search step that offered it.
struct Cand {
    path: Vec<u8>,
    flag: u32,
    /// Attribution, computed while the requester is certainly alive (a failed
    /// `dlopen` frees it before the outcome is known). Only for searches that
    /// will be recorded.
    why: Option<Step>,
    /// Whether a file is there, when already looked at (start-up searches
    /// look as each candidate comes: see [`draw_startup_search`]).
    exists: Option<bool>,
}

/// Why a search step offered a candidate.
struct Step {
    reason: &'static str,
    owner: Option<Vec<u8>>,
    /// The directory the candidate is in, exactly as the loader searched it.
    dir: Vec<u8>,
    /// The search-list entry that directory came from (itself, or its
    /// parent for a hardware-capability subdirectory).
    entry: Vec<u8>,
}

/// The search for one requested name, from `LA_SER_ORIG` to its outcome.
struct Search {
    name: Vec<u8>,
    /// `struct link_map *` of the object on whose behalf the loader searches.
    /// Used as an identity only: it may be freed before the search ends.
    requester: usize,
    /// Facts about the requester, taken when the search started.
    requester_path: Vec<u8>,
    requester_lmid: i64,
    /// `name` is a DT_NEEDED entry of the requester.
    needed: bool,
    /// The search will be recorded (CUDA-family name, or `--all`).
    recorded: bool,
    /// It is drawn in the start-up window (`startup.rs`).
    drawn: bool,
    tried: Vec<Cand>,
    /// When the search started (CLOCK_MONOTONIC, ns; 0 when not recorded):
    /// a load event then spans the loader's search and mapping, which is
    /// what a timeline shows as its slice. The clock is read through the
    /// vDSO: no system call.
    t0_ns: u64,
    /// The RPATH/RUNPATH directories this search goes through, in glibc's
    /// order, made at its first RPATH/RUNPATH candidate ([`Lists`]).
    lists: Option<Lists>,
}

impl Search {
    /// Starts a search on behalf of `requester` (a live link map or 0).
    /// The requester facts are taken only for searches that will be
    /// recorded: this runs for every name every object asks for.
    unsafe fn new(name: Vec<u8>, requester: usize) -> Search {
        let recorded = wants(&name, &name).is_some();
        let needed = recorded && is_needed_by(requester, &name);
        Search {
            requester_path: if recorded {
                map_path(requester)
            } else {
                Vec::new()
            },
            requester_lmid: if recorded { obj_lmid(requester) } else { 0 },
            needed,
            recorded,
            drawn: false,
            name,
            requester,
            tried: Vec::new(),
            t0_ns: if recorded { trace::monotonic_ns() } else { 0 },
            lists: None,
        }
    }
}

/// A `dlopen`/`dlmopen` call in progress, reported by the preload role.
struct Request {
    token: u64,
    kind: u32,
    name: Vec<u8>,
    /// `reuses::fingerprint(caller, name)`, taken while the name was at hand:
    /// a re-open served in place needs nothing else.
    key: u64,
    mode: i32,
    lmid: i64,
    caller: usize,
    /// An object was mapped for this very name.
    opened: bool,
}

/// A failure whose error text the program may still read with `dlerror()`.
struct AwaitingText {
    seq: u64,
    /// Names the loader's message would mention (request, failed dependency).
    names: Vec<Vec<u8>>,
}

/// What one thread has in progress with the loader.
#[derive(Default)]
struct ThreadState {
    search: Option<Search>,
    requests: Vec<Request>,
    /// Name buffers of ended requests, for the next ones.
    spare: Vec<Vec<u8>>,
    /// Set while `with_thread` runs, so a re-entry gets nothing.
    busy: bool,
    /// Listed in [`LEFT_BUSY`].
    listed: bool,
    /// Kept while idle: the preload role reports this thread's exit
    /// (`thread_exit`), which frees it. A program that re-opens libraries in
    /// a loop then allocates nothing per request.
    kept: bool,
}

impl ThreadState {
    fn idle(&self) -> bool {
        self.search.is_none() && self.requests.is_empty()
    }

    /// A buffer holding `name`, from an ended request's when there is one.
    fn name_buf(&mut self, name: &[u8]) -> Vec<u8> {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(name);
        buf
    }

    fn recycle(&mut self, mut name: Vec<u8>) {
        // A few: requests nest only as deep as constructors that dlopen.
        if self.kept && self.spare.len() < 4 {
            name.clear();
            self.spare.push(name);
        }
    }
}

thread_local! {
    /// The thread's state, allocated while something is in progress and
    /// freed as soon as it is idle. A plain pointer, so that no thread-exit
    /// destructor is registered: the audit namespace's libc never runs those
    /// (it does not see the program's threads exit), and what they own would
    /// stay behind for every thread that ever loaded a library.
    static THREAD: Cell<*mut ThreadState> = const { Cell::new(core::ptr::null_mut()) };
}

/// Failures whose error text a thread may still read with `dlerror()`,
/// by thread id: global and bounded rather than per-thread, for the same
/// reason as [`THREAD`].
static AWAITING: ForkSafeLock<Vec<(u32, AwaitingText)>> = ForkSafeLock::new(Vec::new());

/// States of threads left with something in progress (without the preload
/// role, a failed search is only judged at the thread's next loader call,
/// which never comes if the thread exits). When the list grows, the states
/// of threads that no longer exist are freed. (thread id, state).
static LEFT_BUSY: ForkSafeLock<Vec<(u32, usize)>> = ForkSafeLock::new(Vec::new());

fn list_left_busy(p: *mut ThreadState) {
    let tid = trace::tid();
    let pid = trace::pid();
    LEFT_BUSY.with(|v| {
        if v.len() >= 256 {
            v.retain(|&(t, state)| {
                // SAFETY: signal 0 only checks that the thread exists.
                let gone = unsafe { libc::syscall(libc::SYS_tgkill, pid, t, 0) } != 0
                    && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
                if gone {
                    // SAFETY: the thread that owned it is gone; nothing else
                    // holds this pointer.
                    drop(unsafe { Box::from_raw(state as *mut ThreadState) });
                }
                !gone
            });
        }
        v.push((tid, p as usize));
    });
}

fn unlist(p: *mut ThreadState) {
    LEFT_BUSY.with(|v| v.retain(|&(_, state)| state != p as usize));
}

fn set_awaiting(a: Option<AwaitingText>) {
    let tid = trace::tid();
    AWAITING.with(|v| {
        v.retain(|(t, _)| *t != tid);
        if let Some(a) = a {
            if v.len() >= 64 {
                v.remove(0);
            }
            v.push((tid, a));
        }
    });
}

fn take_awaiting() -> Option<AwaitingText> {
    let tid = trace::tid();
    AWAITING.with(|v| {
        let i = v.iter().position(|(t, _)| *t == tid)?;
        Some(v.remove(i).1)
    })
}

/// What the shim remembers about each mapped object.
struct Obj {
    /// The object whose DT_NEEDED entry brought it in: glibc's `l_loader`,
    /// whose RPATH chain the loader follows. 0 for the main program and for
    /// `dlopen`ed objects (glibc keeps no loader for those: the caller is
    /// used for the search only).
    requester: usize,
    recorded: bool,
    family: Option<&'static str>,
    path: Vec<u8>,
    lmid: i64,
    /// Device and inode of its file (recorded objects: read for their event).
    ident: Option<(u64, u64)>,
}

static OBJECTS: ForkSafeLock<BTreeMap<usize, Obj>> = ForkSafeLock::new(BTreeMap::new());
/// (requester, name) of `already-loaded`/`same-file` events written
/// ([`crate::reuses`]).
static REUSES: Reuses = Reuses::new();

fn first_reuse(requester: usize, name: &[u8]) -> bool {
    let key = reuses::fingerprint(requester, name);
    REUSES.insert(key)
}

static MAIN_MAP: AtomicUsize = AtomicUsize::new(0);
/// Set by `la_preinit`: start-up (preloads and DT_NEEDED of the program) is over.
static STARTED: AtomicBool = AtomicBool::new(false);
static PRELOAD_ACTIVE: AtomicBool = AtomicBool::new(false);
/// Set when the main program is closed: that only happens in `_dl_fini` at
/// exit, which closes it first (glibc 2.36 `elf/dl-fini.c` keeps the main
/// map at index 0 of its order) and then every other object. Those are not
/// unloads worth an event.
static EXITING: AtomicBool = AtomicBool::new(false);
/// Between `LA_ACT_DELETE` and `LA_ACT_CONSISTENT` (see `objclose`).
static DELETE_PENDING: AtomicBool = AtomicBool::new(false);
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

pub fn preload_active() -> bool {
    PRELOAD_ACTIVE.load(Ordering::Relaxed)
}

/// Whether start-up is over (`la_preinit` ran).
pub fn started() -> bool {
    STARTED.load(Ordering::Relaxed)
}

/// The token of the innermost hooked `dlopen`/`dlmopen` in progress on this
/// thread (0: none). What it maps is ready to be called when that request
/// ends ([`crate::versions`]).
pub fn current_token() -> u64 {
    THREAD
        .try_with(|cell| {
            let p = cell.get();
            if p.is_null() {
                return 0;
            }
            // SAFETY: only this thread uses the pointer; reading, not
            // re-entering `with_thread`.
            unsafe { (*p).requests.last().map_or(0, |r| r.token) }
        })
        .unwrap_or(0)
}

fn exe_path() -> &'static [u8] {
    static EXE: OnceLock<Vec<u8>> = OnceLock::new();
    EXE.get_or_init(|| {
        use std::os::unix::ffi::OsStrExt;
        std::fs::read_link("/proc/self/exe")
            .map(|p| p.as_os_str().as_bytes().to_vec())
            .unwrap_or_default()
    })
}

/// The path to show for a link map (the main program's `l_name` is empty).
pub(crate) unsafe fn map_path(map: usize) -> Vec<u8> {
    if map == 0 {
        return Vec::new();
    }
    let name = elf::l_name(map as *const LinkMap);
    if name.is_empty() && map == MAIN_MAP.load(Ordering::Relaxed) {
        exe_path().to_vec()
    } else {
        name.to_vec()
    }
}

/// Whether `name` is one of the DT_NEEDED entries of `requester` (a live
/// link map, or 0 for none).
unsafe fn is_needed_by(requester: usize, name: &[u8]) -> bool {
    requester != 0 && elf::any_needed(requester as *const LinkMap, |n| n == name)
}

fn dirname(p: &[u8]) -> &[u8] {
    match p.iter().rposition(|&c| c == b'/') {
        Some(0) => b"/",
        Some(i) => &p[..i],
        None => b".",
    }
}

fn with_thread<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    THREAD
        .try_with(|cell| {
            let mut p = cell.get();
            if p.is_null() {
                p = Box::into_raw(Box::default());
                cell.set(p);
            }
            // SAFETY: only this thread ever sees this pointer, and `busy`
            // keeps a re-entered call from taking a second reference.
            let ts = unsafe { &mut *p };
            if ts.busy {
                return None;
            }
            ts.busy = true;
            let r = f(ts);
            ts.busy = false;
            if ts.idle() {
                if ts.listed {
                    ts.listed = false;
                    unlist(p);
                }
                if !ts.kept {
                    cell.set(core::ptr::null_mut());
                    // SAFETY: allocated above by Box, no reference outlives this.
                    drop(unsafe { Box::from_raw(p) });
                }
            } else if !ts.listed && ts.search.is_some() {
                // Only an open search needs the list. A state busy with
                // hooked requests alone is freed when they end, or when the
                // thread exits inside one (a constructor's pthread_exit):
                // the preload role calls `thread_exit` then. Listing every
                // request cost each re-open a lock and two list updates.
                ts.listed = true;
                list_left_busy(p);
            }
            Some(r)
        })
        .ok()
        .flatten()
}

/// As [`with_thread`], for work on what the thread has in progress: a
/// thread with nothing in progress gets `None` without a state being
/// allocated and freed again.
fn with_busy_thread<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    if THREAD.try_with(|cell| cell.get().is_null()).unwrap_or(true) {
        return None;
    }
    with_thread(f)
}

fn wants(name: &[u8], path: &[u8]) -> Option<Option<&'static str>> {
    let fam = cuda_family(name).or_else(|| cuda_family(path));
    let all = trace::config().is_some_and(|c| c.all);
    (fam.is_some() || all).then_some(fam)
}

// ---------------------------------------------------------------------------
// Reason attribution

/// Expands `$ORIGIN` in one RPATH/RUNPATH entry of `owner`; `$LIB` and
/// `$PLATFORM` become `*` (matched as a wildcard: their values are private to ld.so).
unsafe fn expand_entry(entry: &[u8], owner: usize) -> Vec<u8> {
    // glibc takes $ORIGIN from the directory of l_name as given, without
    // resolving symlinks (libtree's "origin is relative to symlink location").
    let mut origin = dirname(&map_path(owner)).to_vec();
    if !origin.starts_with(b"/") {
        // glibc makes a relative l_name absolute with the cwd at load time.
        if let Ok(cwd) = std::env::current_dir() {
            use std::os::unix::ffi::OsStrExt;
            let mut abs = cwd.as_os_str().as_bytes().to_vec();
            if origin != b"." {
                abs.push(b'/');
                abs.extend_from_slice(&origin);
            }
            origin = abs;
        }
    }
    let mut out = Vec::with_capacity(entry.len() + origin.len());
    let mut i = 0;
    while i < entry.len() {
        if entry[i] != b'$' {
            out.push(entry[i]);
            i += 1;
            continue;
        }
        let rest = &entry[i + 1..];
        let (tok, consumed) = if rest.starts_with(b"{") {
            match rest.iter().position(|&c| c == b'}') {
                Some(e) => (&rest[1..e], e + 1),
                None => (&rest[..0], 0),
            }
        } else {
            let e = rest
                .iter()
                .position(|c| !c.is_ascii_alphanumeric() && *c != b'_')
                .unwrap_or(rest.len());
            (&rest[..e], e)
        };
        match tok {
            b"ORIGIN" => out.extend_from_slice(&origin),
            b"LIB" | b"PLATFORM" => out.push(b'*'),
            _ => {
                out.push(b'$');
                i += 1;
                continue;
            }
        }
        i += 1 + consumed;
    }
    out
}

/// Whether `pat` matches all of `s`; `pat` may contain `*` (any run of
/// characters: what `$LIB` and `$PLATFORM` expand to is private to ld.so).
fn glob(pat: &[u8], s: &[u8]) -> bool {
    match pat.iter().position(|&c| c == b'*') {
        None => pat == s,
        Some(i) => {
            let (head, tail) = (&pat[..i], &pat[i + 1..]);
            s.starts_with(head) && (head.len()..=s.len()).any(|j| glob(tail, &s[j..]))
        }
    }
}

/// Whether `rest` (components below a search directory) is one of the
/// hardware-capability subdirectories glibc tries in each search directory:
/// `glibc-hwcaps/<level>` (2.33+), or up to three of the legacy `tls` and
/// platform/hwcap names (until 2.36: `tls/x86_64/x86_64`, `x86_64`, …).
fn is_cap_subdir(rest: &[u8]) -> bool {
    if let Some(level) = rest.strip_prefix(b"glibc-hwcaps/") {
        return !level.is_empty() && !level.contains(&b'/');
    }
    let legacy = |c: &[u8]| {
        matches!(
            c,
            b"tls"
                | b"x86_64"
                | b"haswell"
                | b"xeon_phi"
                | b"avx512_1"
                | b"i386"
                | b"i486"
                | b"i586"
                | b"i686"
                | b"sse2"
                | b"aarch64"
                | b"atomics"
        ) || platform().is_some_and(|p| p == c)
    };
    let parts: Vec<&[u8]> = rest.split(|&c| c == b'/').collect();
    !rest.is_empty() && parts.len() <= 3 && parts.iter().all(|c| legacy(c))
}

/// `AT_PLATFORM` (the legacy platform subdirectory's name), read once.
fn platform() -> Option<&'static [u8]> {
    static P: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    P.get_or_init(|| {
        // SAFETY: getauxval has no preconditions; AT_PLATFORM is a string.
        let p = unsafe { libc::getauxval(libc::AT_PLATFORM) } as *const libc::c_char;
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_bytes().to_vec())
    })
    .as_deref()
}

/// Whether the search-list entry `entry` (expanded; may hold `*`) yields
/// directory `dir`: the entry itself, or one of its hardware-capability
/// subdirectories.
fn yields(entry: &[u8], dir: &[u8]) -> bool {
    if glob(entry, dir) {
        return true;
    }
    (1..dir.len())
        .filter(|&i| dir[i] == b'/')
        .any(|i| is_cap_subdir(&dir[i + 1..]) && glob(entry, &dir[..i]))
}

/// The search-list entry directory `dir` comes from when nothing better is
/// known: `dir` without a hardware-capability subdirectory.
fn entry_of(dir: &[u8]) -> &[u8] {
    (1..dir.len())
        .filter(|&i| dir[i] == b'/')
        .find(|&i| is_cap_subdir(&dir[i + 1..]))
        .map_or(dir, |i| &dir[..i])
}

/// One RPATH/RUNPATH directory of a search, expanded.
struct ListDir {
    reason: &'static str,
    owner: usize,
    dir: Vec<u8>,
}

/// The RPATH/RUNPATH directories a search goes through, in glibc's order
/// (`elf/dl-load.c` `_dl_map_object`): when the requester has no DT_RUNPATH,
/// the DT_RPATH of the requester, of its loader, and on up, then of the
/// executable (once); else the requester's DT_RUNPATH alone. An object that
/// has both ignores its DT_RPATH (`elf_get_dynamic_info`). glibc reports
/// them all as `LA_SER_RUNPATH`; `pos` is where the last candidate was
/// found, since the lists are gone through in order (the same directory in
/// two lists is tried twice).
struct Lists {
    dirs: Vec<ListDir>,
    pos: usize,
}

impl Lists {
    /// # Safety
    /// `requester` (a link map or 0) is alive: its search is running.
    unsafe fn of(requester: usize) -> Lists {
        let mut dirs = Vec::new();
        if requester == 0 {
            return Lists { dirs, pos: 0 };
        }
        let mut add = |owner: usize, tag: i64, reason: &'static str| {
            if let Some(list) = elf::dyn_string(owner as *const LinkMap, tag) {
                for e in list.split(|&c| c == b':').filter(|e| !e.is_empty()) {
                    let dir = expand_entry(e, owner);
                    dirs.push(ListDir {
                        reason,
                        owner,
                        dir: crate::pin::trim_trailing_slashes(&dir).to_vec(),
                    });
                }
            }
        };
        let has_runpath = |m: usize| cdtrace_abi::elf::has_dyn(m as *const LinkMap, DT_RUNPATH);
        if has_runpath(requester) {
            add(requester, DT_RUNPATH, reason::RUNPATH);
            return Lists { dirs, pos: 0 };
        }
        let main = MAIN_MAP.load(Ordering::Relaxed);
        let mut seen_main = false;
        let mut cur = requester;
        for hop in 0..64 {
            // The requester is alive (its search is running); every object
            // further up the chain is read only while it is still mapped.
            if cur == 0 || (hop > 0 && !OBJECTS.with(|o| o.contains_key(&cur))) {
                break;
            }
            if !has_runpath(cur) {
                add(cur, DT_RPATH, reason::RPATH);
            }
            seen_main |= cur == main;
            cur = OBJECTS.with(|o| o.get(&cur).map_or(0, |x| x.requester));
        }
        if !seen_main && main != 0 && !has_runpath(main) {
            add(main, DT_RPATH, reason::RPATH);
        }
        Lists { dirs, pos: 0 }
    }

    /// The directory of the lists that produced a candidate in `dir`.
    fn find(&mut self, dir: &[u8]) -> Option<&ListDir> {
        let i = (self.pos..self.dirs.len()).find(|&i| yields(&self.dirs[i].dir, dir))?;
        self.pos = i;
        self.dirs.get(i)
    }
}

/// Why the search step `flag` offered candidate `path` of search `s` (whose
/// requester must be alive: this reads its dynamic section and its
/// loaders'). Candidates are given in the order the loader tried them.
unsafe fn step_reason(s: &mut Search, path: &[u8], flag: u32) -> Step {
    let dir = dirname(path).to_vec();
    let plain = |reason, dir: Vec<u8>| Step {
        reason,
        owner: None,
        entry: entry_of(&dir).to_vec(),
        dir,
    };
    match flag {
        LA_SER_LIBPATH => plain(reason::LD_LIBRARY_PATH, dir),
        LA_SER_RUNPATH => {
            let requester = s.requester;
            let lists = s.lists.get_or_insert_with(|| Lists::of(requester));
            match lists.find(&dir) {
                Some(d) => Step {
                    reason: d.reason,
                    owner: Some(map_path(d.owner)),
                    entry: d.dir.clone(),
                    dir,
                },
                None => plain(reason::RPATH_OR_RUNPATH, dir),
            }
        }
        LA_SER_CONFIG => plain(reason::LD_SO_CACHE, dir),
        LA_SER_DEFAULT => plain(reason::DEFAULT_DIR, dir),
        LA_SER_SECURE => plain(reason::SECURE_DIR, dir),
        _ => plain(reason::UNKNOWN, dir),
    }
}

/// Writes the `tried` array. The last candidate is `used` when `used_last`.
/// `t_start_ns`: when the search that led to this event began. Always the
/// event's last field: the report folds repeated events by the bytes after
/// `tid`, and cuts this time off them as it does `seq` and `t_ns`
/// (core/src/model/fold.rs).
fn write_start(l: &mut Line<'_>, s: &Search) {
    l.opt_u64("t_start_ns", (s.t0_ns != 0).then_some(s.t0_ns));
}

unsafe fn write_tried(l: &mut Line<'_>, s: &Search, used_last: bool) {
    let n = s.tried.len();
    let items: Vec<(Vec<u8>, &'static str, &'static str)> = s
        .tried
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let r = c.why.as_ref().map_or(reason::UNKNOWN, |w| w.reason);
            // A file the loader passed over was rejected (wrong class or
            // machine, unreadable, …): whether one is there is all it takes.
            let result = if used_last && i + 1 == n {
                tried::USED
            } else if c.exists.unwrap_or_else(|| elf::stat(&c.path).is_some()) {
                tried::REJECTED
            } else {
                tried::MISSING
            };
            (c.path.clone(), r, result)
        })
        .collect();
    l.nested("tried", |nest| {
        nest.array_of_objects(&items, |o, (p, r, res)| {
            o.bytes("path", p).str("reason", r).str("result", res);
        })
    });
}

/// Identity fields shared by `load` events: real path, device, inode, size,
/// build-id, all from one open of the file ([`elf::file_info`]).
pub(crate) fn write_identity(l: &mut Line<'_>, info: Option<&elf::FileInfo>) {
    match info {
        Some(fi) => {
            l.opt_bytes("realpath", fi.realpath.as_deref());
            l.u64("dev", fi.dev).u64("ino", fi.ino).u64("size", fi.size);
            l.opt_str(
                "build_id",
                fi.build_id
                    .as_deref()
                    .map(cudnn_trace_format::hex)
                    .as_deref(),
            );
        }
        None => {
            l.null("realpath")
                .null("dev")
                .null("ino")
                .null("size")
                .null("build_id");
        }
    }
}

fn write_mode(l: &mut Line<'_>, mode: Option<i32>) {
    l.opt_i64("mode", mode.map(i64::from));
}

// ---------------------------------------------------------------------------
// Search outcome

/// How the request that produced `s` reached the loader: `via`, the dlopen
/// mode, and for `dlmopen` the namespace asked for. Marks a matching hooked
/// request as served by a mapping.
fn how_requested(ts: &mut ThreadState, s: &Search) -> (&'static str, Option<i32>, Option<i64>) {
    if let Some(r) = ts.requests.last_mut() {
        // By name only: an interposer between the program and libc (another
        // preload, a host library) makes the loader's requester differ from
        // the caller the hook saw; the search's requester is the true one.
        if r.name == s.name && !r.opened {
            r.opened = true;
            return if r.kind == 1 {
                (via::DLMOPEN, Some(r.mode), Some(r.lmid))
            } else {
                (via::DLOPEN, Some(r.mode), None)
            };
        }
    }
    if s.needed {
        return (via::NEEDED, None, None);
    }
    if !STARTED.load(Ordering::Relaxed) {
        if let Some(cfg) = trace::config() {
            if cfg.preloads.contains(&s.name) {
                return (via::PRELOAD, None, None);
            }
        }
    }
    // Not a DT_NEEDED entry, so some dlopen-family call. With the hook active
    // it is one the hook did not see (RTLD_DEEPBIND callers bypass it).
    if preload_active() {
        (via::LOADER, None, None)
    } else {
        (via::DLOPEN, None, None)
    }
}

/// A search that ended without `la_objopen`: either the loader reused an
/// object already mapped from the same file under another name, or it failed.
/// Decided from the candidates: a loadable file among them means reuse.
/// Returns the `seq` of a failure event, if one was written.
unsafe fn finish_unmapped(
    ts: &mut ThreadState,
    s: Search,
    failed_hint: Option<bool>,
    errno: Option<i32>,
    served_by: Option<usize>,
) -> Option<u64> {
    let (v, mode, ns) = how_requested(ts, &s);
    let lmid = ns.unwrap_or(s.requester_lmid);
    let candidate = s
        .tried
        .last()
        .map(|c| c.path.clone())
        .unwrap_or_else(|| s.name.clone());
    let fam = wants(&s.name, &candidate)?;
    // Looked at the file only when the outcome is unknown and will be
    // recorded: this runs for every search that maps nothing.
    if s.drawn {
        trace::startup_settled();
    }
    let failed = failed_hint.unwrap_or_else(|| {
        let last_loadable = match s.tried.last() {
            Some(c) => elf::classify(&c.path) == Candidate::Loadable,
            // A name with a slash has no candidates: the name is the path.
            None => s.name.contains(&b'/') && elf::classify(&s.name) == Candidate::Loadable,
        };
        !last_loadable
    });
    if failed {
        let seq = trace::emit(ev::LOAD_FAILED, |l| {
            l.bytes("name", &s.name)
                .bytes("requester", &s.requester_path)
                .str("via", v);
            write_mode(l, mode);
            l.i64("lmid", lmid);
            l.opt_str("family", fam);
            write_tried(l, &s, false);
            l.null("error").opt_i64("errno", errno.map(i64::from));
            crate::environ::write_now(l);
            write_start(l, &s);
        });
        Some(seq)
    } else {
        if !first_reuse(s.requester, &s.name) {
            return None;
        }
        // The object that served it: the handle the hook saw, else the
        // recorded object of the same file. Its path is the loaded object's
        // (docs/trace-format.md), not the request's spelling or the symlink
        // the search found.
        let served = served_by.or_else(|| same_file_object(&candidate));
        let path = served.map_or(candidate, |m| map_path(m));
        let soname = served.and_then(|m| elf::dyn_string(m as *const LinkMap, DT_SONAME));
        trace::emit(ev::LOAD, |l| {
            l.bytes("name", &s.name).bytes("path", &path);
            l.str("reason", reason::SAME_FILE)
                .null("reason_owner")
                .null("search_dir")
                .null("search_entry");
            l.bytes("requester", &s.requester_path).str("via", v);
            write_mode(l, mode);
            l.i64("lmid", lmid).opt_bytes("soname", soname);
            write_identity(l, elf::file_info(&path).as_ref());
            l.opt_str("family", fam);
            write_tried(l, &s, true);
            l.bool("new", false);
            crate::environ::write_now(l);
            write_start(l, &s);
        });
        None
    }
}

/// The CUDA family of mapped object `map`: as recorded for it, else from
/// its file name.
///
/// # Safety
/// `map` is a live link map.
pub(crate) unsafe fn family_of(map: usize) -> Option<&'static str> {
    OBJECTS
        .with(|o| o.get(&map).map(|x| x.family))
        .flatten()
        .or_else(|| cuda_family(elf::l_name(map as *const LinkMap)))
}

/// The recorded object mapped from the same file as `path` (device and
/// inode), if any.
fn same_file_object(path: &[u8]) -> Option<usize> {
    let st = elf::stat(path)?;
    let id = (st.st_dev, st.st_ino);
    OBJECTS.with(|o| o.iter().find(|(_, x)| x.ident == Some(id)).map(|(&k, _)| k))
}

pub(crate) fn obj_lmid(map: usize) -> i64 {
    OBJECTS.with(|o| o.get(&map).map_or(0, |x| x.lmid))
}

/// Resolves a search left open on this thread (see [`finish_unmapped`]).
unsafe fn flush_pending(ts: &mut ThreadState) {
    if let Some(s) = ts.search.take() {
        if finish_unmapped(ts, s, None, None, None).is_some() {
            // A newer failure: a dlerror() text read from now on is not
            // about the one that was waiting for it.
            set_awaiting(None);
        }
    }
}

// ---------------------------------------------------------------------------
// rtld-audit callbacks (called from lib.rs inside catch_unwind)

pub unsafe fn objsearch(
    name: *const libc::c_char,
    cookie: *mut usize,
    flag: u32,
    pinned: Option<&crate::pin::Decision>,
) {
    let name = CStr::from_ptr(name).to_bytes();
    with_thread(|ts| {
        if flag == LA_SER_ORIG {
            flush_pending(ts);
            let requester = if cookie.is_null() { 0 } else { *cookie };
            let mut search = Search::new(name.to_vec(), requester);
            if let Some(d) = pinned {
                record_pin(&mut search, d);
            }
            search.drawn = search.recorded && trace::startup_window();
            if search.drawn {
                draw_startup_search(&search);
            }
            ts.search = Some(search);
        } else if let Some(s) = ts.search.as_mut() {
            // The requester is alive during its search; attribute now.
            let why = if s.recorded {
                Some(step_reason(s, name, flag))
            } else {
                None
            };
            // A start-up search can end the process at any candidate: each
            // is looked at as it comes, so that the line on disk is complete.
            let exists = s.drawn.then(|| elf::stat(name).is_some());
            s.tried.push(Cand {
                path: name.to_vec(),
                flag,
                why,
                exists,
            });
            if s.drawn {
                draw_startup_search(s);
            }
        }
    });
}

/// Draws start-up search `s` into the trace's start-up window
/// (`startup.rs`) as the `load_failed` event it is if the process ends
/// during it: ld.so exits with status 127 after a start-up search that
/// found nothing, without a callback. Every candidate so far counts as
/// failed (the loader moved past it, or the process ended at it).
unsafe fn draw_startup_search(s: &Search) {
    let fam = wants(&s.name, &s.name).flatten();
    trace::startup_pending(ev::LOAD_FAILED, |l| {
        l.bytes("name", &s.name)
            .bytes("requester", &s.requester_path)
            .str("via", startup_via(s));
        write_mode(l, None);
        l.i64("lmid", s.requester_lmid);
        l.opt_str("family", fam);
        write_tried(l, s, false);
        l.null("error").null("errno").bool("fatal", true);
    });
}

/// How a start-up search reached the loader (no hook has run yet).
fn startup_via(s: &Search) -> &'static str {
    if s.needed {
        via::NEEDED
    } else if trace::config().is_some_and(|c| c.preloads.contains(&s.name)) {
        via::PRELOAD
    } else {
        via::LOADER
    }
}

/// Writes the `pin` event for a decision on `s`'s name and, when the loader
/// is handed a path in the pin directory, records that path as the search's
/// one candidate (glibc searches no directory for a name with a slash).
unsafe fn record_pin(s: &mut Search, d: &crate::pin::Decision) {
    let Some(settings) = crate::pin::settings() else {
        return;
    };
    if s.requester != 0 && s.requester_path.is_empty() {
        s.requester_path = map_path(s.requester);
    }
    let to = d.to.map(CStr::to_bytes);
    trace::emit(ev::PIN, |l| {
        l.bytes("name", &s.name);
        if s.requester == 0 {
            l.null("requester");
        } else {
            l.bytes("requester", &s.requester_path);
        }
        l.str("action", d.action).str("rule", d.rule);
        l.opt_bytes("to", to);
        l.bytes("dir", &settings.dir).str("mode", settings.mode());
    });
    if let Some(to) = to {
        s.tried.push(Cand {
            path: to.to_vec(),
            flag: PIN_STEP,
            why: Some(Step {
                reason: reason::PIN,
                owner: None,
                dir: settings.dir.clone(),
                entry: settings.dir.clone(),
            }),
            exists: None,
        });
    }
}

/// Not a glibc `LA_SER_*` value: marks the candidate the pin handed to the
/// loader.
const PIN_STEP: u32 = 0x8000_0000;

/// `la_objopen`: remembers the object and writes its `load` event when it
/// is recorded. Returns the resolved path read for that event, so that
/// [`crate::calls`] does not resolve it again, and the object's CUDA family.
pub unsafe fn objopen(
    map: *mut LinkMap,
    lmid: i64,
    cookie: *mut usize,
) -> (Option<Vec<u8>>, Option<&'static str>) {
    let _ = cookie;
    // A start-up search in progress ends here, with this object.
    trace::startup_settled();
    let l_name = elf::l_name(map);
    crate::bridge::maybe_install(map, l_name, lmid);
    let key = map as usize;
    let mut search = with_busy_thread(|ts| {
        ts.search.take().or_else(|| {
            // glibc skips la_objsearch when it has no requesting object
            // (dlmopen with a path and an explicit namespace): the hooked
            // request names the path.
            let r = ts.requests.last()?;
            (!r.opened && r.name.contains(&b'/') && basename(&r.name) == basename(l_name))
                .then(|| Search::new(r.name.clone(), r.caller))
        })
    })
    .flatten();
    let startup_kind = if search.is_none() {
        if l_name.is_empty() && lmid == 0 && MAIN_MAP.load(Ordering::Relaxed) == 0 {
            MAIN_MAP.store(key, Ordering::Relaxed);
            Some(reason::MAIN_PROGRAM)
        } else if l_name.starts_with(b"linux-vdso") || l_name.starts_with(b"linux-gate") {
            Some(reason::VDSO)
        } else if elf::dyn_string(map, DT_SONAME).is_some_and(|s| s.starts_with(b"ld-linux")) {
            Some(reason::DYNAMIC_LINKER)
        } else {
            None
        }
    } else {
        None
    };
    let path = if key == MAIN_MAP.load(Ordering::Relaxed) {
        exe_path().to_vec()
    } else {
        l_name.to_vec()
    };
    // The family: the name asked for, else the object's identity (file
    // name, SONAME, what it defines: `family.rs`).
    let ident = crate::family::identify(map, &path, startup_kind.is_none());
    let by_request = search.as_ref().and_then(|s| cuda_family(&s.name));
    let family_by = if by_request.is_some() {
        Some(crate::family::BY_NAME)
    } else {
        ident.by
    };
    let all = trace::config().is_some_and(|c| c.all);
    let found = by_request.or(ident.family);
    let fam = (found.is_some() || all).then_some(found);
    // The requester is alive here; a recorded search already knows.
    let needed = search.as_ref().is_some_and(|s| {
        if s.recorded {
            s.needed
        } else {
            is_needed_by(s.requester, &s.name)
        }
    });
    OBJECTS.with(|o| {
        o.insert(
            key,
            Obj {
                requester: match &search {
                    Some(s) if needed => s.requester,
                    _ => 0,
                },
                recorded: fam.is_some(),
                family: fam.flatten(),
                path: path.clone(),
                lmid,
                ident: None,
            },
        )
    });
    let Some(fam) = fam else {
        // Not recorded, but the request may still need its bookkeeping.
        if let Some(s) = &search {
            with_thread(|ts| how_requested(ts, s));
        }
        return (None, None);
    };
    // A search recorded because of the path mapped rather than the name
    // asked for has no requester facts yet; its requester is alive here.
    if let Some(s) = search.as_mut() {
        if !s.recorded && s.requester != 0 {
            s.requester_path = map_path(s.requester);
            s.requester_lmid = obj_lmid(s.requester);
            s.needed = needed;
        }
    }
    // Recorded only because of the path (`--all`, a name that is not
    // CUDA-looking, a family known by identity): attribute the candidates
    // now, in order (the requester is alive).
    if let Some(s) = search.as_mut() {
        if s.tried.last().is_some_and(|c| c.why.is_none()) {
            for i in 0..s.tried.len() {
                if s.tried[i].why.is_none() {
                    let (path, flag) = (s.tried[i].path.clone(), s.tried[i].flag);
                    let w = step_reason(s, &path, flag);
                    s.tried[i].why = Some(w);
                }
            }
        }
    }
    let last_why = search
        .as_ref()
        .and_then(|s| s.tried.last())
        .and_then(|c| c.why.as_ref());
    let (why, owner, dir, entry, via_, mode) = match &search {
        None => (
            startup_kind.unwrap_or(reason::UNKNOWN),
            None,
            None,
            None,
            via::STARTUP,
            None,
        ),
        Some(s) => {
            let (v, mode, _) =
                with_thread(|ts| how_requested(ts, s)).unwrap_or((via::LOADER, None, None));
            match last_why {
                // A name with a slash is opened as given, unless the pin
                // replaced it.
                Some(w) if w.reason == reason::PIN || !s.name.contains(&b'/') => (
                    w.reason,
                    w.owner.clone(),
                    Some(w.dir.clone()),
                    Some(w.entry.clone()),
                    v,
                    mode,
                ),
                _ => (reason::PATH, None, None, None, v, mode),
            }
        }
    };
    let soname = elf::dyn_string(map, DT_SONAME);
    let identity = elf::file_info(&path);
    if let Some(fi) = &identity {
        OBJECTS.with(|o| {
            if let Some(x) = o.get_mut(&key) {
                x.ident = Some((fi.dev, fi.ino));
            }
        });
    }
    trace::emit(ev::LOAD, |l| {
        l.opt_bytes("name", search.as_ref().map(|s| &s.name[..]))
            .bytes("path", &path);
        l.str("reason", why);
        l.opt_bytes("reason_owner", owner.as_deref());
        l.opt_bytes("search_dir", dir.as_deref());
        l.opt_bytes("search_entry", entry.as_deref());
        l.opt_bytes("requester", search.as_ref().map(|s| &s.requester_path[..]));
        l.str("via", via_);
        write_mode(l, mode);
        l.i64("lmid", lmid);
        l.opt_bytes("soname", soname);
        write_identity(l, identity.as_ref());
        l.opt_str("family", fam);
        l.opt_str("family_by", fam.and(family_by));
        l.bool("stub", fam.is_some() && ident.stub);
        match &search {
            Some(s) => write_tried(l, s, true),
            None => {
                l.nested("tried", |n| n.array_of_objects::<u8>(&[], |_, _| {}));
            }
        }
        l.bool("new", true);
        if let Some(s) = &search {
            crate::environ::write_now(l);
            write_start(l, s);
        }
    });
    (identity.and_then(|i| i.realpath), fam)
}

pub unsafe fn objclose(cookie: *mut usize) {
    if cookie.is_null() {
        return;
    }
    let key = *cookie;
    if key == MAIN_MAP.load(Ordering::Relaxed) {
        EXITING.store(true, Ordering::Relaxed);
        // A search this thread left open is judged now: nothing loads
        // again. It is how a failed dlopen the hook could not see (a caller
        // with no _init/_fini to return through) is recorded when it was
        // the program's last loader call before exit, on a glibc before
        // 2.35, which reports no loader activity for a dlopen that maps
        // nothing.
        with_busy_thread(|ts| flush_pending(ts));
        crate::calls::exiting();
        crate::trace::exiting();
    }
    crate::calls::closed(
        key,
        EXITING.load(Ordering::Relaxed) || DELETE_PENDING.load(Ordering::Relaxed),
    );
    // A closed object's address may be reused by a later one, so nothing
    // may keep naming it as its requester; at exit nothing loads again,
    // and clearing it for each of N objects would cost N² steps.
    let exiting = EXITING.load(Ordering::Relaxed);
    let Some(obj) = OBJECTS.with(|o| {
        let obj = o.remove(&key);
        if !exiting && obj.is_some() {
            for other in o.values_mut().filter(|x| x.requester == key) {
                other.requester = 0;
            }
        }
        obj
    }) else {
        return;
    };
    // dlclose (and a failed dlopen's rollback) closes objects and only then
    // reports LA_ACT_DELETE; _dl_fini at exit reports LA_ACT_DELETE first,
    // for every namespace (glibc 2.36, checked with a C audit module).
    let at_exit = EXITING.load(Ordering::Relaxed) || DELETE_PENDING.load(Ordering::Relaxed);
    if obj.recorded && !at_exit {
        trace::emit(ev::UNLOAD, |l| {
            l.bytes("path", &obj.path).i64("lmid", obj.lmid);
            l.opt_str("family", obj.family);
        });
    }
}

pub unsafe fn activity(flag: u32) {
    if flag == LA_ACT_DELETE {
        DELETE_PENDING.store(true, Ordering::Relaxed);
        return;
    }
    if flag != LA_ACT_CONSISTENT {
        return;
    }
    DELETE_PENDING.store(false, Ordering::Relaxed);
    // Inside a dlopen the hook reports the outcome (and knows more); judge
    // an open search here only when no hooked request is in progress.
    with_busy_thread(|ts| {
        if ts.requests.is_empty() {
            flush_pending(ts);
        }
    });
    // The first consistent state is the start-up's objects all mapped
    // (glibc 2.36 `elf/rtld.c`): a failed search can no longer end the
    // process, so events are written one by one again.
    trace::startup_over();
}

pub fn preinit() {
    STARTED.store(true, Ordering::Relaxed);
    trace::startup_over();
}

// ---------------------------------------------------------------------------
// Bridge entry points (called by the preload role, on the calling thread)

pub unsafe fn request_begin(
    kind: u32,
    name: *const libc::c_char,
    mode: i32,
    lmid: i64,
    caller: usize,
    exit_watched: bool,
) -> u64 {
    if name.is_null() || trace::config().is_none() {
        return 0;
    }
    let name = CStr::from_ptr(name).to_bytes();
    if kind == 1 && lmid == -1 {
        warn_new_namespace();
    }
    let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    with_thread(|ts| {
        ts.kept |= exit_watched;
        // A search still open belongs to an earlier call the hook did not
        // see (say a constructor's tail-called dlopen, whose return address
        // is in ld.so): judge it now, from its candidates.
        flush_pending(ts);
        let key = reuses::fingerprint(caller, name);
        REUSES.prefetch(key);
        let name = ts.name_buf(name);
        ts.requests.push(Request {
            token,
            kind,
            name,
            key,
            mode,
            lmid,
            caller,
            opened: false,
        });
        token
    })
    .unwrap_or(0)
}

pub unsafe fn request_end(token: u64, result: usize, errno: i32) {
    if token == 0 {
        return;
    }
    record_end(token, result, errno);
    // Outside `with_thread`: the libraries asked for their versions may
    // themselves call the loader (and so the bridge).
    crate::versions::safe_point(token);
}

unsafe fn record_end(token: u64, result: usize, errno: i32) {
    with_thread(|ts| {
        let Some(pos) = ts.requests.iter().rposition(|r| r.token == token) else {
            return;
        };
        if result != 0 && ts.search.is_none() && recorded_reuse(&ts.requests[pos]) {
            // The common case of a program that re-opens its libraries:
            // nothing to write. Handled in place, because every line touched
            // after the loader's walk over all objects is a cache miss.
            let name = core::mem::take(&mut ts.requests[pos].name);
            ts.requests.truncate(pos);
            ts.recycle(name);
            return;
        }
        let req = ts.requests.remove(pos);
        ts.requests.truncate(pos);
        judge_end(ts, &req, result, errno);
        ts.recycle(req.name);
    });
}

/// Whether `req`, which succeeded with no search left open, was served by an
/// object in place and that was recorded already ([`record_reuse`]).
fn recorded_reuse(req: &Request) -> bool {
    req.mode & libc::RTLD_NOLOAD == 0 && !req.opened && REUSES.contains(req.key)
}

/// What the ended request `req` did, from its result and the search it
/// left open, if any.
unsafe fn judge_end(ts: &mut ThreadState, req: &Request, result: usize, errno: i32) {
    let pending = ts.search.take();
    if req.mode & libc::RTLD_NOLOAD != 0 {
        // A probe ("is it loaded?"), not a load: NULL is an answer, not
        // a failure, and a hit loads nothing.
        return;
    }
    if result != 0 {
        // Success. A search left open was served by an object already
        // mapped from the same file (or is a dependency that was).
        if let Some(s) = pending {
            if s.name == req.name {
                // Back on the stack so that `how_requested` names it
                // (dlopen, its mode), served by the returned object (in
                // glibc a handle is the object's link map).
                ts.requests.push(req_clone(req));
                finish_unmapped(ts, s, Some(false), None, Some(result));
                ts.requests.pop();
                return;
            }
            // Another name: not this request's search (a dependency
            // served by a same-file object, or an unhooked call's).
            finish_unmapped(ts, s, None, None, None);
        }
        if !req.opened {
            record_reuse(req, result);
        }
        return;
    }
    // Failure.
    let mut names = vec![req.name.clone()];
    let dep_failed = pending.as_ref().is_some_and(|s| s.name != req.name);
    if let Some(s) = pending {
        names.push(s.name.clone());
        if s.name == req.name {
            ts.requests.push(req_clone(req));
            let seq = finish_unmapped(ts, s, Some(true), Some(errno), None);
            ts.requests.pop();
            if let Some(seq) = seq {
                set_awaiting(Some(AwaitingText { seq, names }));
            }
            return;
        }
        finish_unmapped(ts, s, None, None, None);
    }
    // The request itself was found (or never searched: mapped then
    // rejected, e.g. an undefined symbol) but failed.
    let Some(fam) = wants(&req.name, &req.name) else {
        return;
    };
    let seq = trace::emit(ev::LOAD_FAILED, |l| {
        l.bytes("name", &req.name)
            .bytes("requester", &map_path(req.caller))
            .str(
                "via",
                if req.kind == 1 {
                    via::DLMOPEN
                } else {
                    via::DLOPEN
                },
            );
        write_mode(l, Some(req.mode));
        l.i64(
            "lmid",
            if req.kind == 1 {
                req.lmid
            } else {
                obj_lmid(req.caller)
            },
        );
        l.opt_str("family", fam);
        l.nested("tried", |n| n.array_of_objects::<u8>(&[], |_, _| {}));
        l.null("error").i64("errno", errno as i64);
        l.bool("dependency_failed", dep_failed);
        crate::environ::write_now(l);
    });
    if seq != 0 {
        set_awaiting(Some(AwaitingText { seq, names }));
    }
}

/// A `dlmopen(LM_ID_NEWLM, …)` is starting. glibc before 2.35 crashes in
/// it whenever an audit module is loaded (it announces the new namespace's
/// first object through its still empty list: BZ #28062, fixed in 2.35);
/// nothing the shim does can avoid it, so the trace says why, once, before
/// the call (`docs/glibc.md`).
fn warn_new_namespace() {
    static SAID: AtomicBool = AtomicBool::new(false);
    if crate::sys::glibc_at_least(2, 35) || SAID.swap(true, Ordering::Relaxed) {
        return;
    }
    trace::note(
        "error",
        "the program calls dlmopen(LM_ID_NEWLM), which glibc before 2.35 crashes while an \
         audit module such as cudnn-trace's is loaded (glibc bug 28062); a crash right after \
         this is that bug",
    );
}

fn req_clone(r: &Request) -> Request {
    Request {
        token: r.token,
        kind: r.kind,
        name: r.name.clone(),
        key: r.key,
        mode: r.mode,
        lmid: r.lmid,
        caller: r.caller,
        opened: r.opened,
    }
}

/// A request served by an object already in the namespace: no search ran.
unsafe fn record_reuse(req: &Request, handle: usize) {
    if recorded_reuse(req) {
        // Recorded already (or not at all when it is not wanted: then
        // nothing was inserted, and the checks below run each time).
        return;
    }
    // In glibc a dlopen handle is the object's link map.
    let path = map_path(handle);
    let served = OBJECTS.with(|o| o.get(&handle).and_then(|x| x.family));
    let Some(fam) = wants(&req.name, &path)
        .map(|f| f.or(served))
        .or_else(|| served.map(Some))
    else {
        return;
    };
    if !REUSES.insert(req.key) {
        return;
    }
    let lmid = OBJECTS.with(|o| o.get(&handle).map_or(0, |x| x.lmid));
    trace::emit(ev::LOAD, |l| {
        l.bytes("name", &req.name).bytes("path", &path);
        l.str("reason", reason::ALREADY_LOADED)
            .null("reason_owner")
            .null("search_dir")
            .null("search_entry");
        l.bytes("requester", &map_path(req.caller));
        l.str(
            "via",
            if req.kind == 1 {
                via::DLMOPEN
            } else {
                via::DLOPEN
            },
        );
        write_mode(l, Some(req.mode));
        l.i64("lmid", lmid);
        l.opt_bytes(
            "soname",
            elf::dyn_string(handle as *const LinkMap, DT_SONAME),
        );
        write_identity(l, elf::file_info(&path).as_ref());
        l.opt_str("family", fam);
        l.nested("tried", |n| n.array_of_objects::<u8>(&[], |_, _| {}));
        l.bool("new", false);
        crate::environ::write_now(l);
    });
}

/// The calling thread is exiting: judge what it left open now, on this
/// thread (so the event carries its id), and free its state.
pub unsafe fn thread_exit() {
    with_busy_thread(|ts| {
        flush_pending(ts);
        ts.requests.clear();
        ts.kept = false;
    });
}

/// The program read `text` from `dlerror()`: attach it to this thread's last
/// failure when the message is about that failure.
pub unsafe fn error_text(text: *const libc::c_char) {
    let text = CStr::from_ptr(text).to_bytes();
    let Some(a) = take_awaiting() else { return };
    let about_it = a.names.iter().any(|n| {
        let b = basename(n);
        !b.is_empty() && text.windows(b.len()).any(|w| w == b)
    });
    if about_it {
        trace::emit(ev::DLERROR, |l| {
            l.u64("req", a.seq).bytes("error", text);
        });
    }
}

pub fn mark_preload_active() {
    PRELOAD_ACTIVE.store(true, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_and_their_entries() {
        // The entry itself, or a capability subdirectory of it; a plain
        // subdirectory is another entry's (RPATH A:A/sub).
        assert!(yields(b"/a", b"/a"));
        assert!(yields(b"/a", b"/a/x86_64"));
        assert!(yields(b"/a", b"/a/tls/x86_64/x86_64"));
        assert!(yields(b"/a", b"/a/glibc-hwcaps/x86-64-v3"));
        assert!(!yields(b"/a", b"/a/sub"));
        assert!(!yields(b"/a", b"/a/glibc-hwcaps/x/y"));
        assert!(!yields(b"/a/sub", b"/a"));
        // $LIB / $PLATFORM become a wildcard.
        assert!(yields(b"/opt/*/cuda", b"/opt/lib64/cuda"));
        assert!(yields(b"/opt/*", b"/opt/lib/x86_64-linux-gnu"));
        assert_eq!(entry_of(b"/a/x86_64"), b"/a");
        assert_eq!(entry_of(b"/a/glibc-hwcaps/x86-64-v2"), b"/a");
        assert_eq!(entry_of(b"/a/sub"), b"/a/sub");
        assert_eq!(entry_of(b"."), b".");
    }

    #[test]
    fn lists_are_gone_through_in_order() {
        let d = |dir: &[u8]| ListDir {
            reason: reason::RPATH,
            owner: dir.len(),
            dir: dir.to_vec(),
        };
        let mut l = Lists {
            dirs: vec![d(b"/x"), d(b"/x/sub"), d(b"/x")],
            pos: 0,
        };
        assert_eq!(l.find(b"/x/sub").map(|d| d.owner), Some(6));
        // Past /x/sub, /x is the third list's.
        assert_eq!(l.find(b"/x").map(|d| d.dir.len()), Some(2));
        assert_eq!(l.pos, 2);
        assert!(l.find(b"/x/sub").is_none());
    }
}
