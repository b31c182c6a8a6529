//! The C preprocessor subset Triton-C uses: `#define` (object- and function-like),
//! `#if/#ifdef/#ifndef/#elif/#else/#endif`, `#include`, `-D` values that are code.
//!
//! Files are read line by line through a [`Lexer`] cursor, so skipped groups and
//! `#pragma` lines are never tokenized (they may hold anything). Consecutive text
//! lines are gathered and macro-expanded together before the next directive.
mod command_line;
mod cond_expr;
mod conditionals;
mod include;
mod macros;

use super::lexer::{describe, Lexer};
use super::token::{Token, TokenKind};
use super::FrontOptions;
use crate::diagnostics::{Diagnostic, Result};
use crate::span::{FileId, SourceMap, Span};
use conditionals::Cond;
use macros::{Expander, MacroTable, PpToken};
use std::path::PathBuf;

/// Name of the pseudo-file that holds the `-D` definitions.
pub const COMMAND_LINE_FILE: &str = "<command-line>";
/// `#include` nesting limit; an unguarded include cycle stops here.
const MAX_INCLUDE_DEPTH: usize = 64;

/// Lexes `file` and expands every directive and macro; ends with `Eof`.
pub fn preprocess(
    sources: &mut SourceMap,
    file: FileId,
    options: &FrontOptions,
) -> Result<Vec<Token>> {
    super::stack::on_large_stack(|| preprocess_here(sources, file, options))
}

fn preprocess_here(
    sources: &mut SourceMap,
    file: FileId,
    options: &FrontOptions,
) -> Result<Vec<Token>> {
    let mut pp = Preprocessor {
        sources,
        options,
        macros: MacroTable::new(),
        conds: Vec::new(),
        files: Vec::new(),
        pending: Vec::new(),
        out: Vec::new(),
        once: Vec::new(),
    };
    pp.define_command_line()?;
    pp.run(file)
}

struct OpenFile {
    lexer: Lexer,
    /// `conds.len()` when the file was entered: its groups must close inside it.
    cond_base: usize,
}

struct Preprocessor<'a> {
    sources: &'a mut SourceMap,
    options: &'a FrontOptions,
    macros: MacroTable,
    conds: Vec<Cond>,
    files: Vec<OpenFile>,
    /// Text-line tokens not yet macro-expanded.
    pending: Vec<Token>,
    out: Vec<Token>,
    /// Files that said `#pragma once`, by canonical path.
    once: Vec<PathBuf>,
}

