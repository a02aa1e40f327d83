//! The command line, declared with clap: the help pages, the suggestions,
//! the shell completions and the man page all come from these definitions.
//!
//! One rule is the launcher's own: `cudnn-trace [OPTIONS] [--] PROGRAM
//! [ARGS]...`. The first word that is not an option starts PROGRAM, and
//! everything after it belongs to PROGRAM, options included. Only the first
//! word of the command line can name a command (`report`, `env`, …): once
//! an option was given, `report` is a program (`cudnn-trace -q report`),
//! and `--` makes any word a program (`cudnn-trace -- report`).

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::error::ErrorKind;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum, ValueHint};
use cudnn_trace_core::analysis::findings::Severity;
use cudnn_trace_core::analysis::policy;
use cudnn_trace_core::machine::pin::PinMode;
use cudnn_trace_core::render::{self, style::ColorChoice};
use std::ffi::OsString;
use std::path::PathBuf;

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Run(RunArgs),
    Report(ReportArgs),
    Diff(DiffArgs),
    Env(EnvArgs),
    /// `explain [CODE]`.
    Explain(Option<String>),
    /// `version`: the long version (the shim, the formats).
    Version,
    Completions(clap_complete::Shell),
    Man(ManArgs),
    /// The internal `__probe-cudnn` entry (see `cudnn_trace_core::machine::probe`): its arguments.
    Probe(Vec<OsString>),
}

/// Parses the arguments after argv[0]. Err: a usage error, or the help or
/// version text that clap prints itself (`Error::print`, `exit_code`).
pub fn parse(args: &[OsString]) -> Result<Command, clap::Error> {
    // The probe's child side is an internal entry, not a command: kept out
    // of the definitions, so out of the help, the completions and the man
    // page (clap_complete lists hidden commands).
    if let Some((first, rest)) = args.split_first() {
        if first == cudnn_trace_core::machine::probe::SUBCOMMAND {
            return Ok(Command::Probe(rest.to_vec()));
        }
    }
    let argv = std::iter::once(OsString::from("cudnn-trace")).chain(args.iter().cloned());
    let mut matches = Cli::command().try_get_matches_from(argv)?;
    let cli = Cli::from_arg_matches_mut(&mut matches)?;
    cli.into_command()
}

/// A usage error in clap's words and layout (`error: …`, the usage line,
/// the hint to `--help`), for the checks clap cannot express.
fn usage_error(kind: ErrorKind, msg: impl std::fmt::Display) -> clap::Error {
    Cli::command().error(kind, msg)
}

const ABOUT: &str = "Show which cuDNN/CUDA libraries a program really loaded, why, and from where";

const LONG_ABOUT: &str = "\
Show which cuDNN/CUDA libraries a program really loaded, why, and from where.

cudnn-trace runs PROGRAM and all its children with a tracer loaded into them, then
prints what each process loaded (path, version, why the loader chose it, who asked)
and findings: what is wrong, and how to fix it.

The first word that is not an option starts PROGRAM: everything after it belongs to
PROGRAM. Put `--` before a PROGRAM named like a command (report, env, explain, …) or
one that starts with '-'.";

const EXAMPLES: &str = "\
Examples:
  cudnn-trace python train.py                  run traced; summary and findings on stderr
  cudnn-trace -qo traces -- torchrun --nproc-per-node 8 train.py
  cudnn-trace --fail-on warning --ignore CDT005 pytest tests/gpu
  cudnn-trace --pin /opt/cudnn-9.19/lib python train.py
  cudnn-trace report                           the newest run in ./cudnn-trace-out again
  cudnn-trace explain CDT008                   what a finding means

`cudnn-trace help COMMAND` or `cudnn-trace COMMAND --help` shows a command's options.";

const ROOT_AFTER_LONG: &str = "\
Examples:
  cudnn-trace python train.py                  run traced; summary and findings on stderr
  cudnn-trace -qo traces -- torchrun --nproc-per-node 8 train.py
  cudnn-trace --fail-on warning --ignore CDT005 pytest tests/gpu
  cudnn-trace --pin /opt/cudnn-9.19/lib python train.py
  cudnn-trace report                           the newest run in ./cudnn-trace-out again
  cudnn-trace explain CDT008                   what a finding means

