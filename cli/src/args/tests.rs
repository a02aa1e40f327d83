//! The command-line contract. The assertions of the hand-written parser's
//! tests are kept; where clap words a usage error its own way, the
//! expected wording changed (each such place says so), never what is
//! accepted or refused.

use super::*;
use clap::error::ErrorKind;

fn p(args: &[&str]) -> Result<Command, clap::Error> {
    let v: Vec<OsString> = args.iter().map(OsString::from).collect();
    parse(&v)
}

fn run(args: &[&str]) -> RunArgs {
    match p(args) {
        Ok(Command::Run(r)) => r,
        Ok(other) => panic!("{args:?} → {other:?}"),
        Err(e) => panic!("{args:?} → {}", e.render()),
    }
}

fn report(args: &[&str]) -> ReportArgs {
    match p(args) {
        Ok(Command::Report(r)) => r,
        Ok(other) => panic!("{args:?} → {other:?}"),
        Err(e) => panic!("{args:?} → {}", e.render()),
    }
}

/// The usage error's message: its first line without clap's `error: `.
fn err(args: &[&str]) -> String {
    match p(args) {
        Err(e) if e.use_stderr() => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_string()
        }
        Err(e) => panic!("{args:?} → not a usage error: {}", e.render()),
        Ok(c) => panic!("{args:?} → {c:?}"),
    }
}

/// The whole text clap prints for the arguments (an error or a help page).
fn printed(args: &[&str]) -> String {
    match p(args) {
        Err(e) => e.render().to_string(),
        Ok(c) => panic!("{args:?} → {c:?}"),
    }
}

fn is_help(args: &[&str]) -> bool {
    matches!(p(args), Err(e) if e.kind() == ErrorKind::DisplayHelp)
}

#[test]
fn the_definition_is_consistent() {
    definition().debug_assert();
}

