//! The C preprocessor subset Triton-C uses: `#define` (object- and function-like),
//! `#if/#ifdef/#ifndef/#elif/#else/#endif`, `#include`, `-D` values that are code.
//!
//! Files are read line by line through a [`Lexer`] cursor, so skipped groups and
//! `#pragma` lines are never tokenized (they may hold anything). Consecutive text
//! lines are gathered and macro-expanded together before the next directive.
mod cond_expr;
mod macros;

use super::lexer::{describe, Lexer};
use super::token::{Punct, Token, TokenKind};
use super::FrontOptions;
use crate::diagnostics::{Diagnostic, Result};
use crate::span::{FileId, SourceMap, Span};
use macros::{Expander, MacroTable, PpToken};
use std::path::{Path, PathBuf};
use std::rc::Rc;

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
    let mut pp = Preprocessor {
        sources,
        options,
        macros: MacroTable::new(),
        conds: Vec::new(),
        files: Vec::new(),
        pending: Vec::new(),
        out: Vec::new(),
    };
    pp.define_command_line()?;
    pp.run(file)
}

/// One open `#if` group.
struct Cond {
    /// The directive that opened it, for "unterminated" errors.
    span: Span,
    /// Lines are kept right now.
    active: bool,
    /// A branch was already taken (or the enclosing group is skipped), so later
    /// `#elif`/`#else` branches are skipped.
    done: bool,
    else_span: Option<Span>,
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
}

impl Preprocessor<'_> {
    /// `-DNAME=VALUE` lines go to a pseudo-file, so errors can point into them.
    fn define_command_line(&mut self) -> Result<()> {
        if self.options.defines.is_empty() {
            return Ok(());
        }
        let mut text = String::new();
        let mut ranges = Vec::new();
        for (name, value) in &self.options.defines {
            let head = text.len() + 2;
            text.push_str(&format!("-D{name}={value}\n"));
            let eq = head + name.len();
            ranges.push((head, eq, eq + 1 + value.len()));
        }
        let file = self.sources.add(COMMAND_LINE_FILE, text.clone());
        let text: Rc<str> = Rc::from(text);
        for (head, eq, end) in ranges {
            let mut head_lexer = Lexer::with_range(file, text.clone(), head, eq);
            let head_tokens = lex_all(&mut head_lexer)?;
            let Some((name_tok, params)) = head_tokens.split_first() else {
                return Err(Diagnostic::error(
                    Span::new(file, head - 2, eq),
                    "`-D` needs a macro name",
                ));
            };
            let mut value_lexer = Lexer::with_range(file, text.clone(), eq + 1, end);
            let mut rest = params.to_vec();
            let mut value = lex_all(&mut value_lexer)?;
            if let Some(first) = value.first_mut() {
                first.space_before = true;
            }
            rest.extend(value);
            if let Some(extra) = params
                .first()
                .filter(|t| !t.is_punct(Punct::LParen) || t.space_before)
            {
                return Err(Diagnostic::error(
                    extra.span,
                    format!("unexpected {} in `-D` macro name", describe(&extra.kind)),
                ));
            }
            let (name, mac) = macros::parse_definition(name_tok, &rest)?;
            self.macros.insert(name, mac);
        }
        Ok(())
    }

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
                // Pragmas carry the op spec, read by another tool from the source.
                self.lexer().rest_of_line()?;
                Ok(())
            }
            other => Err(Diagnostic::error(
                name_tok.span,
                format!("unknown preprocessor directive `#{other}`"),
            )),
        }
    }

    fn open_cond(&mut self, kind: &str, span: Span) -> Result<()> {
        if !self.active() {
            self.lexer().rest_of_line()?;
            self.conds.push(Cond {
                span,
                active: false,
                done: true,
                else_span: None,
            });
            return Ok(());
        }
        let tokens = self.line_tokens()?;
        let value = match kind {
            "if" => cond_expr::evaluate(&tokens, &self.macros, span)?,
            _ => {
                let defined = self.macro_name_operand(&tokens, span)?;
                defined == (kind == "ifdef")
            }
        };
        self.conds.push(Cond {
            span,
            active: value,
            done: value,
            else_span: None,
        });
        Ok(())
    }

    /// Whether the single name after `#ifdef`/`#ifndef` is defined.
    fn macro_name_operand(&self, tokens: &[Token], span: Span) -> Result<bool> {
        match tokens.first().map(|t| &t.kind) {
            Some(TokenKind::Ident(name)) => Ok(self.macros.contains_key(name)),
            Some(other) => Err(Diagnostic::error(
                tokens[0].span,
                format!("expected a macro name, found {}", describe(other)),
            )),
            None => Err(Diagnostic::error(
                span,
                "expected a macro name after this directive",
            )),
        }
    }

    /// The innermost group, which must have been opened in the current file.
    fn current_cond(&mut self, span: Span, directive: &str) -> Result<&mut Cond> {
        let base = self.files.last().map_or(0, |f| f.cond_base);
        if self.conds.len() <= base {
            return Err(Diagnostic::error(
                span,
                format!("`#{directive}` without a matching `#if`"),
            ));
        }
        Ok(self.conds.last_mut().expect("checked above"))
    }

    fn elif(&mut self, span: Span) -> Result<()> {
        let cond = self.current_cond(span, "elif")?;
        if let Some(else_span) = cond.else_span {
            return Err(Diagnostic::error(span, "`#elif` after `#else`")
                .with_label(else_span, "`#else` is here"));
        }
        if cond.done {
            cond.active = false;
            self.lexer().rest_of_line()?;
            return Ok(());
        }
        let tokens = self.line_tokens()?;
        let value = cond_expr::evaluate(&tokens, &self.macros, span)?;
        let cond = self.conds.last_mut().expect("checked above");
        cond.active = value;
        cond.done = value;
        Ok(())
    }

    fn else_(&mut self, span: Span) -> Result<()> {
        let cond = self.current_cond(span, "else")?;
        if let Some(else_span) = cond.else_span {
            return Err(Diagnostic::error(span, "`#else` after `#else`")
                .with_label(else_span, "first `#else` is here"));
        }
        cond.else_span = Some(span);
        cond.active = !cond.done;
        cond.done = true;
        self.lexer().rest_of_line()?;
        Ok(())
    }

    fn endif(&mut self, span: Span) -> Result<()> {
        self.current_cond(span, "endif")?;
        self.conds.pop();
        self.lexer().rest_of_line()?;
        Ok(())
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

    fn include(&mut self, span: Span) -> Result<()> {
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

fn lex_all(lexer: &mut Lexer) -> Result<Vec<Token>> {
    let mut tokens = Vec::new();
    loop {
        let tok = lexer.next_token()?;
        if tok.kind == TokenKind::Eof {
            return Ok(tokens);
        }
        tokens.push(tok);
    }
}
