//! Processes that outlive the program: a `cmd &` of a shell script, a
//! multiprocessing helper that exits a moment after its parent, a daemon.
//!
//! The launcher makes itself a *child subreaper* (`PR_SET_CHILD_SUBREAPER`)
//! before the program starts, so that every process of the program's tree
//! whose parent ends becomes the launcher's child instead of init's (its
//! `getppid()` says so, until the launcher ends; then init's, as without
//! it). When the program has ended, the launcher
//!
//! * notes the processes of the tree still running (from `/proc`, looked at
//!   again each time it wakes, so that those they start meanwhile count
//!   too; one that starts and ends between two looks, 100 ms at most, is
//!   not listed);
//! * waits for them, at most [`CHILD_GRACE`], reaping those that become its
//!   children (with their exit status), while the capture goes on: what
//!   they write to the program's stderr in that time is in `stderr.txt`;
//!   Ctrl-C (or SIGTERM, SIGHUP, SIGQUIT) ends the wait at once;
//! * records each in `launcher.json` (`outlived`): its pid, name, how long
//!   after the program it ended and how, or that it was still running.
//!
//! The summary is made after that, so it includes what they loaded, and
//! says which were still running (their trace files may still grow:
//! `cudnn-trace report` reads them again). Nothing is done to processes
//! still running: they go on as they would have without the launcher.

use super::signals::Signals;
use crate::model::OutlivedRecord;
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::time::{Duration, Instant};

/// How long the launcher waits, once the program has ended, for the
/// processes of its tree that are still running.
pub const CHILD_GRACE: Duration = Duration::from_secs(2);

/// Makes the launcher the subreaper of the program's tree. Without it (an
/// error: it never fails on Linux ≥ 3.4) only the program's own children
/// are seen.
pub fn become_subreaper() {
    // SAFETY: a prctl on the launcher itself.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
}

/// `/proc/PID/stat`: (state, ppid), and the name.
fn stat(pid: i32) -> Option<(char, i32, String)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid …": comm may hold spaces and parentheses.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_string();
    let mut rest = text.get(close + 1..)?.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((state, ppid, name))
}

/// Whether `pid` is running (not gone, not a zombie).
fn running(pid: i32) -> bool {
    stat(pid).is_some_and(|(state, _, _)| state != 'Z' && state != 'X')
}