/// A command's arguments are defined when it is parsed or built
/// ([`Deferred`]): then it has them all, and keeps its own about texts
/// (the ones its help, its man page and the main page's list show), not
/// the doc comment of its arguments' struct.
#[test]
fn deferred_commands_keep_their_texts_and_get_their_arguments() {
    let unbuilt = definition();
    let built = man_definition();
    for name in ["report", "diff", "env", "man"] {
        let before = unbuilt.find_subcommand(name).unwrap();
        let after = built.find_subcommand(name).unwrap();
        assert_eq!(
            before.get_arguments().count(),
            0,
            "{name}: defined before it is used"
        );
        assert!(
            after.get_arguments().count() > 1,
            "{name}: no arguments once built"
        );
        let text = |c: &clap::Command| {
            (
                c.get_about().map(ToString::to_string),
                c.get_long_about().map(ToString::to_string),
            )
        };
        assert_eq!(text(before), text(after), "{name}");
    }
    let report_about = built.find_subcommand("report").unwrap().get_about();
    assert_eq!(
        report_about.map(ToString::to_string).as_deref(),
        Some("Summarize trace directories or files again, with the findings")
    );
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
    // Help, version and `--` after PROGRAM are PROGRAM's too.
    let r = run(&["python", "--help", "-V", "--", "--version"]);
    assert_eq!(r.args, ["--help", "-V", "--", "--version"]);
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
fn short_options_bundle_and_take_attached_values() {
    let r = run(&["-qo", "DIR", "ls"]);
    assert!(r.quiet);
    assert_eq!(r.out, Some(PathBuf::from("DIR")));
    assert_eq!(run(&["-o=DIR", "ls"]).out, Some(PathBuf::from("DIR")));
    assert_eq!(run(&["-oDIR", "ls"]).out, Some(PathBuf::from("DIR")));
    assert_eq!(run(&["--out=DIR", "ls"]).out, Some(PathBuf::from("DIR")));
    let r = run(&["-qoDIR", "ls"]);
    assert!(r.quiet && r.out == Some(PathBuf::from("DIR")));
}

#[test]
fn no_capture_stderr_option() {
    assert!(!run(&["ls"]).no_capture_stderr);
    let r = run(&["--no-capture-stderr", "ls", "--no-capture-stderr"]);
    assert!(r.no_capture_stderr);
    assert_eq!(r.args, vec![OsString::from("--no-capture-stderr")]);
    assert!(p(&["--no-capture-stderr=yes", "ls"]).is_err());
    assert!(printed(&["--help"]).contains("--no-capture-stderr"));
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
    // Every command name, and the hidden probe, can be a program.
    for name in [
        "report",
        "env",
        "explain",
        "help",
        "version",
        "completions",
        "man",
        "__probe-cudnn",
    ] {
        assert_eq!(run(&["--", name, "a"]).program, name);
        assert_eq!(run(&["-q", name, "a"]).program, name);
    }
}

#[test]
fn programs_named_almost_like_commands_run() {
    for prog in [
        "report.py",
        "./report",
        "reports",
        "env.sh",
        "explainer",
        "Report",
    ] {
        let r = run(&[prog, "report", "--json"]);
        assert_eq!(r.program, prog);
        assert_eq!(r.args, ["report", "--json"]);
    }
    assert_eq!(run(&["python", "report"]).args, ["report"]);
}

#[test]
fn subcommands() {
    assert!(is_help(&["help"]));
    assert!(matches!(p(&["version"]), Ok(Command::Version)));
    assert!(is_help(&["-h"]));
    assert!(matches!(p(&["--version"]), Err(e) if e.kind() == ErrorKind::DisplayVersion));
    assert!(is_help(&["--all", "--help", "x"]));
    // Only the first argument selects a subcommand.
    assert_eq!(run(&["-q", "report"]).program, "report");
    assert_eq!(
        report(&["report", "--json", "a", "b", "--", "--c"]),
        ReportArgs {
            json: true,
            paths: vec!["a".into(), "b".into(), "--c".into()],
            ..Default::default()
        }
    );
    assert_eq!(report(&["report"]), ReportArgs::default());
    assert_eq!(
        report(&["report", "--fail-on", "warning", "d"]),
        ReportArgs {
            fail_on: Some(Severity::Warning),
            paths: vec!["d".into()],
            ..Default::default()
        }
    );
    assert_eq!(
        report(&["report", "--fail-on=error"]),
        ReportArgs {
            fail_on: Some(Severity::Error),
            ..Default::default()
        }
    );
    assert!(p(&["report", "--fail-on", "fatal"]).is_err());
    assert!(p(&["report", "--fail-on"]).is_err());
    assert!(p(&["report", "--json=x"]).is_err());
    assert_eq!(
        run(&["--fail-on", "info", "prog"]).fail_on,
        Some(Severity::Info)
    );
    assert_eq!(p(&["explain"]).unwrap(), Command::Explain(None));
    assert_eq!(
        p(&["explain", "CDT001"]).unwrap(),
        Command::Explain(Some("CDT001".into()))
    );
    assert!(p(&["explain", "a", "b"]).is_err());
    assert!(is_help(&["explain", "--help"]));
    assert!(is_help(&["help", "report"]));
}

#[test]
fn report_formats() {
    assert_eq!(report(&["report"]).format(), Format::Text);
    assert_eq!(report(&["report", "--json"]).format(), Format::Json);
    assert_eq!(
        report(&["report", "--format", "markdown"]).format(),
        Format::Markdown
    );
    assert_eq!(report(&["report", "--format=json"]).format(), Format::Json);
    assert!(err(&["report", "--json", "--format", "text"]).contains("cannot be used with"));
    assert!(err(&["report", "--format", "html"]).contains("invalid value 'html'"));
    assert_eq!(report(&["report"]).color, ColorWhen::Auto);
    assert_eq!(
        report(&["report", "--color", "never"]).color,
        ColorWhen::Never
    );
    assert_eq!(run(&["--color=always", "ls"]).color, ColorWhen::Always);
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
    // Wording: clap's ("unexpected argument '--bogus' found"), with its tip
    // for a PROGRAM that starts with '-'.
    assert_eq!(
        err(&["--bogus", "ls"]),
        "unexpected argument '--bogus' found"
    );
    assert!(printed(&["--bogus", "ls"]).contains("'-- --bogus'"));
    assert_eq!(err(&["--", ""]), "empty PROGRAM name");
    // No arguments: the help, on stderr, as a usage error (exit status 2).
    let none = p(&[]).unwrap_err();
    assert!(none.use_stderr() && none.exit_code() == 2);
    assert!(none.render().to_string().contains("Usage:"));
}

#[test]
fn did_you_mean() {
    for (typo, want) in [
        (&["--ou", "d", "ls"][..], "'--out'"),
        (&["--quite", "ls"][..], "'--quiet'"),
        (&["--fail-onn", "error", "ls"][..], "'--fail-on'"),
        (&["report", "--jsno"][..], "'--json'"),
        (&["env", "--pinn", "/p"][..], "'--pin'"),
    ] {
        let text = printed(typo);
        assert!(
            text.contains(&format!("a similar argument exists: {want}")),
            "{typo:?}: {text}"
        );
    }
    let text = printed(&["completions", "bsah"]);
    assert!(text.contains("[possible values: bash"), "{text}");
}

#[test]
fn pin_options() {
    let r = run(&["--pin", "/opt/cudnn", "python", "--pin", "x"]);
    assert_eq!(r.pin, Some(PathBuf::from("/opt/cudnn")));
    assert_eq!(r.pin_mode(), PinMode::Strict);
    assert_eq!(r.program, "python");
    assert_eq!(r.args, vec![OsString::from("--pin"), "x".into()]);
    let r = run(&["--pin-mode=warn", "--pin=d", "ls"]);
    assert_eq!(r.pin, Some(PathBuf::from("d")));
    assert_eq!(r.pin_mode(), PinMode::Warn);
    assert_eq!(
        run(&["--pin", "d", "--pin-mode", "strict", "ls"]).pin_mode(),
        PinMode::Strict
    );
    assert_eq!(run(&["ls"]).pin, None);

    assert_eq!(
        err(&["--pin-mode", "warn", "ls"]),
        "--pin-mode needs --pin DIR"
    );
    // Wording: clap's, which lists the values.
    assert_eq!(
        err(&["--pin", "d", "--pin-mode", "lax", "ls"]),
        "invalid value 'lax' for '--pin-mode <MODE>'"
    );
    assert!(printed(&["--pin", "d", "--pin-mode", "lax", "ls"])
        .contains("[possible values: strict, warn]"));
    assert_eq!(
        err(&["--pin", "d", "--pin-mode"]),
        "a value is required for '--pin-mode <MODE>' but none was supplied"
    );
    assert_eq!(
        err(&["--pin=", "ls"]),
        "a value is required for '--pin <DIR>' but none was supplied"
    );
    assert_eq!(
        err(&["--pin"]),
        "a value is required for '--pin <DIR>' but none was supplied"
    );
}

#[test]
fn env_subcommand() {
    assert_eq!(
        p(&["env", "--pin", "/p"]).unwrap(),
        Command::Env(EnvArgs {
            pin: "/p".into(),
            ..Default::default()
        })
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
        ])
        .unwrap(),
        Command::Env(EnvArgs {
            pin: "/p".into(),
            pin_mode: PinMode::Warn,
            shim: Some("/s/libcdtrace.so".into()),
            out: Some("t".into()),
        })
    );
    assert!(is_help(&["env", "--help"]));
    // Wording: clap's for the rest of this test.
    let missing = "the following required arguments were not provided:";
    assert_eq!(err(&["env"]), missing);
    assert!(printed(&["env"]).contains("--pin <DIR>"));
    assert_eq!(err(&["env", "--pin-mode", "warn"]), missing);
    assert_eq!(
        err(&["env", "--pin", "/p", "--pin-mode", "x"]),
        "invalid value 'x' for '--pin-mode <MODE>'"
    );
    assert_eq!(
        err(&["env", "--pin", "/p", "--all"]),
        "unexpected argument '--all' found"
    );
    assert_eq!(
        err(&["env", "--pin", "/p", "python"]),
        "unexpected argument 'python' found"
    );
    assert_eq!(
        err(&["env", "--pin"]),
        "a value is required for '--pin <DIR>' but none was supplied"
    );
    assert_eq!(
        err(&["env", "--pin", "/p", "--shim="]),
        "a value is required for '--shim <PATH>' but none was supplied"
    );
    // A program named env still runs with `--`.
    assert_eq!(run(&["--", "env", "X=1", "ls"]).program, "env");
}

