//! Versions from the libraries themselves (`docs/versions-and-calls.md`).
//!
//! The shim calls a library function inside the program only when public
//! documentation says the function has no side effect, and only at a point
//! where calling it changes nothing the program could notice (issue 14).
//! Two kinds of query pass that bar:
//! - `cudaRuntimeGetVersion` of a runtime 12 or later: "As of CUDA 12.0,
//!   this function no longer initializes CUDA. The purpose of this API is
//!   solely to return a compile-time constant stating the CUDA Toolkit
//!   version" (CUDA Runtime API, Version Management,
//!   <https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART____VERSION.html>).
//!   11.x initialises and can fail (it returns `cudaErrorInsufficientDriver`
//!   without a driver \[E2\]): never asked.
//! - the cuDNN *core* library's (`libcudnn_graph.so.9`,
//!   `libcudnn_ops_infer.so.8`) `cudnnGetVersion` ("returns the
//!   CUDNN_VERSION defined present in the cudnn.h header file"),
//!   `cudnnGetCudartVersion` ("returns the CUDA toolkit version that the
//!   currently used cuDNN library has been compiled against") and
//!   `cudnnGetMaxDeviceVersion` ("returns the maximum SM version that the
//!   cuDNN library is aware of and supports natively"): constants (cuDNN API
//!   reference, <https://docs.nvidia.com/deeplearning/cudnn/api/latest/api/cudnn-graph-library.html>).
//!   But the first API call into graph is where it loads its engine
//!   libraries (on the GPU machine a PyTorch that only asked for the version
//!   had `libcudnn_engines_*` and `libcudnn_heuristic` mapped \[E-probe\];
//!   the fixture models this). So the core is
//!   asked only after one of its version getters has returned to its caller
//!   (the program, or the dispatcher on its behalf): [`used`], from the call
//!   thunks. Whatever that first call does has then been done.
//!
//! Never called, because they are not proven free of side effects:
//! - a cuDNN sub-library's `*VersionCheck`: real cuDNN 9's `dlopen`
//!   `libcuda.so.1` and call `cuDriverGetVersion` and `cuInit(0)` (issue 14;
//!   the fixtures do it too). Its answer is recorded when the program, or
//!   its dispatcher on its behalf, calls it ([`observed`]);
//! - `cuDriverGetVersion`: the driver API documents that it "may also
//!   return error codes from previous, asynchronous launches" (it reads the
//!   driver's state) and that `cuInit` "must be called before any other
//!   function from the driver API". Its answer is recorded when the program
//!   or its runtime calls it ([`observed`]); the driver's own version comes
//!   from its file name (`libcuda.so.580.159.04`);
//! - the dispatcher `libcudnn.so.N`: it `dlopen`s its sub-libraries and
//!   aborts the process when one is missing \[E6\].
//!
//! Every other version (a sub-library's own, an 11.x runtime's) is for the
//! CLI to ask in a separate process, from the file identity (device, inode,
//! size, build-id) the `load` event records.
//!
//! Code of a library may only run once it is relocated *and* initialised,
//! which `la_objopen` is far too early for. The safe points: when the hooked
//! `dlopen` that mapped it returns (the bridge's `request_end`, on the same
//! thread: that call's objects are done), and `la_preinit` for the start-up
//! objects (glibc 2.36 `csu/libc-start.c` calls it after every constructor,
//! right before `main`). An object mapped by a `dlopen` the hook could not
//! see (no detour, no preload role) reaches no safe point and is not asked,
//! except a cuDNN core library through [`used`].
//!
//! No symbol is looked up with `dlsym` (it would call our own `la_symbind`,
//! reset the program's `dlerror()`, and needs a handle): the shim reads the
//! object's dynamic symbol table itself ([`crate::elf::lookup`]).
//! The program's `errno` is saved and restored around every query.
//!
//! Besides, each cuDNN object gets an event from its file name or SONAME,
//! and each libcuda one from its file name, the moment it is mapped
//! (nothing is called for that).

use crate::calls::{self, Family, COPIES, USED};
use crate::sys::{LinkMap, DT_SONAME};
use crate::trace;
use core::ffi::c_int;
use core::sync::atomic::{AtomicUsize, Ordering};
use cudnn_trace_format::{basename, cudnn_name, ev, so_version, version_source};

/// What the shim may ask a CUDA-family object.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    /// `libcudnn_graph.so.9` / `libcudnn_ops_infer.so.8`: the version getters.
    CudnnCore,
    /// A cuDNN sub-library with its own `*VersionCheck` (the function's name).
    CudnnSub(&'static [u8]),
    /// The dispatcher, the engines: nothing is called.
    CudnnOther,
    /// The CUDA runtime of this major.
    Cudart(u32),
    /// The driver.
    Cuda,
}

