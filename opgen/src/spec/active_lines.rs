//! Which lines of a `.tc` file are live for the op spec, as the kernel's own
//! text is for the compiler: a `#pragma opgen` line inside a `/* ... */`
//! comment or an `#if 0` block says nothing. The spec is one for every
//! variant, so a directive under any other condition (`#if ALIGN > 1`, which
//! differs between variants, or `#ifdef X`) is an error, not a guess.

use tritonc::diagnostics::Diagnostic;
use tritonc::span::{FileId, Span};

/// One line of the file with what the scanner knows of it.
pub struct Line<'a> {
    /// The line without its end-of-line characters.
    pub body: &'a str,
    /// Byte offset of the line in the file.
    pub start: usize,
    /// False when the line starts inside a block comment or lies in an
    /// `#if 0` region: its directives are not read.
    pub live: bool,
    /// The innermost enclosing `#if`/`#ifdef`/`#elif` whose value is not a
    /// literal (its span), if any.
    pub conditional: Option<Span>,
}

/// A conditional block being scanned.
enum Frame {
    /// `#if 0` / `#if 1` (and their `#else`): `live` says which branch.
    Literal { live: bool },
    /// Any other condition: both branches are possible.
    Variable(Span),
}

/// The lines of `text` with their liveness.
pub fn scan(file: FileId, text: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut offset = 0;
    let mut in_comment = false;
    let mut frames: Vec<Frame> = Vec::new();
    for raw in text.split_inclusive('\n') {
        let start = offset;
        offset += raw.len();
        let body = raw.trim_end_matches(['\n', '\r']);
        let starts_in_comment = in_comment;
        in_comment = ends_in_comment(body, in_comment);
        let dead = frames
            .iter()
            .any(|f| matches!(f, Frame::Literal { live: false }));
        let conditional = frames.iter().rev().find_map(|f| match f {
            Frame::Variable(span) => Some(*span),
            Frame::Literal { .. } => None,
        });
        lines.push(Line {
            body,
            start,
            live: !starts_in_comment && !dead,
            conditional,
        });
        if !starts_in_comment {
            let span = Span::new(file, start, start + body.len());
            track_conditional(body, span, &mut frames);
        }
    }
    lines
}

/// Whether a block comment is open at the end of `line`, given whether one
/// was open at its start. String and character literals and `//` comments
/// are skipped, as the lexer does.
fn ends_in_comment(line: &str, mut in_comment: bool) -> bool {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if in_comment {
            if bytes[i..].starts_with(b"*/") {
                in_comment = false;
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        match bytes[i] {
            b'/' if bytes[i..].starts_with(b"//") => return false,
            b'/' if bytes[i..].starts_with(b"/*") => {
                in_comment = true;
                i += 2;
            }
            quote @ (b'"' | b'\'') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    in_comment
}

/// Updates the conditional stack for a preprocessor line.
fn track_conditional(line: &str, span: Span, frames: &mut Vec<Frame>) {
    let Some(directive) = line.trim_start().strip_prefix('#') else {
        return;
    };
    let directive = directive.trim_start();
    let word_end = directive
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(directive.len());
    let (word, rest) = directive.split_at(word_end);
    let condition = strip_line_comment(rest).trim();
    match word {
        "if" => frames.push(literal_or_variable(condition, span)),
        "ifdef" | "ifndef" => frames.push(Frame::Variable(span)),
        "elif" => {
            if let Some(top) = frames.last_mut() {
                *top = Frame::Variable(span);
            }
        }
        "else" => {
            if let Some(Frame::Literal { live }) = frames.last_mut() {
                *live = !*live;
            }
        }
        "endif" => {
            frames.pop();
        }
        _ => {}
    }
}

fn literal_or_variable(condition: &str, span: Span) -> Frame {
    match condition {
        "0" => Frame::Literal { live: false },
        "1" => Frame::Literal { live: true },
        _ => Frame::Variable(span),
    }
}

fn strip_line_comment(text: &str) -> &str {
    let cut = [text.find("//"), text.find("/*")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(text.len());
    &text[..cut]
}

/// The error for a directive at `at` under the condition at `condition`.
pub fn conditional_directive(at: Span, condition: Span) -> Diagnostic {
    Diagnostic::error(
        at,
        "a `#pragma opgen` line under a preprocessor condition: the op spec is one for every \
         variant, so it cannot depend on macros; move the line out of the conditional",
    )
    .with_label(condition, "the condition")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(text: &str) -> Vec<bool> {
        scan(0, text).iter().map(|l| l.live).collect()
    }

    #[test]
    fn block_comments_hide_lines_but_line_comments_and_strings_do_not_open_them() {
        let text = "a\n/* b\nc */ d\ne // /* not a comment\nf \"/*\" g\nh\n";
        assert_eq!(live(text), [true, true, false, true, true, true]);
    }

    #[test]
    fn if_0_hides_its_branch_and_else_shows_the_other() {
        let text = "#if 0\na\n#else\nb\n#endif\nc\n#if 1\nd\n#endif\n";
        assert_eq!(
            live(text),
            [true, false, false, true, true, true, true, true, true]
        );
    }

    #[test]
    fn other_conditions_are_reported_with_their_line() {
        let text = "#if ALIGN > 1\na\n#endif\nb\n#ifdef X\n#if 0\nc\n#endif\nd\n#endif\n";
        let lines = scan(0, text);
        assert_eq!(lines[1].conditional.map(|s| s.start), Some(0u32));
        assert!(lines[3].conditional.is_none());
        assert!(!lines[6].live);
        assert!(lines[8].live && lines[8].conditional.is_some());
    }
}