#[test]
fn hidden_probe_subcommand() {
    assert_eq!(
        p(&["__probe-cudnn", "/d", "9"]).unwrap(),
        Command::Probe(vec!["/d".into(), "9".into()])
    );
    // Whatever it is given is its own, even what looks like an option.
    assert_eq!(
        p(&["__probe-cudnn", "--help", "-x"]).unwrap(),
        Command::Probe(vec!["--help".into(), "-x".into()])
    );
    assert_eq!(
        cudnn_trace_core::machine::probe::SUBCOMMAND,
        "__probe-cudnn"
    );
    assert!(!printed(&["--help"]).contains("probe"));
    let mut names = definition()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect::<Vec<_>>();
    names.sort();
    assert_eq!(
        names,
        [
            "completions",
            "diff",
            "env",
            "explain",
            "man",
            "report",
            "version"
        ]
    );
}

#[test]
fn diff_and_the_comparing_report_options() {
    match p(&["diff", "a", "b", "--format", "markdown"]) {
        Ok(Command::Diff(d)) => {
            assert_eq!(
                (d.good.as_os_str(), d.bad.as_os_str()),
                ("a".as_ref(), "b".as_ref())
            );
            assert_eq!(d.format(), Format::Markdown);
        }
        other => panic!("{other:?}"),
    }
    match p(&["diff", "--json", "a", "b"]) {
        Ok(Command::Diff(d)) => assert_eq!(d.format(), Format::Json),
        other => panic!("{other:?}"),
    }
    // Two runs, no more and no fewer.
    assert!(p(&["diff", "a"]).is_err());
    assert!(p(&["diff", "a", "b", "c"]).is_err());
    // `-q diff` is a program named diff, as for every command.
    assert!(matches!(p(&["-q", "diff", "a", "b"]), Ok(Command::Run(_))));
    let r = report(&[
        "report",
        "--fleet",
        "--format",
        "chrome",
        "--align-to",
        "t.json",
        "x",
    ]);
    assert!(r.fleet);
    assert_eq!(r.format(), Format::Chrome);
    assert_eq!(r.align_to.as_deref(), Some(std::path::Path::new("t.json")));
}

