//! The trace set arranged as a process tree: which image is the child (or
//! the exec successor) of which, in start order, and what the launcher
//! knows about the program's own images (how it ended) and about the
//! processes that outlived it.

use crate::model::{Image, TraceSet};
use std::collections::HashMap;

/// How an image hangs in the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// No traced parent.
    Root,
    /// A child process (fork, or fork + exec) of the parent image.
    Child(usize),
    /// The same pid after `exec`: a new program image of the previous one.
    Exec(usize),
}

/// The trace set arranged as a tree: per image of `TraceSet::images`, by
/// index.
#[derive(Debug, Clone)]
pub struct ProcessTree {
    pub link: Vec<Link>,
    /// Child processes and exec successors of each image, in start order.
    pub children: Vec<Vec<usize>>,
    pub roots: Vec<usize>,
    /// How the image ended, when the launcher knows (the program's last
    /// image; the last image of a process that outlived the program).
    pub ending: Vec<Option<String>>,
    /// Images whose pid is the program the launcher started.
    pub top: Vec<bool>,
}

impl ProcessTree {
    pub fn new(set: &TraceSet) -> Self {
        let imgs = &set.images;
        let mut link = link_images(imgs);
        cut_cycles(&mut link);
        let (roots, children) = hang(imgs, &link);
        let (ending, top) = launcher_images(set);
        ProcessTree {
            link,
            children,
            roots,
            ending,
            top,
        }
    }
}

/// Each image's parent: the previous image of its pid when it came from
/// an exec, else the image of its parent pid that was running when it
/// started.
fn link_images(imgs: &[Image]) -> Vec<Link> {
    let n = imgs.len();
    let mut by_pid: HashMap<(&str, u32), Vec<usize>> = HashMap::new();
    for (i, img) in imgs.iter().enumerate() {
        by_pid
            .entry((img.host(), img.header.pid))
            .or_default()
            .push(i);
    }
    // Per pid: images in image order, and in start order (to find the
    // parent image running when a child started, by binary search).
    let mut pos = vec![0; n];
    let mut by_time: HashMap<(&str, u32), Vec<usize>> = HashMap::new();
    for (key, v) in by_pid.iter_mut() {
        v.sort_by_key(|&i| (imgs[i].index, imgs[i].header.t_ns));
        for (k, &i) in v.iter().enumerate() {
            pos[i] = k;
        }
        let mut t = v.clone();
        t.sort_by_key(|&i| i);
        t.sort_by_key(|&i| (imgs[i].header.t_ns, imgs[i].index));
        by_time.insert(*key, t);
    }
    let mut link = vec![Link::Root; n];
    for (i, img) in imgs.iter().enumerate() {
        let same = &by_pid[&(img.host(), img.header.pid)];
        if pos[i] > 0 && img.header.origin == "exec" {
            link[i] = Link::Exec(same[pos[i] - 1]);
            continue;
        }
        let key = (img.host(), img.header.ppid);
        if let (Some(parents), Some(timed)) = (by_pid.get(&key), by_time.get(&key)) {
            if img.header.ppid != img.header.pid {
                // The parent's image that was running when this one
                // started: the last one started at or before it.
                let k = timed.partition_point(|&j| imgs[j].header.t_ns <= img.header.t_ns);
                let p = if k > 0 { timed[k - 1] } else { parents[0] };
                link[i] = Link::Child(p);
            }
        }
    }
    link
}

/// Reused pids could make a cycle: cut each at its first image (in one
/// pass: every image is walked once).
fn cut_cycles(link: &mut [Link]) {
    let n = link.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on the current path, 2 done
    let mut path = Vec::new();
    for i in 0..n {
        let mut cur = i;
        while state[cur] == 0 {
            state[cur] = 1;
            path.push(cur);
            match link[cur] {
                Link::Child(p) | Link::Exec(p) => cur = p,
                Link::Root => break,
            }
        }
        if state[cur] == 1 && !matches!(link[cur], Link::Root) {
            // `cur` is on the path: the path from it on is a cycle.
            let from = path.iter().position(|&j| j == cur).unwrap_or(0);
            if let Some(&first) = path[from..].iter().min() {
                link[first] = Link::Root;
            }
        }
        for &j in &path {
            state[j] = 2;
        }
        path.clear();
    }
}

/// The roots and each image's children, in start order.
fn hang(imgs: &[Image], link: &[Link]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut children = vec![Vec::new(); link.len()];
    let mut roots = Vec::new();
    for (i, l) in link.iter().enumerate() {
        match *l {
            Link::Root => roots.push(i),
            Link::Child(p) | Link::Exec(p) => children[p].push(i),
        }
    }
    let order = |v: &mut Vec<usize>| {
        v.sort_by_key(|&i| {
            (
                imgs[i].header.wall_ms,
                imgs[i].header.t_ns,
                imgs[i].header.pid,
                imgs[i].index,
            )
        })
    };
    order(&mut roots);
    children.iter_mut().for_each(order);
    (roots, children)
}

/// What the launcher records say: which images are the program's (`top`),
/// and how its last image ended (`ending`).
fn launcher_images(set: &TraceSet) -> (Vec<Option<String>>, Vec<bool>) {
    let imgs = &set.images;
    let n = imgs.len();
    let mut ending = vec![None; n];
    let mut top = vec![false; n];
    for (_, rec) in &set.launchers {
        let Some(pid) = rec.pid else { continue };
        let host_ok = |img: &Image| match (&rec.hostname, &img.header.hostname) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        let mine: Vec<usize> = (0..n)
            .filter(|&i| imgs[i].header.pid == pid && host_ok(&imgs[i]))
            .collect();
        for &i in &mine {
            top[i] = true;
        }
        if let Some(last) = last_image(imgs, &mine) {
            ending[last] = rec.ending();
        }
        // The processes that outlived the program: how, or that they were
        // still running (their trace may have grown since).
        for o in &rec.outlived {
            let theirs: Vec<usize> = (0..n)
                .filter(|&i| imgs[i].header.pid == o.pid && host_ok(&imgs[i]) && !top[i])
                .collect();
            if let Some(last) = last_image(imgs, &theirs) {
                ending[last] = Some(o.ending());
            }
        }
    }
    (ending, top)
}

/// The latest image of `of` (images of one pid).
fn last_image(imgs: &[Image], of: &[usize]) -> Option<usize> {
    of.iter()
        .copied()
        .max_by_key(|&i| (imgs[i].index, imgs[i].header.t_ns))
}
