//! Source files and byte spans. Every token, AST node and IR op carries a `Span`
//! so that any later stage can point back at the user's source.

use codespan_reporting::files::SimpleFiles;

/// Index of a file in the [`SourceMap`].
pub type FileId = usize;

/// A byte range `start..end` inside one file of the [`SourceMap`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Self {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both (they must be in the same file;
    /// otherwise `self` is returned unchanged).
    pub fn to(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// All source text the compiler has seen: the main file, included files and the
/// pseudo-file holding `-D` macro values from the command line.
#[derive(Default)]
pub struct SourceMap {
    files: SimpleFiles<String, String>,
}

impl SourceMap {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.files.add(name.into(), text.into())
    }

    pub fn text(&self, file: FileId) -> &str {
        self.files
            .get(file)
            .map(|f| f.source().as_str())
            .unwrap_or("")
    }

    pub fn name(&self, file: FileId) -> &str {
        self.files
            .get(file)
            .map(|f| f.name().as_str())
            .unwrap_or("<unknown>")
    }

    /// Every file added, in order, as `(name, text)`: the kernel, what it
    /// included and the `-D` values (a cache key over all that went in).
    pub fn all(&self) -> Vec<(&str, &str)> {
        (0..)
            .map_while(|id| {
                self.files
                    .get(id)
                    .ok()
                    .map(|f| (f.name().as_str(), f.source().as_str()))
            })
            .collect()
    }

    pub(crate) fn files(&self) -> &SimpleFiles<String, String> {
        &self.files
    }
}
