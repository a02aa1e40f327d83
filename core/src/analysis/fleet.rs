//! The fleet view: many runs (one per host, one per rank, a whole
//! `torchrun` or Slurm job) grouped by CUDA stack, so that the few odd
//! processes stand out.
//!
//! Processes are first told apart by role (program and arguments, and
//! whether the process was forked: a DataLoader worker is not compared
//! with the trainer that forked it), then grouped within a role by the
//! fingerprint of their CUDA stack ([`ProcessPrint::fingerprint`]: real
//! path, build-id, version and CUDA build of each CUDA-family library,
//! and the loads that failed). The largest group of a role is its
//! majority; the others are its odd ones out, each shown with what differs
//! from the majority.
//!
//! [`Fleet::add`] takes one image at a time and keeps, per process, a
//! few integers and its rank; per group, one representative print. So a
//! reader can hand it images as it reads them and drop each one: memory
//! grows with the number of processes by tens of bytes each, not with the
//! traces.

use super::compare::{self, group_id, FailedDiff, LibDiff, ProcessPrint};
use crate::model::Image;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// At most this many members of an odd group are listed by name (host,
/// rank, pid); the rest are counted.
pub const MEMBERS_SHOWN: usize = 32;
/// At most this many hosts of a group are listed.
pub const HOSTS_SHOWN: usize = 8;

/// One process, as the fleet keeps it.
struct Member {
    group: u32,
    host: u32,
    pid: u32,
    rank: Option<Box<str>>,
    file: Box<str>,
}

/// Processes of one role with one fingerprint.
struct Group {
    role: u32,
    fp: u64,
    /// The first member's print: the group's stack.
    print: ProcessPrint,
    count: usize,
}

/// The fleet being read: add images, then take the [`FleetView`].
#[derive(Default)]
pub struct Fleet {
    roles: Vec<String>,
    role_idx: HashMap<String, u32>,
    hosts: Vec<String>,
    host_idx: HashMap<String, u32>,
    groups: Vec<Group>,
    group_idx: HashMap<(u32, u64), u32>,
    members: Vec<Member>,
    /// Images read.
    pub images: usize,
    /// Images without a CUDA-family load or failure (not grouped).
    pub without_cuda: usize,
    /// Run directories (or files) read.
    pub runs: usize,
}

fn intern(list: &mut Vec<String>, idx: &mut HashMap<String, u32>, s: &str) -> u32 {
    if let Some(&i) = idx.get(s) {
        return i;
    }
    let i = list.len() as u32;
    list.push(s.to_string());
    idx.insert(s.to_string(), i);
    i
}

impl Fleet {
    pub fn new() -> Fleet {
        Fleet::default()
    }

    /// Adds one process image.
    pub fn add(&mut self, img: &Image) {
        self.images += 1;
        let print = ProcessPrint::of(img, None);
        if !print.uses_cuda() {
            self.without_cuda += 1;
            return;
        }
        let role_text = if img.header.origin == "fork" {
            format!("{} (forked)", print.role)
        } else {
            print.role.clone()
        };
        let role = intern(&mut self.roles, &mut self.role_idx, &role_text);
        let host = intern(&mut self.hosts, &mut self.host_idx, &print.host);
        let fp = print.fingerprint();
        let next = self.groups.len() as u32;
        let group = *self.group_idx.entry((role, fp)).or_insert(next);
        if group == next {
            self.groups.push(Group {
                role,
                fp,
                print: print.clone(),
                count: 0,
            });
        }
        self.groups[group as usize].count += 1;
        self.members.push(Member {
            group,
            host,
            pid: print.pid,
            rank: print.rank.map(|(_, v)| v.into_boxed_str()),
            file: print.file.into_boxed_str(),
        });
    }

    /// The groups, majority first, per role.
    pub fn view(&self) -> FleetView {
        // Who is in which group, and which groups each role has: once,
        // so that the view is linear in the processes.
        let mut by_group: Vec<Vec<u32>> = vec![Vec::new(); self.groups.len()];
        for (i, m) in self.members.iter().enumerate() {
            by_group[m.group as usize].push(i as u32);
        }
        let mut by_role: Vec<Vec<u32>> = vec![Vec::new(); self.roles.len()];
        for (g, group) in self.groups.iter().enumerate() {
            by_role[group.role as usize].push(g as u32);
        }
        let mut roles: Vec<RoleView> = by_role
            .into_iter()
            .enumerate()
            .filter(|(_, groups)| !groups.is_empty())
            .map(|(r, groups)| self.role_view(r as u32, groups, &by_group))
            .collect();
        roles.sort_by(|a, b| {
            (!a.odd.is_empty(), a.processes)
                .cmp(&(!b.odd.is_empty(), b.processes))
                .reverse()
                .then_with(|| a.role.cmp(&b.role))
        });
        let odd_processes = roles.iter().flat_map(|r| &r.odd).map(|g| g.count).sum();
        FleetView {
            runs: self.runs,
            images: self.images,
            processes: self.members.len(),
            without_cuda: self.without_cuda,
            hosts: self.hosts.len(),
            odd_processes,
            roles,
        }
    }

