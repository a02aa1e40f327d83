//! Command-line parsing, by hand: the launcher's options end at the first
//! non-option argument, and everything after it belongs to the program.

use cudnn_trace_core::analysis::findings::Severity;
use cudnn_trace_core::machine::pin::PinMode;
use cudnn_trace_core::render::style::ColorChoice;
use cudnn_trace_core::render::Format;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

pub const USAGE: &str = "\
cudnn-trace: show which cuDNN/CUDA libraries a program really loaded, why, and from where

Usage:
  cudnn-trace [OPTIONS] [--] PROGRAM [ARGS...]   run PROGRAM (and all its children) traced
  cudnn-trace report [--format text|json|markdown] [--all] [--fail-on LEVEL] [DIR|FILE...]
                                                 summarize trace directories or files and
                                                 list the findings (what is wrong, how to fix it)
                                                 (default: the newest run in ./cudnn-trace-out)
  cudnn-trace explain [CODE]                     what a finding code means (no CODE: list them)
  cudnn-trace env --pin DIR [--pin-mode strict|warn] [--shim PATH] [--out TRACE_DIR]
                                                 check DIR and print the settings that pin
                                                 cuDNN to it without the launcher (shell,
                                                 Dockerfile and systemd unit)
  cudnn-trace help | version

Options (before PROGRAM):
  -o, --out DIR           write the traces to DIR
                          (default: ./cudnn-trace-out/<YYYYmmdd-HHMMSS>-<pid>/);
                          when it cannot be created, PROGRAM runs untraced
      --all               record every library, not only the CUDA family
  -q, --quiet             print no summary when the program ends
      --no-capture-stderr do not keep a copy of the program's stderr in the trace
                          directory (stderr.txt, whose messages the report explains);
                          stderr reaches its destination unchanged either way
      --json-summary FILE also write the summary as JSON to FILE ('-': stdout)
      --fail-on LEVEL     exit 3 when the program exited 0 but a finding of LEVEL
                          (error, warning or info) or worse was made
      --pin DIR           load every cuDNN library from DIR (see docs/pin.md); DIR is
                          checked first, and PROGRAM is not run when it is not a
                          complete cuDNN install of one version (exit status 125)
      --pin-mode MODE     strict (default): a cuDNN library missing from DIR fails to load;
                          warn: it is searched as usual, and the trace records it
      --color WHEN        colour the summary: auto (default: on a terminal, unless
                          NO_COLOR is set; CLICOLOR_FORCE forces it), always, never
  -h, --help              show this help
  -V, --version           show the version
  --                      end of options (needed for a PROGRAM named report, env, explain,
                          help or version, or one starting with '-')

Report options:
      --format FORMAT     text (default), json (a machine-readable document) or markdown
                          (a short block to paste into a bug report)
      --json              the same as --format json
      --color WHEN        auto (default), always or never, as above
      --all               also list libraries outside the CUDA family (traces taken with --all)
      --fail-on LEVEL     exit 3 when a finding of LEVEL (error, warning, info) or worse was made

Env options:
      --pin DIR           the cuDNN directory (required)
      --pin-mode MODE     strict (default) or warn
      --shim PATH         install the shim at PATH (a stable location for production)
                          and name it in LD_AUDIT; default: this user's cached copy
  -o, --out TRACE_DIR     also trace: set CUDNN_TRACE_DIR and LD_PRELOAD