/// Whether the launcher has a child (running, or ended and not reaped).
/// Every process of the tree still running once the program has ended is
/// one of them or below one (the launcher is their subreaper): with none,
/// there is nothing to look for in `/proc`, whose every process the look
/// reads (hundreds of files on a busy host, at the end of every run).
pub fn has_children() -> bool {
    // SAFETY: a zeroed siginfo_t is a valid out-parameter; WNOWAIT leaves
    // whatever it finds waitable.
    let r = unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    !(r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
}

/// The launcher's running descendants but `except`, with their names.
pub fn descendants(except: &[i32]) -> BTreeMap<i32, String> {
    if !has_children() {
        return BTreeMap::new();
    }
    let me = std::process::id() as i32;
    let mut children: HashMap<i32, Vec<(i32, String)>> = HashMap::new();
    if let Ok(rd) = fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            if let Some((state, ppid, name)) = stat(pid) {
                if state != 'Z' && state != 'X' {
                    children.entry(ppid).or_default().push((pid, name));
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    let mut todo = vec![me];
    while let Some(p) = todo.pop() {
        for (c, name) in children.remove(&p).unwrap_or_default() {
            todo.push(c);
            if !except.contains(&c) {
                out.insert(c, name);
            }
        }
    }
    out
}

/// Signals that end the wait: the user (or a supervisor) wants the launcher
/// to finish.
const END_WAIT: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// After the program ended: waits at most `grace` for the processes of its
/// tree (but `except`: the session leader), reaping what ends. Returns what
/// is known of each, in pid order.
pub fn wait_for(signals: Option<&Signals>, grace: Duration, except: &[i32]) -> Vec<OutlivedRecord> {
    let start = Instant::now();
    let mut recs: BTreeMap<i32, OutlivedRecord> = BTreeMap::new();
    loop {
        // Those started since the last look too (a subshell's command).
        note(&mut recs, except);
        let none_left = reap(&mut recs, start);
        let after = start.elapsed().as_millis() as u64;
        for r in recs.values_mut() {
            if r.ended_after_ms.is_none() && !running(r.pid as i32) {
                r.ended_after_ms = Some(after);
            }
        }
        let left = grace.saturating_sub(start.elapsed());
        if none_left || left.is_zero() {
            break;
        }
        // Woken by SIGCHLD; every 100 ms for grandchildren that end while
        // their parent lives (they are not ours to reap).
        let ms = left.as_millis().clamp(1, 100) as i32;
        let stop = match signals {
            Some(s) => s
                .wait(None, ms)
                .iter()
                .any(|[sig, ..]| END_WAIT.contains(sig)),
            None => {
                std::thread::sleep(Duration::from_millis(ms as u64));
                false
            }
        };
        if stop {
            break;
        }
    }
    // Those still running.
    for pid in note(&mut recs, except) {
        if let Some(r) = recs.get_mut(&pid) {
            r.still_running = true;
            r.ended_after_ms = None;
        }
    }
    recs.into_values()
        .filter(|r| r.still_running || r.ended_after_ms.is_some())
        .collect()
}

/// Adds the running descendants (but `except`) not yet in `recs`, and
/// names each running one by what it runs now (a subshell that `exec`s its
/// last command during the grace is that command by the end); returns all
/// that are running.
fn note(recs: &mut BTreeMap<i32, OutlivedRecord>, except: &[i32]) -> Vec<i32> {
    let now = descendants(except);
    for (pid, name) in &now {
        recs.entry(*pid)
            .and_modify(|r| r.name = Some(name.clone()))
            .or_insert_with(|| OutlivedRecord {
                pid: *pid as u32,
                name: Some(name.clone()),
                ..Default::default()
            });
    }
    now.into_keys().collect()
}

/// Reaps every child that ended, noting how those of `recs` did. Returns
/// whether no child is left.
fn reap(recs: &mut BTreeMap<i32, OutlivedRecord>, start: Instant) -> bool {
    loop {
        let mut status = 0;
        // SAFETY: valid out pointer.
        let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if r > 0 {
            if let Some(rec) = recs.get_mut(&r) {
                rec.ended_after_ms = Some(start.elapsed().as_millis() as u64);
                if libc::WIFSIGNALED(status) {
                    rec.signal = Some(libc::WTERMSIG(status));
                } else if libc::WIFEXITED(status) {
                    rec.exit_code = Some(libc::WEXITSTATUS(status));
                }
            }
            continue;
        }
        return r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_are_found_through_their_parents() {
        use std::io::BufRead;
        // A shell (our child) with a background sleep (our grandchild).
        let mut sh = std::process::Command::new("/bin/sh")
            .args(["-c", "sleep 30 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(sh.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        // Its name once it has executed sleep (it is "sh" until then).
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let found = loop {
            let found = descendants(&[]);
            if found.get(&grandchild).is_some_and(|n| n == "sleep")
                || std::time::Instant::now() > deadline
            {
                break found;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert!(found.contains_key(&(sh.id() as i32)), "{found:?}");
        assert_eq!(found.get(&grandchild).map(String::as_str), Some("sleep"));
        let without = descendants(&[sh.id() as i32]);
        assert!(!without.contains_key(&(sh.id() as i32)));
        assert!(without.contains_key(&grandchild), "its children still are");
        // SAFETY: ending the processes this test started.
        unsafe { libc::kill(grandchild, libc::SIGKILL) };
        let _ = sh.wait();
    }
}
