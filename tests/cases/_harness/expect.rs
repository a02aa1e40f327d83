//! Checks a case's expectations against the findings (through the adapter).
//! The result is the list of failed expectations, in the order they are
//! written; the first one is what the status table shows.

use super::adapter::{Finding, Severity};
use super::spec::{Cite, Expect, FindingSpec};
use std::path::{Path, PathBuf};

/// What the checks need besides the findings.
pub struct Ctx<'a> {
    pub work: &'a Path,
    /// `<work>/root` when the case stages system paths.
    pub stage: Option<&'a Path>,
}

impl Ctx<'_> {
    fn expand(&self, s: &str) -> String {
        s.replace("{W}", &self.work.display().to_string())
    }

    /// A finding's text with the work directory written `{W}`, as phrases
    /// write it: a phrase must not match inside the case's own path.
    fn norm(&self, text: &str) -> String {
        collapse_dotdot(&text.replace(&self.work.display().to_string(), "{W}"))
    }

    /// `p` as a file of this machine: work paths as they are, relative ones
    /// under the work dir, system paths through the stage when staged there.
    fn local(&self, p: &str) -> PathBuf {
        let p = self.expand(p);
        if !p.starts_with('/') {
            return self.work.join(p);
        }
        if !p.starts_with(&self.work.display().to_string()) {
            if let Some(stage) = self.stage {
                // merged /usr: /lib/… is /usr/lib/…
                let alts = [p.clone(), p.replacen("/lib/", "/usr/lib/", 1)];
                let alts2 = [p.replacen("/usr/lib/", "/lib/", 1)];
                for a in alts.iter().chain(alts2.iter()) {
                    let s = stage.join(a.trim_start_matches('/'));
                    if s.exists() {
                        return s;
                    }
                }
            }
        }
        PathBuf::from(p)
    }

    /// Whether `got` (from the report) names the same file as `want` (from the
    /// case): the same text, or the same file once links are resolved.
    fn same_file(&self, got: &str, want: &str) -> bool {
        let w = self.expand(want);
        if got == w {
            return true;
        }
        let (a, b) = (self.local(got), self.local(&w));
        match (std::fs::canonicalize(&a), std::fs::canonicalize(&b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
    }
}

/// `a/b/../c` written `a/c` (a RUNPATH such as `$ORIGIN/../../nvidia/cudnn/lib`
/// shows up expanded but not normalised), so that phrases name directories plainly.
fn collapse_dotdot(text: &str) -> String {
    let mut s = text.to_string();
    while let Some(i) = s.find("/../") {
        let start = s[..i].rfind('/').unwrap_or(0);
        if s[start..i].trim_start_matches('/').is_empty() || &s[start..i] == "/.." {
            break;
        }
        s.replace_range(start..i + 3, "");
    }
    s
}

/// One failed expectation.
pub type Failure = String;

fn min_severity(s: &Option<String>, default: Option<Severity>) -> Option<Severity> {
    s.as_deref().and_then(Severity::parse).or(default)
}

fn cites(ctx: &Ctx<'_>, f: &Finding, c: &Cite) -> bool {
    let dir = ctx.local(&c.path).is_dir();
    let names = |p: &str| {
        if dir {
            let parent = Path::new(p).parent().map(|d| d.display().to_string());
            parent.is_some_and(|d| ctx.same_file(&d, &c.path))
        } else {
            ctx.same_file(p, &c.path)
        }
    };
    f.evidence.iter().any(|e| {
        (e.path.as_deref().is_some_and(names)
            || (dir
                && e.search_dir
                    .as_deref()
                    .is_some_and(|d| ctx.same_file(d, &c.path))))
            && c.reason
                .as_ref()
                .is_none_or(|r| e.reason.as_deref() == Some(r.as_str()))
            && c.requester
                .as_ref()
                .is_none_or(|r| e.requester.as_deref().is_some_and(|q| ctx.same_file(q, r)))
            && c.version.as_ref().is_none_or(|v| {
                e.version
                    .as_deref()
                    .is_some_and(|x| x.starts_with(v.as_str()))
            })
    })
}

fn describe_cite(c: &Cite) -> String {
    let mut s = c.path.clone();
    if let Some(r) = &c.reason {
        s += &format!(" ({r})");
    }
    if let Some(v) = &c.version {
        s += &format!(" version {v}…");
    }
    if let Some(q) = &c.requester {
        s += &format!(" asked by {q}");
    }
    s
}

/// The findings that satisfy `spec`, or why none does: each constraint
/// narrows the candidates; the first that leaves none is the reason.
fn select<'f>(
    ctx: &Ctx<'_>,
    all: &'f [Finding],
    spec: &FindingSpec,
    default_severity: Option<Severity>,
) -> Result<Vec<&'f Finding>, String> {
    let mut c: Vec<&Finding> = all.iter().collect();
    if !spec.codes.is_empty() {
        narrow(
            &mut c,
            format!("no {} finding", spec.codes.join("/")),
            |f| spec.codes.contains(&f.code),
        )?;
    }
    if let Some(q) = &spec.quote {
        let q = ctx.expand(q);
        narrow(&mut c, format!("no finding quotes {q:?}"), |f| {
            f.quotes().any(|m| m.contains(&q))
        })?;
    }
    for cite in &spec.cites {
        narrow(
            &mut c,
            format!("no such finding cites {}", describe_cite(cite)),
            |f| cites(ctx, f, cite),
        )?;
    }
    if let Some(min) = min_severity(&spec.severity, default_severity) {
        narrow(&mut c, format!("it is not at least {min}"), |f| {
            f.severity >= min
        })?;
    }
    if let Some(max) = spec.at_most.as_deref().and_then(Severity::parse) {
        narrow(&mut c, format!("it is above {max}"), |f| f.severity <= max)?;
    }
    for s in &spec.says {
        narrow(&mut c, format!("it does not say {s:?}"), |f| {
            ctx.norm(&f.all_text()).contains(s.as_str())
        })?;
    }
    for s in &spec.fix {
        narrow(&mut c, format!("its fix does not say {s:?}"), |f| {
            ctx.norm(&f.fix_text()).contains(s.as_str())
        })?;
    }
    if !spec.fix_any.is_empty() {
        narrow(
            &mut c,
            format!("its fix says none of {:?}", spec.fix_any),
            |f| {
                let t = ctx.norm(&f.fix_text());
                spec.fix_any.iter().any(|p| t.contains(p.as_str()))
            },
        )?;
    }
    for s in &spec.not {
        narrow(&mut c, format!("it says {s:?}"), |f| {
            !ctx.norm(&f.all_text()).contains(s.as_str())
        })?;
    }
    if let Some(n) = spec.count {
        narrow(&mut c, format!("it does not give the count {n}"), |f| {
            f.count == Some(n)
        })?;
    }
    Ok(c)
}