Exit status: the program's own; if it died of signal N, cudnn-trace ends by the same
signal (a shell shows 128+N).
127 when PROGRAM is not found, 126 when it cannot be executed, 125 when cudnn-trace itself
fails or refuses the --pin directory (PROGRAM is then not run), 2 for usage errors.
With --fail-on, 3 when the program exited 0 but the findings reached LEVEL (launcher.json
records whether the gate tripped, to tell it from a program's own 3).
`report` exits 0 when it read at least one trace, 1 when it found none, 2 for usage errors,
3 when --fail-on LEVEL was given and a finding reached it.
`explain` exits 0, or 2 for an unknown code.
`env` exits 0 when DIR is valid (warnings allowed), 1 when it is refused, 2 for usage errors.

Environment:
  CUDNN_TRACE_SHIM_PATH   use this libcdtrace.so (and the libcdtrace_preload.so next to it)
                          instead of the embedded ones
  COLUMNS                 wrap text at this width (default: the terminal's; no wrapping
                          when the output is not a terminal)
  NO_COLOR, CLICOLOR_FORCE  no colour / colour even when not on a terminal (--color auto)
";

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Help,
    Version,
    Run(RunArgs),
    Report(ReportArgs),
    Env(EnvArgs),
    /// `explain [CODE]`.
    Explain(Option<String>),
    /// The hidden `__probe-cudnn` subcommand (see `cudnn_trace_core::machine::probe`): its arguments.
    Probe(Vec<OsString>),
}

#[derive(Debug, PartialEq, Eq, Default)]
pub struct RunArgs {
    pub out: Option<PathBuf>,
    pub all: bool,
    pub quiet: bool,
    /// `--no-capture-stderr`: no stderr.txt (`launch::capture`).
    pub no_capture_stderr: bool,
    pub json_summary: Option<PathBuf>,
    /// `--fail-on LEVEL`: exit 3 when a finding reached LEVEL.
    pub fail_on: Option<Severity>,
    /// `--pin DIR`: the cuDNN directory, as typed.
    pub pin: Option<PathBuf>,
    /// `--pin-mode` (strict when not given).
    pub pin_mode: PinMode,
    /// `--color WHEN` for the summary.
    pub color: ColorChoice,
    /// The program as typed (argv[0] of the child) and its arguments.
    pub program: OsString,
    pub args: Vec<OsString>,
}

#[derive(Debug, PartialEq, Eq, Default)]
pub struct ReportArgs {
    /// `--format` (`--json`: json).
    pub format: Format,
    /// `--color WHEN` for the text format.
    pub color: ColorChoice,
    pub all: bool,
    /// `--fail-on LEVEL`: exit 3 when a finding reached LEVEL.
    pub fail_on: Option<Severity>,
    pub paths: Vec<PathBuf>,
}

/// `cudnn-trace env --pin DIR ...`.
#[derive(Debug, PartialEq, Eq, Default)]
pub struct EnvArgs {
    pub pin: PathBuf,
    pub pin_mode: PinMode,
    /// `--shim PATH`: where to install the shim.
    pub shim: Option<PathBuf>,
    /// `--out TRACE_DIR`: also trace, into this directory.
    pub out: Option<PathBuf>,
}

/// A usage error: the message to print before the short usage hint.
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses the arguments after argv[0].
pub fn parse(args: &[OsString]) -> Result<Command, UsageError> {
    match args.first().map(|a| a.as_os_str()) {
        None => Err(UsageError("missing PROGRAM".into())),
        Some(a) if a == "report" => parse_report(&args[1..]),
        Some(a) if a == "explain" => parse_explain(&args[1..]),
        Some(a) if a == "env" => parse_env(&args[1..]),
        Some(a) if a == cudnn_trace_core::machine::probe::SUBCOMMAND => {
            Ok(Command::Probe(args[1..].to_vec()))
        }
        Some(a) if a == "help" => Ok(Command::Help),
        Some(a) if a == "version" => Ok(Command::Version),
        Some(_) => parse_run(args),
    }
}

/// Splits `--name=value`; returns (name, inline value).
fn split_eq(arg: &OsStr) -> (&OsStr, Option<&OsStr>) {
    use std::os::unix::ffi::OsStrExt;
    let b = arg.as_bytes();
    if b.starts_with(b"--") {
        if let Some(i) = b.iter().position(|&c| c == b'=') {
            return (
                OsStr::from_bytes(&b[..i]),
                Some(OsStr::from_bytes(&b[i + 1..])),
            );
        }
    }
    (arg, None)
}

