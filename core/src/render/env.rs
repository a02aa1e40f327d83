//! The settings `cudnn-trace env --pin DIR` prints: the variables that pin
//! cuDNN without the launcher, in three syntaxes (a shell, a Dockerfile, a
//! systemd unit), each quoted for its own rules, and the line that
//! describes the validated directory.

use super::text::sh_quote;
use crate::machine::pin::PinInfo;
use crate::model::Ver;
use cudnn_trace_format::envvar;
use std::path::Path;

/// One line about a valid directory.
pub fn describe(info: &PinInfo) -> String {
    let version = match &info.version {
        Some(v) => format!("cuDNN {v}"),
        None => format!("cuDNN {} (exact version unknown)", info.major),
    };
    let cuda = info
        .cuda_build
        .map(|c| format!(" built with CUDA {}", Ver::from_cuda_int(c)))
        .unwrap_or_default();
    let warned = match info.warnings.len() {
        0 => String::new(),
        1 => " (1 warning)".into(),
        n => format!(" ({n} warnings)"),
    };
    format!(
        "{}: {version}{cuda}, {} files; the pin is valid{warned}",
        info.dir.display(),
        info.files.len()
    )
}

/// A Dockerfile `ENV` value: double quotes, in which the escape character
/// `\` escapes `"`, `\` and `$` (else `$X` would be substituted at build
/// time).
pub fn docker_quote(v: &str) -> String {
    let mut s = String::from("\"");
    for c in v.chars() {
        if matches!(c, '"' | '\\' | '$') {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('"');
    s
}

/// A systemd `Environment=` assignment: the whole `KEY=value` in double
/// quotes, with `\` and `"` escaped (systemd.syntax) and `%` doubled (unit
/// file specifiers are expanded in Environment=; `$` is not).
pub fn systemd_quote(key: &str, v: &str) -> String {
    let mut s = format!("\"{key}=");
    for c in v.chars() {
        match c {
            '"' | '\\' => {
                s.push('\\');
                s.push(c);
            }
            '%' => s.push_str("%%"),
            _ => s.push(c),
        }
    }
    s.push('"');
    s
}

/// The text on stdout. Err when a value cannot be written in all three
/// syntaxes (not UTF-8, or a control character such as a newline, which
/// neither a Dockerfile line nor a unit file line can hold).
pub fn render(
    info: &PinInfo,
    shim_path: &Path,
    preload_path: &Path,
    per_user: bool,
    out: Option<&Path>,
) -> Result<String, String> {
    let text = |what: &str, p: &Path| -> Result<String, String> {
        let s = p
            .to_str()
            .ok_or_else(|| format!("{what} {} is not valid UTF-8", p.display()))?;
        if s.chars().any(char::is_control) {
            return Err(format!(
                "{what} {} holds a control character (a newline?), which a Dockerfile or a unit file cannot hold",
                p.display()
            ));
        }
        Ok(s.to_string())
    };
    let shim_s = text("the shim path", shim_path)?;
    let mut vars: Vec<(&str, String)> = vec![
        ("LD_AUDIT", shim_s.clone()),
        (envvar::PIN, text("the pin directory", &info.dir)?),
        (envvar::PIN_MODE, info.mode.as_str().to_string()),
    ];
    if let Some(o) = out {
        vars.push((envvar::OUT_DIR, text("the trace directory", o)?));
        // The preload helper next to the shim (issue 14: it brings nothing
        // into the program's link map; the audit library would).
        vars.push(("LD_PRELOAD", text("the preload helper path", preload_path)?));
    }

    let version = info
        .version
        .clone()
        .unwrap_or_else(|| info.major.to_string());
    let mut s = format!(
        "# cuDNN {version} pinned to {} ({} mode), by cudnn-trace {}\n",
        info.dir.display(),
        info.mode.as_str(),
        env!("CARGO_PKG_VERSION")
    );
    if per_user {
        s += &format!(
            "# LD_AUDIT names cudnn-trace's cached copy of the shim ({shim_s}),\n\
             # which other users and machines may not have: for production, install it at a\n\
             # stable path with cudnn-trace env --shim PATH ...\n"
        );
    }
    let preload = if out.is_some() { " and LD_PRELOAD" } else { "" };
    s += &format!(
        "# These lines replace LD_AUDIT{preload}: if you set your own, join them with ':'.\n"
    );
    if out.is_some() {
        s += "# CUDNN_TRACE_DIR and LD_PRELOAD also trace the processes into that directory.\n";
    }

    s += "\n# shell (sh, bash, zsh)\n";
    for (k, v) in &vars {
        s += &format!("export {k}={}\n", sh_quote(v));
    }

    s += "\n# Dockerfile\n";
    for (i, (k, v)) in vars.iter().enumerate() {
        let lead = if i == 0 { "ENV " } else { "    " };
        let cont = if i + 1 < vars.len() { " \\" } else { "" };
        s += &format!("{lead}{k}={}{cont}\n", docker_quote(v));
    }

    s += "\n# systemd unit (or a drop-in: systemctl edit UNIT)\n[Service]\n";
    for (k, v) in &vars {
        s += &format!("Environment={}\n", systemd_quote(k, v));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::pin::PinMode;
    use std::path::PathBuf;

    fn info(dir: &str) -> PinInfo {
        PinInfo {
            dir: PathBuf::from(dir),
            mode: PinMode::Strict,
            major: 9,
            version: Some("9.19.0".into()),
            cuda_build: Some(13000),
            max_device: Some(1210),
            files: vec!["libcudnn.so.9".into()],
            warnings: Vec::new(),
        }
    }

    #[test]
    fn quoting() {
        assert_eq!(sh_quote("/opt/cudnn/lib"), "/opt/cudnn/lib");
        assert_eq!(sh_quote(""), "''");
        assert_eq!(sh_quote("/a b"), "'/a b'");
        assert_eq!(sh_quote("/it's"), r"'/it'\''s'");
        assert_eq!(sh_quote("/$HOME"), "'/$HOME'");
        assert_eq!(docker_quote("/a b"), "\"/a b\"");
        assert_eq!(docker_quote(r#"/q"d\$x"#), r#""/q\"d\\\$x""#);
        assert_eq!(systemd_quote("K", r#"/q"d\$x %h"#), r#""K=/q\"d\\$x %%h""#);
    }

    #[test]
    fn shell_block_survives_a_shell() {
        let weird = r#"/p dir/it's "q" $HOME %h \n*"#;
        let text = render(
            &info(weird),
            Path::new("/s/libcdtrace.so"),
            Path::new("/s/libcdtrace_preload.so"),
            false,
            None,
        )
        .unwrap();
        let block: String = text
            .split("\n\n")
            .find(|b| b.starts_with("# shell"))
            .unwrap()
            .to_string();
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("{block}\nprintf '%s' \"$CUDNN_TRACE_PIN\""))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), weird);
    }

    #[test]
    fn whole_output() {
        let text = render(
            &info("/pin dir/lib"),
            Path::new("/c/libcdtrace.so"),
            Path::new("/c/libcdtrace_preload.so"),
            true,
            Some(Path::new("/t 1")),
        )
        .unwrap();
        let v = env!("CARGO_PKG_VERSION");
        assert_eq!(
            text,
            format!(
                r#"# cuDNN 9.19.0 pinned to /pin dir/lib (strict mode), by cudnn-trace {v}
# LD_AUDIT names cudnn-trace's cached copy of the shim (/c/libcdtrace.so),
# which other users and machines may not have: for production, install it at a
# stable path with cudnn-trace env --shim PATH ...
# These lines replace LD_AUDIT and LD_PRELOAD: if you set your own, join them with ':'.
# CUDNN_TRACE_DIR and LD_PRELOAD also trace the processes into that directory.

# shell (sh, bash, zsh)
export LD_AUDIT=/c/libcdtrace.so
export CUDNN_TRACE_PIN='/pin dir/lib'
export CUDNN_TRACE_PIN_MODE=strict
export CUDNN_TRACE_DIR='/t 1'
export LD_PRELOAD=/c/libcdtrace_preload.so

# Dockerfile
ENV LD_AUDIT="/c/libcdtrace.so" \
    CUDNN_TRACE_PIN="/pin dir/lib" \
    CUDNN_TRACE_PIN_MODE="strict" \
    CUDNN_TRACE_DIR="/t 1" \
    LD_PRELOAD="/c/libcdtrace_preload.so"

# systemd unit (or a drop-in: systemctl edit UNIT)
[Service]
Environment="LD_AUDIT=/c/libcdtrace.so"
Environment="CUDNN_TRACE_PIN=/pin dir/lib"
Environment="CUDNN_TRACE_PIN_MODE=strict"
Environment="CUDNN_TRACE_DIR=/t 1"
Environment="LD_PRELOAD=/c/libcdtrace_preload.so"
"#
            )
        );
        assert!(render(
            &info("/a\nb"),
            Path::new("/c/x.so"),
            Path::new("/c/libcdtrace_preload.so"),
            false,
            None
        )
        .unwrap_err()
        .contains("control character"));
    }

    #[test]
    fn describes_the_directory() {
        let mut i = info("/p");
        assert_eq!(
            describe(&i),
            "/p: cuDNN 9.19.0 built with CUDA 13.0, 1 files; the pin is valid"
        );
        i.version = None;
        i.cuda_build = None;
        i.warnings = vec!["w".into(), "x".into()];
        assert_eq!(
            describe(&i),
            "/p: cuDNN 9 (exact version unknown), 1 files; the pin is valid (2 warnings)"
        );
    }
}