/// Which safe point will tell that an object is ready to be called.
#[derive(Clone, Copy, Debug)]
pub struct Pending {
    tid: u32,
    /// The innermost hooked `dlopen` of `tid` in progress when it was mapped
    /// (0: none).
    token: u64,
    /// Mapped before `la_preinit`.
    startup: bool,
}

/// (library stem, cuDNN major, its `*VersionCheck`).
const SUB_CHECKS: &[(&[u8], u32, &[u8])] = &[
    (b"libcudnn_ops", 9, b"cudnnOpsVersionCheck"),
    (b"libcudnn_cnn", 9, b"cudnnCnnVersionCheck"),
    (b"libcudnn_adv", 9, b"cudnnAdvVersionCheck"),
    (b"libcudnn_ext", 9, b"cudnnSubquadraticOpsVersionCheck"),
    (b"libcudnn_ops_train", 8, b"cudnnOpsTrainVersionCheck"),
    (b"libcudnn_cnn_infer", 8, b"cudnnCnnInferVersionCheck"),
    (b"libcudnn_cnn_train", 8, b"cudnnCnnTrainVersionCheck"),
    (b"libcudnn_adv_infer", 8, b"cudnnAdvInferVersionCheck"),
    (b"libcudnn_adv_train", 8, b"cudnnAdvTrainVersionCheck"),
];

/// The numbers after `.so` in a file name: `libcudart.so.13.0.96` gives
/// `[13, 0, 96]`; empty when there are none or one is not a number.
fn so_numbers(name: &[u8]) -> Vec<u32> {
    so_version(name).unwrap_or_default()
}

/// What the shim may ask a freshly mapped object of `family` (at `path`,
/// with that SONAME).
pub fn role(path: &[u8], soname: Option<&[u8]>, family: Family) -> Role {
    match family {
        Family::Cuda => Role::Cuda,
        Family::Cudart => {
            let v = soname
                .map(so_numbers)
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| so_numbers(path));
            Role::Cudart(v.first().copied().unwrap_or(0))
        }
        Family::Cudnn => {
            // The SONAME names the library (a file may be a renamed copy).
            let parsed = soname.and_then(cudnn_name).or_else(|| cudnn_name(path));
            let Some((stem, v)) = parsed else {
                return Role::CudnnOther;
            };
            let major = v.first().copied().unwrap_or(0);
            if (stem == b"libcudnn_graph" && major == 9)
                || (stem == b"libcudnn_ops_infer" && major == 8)
            {
                return Role::CudnnCore;
            }
            SUB_CHECKS
                .iter()
                .find(|(s, m, _)| *s == stem && *m == major)
                .map_or(Role::CudnnOther, |(_, _, f)| Role::CudnnSub(f))
        }
    }
}

/// Objects waiting for a safe point (a quick "nothing to do").
static PENDING: AtomicUsize = AtomicUsize::new(0);

/// The safe point an object mapped now will wait for (counted in
/// [`PENDING`] by [`registered`]).
pub fn pending_now() -> Pending {
    Pending {
        tid: trace::tid(),
        token: crate::audit::current_token(),
        startup: !crate::audit::started(),
    }
}

/// An object waiting for its safe point went away (a failed `dlopen`, `dlclose`).
pub fn not_pending() {
    PENDING.fetch_sub(1, Ordering::Relaxed);
}

/// A query to run, outside every lock.
enum Job {
    Core {
        id: usize,
        map: usize,
        path: Vec<u8>,
    },
    Cudart {
        map: usize,
        path: Vec<u8>,
        realpath: Option<Vec<u8>>,
        major: u32,
    },
}

/// A CUDA-family object was just registered (`la_objopen`), waiting for its
/// safe point. A cuDNN one gets its version from the file name or SONAME
/// now (nothing is called).
pub fn registered(family: Family, path: &[u8], realpath: Option<&[u8]>, soname: Option<&[u8]>) {
    PENDING.fetch_add(1, Ordering::Relaxed);
    match family {
        Family::Cudnn => {
            if let Some((source, version)) = from_names(path, realpath, soname, 3) {
                emit(&V {
                    path,
                    family: Family::Cudnn,
                    source,
                    version: Some(version),
                    ..V::default()
                });
            }
        }
        // The user-mode driver's file is named after the driver version
        // (`libcuda.so.580.159.04`); its SONAME is `.so.1`.
        Family::Cuda => {
            if let Some(driver_file) = driver_file_text(path, realpath) {
                emit(&V {
                    path,
                    family: Family::Cuda,
                    source: version_source::FILE_NAME,
                    driver_file: Some(driver_file),
                    ..V::default()
                });
            }
        }
        Family::Cudart => {}
    }
}