/// The value of `--pin-mode`.
fn pin_mode(name: &str, v: &OsStr) -> Result<PinMode, UsageError> {
    v.to_str().and_then(PinMode::parse).ok_or_else(|| {
        UsageError(format!(
            "{name} must be strict or warn, not '{}'",
            v.to_string_lossy()
        ))
    })
}

/// The value of the option at `args[*i]`: its inline `=value`, else the
/// next argument (`*i` then moves onto it). `what` names the option in the
/// error.
fn option_value(
    args: &[OsString],
    i: &mut usize,
    inline: Option<&OsStr>,
    what: &str,
) -> Result<OsString, UsageError> {
    if let Some(v) = inline {
        return Ok(v.to_os_string());
    }
    *i += 1;
    args.get(*i)
        .cloned()
        .ok_or_else(|| UsageError(format!("{what} needs a value")))
}

/// A path value that must not be empty.
fn path_value(name: &str, v: OsString) -> Result<PathBuf, UsageError> {
    if v.is_empty() {
        return Err(UsageError(format!("{name} needs a non-empty value")));
    }
    Ok(v.into())
}

fn parse_run(args: &[OsString]) -> Result<Command, UsageError> {
    let mut run = RunArgs::default();
    let mut mode_given = false;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_os_str();
        let (name, inline) = split_eq(arg);
        let name = name.to_str().unwrap_or("");
        let mut value = |what: &str| option_value(args, &mut i, inline, what);
        match name {
            "--" => {
                i += 1;
                break;
            }
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "-o" | "--out" => run.out = Some(path_value(name, value(name)?)?),
            "--json-summary" => run.json_summary = Some(path_value(name, value(name)?)?),
            "--fail-on" => run.fail_on = Some(severity(name, &value(name)?)?),
            "--color" => run.color = color(name, &value(name)?)?,
            "--pin" => run.pin = Some(path_value(name, value(name)?)?),
            "--pin-mode" => {
                run.pin_mode = pin_mode(name, &value(name)?)?;
                mode_given = true;
            }
            "--all" | "-q" | "--quiet" | "--no-capture-stderr" if inline.is_some() => {
                return Err(UsageError(format!("{name} takes no value")));
            }
            "--all" => run.all = true,
            "-q" | "--quiet" => run.quiet = true,
            "--no-capture-stderr" => run.no_capture_stderr = true,
            _ if arg.as_encoded_bytes().starts_with(b"-") && arg.len() > 1 => {
                return Err(UsageError(format!(
                    "unknown option {} (use `--` before a PROGRAM that starts with '-')",
                    arg.to_string_lossy()
                )));
            }
            _ => break,
        }
        i += 1;
    }
    // A mode on its own would silently pin nothing.
    if mode_given && run.pin.is_none() {
        return Err(UsageError("--pin-mode needs --pin DIR".into()));
    }
    let Some(program) = args.get(i) else {
        return Err(UsageError("missing PROGRAM".into()));
    };
    if program.is_empty() {
        return Err(UsageError("empty PROGRAM name".into()));
    }
    run.program = program.clone();
    run.args = args[i + 1..].to_vec();
    Ok(Command::Run(run))
}

/// `--color` values.
fn color(opt: &str, v: &OsStr) -> Result<ColorChoice, UsageError> {
    v.to_str().and_then(ColorChoice::parse).ok_or_else(|| {
        UsageError(format!(
            "{opt} wants auto, always or never, not {:?}",
            v.to_string_lossy()
        ))
    })
}

/// `--format` values.
fn format(opt: &str, v: &OsStr) -> Result<Format, UsageError> {
    v.to_str().and_then(Format::parse).ok_or_else(|| {
        UsageError(format!(
            "{opt} wants text, json or markdown, not {:?}",
            v.to_string_lossy()
        ))
    })
}

/// `--fail-on` values.
fn severity(opt: &str, v: &OsStr) -> Result<Severity, UsageError> {
    v.to_str().and_then(Severity::parse).ok_or_else(|| {
        UsageError(format!(
            "{opt} wants error, warning or info, not {:?}",
            v.to_string_lossy()
        ))
    })
}

