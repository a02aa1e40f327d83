//! How text output looks on the reader's terminal: its width, whether it
//! gets colour, and the last pass every text goes through (control
//! characters escaped, long lines wrapped).
//!
//! The policy, as ripgrep and cargo do it:
//! * **Colour** only on a terminal, unless asked: `--color always|never`
//!   wins; with `auto`, `NO_COLOR` (any value) turns it off,
//!   `CLICOLOR_FORCE` turns it on even through a pipe, `CLICOLOR=0` and
//!   `TERM=dumb` turn it off (the `anstream` crate's rules).
//! * **Width**: `COLUMNS` when it is set to a number (an explicit request,
//!   since shells do not export it by default), else the terminal's width;
//!   through a pipe or into a file, lines are not wrapped at all (like
//!   ripgrep: a log or `grep` wants one record per line). Never narrower
//!   than [`MIN_WIDTH`].
//!
//! [`detect`] is the one function here that looks at the process's
//! environment; everything else is a pure function of [`TextOptions`].

use anstyle::{AnsiColor, Style};
use std::fmt::Write as _;

/// Lines are never wrapped narrower than this.
pub const MIN_WIDTH: usize = 40;

/// `--color auto|always|never`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    pub fn parse(s: &str) -> Option<ColorChoice> {
        match s {
            "auto" => Some(ColorChoice::Auto),
            "always" => Some(ColorChoice::Always),
            "never" => Some(ColorChoice::Never),
            _ => None,
        }
    }
}

/// Which of the process's streams a text goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// How the text renderers lay out and style their output. The commands
/// fill it (see [`detect`]); the default is plain text, not wrapped.
#[derive(Debug, Default, Clone)]
pub struct TextOptions {
    /// List libraries outside the CUDA family too.
    pub all: bool,
    /// Where the trace is, as shown to the user.
    pub location: Vec<String>,
    /// Written `…/` in paths, in the summary and the findings alike, with
    /// one legend line; the renderer chooses it when None (see
    /// `summary::common_prefix`).
    pub prefix: Option<String>,
    /// ANSI colours and bold.
    pub color: bool,
    /// Wrap lines at this many columns; None: do not wrap.
    pub width: Option<usize>,
    /// Show every process on its own, also those alike another (by
    /// default alike leaf processes share one block, `summary`).
    pub each: bool,
}

/// Whether `stream` gets colour under `choice`, and the width to wrap at,
/// by the policy of this module.
pub fn detect(stream: Stream, choice: ColorChoice) -> (bool, Option<usize>) {
    let (color, size) = match stream {
        Stream::Stdout => {
            let s = std::io::stdout();
            (auto_color(&s, choice), terminal_size::terminal_size_of(&s))
        }
        Stream::Stderr => {
            let s = std::io::stderr();
            (auto_color(&s, choice), terminal_size::terminal_size_of(&s))
        }
    };
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    let width = columns.or(size.map(|(w, _)| usize::from(w.0)));
    (color, width.map(|w| w.max(MIN_WIDTH)))
}

fn auto_color<S: anstream::stream::RawStream>(s: &S, choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => anstream::AutoStream::choice(s) != anstream::ColorChoice::Never,
    }
}

/// What a piece of text is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Error,
    Warning,
    Info,
    /// A table's header row, a section's name.
    Header,
    /// The fix line's label.
    Fix,
    /// Secondary text: legends, pointers to `explain`.
    Dim,
    /// A clean verdict.
    Good,
}

fn style(role: Role) -> Style {
    let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
    match role {
        Role::Error => fg(AnsiColor::Red).bold(),
        Role::Warning => fg(AnsiColor::Yellow).bold(),
        Role::Info => fg(AnsiColor::Cyan).bold(),
        Role::Header => Style::new().bold(),
        Role::Fix => fg(AnsiColor::Green).bold(),
        Role::Dim => Style::new().dimmed(),
        Role::Good => fg(AnsiColor::Green).bold(),
    }
}

/// `text` in the colour of `role`, when `opts` asks for colour. Text from
/// a trace must be escaped before (`text::esc`).
pub fn paint(opts: &TextOptions, role: Role, text: &str) -> String {
    if !opts.color || text.is_empty() {
        return text.to_string();
    }
    let s = style(role);
    format!("{s}{text}{s:#}")
}

