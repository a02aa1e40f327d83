//! The trace directory of a run and the launcher's record in it
//! (`launcher.json`, written atomically each time it changes).

use super::eprint;
use crate::machine::pin::PinInfo;
use crate::model::{self, trace, LauncherRecord, LAUNCHER_FILE};
use std::fs;
use std::path::{Path, PathBuf};

/// Wall-clock time in milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Local time of `ms` as (`YYYYmmdd-HHMMSS`, RFC 3339 with offset).
pub fn local_time(ms: u64) -> (String, String) {
    let secs = (ms / 1000) as libc::time_t;
    // SAFETY: zeroed tm is a valid out-parameter; localtime_r is thread-safe.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = !unsafe { libc::localtime_r(&secs, &mut tm) }.is_null();
    if !ok {
        return (format!("{secs}"), format!("{secs}"));
    }
    let (y, mo, d, h, mi, s) = (
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
    );
    let off = tm.tm_gmtoff / 60;
    let sign = if off < 0 { '-' } else { '+' };
    (
        format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}"),
        format!(
            "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:03}{sign}{:02}:{:02}",
            ms % 1000,
            off.abs() / 60,
            off.abs() % 60
        ),
    )
}

/// The output directory: created, absolute.
pub fn make_out_dir(
    requested: Option<&Path>,
    launcher_pid: u32,
    start_ms: u64,
) -> Result<PathBuf, String> {
    let dir = match requested {
        Some(d) => d.to_path_buf(),
        None => {
            let (stamp, _) = local_time(start_ms);
            Path::new(trace::DEFAULT_OUT).join(format!("{stamp}-{launcher_pid}"))
        }
    };
    fs::create_dir_all(&dir).map_err(|e| {
        format!(
            "cannot create the trace directory {}: {}",
            dir.display(),
            model::io_msg(&e)
        )
    })?;
    let abs =
        fs::canonicalize(&dir).map_err(|e| format!("{}: {}", dir.display(), model::io_msg(&e)))?;
    // An existing directory may still not take files (permissions, a
    // read-only mount): find out now, not once per traced process.
    let probe = abs.join(format!(".cudnn-trace-probe-{launcher_pid}"));
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| {
            format!(
                "cannot write in the trace directory {}: {}",
                dir.display(),
                model::io_msg(&e)
            )
        })?;
    let _ = fs::remove_file(&probe);
    if requested.is_some() && trace::looks_like_run(&abs) {
        eprint(&format!(
            "cudnn-trace: warning: {} already holds traces; this run's files are added to them\n",
            dir.display()
        ));
    }
    Ok(abs)
}

/// What launcher.json says about the pin (docs/pin.md).
pub fn pin_record(p: &PinInfo) -> model::PinRecord {
    model::PinRecord {
        dir: p.dir.to_string_lossy().into_owned(),
        mode: p.mode.as_str().to_string(),
        major: Some(p.major),
        version: p.version.clone(),
        cuda_build: p.cuda_build.and_then(|c| u32::try_from(c).ok()),
        max_device: p.max_device.and_then(|c| u32::try_from(c).ok()),
        files: p.files.clone(),
        warnings: p.warnings.clone(),
    }
}

/// Writes launcher.json atomically (temporary file, then rename).
pub fn write_record(dir: &Path, rec: &LauncherRecord) {
    let tmp = dir.join(format!(".{LAUNCHER_FILE}.{}.tmp", std::process::id()));
    let res = serde_json::to_vec_pretty(rec)
        .map_err(std::io::Error::other)
        .and_then(|mut v| {
            v.push(b'\n');
            fs::write(&tmp, v)
        })
        .and_then(|()| fs::rename(&tmp, dir.join(LAUNCHER_FILE)));
    if let Err(e) = res {
        let _ = fs::remove_file(&tmp);
        eprint(&format!(
            "cudnn-trace: warning: cannot write {}: {}\n",
            dir.join(LAUNCHER_FILE).display(),
            model::io_msg(&e)
        ));
    }
}

/// This machine's host name, for the record.
pub fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: buffer and its length.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return None;
    }
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_formats() {
        let (stamp, rfc) = local_time(1_763_700_000_123);
        assert_eq!(stamp.len(), 15);
        assert_eq!(&stamp[8..9], "-");
        assert!(rfc.contains(".123"), "{rfc}");
        assert_eq!(rfc.len(), "2025-11-21T04:40:00.123+00:00".len());
    }
}