fn parse_explain(args: &[OsString]) -> Result<Command, UsageError> {
    match args {
        [] => Ok(Command::Explain(None)),
        [a] if a == "-h" || a == "--help" => Ok(Command::Help),
        [a] => Ok(Command::Explain(Some(a.to_string_lossy().into_owned()))),
        _ => Err(UsageError("explain takes one finding code".into())),
    }
}

fn parse_report(args: &[OsString]) -> Result<Command, UsageError> {
    let mut rep = ReportArgs::default();
    let mut options_done = false;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if options_done || !arg.as_encoded_bytes().starts_with(b"-") || arg.len() == 1 {
            rep.paths.push(arg.into());
        } else {
            let (name, inline) = split_eq(arg);
            match name.to_str().unwrap_or("") {
                "--fail-on" => {
                    let v = option_value(args, &mut i, inline, "report: --fail-on")?;
                    rep.fail_on = Some(severity("report: --fail-on", &v)?);
                }
                "--format" => {
                    let v = option_value(args, &mut i, inline, "report: --format")?;
                    rep.format = format("report: --format", &v)?;
                }
                "--color" => {
                    let v = option_value(args, &mut i, inline, "report: --color")?;
                    rep.color = color("report: --color", &v)?;
                }
                _ if inline.is_some() => {
                    return Err(UsageError(format!(
                        "report: unknown option {}",
                        arg.to_string_lossy()
                    )))
                }
                _ => match arg.to_str().unwrap_or("") {
                    "--" => options_done = true,
                    "--json" => rep.format = Format::Json,
                    "--all" => rep.all = true,
                    "-h" | "--help" => return Ok(Command::Help),
                    other => return Err(UsageError(format!("report: unknown option {other}"))),
                },
            }
        }
        i += 1;
    }
    Ok(Command::Report(rep))
}