/// The last pass of every text output: control characters escaped (but
/// for newlines and the colour sequences of [`paint`]: a trace cannot
/// move the cursor or retitle the terminal even where a renderer forgot
/// to escape), then every line longer than the width wrapped, its
/// continuation lines indented under its text.
pub fn finish(text: &str, opts: &TextOptions) -> String {
    let clean = escape_but_colour(text);
    match opts.width {
        None => clean,
        Some(w) => clean
            .split_inclusive('\n')
            .map(|l| {
                let (body, nl) = match l.strip_suffix('\n') {
                    Some(b) => (b, "\n"),
                    None => (l, ""),
                };
                let mut s = wrap_line(body, w).join("\n");
                s.push_str(nl);
                s
            })
            .collect(),
    }
}

/// Escapes what `text::esc` escapes, except newlines and SGR sequences
/// (`ESC [ digits ; … m`: colour and weight, nothing else).
fn escape_but_colour(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\x1b' {
            if let Some(n) = sgr_len(&s[i..]) {
                out.push_str(&s[i..i + n]);
                while chars.peek().is_some_and(|&(j, _)| j < i + n) {
                    chars.next();
                }
                continue;
            }
        }
        if c == '\n' || !c.is_control() {
            out.push(c);
        } else if (c as u32) < 0x80 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    out
}

/// The length of the SGR sequence `s` starts with, if it does.
fn sgr_len(s: &str) -> Option<usize> {
    let rest = s.strip_prefix("\x1b[")?;
    let n = rest
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (rest.as_bytes().get(n) == Some(&b'm')).then_some(2 + n + 1)
}

/// One line wrapped at `width`: continuation lines are indented as far as
/// the line is, plus 4 columns (the text of a row, under its label).
pub fn wrap_line(line: &str, width: usize) -> Vec<String> {
    if textwrap::core::display_width(line) <= width {
        return vec![line.to_string()];
    }
    let lead = line.len() - line.trim_start_matches(' ').len();
    let rest = " ".repeat((lead + 4).min(width / 2));
    wrap(&line[lead..], &" ".repeat(lead), &rest, width)
}

/// `text` wrapped at `width` with the two indents; words longer than a
/// line (paths) are broken. Without a width: one line.
pub fn wrap(text: &str, first: &str, rest: &str, width: usize) -> Vec<String> {
    let o = textwrap::Options::new(width)
        .initial_indent(first)
        .subsequent_indent(rest)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        // Paths and package names hold hyphens: break only at spaces (and
        // inside a word longer than the line).
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .break_words(true);
    textwrap::wrap(text, o)
        .into_iter()
        .map(|l| l.into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_when_asked() {
        let plain = TextOptions::default();
        assert_eq!(paint(&plain, Role::Error, "error"), "error");
        let color = TextOptions {
            color: true,
            ..Default::default()
        };
        let p = paint(&color, Role::Error, "error");
        assert_eq!(p, "\x1b[1m\x1b[31merror\x1b[0m");
        // The last pass keeps our colour and escapes everything else.
        assert_eq!(finish(&p, &color), p);
        assert_eq!(
            finish("a\x1b]0;t\x07b\x1b[2Jc\x1b[31", &color),
            r"a\x1b]0;t\x07b\x1b[2Jc\x1b[31"
        );
        assert_eq!(ColorChoice::parse("always"), Some(ColorChoice::Always));
        assert_eq!(ColorChoice::parse("yes"), None);
    }

    #[test]
    fn long_lines_wrap_under_their_text() {
        let opts = TextOptions {
            width: Some(40),
            ..Default::default()
        };
        let long = format!("  note: {}", "word ".repeat(20));
        let out = finish(&long, &opts);
        assert!(out.lines().all(|l| l.chars().count() <= 40), "{out}");
        assert!(
            out.lines().skip(1).all(|l| l.starts_with("      ")),
            "{out}"
        );
        let path = format!("  /{}", "x".repeat(100));
        let out = finish(&path, &opts);
        assert!(out.lines().all(|l| l.chars().count() <= 40), "{out}");
        assert_eq!(out.replace(['\n', ' '], ""), path.replace(' ', ""));
        // Colour sequences take no room.
        let color = TextOptions {
            color: true,
            width: Some(40),
            ..Default::default()
        };
        let red = paint(&color, Role::Error, &"e".repeat(38));
        assert_eq!(finish(&red, &color).lines().count(), 1);
    }
}