`cudnn-trace help COMMAND` or `cudnn-trace COMMAND --help` shows a command's options.

Configuration:
  --ignore and --severity can also be set in cudnn-trace.toml (or .cudnn-trace.toml, or
  [tool.cudnn-trace] in pyproject.toml), the nearest one in the working directory or its
  parents; options given on the command line win. See docs/config.md.

Exit status:
  The program's own; if it died of signal N, cudnn-trace ends by the same signal (a shell
  shows 128+N). 127 when PROGRAM is not found, 126 when it cannot be executed, 125 when
  cudnn-trace itself fails or refuses the --pin directory (PROGRAM is then not run), 2 for
  usage errors. With --fail-on, 3 when the program exited 0 but the findings reached
  LEVEL (launcher.json records whether the gate tripped, to tell it from a program's own 3).

Environment:
  CUDNN_TRACE_SHIM_PATH      use this libcdtrace.so (and the libcdtrace_preload.so next to
                             it) instead of the embedded ones
  CUDNN_TRACE_KNOWLEDGE_DIR  knowledge tables (data/*.toml) to use instead of the built-in
  NO_COLOR, CLICOLOR_FORCE   colour, when --color is auto
  COLUMNS                    wrap the text at this width (default: the terminal's; not
                             wrapped through a pipe)";

#[derive(Parser, Debug)]
#[command(
    name = "cudnn-trace",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    override_usage = "cudnn-trace [OPTIONS] [--] PROGRAM [ARGS]...\n       cudnn-trace <COMMAND> [OPTIONS] [ARGS]...",
    after_help = EXAMPLES,
    after_long_help = ROOT_AFTER_LONG,
    // Only the first word selects a command (`cudnn-trace -q report` runs
    // a program named report), and no PROGRAM is needed with a command.
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    arg_required_else_help = true,
    max_term_width = 100,
)]
struct Cli {
    #[command(flatten)]
    run: RunArgs,
    /// The program to run, and its arguments (everything after PROGRAM is
    /// PROGRAM's, options included).
    #[arg(
        value_name = "PROGRAM",
        required = true,
        trailing_var_arg = true,
        value_hint = ValueHint::CommandWithArguments
    )]
    command: Vec<OsString>,
    #[command(subcommand)]
    sub: Option<Sub>,
}

impl Cli {
    fn into_command(self) -> Result<Command, clap::Error> {
        Ok(match self.sub {
            Some(Sub::Report(Deferred(r))) => Command::Report(r),
            Some(Sub::Diff(Deferred(d))) => Command::Diff(d),
            Some(Sub::Env(Deferred(e))) => Command::Env(e),
            Some(Sub::Explain { code }) => Command::Explain(code),
            Some(Sub::Version) => Command::Version,
            Some(Sub::Completions { shell }) => Command::Completions(shell),
            Some(Sub::Man(Deferred(m))) => Command::Man(m),
            None => Command::Run(self.run.with_program(self.command)?),
        })
    }
}

#[derive(Subcommand, Debug)]
enum Sub {
    /// Summarize trace directories or files again, with the findings
    #[command(
        long_about = "Summarize trace directories or files again, with the findings: what is wrong, \
                      and how to fix it. Without PATH, the newest run in ./cudnn-trace-out.",
        after_help = "\
Examples:
  cudnn-trace report                                the newest run in ./cudnn-trace-out
  cudnn-trace report traces/ --format markdown      a block to paste into a bug report
  cudnn-trace report --json traces/ | jq .findings_total
  cudnn-trace report --fail-on error --ignore CDT005 traces/    a CI gate
  cudnn-trace report --fleet /shared/traces/job42   many runs grouped by CUDA stack (docs/compare.md)
  cudnn-trace report --format chrome traces/ > t.json   a timeline for Perfetto

Exit status: 0 when at least one trace was read, 1 when none was, 2 for usage errors,
3 when --fail-on LEVEL was given and a finding reached it."
    )]
    Report(Deferred<ReportArgs>),
    /// Compare two runs: which CUDA libraries, environment and findings differ
    #[command(
        long_about = "Compare two runs (each a run directory or a trace file): line up their \
                      processes by role (program and arguments, rank, parent), then show, most \
                      important first, the CUDA-family libraries that differ (path, real path, \
                      version, CUDA build, reason, requester), the environment differences that \
                      explain them (LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES, the driver, the glibc) \
                      and the findings present in only one. See docs/compare.md.",
        after_help = "\
Examples:
  cudnn-trace diff runs/laptop runs/cluster          text, most important first
  cudnn-trace diff --format markdown good/ bad/      a block for an issue or a CI summary
  cudnn-trace diff --json reference/ $RUN | jq .matters

Exit status: 0 when nothing that matters differs (the same CUDA files, no failed load or
warning/error finding in one run only), 1 when something does, 2 for usage errors and
when a run cannot be read."
    )]
    Diff(Deferred<DiffArgs>),
    /// Check a cuDNN directory and print the settings that pin cuDNN to it
    /// without the launcher
    #[command(
        long_about = "Check a cuDNN directory exactly as --pin does, and print the environment \
                      that pins cuDNN to it without the launcher, for a shell, a Dockerfile and a \
                      systemd unit (see docs/pin.md). Runs nothing.",
        after_help = "\
Examples:
  cudnn-trace env --pin /opt/cudnn-9.19/lib                the shim from this user's cache
  cudnn-trace env --pin /opt/cudnn-9.19/lib --shim /opt/cudnn-trace/libcdtrace.so
  cudnn-trace env --pin /opt/cudnn-9.19/lib -o /var/log/cudnn-trace    and trace too

Exit status: 0 when DIR is valid (warnings allowed), 1 when it is refused, 2 for usage
errors."
    )]
    Env(Deferred<EnvArgs>),
    /// What a finding code means (no CODE: list them)
    #[command(after_help = "\
Examples:
  cudnn-trace explain                                  list the codes
  cudnn-trace explain CDT008                           the long form of one
  cudnn-trace explain ld-library-path-shadows-runpath  by its name

Exit status: 0, or 2 for an unknown code.")]
    Explain {
        /// A finding code (CDT008) or its name (ld-library-path-shadows-runpath)
        #[arg(value_name = "CODE")]
        code: Option<String>,
    },
    /// Print the version, with the embedded shim and the formats
    #[command(after_help = "\
Examples:
  cudnn-trace version         the version, the shim's size and hash, the trace schema
  cudnn-trace --version       the version only")]
    Version,
    /// Print a shell completion script
    #[command(after_help = "\
Examples:
  cudnn-trace completions bash > ~/.local/share/bash-completion/completions/cudnn-trace
  cudnn-trace completions zsh > ~/.zfunc/_cudnn-trace        (with fpath+=(~/.zfunc))
  cudnn-trace completions fish > ~/.config/fish/completions/cudnn-trace.fish")]
    Completions {
        /// The shell to complete for
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), generated from these definitions
    #[command(after_help = "\
Examples:
  cudnn-trace man | man -l -                      read it now
  cudnn-trace man > cudnn-trace.1                 the main page
  cudnn-trace man --dir /usr/local/share/man/man1  one page per command")]
    Man(Deferred<ManArgs>),
}

/// A command's arguments, defined only when the command is the one being
/// parsed (clap's `Command::defer`; the help, the completions and the man
/// page build them too). Defining the arguments of every command for each
/// launch of a program was a tenth of the launcher's instructions (issue
/// 10).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Deferred<T>(pub T);

impl<T: Args> Args for Deferred<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.defer(keeping_about::<T>)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        cmd.defer(keeping_about::<T>)
    }
}

/// `T`'s arguments added to `cmd`, which keeps its own about texts: the
/// ones of the command (`Sub`'s), not the doc comment of `T`'s struct,
/// which clap's derive would otherwise put over them now that the
/// arguments come after the command's attributes.
fn keeping_about<T: Args>(cmd: clap::Command) -> clap::Command {
    let about = cmd.get_about().cloned();
    let long_about = cmd.get_long_about().cloned();
    let cmd = T::augment_args(cmd);
    let cmd = match about {
        Some(a) => cmd.about(a),
        None => cmd.about(None::<&str>),
    };
    match long_about {
        Some(a) => cmd.long_about(a),
        None => cmd.long_about(None::<&str>),
    }
}

impl<T: FromArgMatches> FromArgMatches for Deferred<T> {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(m).map(Deferred)
    }

    fn from_arg_matches_mut(m: &mut clap::ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(m).map(Deferred)
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(m)
    }

    fn update_from_arg_matches_mut(&mut self, m: &mut clap::ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(m)
    }
}

/// `--fail-on` and `--severity` levels.
fn level_parser() -> impl TypedValueParser<Value = Severity> {
    PossibleValuesParser::new(["error", "warning", "info"])
        .map(|s| Severity::parse(&s).expect("a possible value"))
}

fn pin_mode_parser() -> impl TypedValueParser<Value = PinMode> {
    PossibleValuesParser::new([PinMode::Strict.as_str(), PinMode::Warn.as_str()])
        .map(|s| PinMode::parse(&s).expect("a possible value"))
}

/// `--color`: when the text output is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless NO_COLOR is set (CLICOLOR_FORCE forces it)
    #[default]
    Auto,
    Always,
    Never,
}

// The render layer has its own colour choice and format types, free of
// clap (other front ends use it too); these are their command-line faces.
impl From<ColorWhen> for ColorChoice {
    fn from(c: ColorWhen) -> ColorChoice {
        match c {
            ColorWhen::Auto => ColorChoice::Auto,
            ColorWhen::Always => ColorChoice::Always,
            ColorWhen::Never => ColorChoice::Never,
        }
    }
}

/// `report --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Format {
    /// The summary and the findings, for a reader
    #[default]
    Text,
    /// The machine-readable document (the same as --json)
    Json,
    /// A short block to paste into a bug report
    Markdown,
    /// Chrome Trace Event JSON, a timeline for Perfetto and chrome://tracing
    Chrome,
}

impl From<Format> for render::Format {
    fn from(f: Format) -> render::Format {
        match f {
            Format::Text => render::Format::Text,
            Format::Json => render::Format::Json,
            Format::Markdown => render::Format::Markdown,
            Format::Chrome => render::Format::Chrome,
        }
    }
}

/// The per-code control and the configuration file, for the launcher and
/// `report` alike.
#[derive(Args, Debug, Default, PartialEq, Eq, Clone)]
pub struct PolicyArgs {
    /// Leave out findings of CODE (a code or its name; repeat or separate
    /// with commas): not shown, not counted, not gated on
    #[arg(
        long,
        value_name = "CODE",
        value_delimiter = ',',
        value_parser = code_value,
        help_heading = "Findings"
    )]
    pub ignore: Vec<&'static str>,
    /// Report findings of CODE at LEVEL (error, warning, info; repeat or
    /// separate with commas)
    #[arg(
        long,
        value_name = "CODE=LEVEL",
        value_delimiter = ',',
        value_parser = policy::parse_severity,
        help_heading = "Findings"
    )]
    pub severity: Vec<(&'static str, Severity)>,
    /// Read --ignore and --severity settings from FILE instead of the
    /// cudnn-trace.toml or pyproject.toml found from the working directory
    #[arg(
        long,
        value_name = "FILE",
        value_hint = ValueHint::FilePath,
        help_heading = "Findings"
    )]
    pub config: Option<PathBuf>,
    /// Read no configuration file
    #[arg(long, conflicts_with = "config", help_heading = "Findings")]
    pub no_config: bool,
}

/// `--out DIR`: its placeholders must be known (a typo must not name a
/// directory, nor leave the program untraced).
fn out_value(s: OsString) -> Result<PathBuf, String> {
    let p = PathBuf::from(s);
    cudnn_trace_core::launch::record::expand_out(&p, 1, b"h")?;
    Ok(p)
}

fn code_value(s: &str) -> Result<&'static str, String> {
    policy::code(s).ok_or_else(|| policy::unknown_code(s))
}

#[derive(Args, Debug, Default, PartialEq, Eq)]
pub struct RunArgs {
    /// Write the traces to DIR [default: ./cudnn-trace-out/<YYYYmmdd-HHMMSS>-<pid>/]; %h
    /// is the host name and %p the launcher's pid (one directory per task: --out
    /// /shared/traces/%h-%p); when it cannot be created, PROGRAM runs untraced
    #[arg(short, long, value_name = "DIR", value_hint = ValueHint::DirPath, value_parser = clap::builder::OsStringValueParser::new().try_map(out_value))]
    pub out: Option<PathBuf>,
    /// Record every library, not only the CUDA family
    #[arg(long)]
    pub all: bool,
    /// Keep no copy of the program's stderr in the trace directory (stderr.txt, whose
    /// messages the findings explain); stderr reaches its destination unchanged either way
    #[arg(long)]
    pub no_capture_stderr: bool,

    /// Print no summary when the program ends
    #[arg(short, long, help_heading = "Output")]
    pub quiet: bool,
    /// Also write the summary as JSON to FILE ('-': stdout)
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath, help_heading = "Output")]
    pub json_summary: Option<PathBuf>,
    /// When to colour the summary
    #[arg(
        long,
        value_name = "WHEN",
        value_enum,
        default_value_t,
        help_heading = "Output"
    )]
    pub color: ColorWhen,

    /// Exit 3 when the program exited 0 but a finding of LEVEL or worse was made
    #[arg(long, value_name = "LEVEL", value_parser = level_parser(), help_heading = "Findings")]
    pub fail_on: Option<Severity>,
    #[command(flatten)]
    pub policy: PolicyArgs,

    /// Load every cuDNN library from DIR (see docs/pin.md); DIR is checked first, and
    /// PROGRAM is not run when it is not a complete cuDNN install of one version
    /// (exit status 125)
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath, help_heading = "Pin")]
    pub pin: Option<PathBuf>,
    /// strict: a cuDNN library missing from DIR fails to load; warn: it is searched as
    /// usual, and the trace records it [default: strict]
    #[arg(long, value_name = "MODE", value_parser = pin_mode_parser(), help_heading = "Pin")]
    pub pin_mode: Option<PinMode>,

    /// The program as typed (argv[0] of the child) and its arguments.
    #[arg(skip)]
    pub program: OsString,
    #[arg(skip)]
    pub args: Vec<OsString>,
}

impl RunArgs {
    /// The options with PROGRAM and its arguments, checked together.
    fn with_program(mut self, command: Vec<OsString>) -> Result<RunArgs, clap::Error> {
        // A mode on its own would silently pin nothing.
        if self.pin_mode.is_some() && self.pin.is_none() {
            return Err(usage_error(
                ErrorKind::MissingRequiredArgument,
                "--pin-mode needs --pin DIR",
            ));
        }
        let mut words = command.into_iter();
        self.program = words.next().unwrap_or_default();
        if self.program.is_empty() {
            return Err(usage_error(ErrorKind::InvalidValue, "empty PROGRAM name"));
        }
        self.args = words.collect();
        Ok(self)
    }

    /// `--pin-mode`, strict when not given.
    pub fn pin_mode(&self) -> PinMode {
        self.pin_mode.unwrap_or_default()
    }
}

#[derive(Args, Debug, Default, PartialEq, Eq)]
pub struct ReportArgs {
    /// Trace directories (a run of the launcher) or trace files [default: the newest run in
    /// ./cudnn-trace-out]
    #[arg(value_name = "PATH", value_hint = ValueHint::AnyPath)]
    pub paths: Vec<PathBuf>,
    /// Also list libraries outside the CUDA family (in traces taken with --all)
    #[arg(long)]
    pub all: bool,

    /// What to print
    #[arg(long, value_name = "FORMAT", value_enum, help_heading = "Output")]
    pub format: Option<Format>,
    /// The same as --format json
    #[arg(long, conflicts_with = "format", help_heading = "Output")]
    pub json: bool,
    /// When to colour the text
    #[arg(
        long,
        value_name = "WHEN",
        value_enum,
        default_value_t,
        help_heading = "Output"
    )]
    pub color: ColorWhen,
    /// Show each process on its own: by default, processes alike but for their pid (a
    /// fleet of identical workers) share one block that names their pids
    #[arg(long, help_heading = "Output")]
    pub each: bool,

    /// Group the processes of many runs (run directories, or directories holding them) by
    /// CUDA stack: each role's majority and its odd ones out
    #[arg(long, help_heading = "Output")]
    pub fleet: bool,
    /// With --format chrome: take the baseTimeNanoseconds of TRACE (a PyTorch profiler
    /// trace), so that both files' timestamps line up when opened together
    #[arg(long, value_name = "TRACE", value_hint = ValueHint::FilePath, help_heading = "Output")]
    pub align_to: Option<PathBuf>,

    /// Exit 3 when a finding of LEVEL or worse was made
    #[arg(long, value_name = "LEVEL", value_parser = level_parser(), help_heading = "Findings")]
    pub fail_on: Option<Severity>,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

/// `cudnn-trace diff GOOD BAD`.
#[derive(Args, Debug, Default, PartialEq, Eq)]
pub struct DiffArgs {
    /// The reference run: a run directory or a trace file
    #[arg(value_name = "GOOD", value_hint = ValueHint::AnyPath)]
    pub good: PathBuf,
    /// The run to compare with it
    #[arg(value_name = "BAD", value_hint = ValueHint::AnyPath)]
    pub bad: PathBuf,
    /// What to print (text, json, markdown)
    #[arg(long, value_name = "FORMAT", value_enum, help_heading = "Output")]
    pub format: Option<Format>,
    /// The same as --format json
    #[arg(long, conflicts_with = "format", help_heading = "Output")]
    pub json: bool,
    /// When to colour the text
    #[arg(
        long,
        value_name = "WHEN",
        value_enum,
        default_value_t,
        help_heading = "Output"
    )]
    pub color: ColorWhen,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

impl DiffArgs {
    /// `--format`, or `--json`.
    pub fn format(&self) -> Format {
        match (self.json, self.format) {
            (true, _) => Format::Json,
            (false, f) => f.unwrap_or_default(),
        }
    }
}

impl ReportArgs {
    /// `--format`, or `--json`.
    pub fn format(&self) -> Format {
        match (self.json, self.format) {
            (true, _) => Format::Json,
            (false, f) => f.unwrap_or_default(),
        }
    }
}

/// `cudnn-trace env --pin DIR ...`.
#[derive(Args, Debug, Default, PartialEq, Eq)]
pub struct EnvArgs {
    /// The cuDNN directory to pin to
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub pin: PathBuf,
    /// strict or warn, as for the launcher's --pin-mode
    #[arg(long, value_name = "MODE", value_parser = pin_mode_parser(), default_value = "strict")]
    pub pin_mode: PinMode,
    /// Install the shim at PATH (a stable location for production) and name it in
    /// LD_AUDIT [default: this user's cached copy]
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub shim: Option<PathBuf>,
    /// Also trace, into TRACE_DIR: set CUDNN_TRACE_DIR and LD_PRELOAD
    #[arg(short, long, value_name = "TRACE_DIR", value_hint = ValueHint::DirPath)]
    pub out: Option<PathBuf>,
}

/// `cudnn-trace man [--dir DIR]`.
#[derive(Args, Debug, Default, PartialEq, Eq)]
pub struct ManArgs {
    /// Write cudnn-trace.1 and one page per command (cudnn-trace-report.1, …) into DIR
    /// instead of printing the main page
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub dir: Option<PathBuf>,
}

/// The whole command-line definition, for completions (which build it,
/// the commands' deferred arguments included: [`Deferred`]) and the names
/// of the commands.
pub fn definition() -> clap::Command {
    Cli::command()
}

/// The definition as the man pages show it: without the `help` command,
/// which has no page of its own (`clap_mangen::generate_to` leaves it out),
/// and built, so that the commands' deferred arguments are in it.
pub fn man_definition() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

#[cfg(test)]
mod tests;