fn parse_env(args: &[OsString]) -> Result<Command, UsageError> {
    let mut env = EnvArgs::default();
    let mut pin = None;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_os_str();
        let (name, inline) = split_eq(arg);
        let name = name.to_str().unwrap_or("");
        let mut value = |what: &str| option_value(args, &mut i, inline, &format!("env: {what}"));
        match name {
            "-h" | "--help" => return Ok(Command::Help),
            "--pin" => pin = Some(path_value("env: --pin", value(name)?)?),
            "--pin-mode" => env.pin_mode = pin_mode("env: --pin-mode", &value(name)?)?,
            "--shim" => env.shim = Some(path_value("env: --shim", value(name)?)?),
            "-o" | "--out" => env.out = Some(path_value(&format!("env: {name}"), value(name)?)?),
            _ if arg.as_encoded_bytes().starts_with(b"-") => {
                return Err(UsageError(format!(
                    "env: unknown option {}",
                    arg.to_string_lossy()
                )));
            }
            _ => {
                return Err(UsageError(format!(
                    "env: unexpected argument '{}' (env runs nothing; it prints settings)",
                    arg.to_string_lossy()
                )));
            }
        }
        i += 1;
    }
    env.pin = pin.ok_or_else(|| UsageError("env: --pin DIR is required".into()))?;
    Ok(Command::Env(env))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Command, UsageError> {
        let v: Vec<OsString> = args.iter().map(OsString::from).collect();
        parse(&v)
    }

    fn run(args: &[&str]) -> RunArgs {
        match p(args) {
            Ok(Command::Run(r)) => r,
            other => panic!("{args:?} → {other:?}"),
        }
    }

    #[test]
    fn program_and_its_options() {
        let r = run(&["python", "train.py", "--all", "-q"]);
        assert_eq!(r.program, "python");
        assert_eq!(
            r.args,
            vec![OsString::from("train.py"), "--all".into(), "-q".into()]
        );
        assert!(!r.all && !r.quiet && r.out.is_none());
    }

    #[test]
    fn launcher_options() {
        let r = run(&[
            "--out",
            "d",
            "--all",
            "-q",
            "--json-summary=s.json",
            "ls",
            "-l",
        ]);
        assert_eq!(r.out, Some(PathBuf::from("d")));
        assert!(r.all && r.quiet);
        assert_eq!(r.json_summary, Some(PathBuf::from("s.json")));
        assert_eq!(r.program, "ls");
        assert_eq!(r.args, vec![OsString::from("-l")]);
        assert_eq!(run(&["--out=x/y", "true"]).out, Some(PathBuf::from("x/y")));
        assert_eq!(run(&["-o", "x", "true"]).out, Some(PathBuf::from("x")));
    }

    #[test]
    fn no_capture_stderr_option() {
        assert!(!run(&["ls"]).no_capture_stderr);
        let r = run(&["--no-capture-stderr", "ls", "--no-capture-stderr"]);
        assert!(r.no_capture_stderr);
        assert_eq!(r.args, vec![OsString::from("--no-capture-stderr")]);
        assert!(p(&["--no-capture-stderr=yes", "ls"]).is_err());
        assert!(USAGE.contains("--no-capture-stderr"));
    }

    #[test]
    fn double_dash_forces_program() {
        let r = run(&["--", "report", "x"]);
        assert_eq!(r.program, "report");
        assert_eq!(r.args, vec![OsString::from("x")]);
        let r = run(&["--quiet", "--", "-weird", "--"]);
        assert_eq!(r.program, "-weird");
        assert_eq!(r.args, vec![OsString::from("--")]);
        // A lone "-" is a program name, not an option.
        assert_eq!(run(&["-"]).program, "-");
    }

    #[test]
    fn subcommands() {
        assert_eq!(p(&["help"]), Ok(Command::Help));
        assert_eq!(p(&["version"]), Ok(Command::Version));
        assert_eq!(p(&["-h"]), Ok(Command::Help));
        assert_eq!(p(&["--version"]), Ok(Command::Version));
        assert_eq!(p(&["--all", "--help", "x"]), Ok(Command::Help));
        // Only the first argument selects a subcommand.
        assert_eq!(run(&["-q", "report"]).program, "report");
        assert_eq!(
            p(&["report", "--json", "a", "b", "--", "--c"]),
            Ok(Command::Report(ReportArgs {
                format: Format::Json,
                paths: vec!["a".into(), "b".into(), "--c".into()],
                ..Default::default()
            }))
        );
        assert_eq!(p(&["report"]), Ok(Command::Report(ReportArgs::default())));
        assert_eq!(
            p(&["report", "--fail-on", "warning", "d"]),
            Ok(Command::Report(ReportArgs {
                fail_on: Some(Severity::Warning),
                paths: vec!["d".into()],
                ..Default::default()
            }))
        );
        assert_eq!(
            p(&["report", "--fail-on=error"]),
            Ok(Command::Report(ReportArgs {
                fail_on: Some(Severity::Error),
                ..Default::default()
            }))
        );
        assert!(p(&["report", "--fail-on", "fatal"]).is_err());
        assert!(p(&["report", "--fail-on"]).is_err());
        assert!(p(&["report", "--json=x"]).is_err());
        assert_eq!(
            p(&["report", "--format", "markdown", "--color=always", "d"]),
            Ok(Command::Report(ReportArgs {
                format: Format::Markdown,
                color: ColorChoice::Always,
                paths: vec!["d".into()],
                ..Default::default()
            }))
        );
        assert!(p(&["report", "--format", "yaml"]).is_err());
        assert!(p(&["report", "--color", "sometimes"]).is_err());
        assert_eq!(run(&["--color", "never", "prog"]).color, ColorChoice::Never);
        assert_eq!(
            run(&["--fail-on", "info", "prog"]).fail_on,
            Some(Severity::Info)
        );
        assert_eq!(p(&["explain"]), Ok(Command::Explain(None)));
        assert_eq!(
            p(&["explain", "CDT001"]),
            Ok(Command::Explain(Some("CDT001".into())))
        );
        assert!(p(&["explain", "a", "b"]).is_err());
    }

    #[test]
    fn usage_errors() {
        assert!(p(&[]).is_err());
        assert!(p(&["--out"]).is_err());
        assert!(p(&["--out", "d"]).is_err());
        assert!(p(&["--out="]).is_err());
        assert!(p(&["--bogus", "ls"]).is_err());
        assert!(p(&["--all=yes", "ls"]).is_err());
        assert!(p(&["--"]).is_err());
        assert!(p(&["--", ""]).is_err());
        assert!(p(&["report", "--bogus"]).is_err());
    }

    fn err(args: &[&str]) -> String {
        match p(args) {
            Err(UsageError(m)) => m,
            other => panic!("{args:?} → {other:?}"),
        }
    }

    #[test]
    fn pin_options() {
        let r = run(&["--pin", "/opt/cudnn", "python", "--pin", "x"]);
        assert_eq!(r.pin, Some(PathBuf::from("/opt/cudnn")));
        assert_eq!(r.pin_mode, PinMode::Strict);
        assert_eq!(r.program, "python");
        assert_eq!(r.args, vec![OsString::from("--pin"), "x".into()]);
        let r = run(&["--pin-mode=warn", "--pin=d", "ls"]);
        assert_eq!(r.pin, Some(PathBuf::from("d")));
        assert_eq!(r.pin_mode, PinMode::Warn);
        assert_eq!(
            run(&["--pin", "d", "--pin-mode", "strict", "ls"]).pin_mode,
            PinMode::Strict
        );
        assert_eq!(run(&["ls"]).pin, None);

        assert_eq!(
            err(&["--pin-mode", "warn", "ls"]),
            "--pin-mode needs --pin DIR"
        );
        assert_eq!(
            err(&["--pin", "d", "--pin-mode", "lax", "ls"]),
            "--pin-mode must be strict or warn, not 'lax'"
        );
        assert_eq!(
            err(&["--pin", "d", "--pin-mode"]),
            "--pin-mode needs a value"
        );
        assert_eq!(err(&["--pin=", "ls"]), "--pin needs a non-empty value");
        assert_eq!(err(&["--pin"]), "--pin needs a value");
    }

    #[test]
    fn env_subcommand() {
        assert_eq!(
            p(&["env", "--pin", "/p"]),
            Ok(Command::Env(EnvArgs {
                pin: "/p".into(),
                ..Default::default()
            }))
        );
        assert_eq!(
            p(&[
                "env",
                "--shim=/s/libcdtrace.so",
                "--pin-mode",
                "warn",
                "-o",
                "t",
                "--pin=/p"
            ]),
            Ok(Command::Env(EnvArgs {
                pin: "/p".into(),
                pin_mode: PinMode::Warn,
                shim: Some("/s/libcdtrace.so".into()),
                out: Some("t".into()),
            }))
        );
        assert_eq!(p(&["env", "--help"]), Ok(Command::Help));
        assert_eq!(err(&["env"]), "env: --pin DIR is required");
        assert_eq!(
            err(&["env", "--pin-mode", "warn"]),
            "env: --pin DIR is required"
        );
        assert_eq!(
            err(&["env", "--pin", "/p", "--pin-mode", "x"]),
            "env: --pin-mode must be strict or warn, not 'x'"
        );
        assert_eq!(
            err(&["env", "--pin", "/p", "--all"]),
            "env: unknown option --all"
        );
        assert_eq!(
            err(&["env", "--pin", "/p", "python"]),
            "env: unexpected argument 'python' (env runs nothing; it prints settings)"
        );
        assert_eq!(err(&["env", "--pin"]), "env: --pin needs a value");
        assert_eq!(
            err(&["env", "--pin", "/p", "--shim="]),
            "env: --shim needs a non-empty value"
        );
        // A program named env still runs with `--`.
        assert_eq!(run(&["--", "env", "X=1", "ls"]).program, "env");
    }

    #[test]
    fn hidden_probe_subcommand() {
        assert_eq!(
            p(&["__probe-cudnn", "/d", "9"]),
            Ok(Command::Probe(vec!["/d".into(), "9".into()]))
        );
    }
}
