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