/// The version a file name tells (`min_parts` numbers or more after `.so.`,
/// in the resolved name first: `libcudnn_graph.so.9 -> …so.9.14.0`), else
/// the SONAME's major.
fn from_names(
    path: &[u8],
    realpath: Option<&[u8]>,
    soname: Option<&[u8]>,
    min_parts: usize,
) -> Option<(&'static str, String)> {
    for name in [realpath, Some(path)].into_iter().flatten() {
        let v = so_numbers(name);
        if v.len() >= min_parts {
            return Some((version_source::FILE_NAME, join(&v)));
        }
    }
    let major = so_numbers(soname?).first().copied()?;
    Some((version_source::ELF, major.to_string()))
}

fn join(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(".")
}

/// Marks the objects `ready` selects as initialised and collects what can
/// be asked now.
fn ready_jobs(ready: impl Fn(&Pending) -> bool) -> Vec<Job> {
    if PENDING.load(Ordering::Relaxed) == 0 {
        return Vec::new();
    }
    COPIES.with(|c| {
        let mut jobs = Vec::new();
        for x in c.iter_mut() {
            let Some(p) = x.pending else { continue };
            if !x.alive || !ready(&p) {
                continue;
            }
            x.pending = None;
            not_pending();
            x.initialized = true;
            match x.role {
                Role::Cudart(major) if !x.queried => {
                    x.queried = true;
                    jobs.push(Job::Cudart {
                        map: x.map,
                        path: x.path.clone(),
                        realpath: x.realpath.clone(),
                        major,
                    });
                }
                _ => {}
            }
        }
        jobs
    })
}

/// `la_preinit`: every start-up object is relocated and initialised.
pub fn startup() {
    if calls::enabled() {
        run(ready_jobs(|p| p.startup));
    }
}

/// The hooked `dlopen`/`dlmopen` `token` returned on this thread: the
/// objects it mapped are relocated and initialised (or gone, if it failed).
pub fn safe_point(token: u64) {
    // PENDING first: it alone settles the common case.
    if PENDING.load(Ordering::Relaxed) == 0 || token == 0 || !calls::enabled() {
        return;
    }
    let tid = trace::tid();
    run(ready_jobs(|p| p.tid == tid && p.token == token));
}

/// A version getter of copy `id` returned to its caller (a call thunk):
/// whatever its first call does is done, so a core library may be asked.
pub fn used(id: usize) {
    if USED[id].swap(true, Ordering::AcqRel) {
        return;
    }
    let jobs = COPIES.with(|c| {
        let Some(x) = c.get_mut(id).filter(|x| x.alive) else {
            return Vec::new();
        };
        x.used = true;
        if x.pending.take().is_some() {
            not_pending();
        }
        x.initialized = true;
        let mut jobs = Vec::new();
        if x.role == Role::CudnnCore && !x.queried {
            x.queried = true;
            jobs.push(Job::Core {
                id,
                map: x.map,
                path: x.path.clone(),
            });
        }
        jobs
    });
    run(jobs);
}

// ---------------------------------------------------------------------------
// Answers the program got

/// A version function's answer that the program (or one of its libraries)
/// got from copy `id`, seen by a call thunk after the real call returned.
#[derive(Clone, Copy, Debug)]
pub enum Answer {
    /// A cuDNN sub-library's `*VersionCheck` returned this status.
    Check(i64),
    /// `cuDriverGetVersion` (status, value written).
    Driver(i64, Option<i64>),
    /// `cudaRuntimeGetVersion` (status, value written).
    Runtime(i64, Option<i64>),
}

