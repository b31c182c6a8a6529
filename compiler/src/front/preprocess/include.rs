//! `#include "file"` (the including file's folder, then `-I` folders) and
//! `#include <file>` (`-I` folders only), with a nesting limit and `#pragma once`.
use super::{OpenFile, Preprocessor, MAX_INCLUDE_DEPTH};
use crate::diagnostics::{Diagnostic, Result};
use crate::front::lexer::{describe, Lexer};
use crate::front::token::{Punct, Token, TokenKind};
use crate::span::Span;
use std::path::{Path, PathBuf};

impl Preprocessor<'_> {
    pub(super) fn include(&mut self, span: Span) -> Result<()> {
        let tokens = self.line_tokens()?;
        let (path, path_span, quoted) = self.include_target(&tokens, span)?;
        if self.files.len() >= MAX_INCLUDE_DEPTH {
            return Err(Diagnostic::error(
                span.to(path_span),
                format!("`#include` nested more than {MAX_INCLUDE_DEPTH} deep (is there an include cycle?)"),
            ));
        }
        let current = self.lexer().file();
        let mut dirs: Vec<PathBuf> = Vec::new();
        if quoted {
            if let Some(parent) = Path::new(self.sources.name(current)).parent() {
                dirs.push(parent.to_path_buf());
            }
        }
        dirs.extend(self.options.include_dirs.iter().cloned());
        let found = dirs
            .iter()
            .map(|d| d.join(&path))
            .find(|p| p.is_file())
            .ok_or_else(|| {
                let searched: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
                Diagnostic::error(path_span, format!("cannot find include file `{path}`"))
                    .with_note(format!("searched: {}", searched.join(", ")))
            })?;
        if let Ok(canonical) = std::fs::canonicalize(&found) {
            if self.once.contains(&canonical) {
                return Ok(());
            }
        }
        let text = std::fs::read_to_string(&found).map_err(|e| {
            Diagnostic::error(path_span, format!("cannot read `{}`: {e}", found.display()))
        })?;
        let file = self.sources.add(found.display().to_string(), text.clone());
        self.files.push(OpenFile {
            lexer: Lexer::new(file, &text),
            cond_base: self.conds.len(),
        });
        Ok(())
    }

    /// `"file"` or `<file>`: the path, its span, and whether it was quoted.
    fn include_target(&self, tokens: &[Token], span: Span) -> Result<(String, Span, bool)> {
        match tokens.first() {
            Some(Token {
                kind: TokenKind::Str(path),
                span: s,
                ..
            }) => Ok((path.clone(), *s, true)),
            Some(open) if open.is_punct(Punct::Lt) => {
                let close = tokens
                    .iter()
                    .position(|t| t.is_punct(Punct::Gt))
                    .ok_or_else(|| {
                        Diagnostic::error(open.span, "expected `>` to close `#include <...`")
                    })?;
                let text = self.sources.text(open.span.file);
                let inner = Span::new(
                    open.span.file,
                    open.span.end as usize,
                    tokens[close].span.start as usize,
                );
                let path = text.get(inner.range()).unwrap_or("").trim().to_string();
                Ok((path, open.span.to(tokens[close].span), false))
            }
            Some(other) => Err(Diagnostic::error(
                other.span,
                format!(
                    "expected \"file\" or <file> after `#include`, found {}",
                    describe(&other.kind)
                ),
            )),
            None => Err(Diagnostic::error(
                span,
                "expected \"file\" or <file> after `#include`",
            )),
        }
    }
}
