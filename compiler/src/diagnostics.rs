//! Compile errors: one message, a primary span rendered as `file:line:col` with a
//! caret under the offending source, optional secondary labels and notes.

use crate::span::{SourceMap, Span};
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::term::{self, Config};

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub message: String,
    pub span: Span,
    /// Extra spans with their own message ("x has shape [16, 8] here").
    pub secondary: Vec<(Span, String)>,
    pub notes: Vec<String>,
}

pub type Result<T> = std::result::Result<T, Diagnostic>;

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            message: message.into(),
            span,
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.secondary.push((span, message.into()));
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// `file:line:col` of the primary span (1-based), for one-line summaries.
    pub fn location(&self, sources: &SourceMap) -> String {
        let text = sources.text(self.span.file);
        let start = (self.span.start as usize).min(text.len());
        let before = &text[..start];
        let line = before.matches('\n').count() + 1;
        let col = before
            .rsplit('\n')
            .next()
            .map(|l| l.chars().count())
            .unwrap_or(0)
            + 1;
        format!("{}:{}:{}", sources.name(self.span.file), line, col)
    }

    /// Renders the diagnostic the way `rustc` does: header, `┌─ file:line:col`,
    /// the source line and a caret underline. No colours, so it can be compared
    /// in tests and written to logs.
    pub fn render(&self, sources: &SourceMap) -> String {
        if let Some(text) = self.render_long_line(sources) {
            return text;
        }
        let mut labels = vec![Label::primary(self.span.file, clamp(self.span, sources))];
        for (span, msg) in &self.secondary {
            labels
                .push(Label::secondary(span.file, clamp(*span, sources)).with_message(msg.clone()));
        }
        let diag = CsDiagnostic::error()
            .with_message(self.message.clone())
            .with_labels(labels)
            .with_notes(self.notes.clone());
        term::emit_into_string(&Config::default(), sources.files(), &diag)
            .unwrap_or_else(|_| format!("error: {} at {}", self.message, self.location(sources)))
    }
}

/// Longest source line shown whole; a longer one (generated or minified
/// input, a line of megabytes) is shown as a window around the caret.
pub const MAX_SHOWN_LINE: usize = 160;

impl Diagnostic {
    /// The rendering of a diagnostic whose line is over [`MAX_SHOWN_LINE`]
    /// characters: the same header and location, the line cut to a window of
    /// it around the caret (`…` where cut), notes; secondary labels as
    /// locations. `None` for a line short enough for the usual rendering.
    fn render_long_line(&self, sources: &SourceMap) -> Option<String> {
        let text = sources.text(self.span.file);
        let range = clamp(self.span, sources);
        let line_start = text[..range.start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[range.start..]
            .find('\n')
            .map_or(text.len(), |i| range.start + i);
        let line = &text[line_start..line_end];
        if line.chars().count() <= MAX_SHOWN_LINE {
            return None;
        }
        // Char columns of the caret and the window around it.
        let col = text[line_start..range.start].chars().count();
        let width = text[range.start..range.end.min(line_end)]
            .chars()
            .count()
            .clamp(1, 40);
        let from = col.saturating_sub(MAX_SHOWN_LINE / 2);
        let shown: String = line.chars().skip(from).take(MAX_SHOWN_LINE).collect();
        let cut_before = if from > 0 { "…" } else { "" };
        let cut_after = if from + MAX_SHOWN_LINE < line.chars().count() {
            "…"
        } else {
            ""
        };
        let number = text[..line_start].matches('\n').count() + 1;
        let gutter = " ".repeat(number.to_string().len());
        let mut out = format!(
            "error: {}\n{gutter} ┌─ {}\n{gutter} │\n{number} │ {cut_before}{shown}{cut_after}\n{gutter} │ {}{}\n",
            self.message,
            self.location(sources),
            " ".repeat(cut_before.chars().count() + col - from),
            "^".repeat(width)
        );
        for (span, msg) in &self.secondary {
            let other = Diagnostic::error(*span, "");
            out.push_str(&format!("{gutter} = {}: {msg}\n", other.location(sources)));
        }
        for note in &self.notes {
            out.push_str(&format!("{gutter} = {note}\n"));
        }
        Some(out)
    }
}

/// Keeps a span inside its file so rendering never fails on a stale offset.
fn clamp(span: Span, sources: &SourceMap) -> std::ops::Range<usize> {
    let len = sources.text(span.file).len();
    let start = (span.start as usize).min(len);
    let end = (span.end as usize).clamp(start, len);
    start..end
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for Diagnostic {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_shown_as_a_window_around_the_caret() {
        let mut sources = SourceMap::new();
        let line = format!("{}$ {}", "1 + ".repeat(25_000), "2 + ".repeat(25_000));
        let text = format!("int k() {{\n{line}\n}}\n");
        let at = text.find('$').unwrap() as u32;
        let file = sources.add("k.tc", text.clone());
        let diag = Diagnostic::error(
            Span {
                file,
                start: at,
                end: at + 1,
            },
            "unexpected character `$`",
        )
        .with_note("the line is long");
        let out = diag.render(&sources);
        assert!(out.len() < 1000, "{} bytes", out.len());
        assert!(out.contains("k.tc:2:100001"), "{out}");
        assert!(out.contains("= the line is long"), "{out}");
        // The caret sits under the `$` of the shown window.
        let lines: Vec<&str> = out.lines().collect();
        let shown = lines.iter().find(|l| l.starts_with("2 │ ")).unwrap();
        let caret = lines.iter().find(|l| l.contains('^')).unwrap();
        let dollar = shown.chars().position(|c| c == '$').unwrap();
        assert_eq!(
            caret.chars().position(|c| c == '^').unwrap(),
            dollar,
            "{out}"
        );
        assert!(shown.contains('…'), "{out}");
        // A short line renders as before (codespan), whole.
        let file = sources.add("s.tc", "int x = $;\n");
        let short = Diagnostic::error(
            Span {
                file,
                start: 8,
                end: 9,
            },
            "unexpected character `$`",
        )
        .render(&sources);
        assert!(short.contains("int x = $;"), "{short}");
        assert!(short.contains("s.tc:1:9"), "{short}");
    }
}