    fn role_view(&self, role: u32, mut groups: Vec<u32>, by_group: &[Vec<u32>]) -> RoleView {
        // Largest first; a tie goes to the group seen first.
        groups.sort_by_key(|&g| (std::cmp::Reverse(self.groups[g as usize].count), g));
        let major = &self.groups[groups[0] as usize];
        let majority = self.group_view(groups[0], &by_group[groups[0] as usize], None);
        let odd = groups[1..]
            .iter()
            .map(|&g| self.group_view(g, &by_group[g as usize], Some(&major.print)))
            .collect();
        RoleView {
            role: self.roles[role as usize].clone(),
            processes: groups.iter().map(|&g| self.groups[g as usize].count).sum(),
            groups: groups.len(),
            majority,
            odd,
        }
    }

    fn group_view(&self, g: u32, members: &[u32], majority: Option<&ProcessPrint>) -> GroupView {
        let group = &self.groups[g as usize];
        let members: Vec<&Member> = members.iter().map(|&i| &self.members[i as usize]).collect();
        let hosts: BTreeSet<&str> = members
            .iter()
            .map(|m| self.hosts[m.host as usize].as_str())
            .collect();
        let ranks = compact_ranks(members.iter().filter_map(|m| m.rank.as_deref()));
        let (differs, failed, subset) = match majority {
            Some(major) => {
                let (libs, failed) = compare::differences(major, &group.print);
                let subset = failed.is_empty()
                    && group.print.failed.is_empty()
                    && libs
                        .iter()
                        .all(|d| d.change == compare::LibChange::OnlyGood);
                (libs, failed, subset)
            }
            None => (Vec::new(), Vec::new(), false),
        };
        GroupView {
            id: group_id(group.fp),
            count: group.count,
            ranks,
            hosts: hosts.len(),
            host_names: hosts
                .iter()
                .take(HOSTS_SHOWN)
                .map(|h| h.to_string())
                .collect(),
            members: match majority {
                Some(_) => members
                    .iter()
                    .take(MEMBERS_SHOWN)
                    .map(|m| MemberView {
                        host: self.hosts[m.host as usize].clone(),
                        rank: m.rank.as_deref().map(str::to_string),
                        pid: m.pid,
                        file: m.file.to_string(),
                    })
                    .collect(),
                None => Vec::new(),
            },
            libraries: if majority.is_none() {
                group.print.libs.clone()
            } else {
                Vec::new()
            },
            driver: group.print.driver.clone(),
            differs,
            failed,
            subset,
        }
    }
}

/// Ranks as compact ranges: `0-5,7,9-15`; ranks that are not numbers
/// follow, sorted.
pub fn compact_ranks<'a>(ranks: impl Iterator<Item = &'a str>) -> String {
    let mut nums: Vec<u64> = Vec::new();
    let mut other: BTreeSet<&str> = BTreeSet::new();
    for r in ranks {
        match r.parse() {
            Ok(n) => nums.push(n),
            Err(_) => {
                other.insert(r);
            }
        }
    }
    nums.sort_unstable();
    nums.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < nums.len() {
        let mut j = i;
        while j + 1 < nums.len() && nums[j + 1] == nums[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            nums[i].to_string()
        } else {
            format!("{}-{}", nums[i], nums[j])
        });
        i = j + 1;
    }
    parts.extend(other.into_iter().map(str::to_string));
    parts.join(",")
}

/// What the fleet view shows.
#[derive(Debug, Clone, Serialize)]
pub struct FleetView {
    pub runs: usize,
    /// Trace images read.
    pub images: usize,
    /// Processes that loaded (or failed to load) CUDA-family libraries:
    /// those grouped.
    pub processes: usize,
    pub without_cuda: usize,
    pub hosts: usize,
    /// Processes outside their role's majority.
    pub odd_processes: usize,
    /// Roles with odd ones out first, then by size.
    pub roles: Vec<RoleView>,
}

/// The processes of one role.
#[derive(Debug, Clone, Serialize)]
pub struct RoleView {
    pub role: String,
    pub processes: usize,
    pub groups: usize,
    pub majority: GroupView,
    /// The other groups, largest first.
    pub odd: Vec<GroupView>,
}

/// One group: processes of one role with one CUDA stack.
#[derive(Debug, Clone, Serialize)]
pub struct GroupView {
    /// The fingerprint, 12 hex digits.
    pub id: String,
    pub count: usize,
    /// The members' ranks, as ranges (`0-5,7-15`); empty when none is known.
    pub ranks: String,
    pub hosts: usize,
    /// The first hosts, sorted ([`HOSTS_SHOWN`]).
    pub host_names: Vec<String>,
    /// An odd group's members (the first [`MEMBERS_SHOWN`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<MemberView>,
    /// The majority's stack.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub libraries: Vec<compare::Lib>,
    pub driver: Option<String>,
    /// An odd group: its libraries that differ from the majority's
    /// (`good` is the majority's, `bad` this group's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differs: Vec<LibDiff>,
    /// Loads that failed in the majority only (`good`) or here only (`bad`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<FailedDiff>,
    /// Loaded only some of the majority's libraries, the same files, and
    /// nothing else: a process that ended early or did not need the rest.
    pub subset: bool,
}

/// One member of an odd group.
#[derive(Debug, Clone, Serialize)]
pub struct MemberView {
    pub host: String,
    pub rank: Option<String>,
    pub pid: u32,
    pub file: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_compact_into_ranges() {
        let r = ["3", "0", "1", "2", "7", "9", "10", "x", "1"];
        assert_eq!(compact_ranks(r.iter().copied()), "0-3,7,9-10,x");
        assert_eq!(compact_ranks([].iter().copied()), "");
    }
}