/// Keeps the candidates that pass `keep`; `what` is the reason when none does.
fn narrow(
    c: &mut Vec<&Finding>,
    what: String,
    keep: impl Fn(&Finding) -> bool,
) -> Result<(), String> {
    c.retain(|f| keep(f));
    if c.is_empty() {
        Err(what)
    } else {
        Ok(())
    }
}

fn label(kind: &str, spec: &FindingSpec) -> String {
    let mut l = kind.to_string();
    if !spec.codes.is_empty() {
        l += &format!(" [{}]", spec.codes.join("/"));
    }
    if let Some(q) = &spec.quote {
        let q: String = q.chars().take(40).collect();
        l += &format!(" {q:?}");
    }
    l
}

/// Checks every expectation; returns the failures (empty: the case passes).
pub fn check(ctx: &Ctx<'_>, all: &[Finding], e: &Expect, clean: bool) -> Vec<Failure> {
    let mut fails = Vec::new();
    // Indices of the findings some expectation accounts for.
    let mut claimed: Vec<usize> = Vec::new();
    let index = |f: &Finding| all.iter().position(|g| std::ptr::eq(g, f)).unwrap();
    let mut roots: Vec<String> = Vec::new();

    for spec in &e.cause {
        let l = label("cause", spec);
        match select(ctx, all, spec, Some(Severity::Error)) {
            Err(why) => fails.push(format!("{l}: {why}")),
            Ok(found) => {
                if spec.unique && found.len() > 1 {
                    fails.push(format!("{l}: {} findings instead of one", found.len()));
                }
                if spec.root.unwrap_or(true)
                    && !found
                        .iter()
                        .any(|f| f.consequence_of.is_empty() && f.rank == 0)
                {
                    fails.push(format!(
                        "{l}: not ranked first as the root cause (it is #{}{})",
                        found[0].rank,
                        if found[0].consequence_of.is_empty() {
                            String::new()
                        } else {
                            format!(", a consequence of {}", found[0].consequence_of.join(", "))
                        }
                    ));
                }
                roots.extend(found.iter().map(|f| f.code.clone()));
                claimed.extend(found.iter().map(|f| index(f)));
            }
        }
    }
    let cause_claims = claimed.clone();
    for spec in &e.fact {
        let l = label("fact", spec);
        match select(ctx, all, spec, None) {
            Err(why) => fails.push(format!("{l}: {why}")),
            Ok(found) => claimed.extend(found.iter().map(|f| index(f))),
        }
    }
    for spec in &e.message {
        let l = label("message", spec);
        match select(ctx, all, spec, None) {
            Err(why) => fails.push(format!("{l}: {why}")),
            Ok(found) => {
                if (spec.unique || spec.count.is_some()) && found.len() > 1 {
                    fails.push(format!(
                        "{l}: quoted by {} findings instead of one",
                        found.len()
                    ));
                }
                if spec.consequence.unwrap_or(!e.cause.is_empty()) {
                    // Explained: by the cause finding itself, or marked as its consequence.
                    let ok = found.iter().any(|f| {
                        cause_claims.contains(&index(f))
                            || (!f.consequence_of.is_empty()
                                && (roots.is_empty()
                                    || f.consequence_of.iter().any(|c| roots.contains(c))))
                    });
                    if !ok {
                        fails.push(format!(
                            "{l}: not marked as a consequence of the root cause ({})",
                            roots.join(", ")
                        ));
                    }
                }
                claimed.extend(found.iter().map(|f| index(f)));
            }
        }
    }
    for spec in &e.also {
        if let Ok(found) = select(ctx, all, spec, None) {
            claimed.extend(found.iter().map(|f| index(f)));
        }
    }
    for p in &e.forbid_fix {
        if let Some(f) = all
            .iter()
            .find(|f| ctx.norm(&f.fix_text()).contains(p.as_str()))
        {
            fails.push(format!("a fix says {p:?} ({} {})", f.code, f.severity));
        }
    }
    for p in &e.forbid {
        if let Some(f) = all
            .iter()
            .find(|f| ctx.norm(&f.all_text()).contains(p.as_str()))
        {
            fails.push(format!("a finding says {p:?} ({} {})", f.code, f.severity));
        }
    }
    for part in &e.no_evidence_path {
        let n = all
            .iter()
            .flat_map(|f| f.evidence.iter())
            .filter(|ev| {
                ev.path
                    .as_deref()
                    .is_some_and(|p| p.contains(part.as_str()))
            })
            .count();
        if n > 0 {
            fails.push(format!("{n} evidence lines name a path with {part:?}"));
        }
    }
    for v in &e.versions {
        let want = v.version.as_deref().unwrap_or("");
        for f in all {
            for ev in &f.evidence {
                let cited = ev
                    .path
                    .as_deref()
                    .is_some_and(|p| ctx.same_file(p, &v.path));
                if let (true, Some(shown)) = (cited, ev.version.as_deref()) {
                    if !shown.starts_with(want) {
                        fails.push(format!(
                            "{} shows {} as version {shown:?}, not {want}",
                            f.code, v.path
                        ));
                    }
                }
            }
        }
    }
    // Nothing else of note: each warning or error is expected, allowed, or
    // marked as a consequence (a clean stack allows none at all).
    for (i, f) in all.iter().enumerate() {
        let accounted = claimed.contains(&i) || (!clean && !f.consequence_of.is_empty());
        if f.severity >= Severity::Warning && !accounted {
            fails.push(format!("unexpected finding: {}", f.headline()));
        }
    }
    fails
}

#[cfg(test)]
mod tests {
    use super::collapse_dotdot;

    #[test]
    fn dotdot_is_collapsed() {
        assert_eq!(
            collapse_dotdot("at {W}/site/torch/lib/../../nvidia/cudnn/lib: x"),
            "at {W}/site/nvidia/cudnn/lib: x"
        );
        assert_eq!(collapse_dotdot("/a/b"), "/a/b");
    }
}