impl Preprocessor<'_> {
    fn run(mut self, main: FileId) -> Result<Vec<Token>> {
        let text = self.sources.text(main).to_string();
        let end = text.len();
        self.files.push(OpenFile {
            lexer: Lexer::new(main, &text),
            cond_base: 0,
        });
        loop {
            let active = self.active();
            let Some(open) = self.files.last_mut() else {
                break;
            };
            if open.lexer.at_eof()? {
                self.close_file()?;
            } else if open.lexer.at_directive()? {
                self.flush()?;
                self.directive()?;
            } else if active {
                self.text_line()?;
            } else {
                open.lexer.rest_of_line()?;
            }
        }
        self.flush()?;
        self.out.push(Token {
            kind: TokenKind::Eof,
            span: Span::new(main, end, end),
            at_line_start: true,
            space_before: false,
        });
        Ok(self.out)
    }

    fn lexer(&mut self) -> &mut Lexer {
        &mut self.files.last_mut().expect("a file is open").lexer
    }

    fn active(&self) -> bool {
        self.conds.last().is_none_or(|c| c.active)
    }

    fn close_file(&mut self) -> Result<()> {
        let base = self.files.last().map_or(0, |f| f.cond_base);
        if self.conds.len() > base {
            let open = self.conds.last().map_or(Span::default(), |c| c.span);
            return Err(Diagnostic::error(
                open,
                "unterminated conditional: this directive has no matching `#endif`",
            ));
        }
        self.flush()?;
        self.files.pop();
        Ok(())
    }

    fn text_line(&mut self) -> Result<()> {
        let first = self.lexer().next_token()?;
        self.pending.push(first);
        while let Some(tok) = self.lexer().next_on_line()? {
            self.pending.push(tok);
        }
        Ok(())
    }

    /// Tokens of the rest of the current (directive) line.
    fn line_tokens(&mut self) -> Result<Vec<Token>> {
        let mut tokens = Vec::new();
        while let Some(tok) = self.lexer().next_on_line()? {
            tokens.push(tok);
        }
        Ok(tokens)
    }

    fn flush(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let input = std::mem::take(&mut self.pending)
            .into_iter()
            .map(PpToken::new)
            .collect();
        let expanded = Expander::new(&self.macros).expand(input)?;
        self.out.extend(expanded.into_iter().map(|t| t.tok));
        Ok(())
    }

    /// At a `#` that starts a line.
    fn directive(&mut self) -> Result<()> {
        let hash = self.lexer().next_token()?;
        let active = self.active();
        let name_tok = if active {
            self.lexer().next_on_line()?
        } else {
            // A skipped group only has to be lexable up to its conditionals.
            match self.lexer().next_on_line() {
                Ok(tok) => tok,
                Err(_) => {
                    self.lexer().rest_of_line()?;
                    return Ok(());
                }
            }
        };
        let Some(name_tok) = name_tok else {
            return Ok(()); // the null directive `#`
        };
        let span = hash.span.to(name_tok.span);
        let name = match &name_tok.kind {
            TokenKind::Ident(name) => name.clone(),
            _ if !active => String::new(),
            other => {
                return Err(Diagnostic::error(
                    name_tok.span,
                    format!(
                        "expected a directive name after `#`, found {}",
                        describe(other)
                    ),
                ))
            }
        };
        match name.as_str() {
            "if" | "ifdef" | "ifndef" => self.open_cond(&name, span),
            "elif" => self.elif(span),
            "else" => self.else_(span),
            "endif" => self.endif(span),
            _ if !active => {
                self.lexer().rest_of_line()?;
                Ok(())
            }
            "define" => self.define(span),
            "undef" => self.undef(span),
            "include" => self.include(span),
            "error" => {
                let text_span = self.lexer().rest_of_line()?;
                let message = self.lexer().text()[text_span.range()].to_string();
                Err(Diagnostic::error(
                    span.to(text_span),
                    format!("#error {message}"),
                ))
            }
            "pragma" => {
                // Pragmas carry the op spec, read by another tool from the source;
                // only `#pragma once` means something here.
                let text_span = self.lexer().rest_of_line()?;
                if self.lexer().text()[text_span.range()].trim() == "once" {
                    let file = self.lexer().file();
                    if let Ok(path) = std::fs::canonicalize(self.sources.name(file)) {
                        self.once.push(path);
                    }
                }
                Ok(())
            }
            other => Err(Diagnostic::error(
                name_tok.span,
                format!("unknown preprocessor directive `#{other}`"),
            )),
        }
    }

    fn define(&mut self, span: Span) -> Result<()> {
        let tokens = self.line_tokens()?;
        let Some((name_tok, rest)) = tokens.split_first() else {
            return Err(Diagnostic::error(
                span,
                "expected a macro name after `#define`",
            ));
        };
        let (name, mac) = macros::parse_definition(name_tok, rest)?;
        self.macros.insert(name, mac);
        Ok(())
    }

    fn undef(&mut self, span: Span) -> Result<()> {
        let tokens = self.line_tokens()?;
        match tokens.first().map(|t| &t.kind) {
            Some(TokenKind::Ident(name)) => {
                self.macros.remove(name);
                Ok(())
            }
            Some(other) => Err(Diagnostic::error(
                tokens[0].span,
                format!("expected a macro name, found {}", describe(other)),
            )),
            None => Err(Diagnostic::error(
                span,
                "expected a macro name after `#undef`",
            )),
        }
    }
}