/// Records `answer` of copy `id` as a `version` event (source `query`,
/// `asked_by: program`), the first time one is seen for that copy: nothing is
/// called, the program's own call has just returned.
pub fn observed(id: usize, answer: Answer) {
    let bit = match answer {
        Answer::Check(_) => 1,
        Answer::Driver(..) => 2,
        Answer::Runtime(..) => 4,
    };
    if calls::SEEN[id].fetch_or(bit, Ordering::AcqRel) & bit != 0 {
        return;
    }
    // What the event needs, under the lock; written after it.
    let facts = COPIES.with(|c| {
        let x = c.get(id).filter(|x| x.alive)?;
        let core = match answer {
            Answer::Check(_) => single_core(c, x.lmid),
            _ => None,
        };
        Some((x.path.clone(), x.realpath.clone(), x.family, x.role, core))
    });
    let Some((path, realpath, family, role, core)) = facts else {
        return;
    };
    let mut v = V {
        path: &path,
        family,
        source: version_source::QUERY,
        asked_by: Some(ASKED_BY_PROGRAM),
        ..V::default()
    };
    match answer {
        Answer::Check(status) => {
            if !matches!(role, Role::CudnnSub(_)) {
                return;
            }
            v.check = Some(status);
            v.core = core.as_ref().map(|(p, _)| &p[..]);
            // 0 says: the same version as the core library.
            v.version = core
                .as_ref()
                .and_then(|(_, version)| version.clone())
                .filter(|_| status == 0);
        }
        Answer::Driver(status, value) => {
            v.status = Some(status);
            v.raw = value.filter(|_| status == 0);
            v.version = v.raw.map(cuda_version);
            v.driver_file = driver_file_text(&path, realpath.as_deref());
        }
        Answer::Runtime(status, value) => {
            v.status = Some(status);
            v.raw = value.filter(|_| status == 0);
            v.version = v.raw.map(cuda_version);
        }
    }
    emit(&v);
}

/// The one cuDNN core library alive in namespace `lmid` (path, the version
/// its query decoded), if there is exactly one: a sub-library's check is
/// against it. With two, which one a sub-library checks against is not known.
fn single_core(c: &[calls::Copy], lmid: i64) -> Option<(Vec<u8>, Option<String>)> {
    let mut cores = c
        .iter()
        .filter(|x| x.alive && x.lmid == lmid && x.role == Role::CudnnCore);
    let core = cores.next()?;
    cores
        .next()
        .is_none()
        .then(|| (core.path.clone(), core.version.clone()))
}

// ---------------------------------------------------------------------------
// Queries

/// The program's `errno` (its libc's, not this namespace's): saved and
/// restored around the calls we make into its libraries.
fn program_errno() -> *mut c_int {
    static LOCATION: AtomicUsize = AtomicUsize::new(0);
    let mut f = LOCATION.load(Ordering::Relaxed);
    if f == 0 {
        f = crate::elf::main_libc_symbol(b"__errno_location").max(1);
        LOCATION.store(f, Ordering::Relaxed);
    }
    if f <= 1 {
        return core::ptr::null_mut();
    }
    // SAFETY: the program's libc's `int *__errno_location(void)`.
    unsafe {
        let f: unsafe extern "C" fn() -> *mut c_int = core::mem::transmute(f);
        f()
    }
}

fn run(jobs: Vec<Job>) {
    if jobs.is_empty() {
        return;
    }
    let errno = program_errno();
    // SAFETY: the calling thread's errno slot, or null.
    let saved = (!errno.is_null()).then(|| unsafe { *errno });
    for j in jobs {
        crate::guard((), || unsafe { j.run() });
    }
    if let Some(v) = saved {
        // SAFETY: as above.
        unsafe { *errno = v };
    }
}

/// `v` as cuDNN encodes versions: `major*10000 + minor*100 + patch` from 9.0
/// on, `major*1000 + minor*100 + patch` before (\[R1\], \[R2\]; the 9.0.0
/// release notes announce the change \[R3\]).
fn cudnn_version(v: u64) -> String {
    if v >= 90000 {
        format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100)
    } else {
        format!("{}.{}.{}", v / 1000, v / 100 % 10, v % 100)
    }
}

/// `1000*major + 10*minor` (CUDA Runtime and Driver API references \[R7\],
/// \[R8\]).
fn cuda_version(v: i64) -> String {
    format!("{}.{}", v / 1000, v % 1000 / 10)
}