#[test]
fn completions_and_man() {
    assert_eq!(
        p(&["completions", "zsh"]).unwrap(),
        Command::Completions(clap_complete::Shell::Zsh)
    );
    assert_eq!(p(&["man"]).unwrap(), Command::Man(ManArgs { dir: None }));
    assert_eq!(
        p(&["man", "--dir", "m"]).unwrap(),
        Command::Man(ManArgs {
            dir: Some("m".into())
        })
    );
    assert!(p(&["completions"]).is_err());
}

#[test]
fn per_code_options() {
    let r = run(&[
        "--ignore",
        "CDT005,cdt001",
        "--ignore=duplicate-library",
        "--severity",
        "CDT008=warning",
        "--severity=cdt002=info,CDT003=error",
        "ls",
        "--ignore",
        "x",
    ]);
    assert_eq!(r.policy.ignore, ["CDT005", "CDT001", "CDT001"]);
    assert_eq!(
        r.policy.severity,
        [
            ("CDT008", Severity::Warning),
            ("CDT002", Severity::Info),
            ("CDT003", Severity::Error)
        ]
    );
    assert_eq!(r.args, ["--ignore", "x"]);
    let rep = report(&["report", "--ignore", "CDT005", "--no-config", "d"]);
    assert_eq!(rep.policy.ignore, ["CDT005"]);
    assert!(rep.policy.no_config);
    assert_eq!(
        report(&["report", "--config", "c.toml"]).policy.config,
        Some(PathBuf::from("c.toml"))
    );

    assert!(err(&["--ignore", "CDT999", "ls"]).contains("no finding has the code \"CDT999\""));
    assert!(err(&["report", "--severity", "CDT001"]).contains("want CODE=LEVEL"));
    assert!(err(&["report", "--severity", "CDT001=fatal"]).contains("not \"fatal\""));
    assert!(err(&["report", "--config", "c", "--no-config"]).contains("cannot be used with"));
}

#[test]
fn help_pages_differ_per_command_and_have_examples() {
    let pages: Vec<(&str, String)> = [
        ("", vec!["--help"]),
        ("report", vec!["report", "--help"]),
        ("env", vec!["env", "--help"]),
        ("explain", vec!["explain", "--help"]),
        ("version", vec!["version", "--help"]),
        ("completions", vec!["completions", "--help"]),
        ("man", vec!["man", "--help"]),
    ]
    .into_iter()
    .map(|(name, args)| (name, printed(&args)))
    .collect();
    for (i, (name, page)) in pages.iter().enumerate() {
        assert!(page.contains("Examples:\n"), "{name}: {page}");
        let usage = if name.is_empty() {
            "Usage: cudnn-trace [OPTIONS] [--] PROGRAM [ARGS]...".to_string()
        } else {
            format!("Usage: cudnn-trace {name}")
        };
        assert!(page.contains(&usage), "{name}: {page}");
        for (other, page2) in &pages[i + 1..] {
            assert_ne!(page, page2, "{name} and {other}");
        }
    }
    let [root, report, env, ..] = &pages[..] else {
        unreachable!()
    };
    assert!(root.1.contains("--pin-mode") && root.1.contains("Exit status:"));
    assert!(report.1.contains("--format") && !report.1.contains("--pin"));
    assert!(env.1.contains("--shim") && !env.1.contains("--fail-on"));
    // `help COMMAND` is `COMMAND --help`; -h is the short form.
    assert_eq!(printed(&["help", "report"]), report.1);
    assert!(printed(&["-h"]).len() < root.1.len());
}