impl Job {
    /// # Safety
    /// The object is alive, relocated and initialised.
    unsafe fn run(self) {
        type Size = unsafe extern "C" fn() -> usize;
        type IntOut = unsafe extern "C" fn(*mut c_int) -> c_int;
        let find = |map: usize, name: &[u8]| crate::elf::lookup(map as *const LinkMap, name);
        match self {
            Job::Core { id, map, path } => {
                let Some(get) = find(map, b"cudnnGetVersion") else {
                    return;
                };
                let size = |f: usize| core::mem::transmute::<usize, Size>(f)() as i64;
                let raw = size(get);
                let cuda_build = find(map, b"cudnnGetCudartVersion").map(size);
                let max_device = find(map, b"cudnnGetMaxDeviceVersion").map(size);
                let version = cudnn_version(raw as u64);
                COPIES.with(|c| {
                    if let Some(x) = c.get_mut(id).filter(|x| x.map == map) {
                        x.version = Some(version.clone());
                    }
                });
                emit(&V {
                    path: &path,
                    family: Family::Cudnn,
                    source: version_source::QUERY,
                    version: Some(version),
                    raw: Some(raw),
                    cuda_build,
                    max_device,
                    asked_by: Some(ASKED_BY_SHIM),
                    ..V::default()
                });
            }
            Job::Cudart {
                map,
                path,
                realpath,
                major,
            } => {
                if major >= 12 {
                    if let Some(f) = find(map, b"cudaRuntimeGetVersion") {
                        let mut v: c_int = 0;
                        let status = core::mem::transmute::<usize, IntOut>(f)(&mut v) as i64;
                        emit(&V {
                            path: &path,
                            family: Family::Cudart,
                            source: version_source::QUERY,
                            version: (status == 0).then(|| cuda_version(v as i64)),
                            raw: (status == 0).then_some(v as i64),
                            status: Some(status),
                            asked_by: Some(ASKED_BY_SHIM),
                            ..V::default()
                        });
                        return;
                    }
                }
                let soname = crate::elf::dyn_string(map as *const LinkMap, DT_SONAME);
                if let Some((source, version)) = from_names(&path, realpath.as_deref(), soname, 3) {
                    emit(&V {
                        path: &path,
                        family: Family::Cudart,
                        source,
                        version: Some(version),
                        ..V::default()
                    });
                }
            }
        }
    }
}

/// The driver version as written in the file name (`580.159.04`, zero
/// padding kept), from the resolved path or the path itself.
fn driver_file_text(path: &[u8], realpath: Option<&[u8]>) -> Option<String> {
    let found = [realpath, Some(path)]
        .into_iter()
        .flatten()
        .filter(|n| so_numbers(n).len() >= 2)
        .find_map(|n| {
            let base = basename(n);
            let i = base.windows(4).position(|w| w == b".so.")?;
            String::from_utf8(base[i + 4..].to_vec()).ok()
        });
    found
}

/// The fields of one `version` event.
struct V<'a> {
    path: &'a [u8],
    family: Family,
    source: &'static str,
    version: Option<String>,
    raw: Option<i64>,
    cuda_build: Option<i64>,
    max_device: Option<i64>,
    check: Option<i64>,
    core: Option<&'a [u8]>,
    status: Option<i64>,
    driver_file: Option<String>,
    /// Who called the library's function (source `query` only):
    /// [`ASKED_BY_SHIM`] or [`ASKED_BY_PROGRAM`].
    asked_by: Option<&'static str>,
}

/// `asked_by`: the shim called the function (a query proven free of side effects).
const ASKED_BY_SHIM: &str = "shim";
/// `asked_by`: the program, or one of its libraries, called it; the shim saw the answer.
const ASKED_BY_PROGRAM: &str = "program";

impl Default for V<'_> {
    fn default() -> Self {
        V {
            path: b"",
            family: Family::Cudnn,
            source: version_source::QUERY,
            version: None,
            raw: None,
            cuda_build: None,
            max_device: None,
            check: None,
            core: None,
            status: None,
            driver_file: None,
            asked_by: None,
        }
    }
}

fn emit(v: &V<'_>) {
    trace::emit(ev::VERSION, |l| {
        l.bytes("path", v.path)
            .str("family", v.family.name())
            .str("source", v.source)
            .opt_str("version", v.version.as_deref())
            .opt_i64("raw", v.raw)
            .opt_i64("cuda_build", v.cuda_build)
            .opt_i64("max_device", v.max_device)
            .opt_i64("check", v.check)
            .opt_bytes("core", v.core)
            .opt_i64("status", v.status)
            .opt_str("driver_file", v.driver_file.as_deref())
            .opt_str("asked_by", v.asked_by);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_versions() {
        assert_eq!(cudnn_version(91900), "9.19.0");
        assert_eq!(cudnn_version(8907), "8.9.7");
        assert_eq!(cuda_version(13000), "13.0");
        assert_eq!(cuda_version(12090), "12.9");
        assert_eq!(so_numbers(b"/x/libcudart.so.13.0.96"), vec![13, 0, 96]);
        assert_eq!(so_numbers(b"libcuda.so.1"), vec![1]);
        assert_eq!(so_numbers(b"libcuda.so"), Vec::<u32>::new());
        assert_eq!(so_numbers(b"libcudart.so.13.x"), Vec::<u32>::new());
        assert_eq!(
            driver_file_text(b"/nonexistent/libcuda.so.580.159.04", None).as_deref(),
            Some("580.159.04")
        );
        assert_eq!(driver_file_text(b"/nonexistent/libcuda.so.1", None), None);
    }
}
