//! Statements and declarations (`int rm[TM] = pm * TM + 0 ... TM;`).
use super::{Parser, MAX_ELSE_IF_LINKS};
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{Block, Declarator, Stmt, StmtKind, TypeSpec};
use crate::front::token::{Punct, TokenKind};

impl Parser<'_> {
    /// `{ stmt* }`, at the `{`.
    pub(super) fn block(&mut self) -> Result<Block> {
        let open = self.expect_punct(Punct::LBrace, "`{`")?;
        let mut stmts = Vec::new();
        while !self.at_punct(Punct::RBrace) {
            if self.peek().kind == TokenKind::Eof {
                return Err(self
                    .error_expected("`}` to close `{`")
                    .with_label(open.span, "to match this `{`"));
            }
            stmts.push(self.statement()?);
        }
        let close = self.bump();
        Ok(Block {
            stmts,
            span: open.span.to(close.span),
        })
    }

    fn statement(&mut self) -> Result<Stmt> {
        self.nested(Self::statement_inner)
    }

    fn statement_inner(&mut self) -> Result<Stmt> {
        let start = self.peek().span;
        let word = match &self.peek().kind {
            TokenKind::Ident(w) => w.clone(),
            _ => String::new(),
        };
        let kind = match word.as_str() {
            "if" => self.if_stmt()?,
            "for" => self.for_stmt()?,
            "while" => {
                self.bump();
                let cond = self.paren_condition("`while`")?;
                let body = Box::new(self.statement()?);
                StmtKind::While { cond, body }
            }
            "do" => {
                self.bump();
                let body = Box::new(self.statement()?);
                if !self.at_ident("while") {
                    return Err(self.error_expected("`while` after the body of `do`"));
                }
                self.bump();
                let cond = self.paren_condition("`while`")?;
                self.expect_punct(Punct::Semi, "`;` after `do ... while (...)`")?;
                StmtKind::DoWhile { body, cond }
            }
            "return" => {
                self.bump();
                let value = if self.at_punct(Punct::Semi) {
                    None
                } else {
                    Some(self.expression()?)
                };
                self.expect_punct(Punct::Semi, "`;` after `return`")?;
                StmtKind::Return(value)
            }
            "break" | "continue" => {
                self.bump();
                self.expect_punct(Punct::Semi, &format!("`;` after `{word}`"))?;
                if word == "break" {
                    StmtKind::Break
                } else {
                    StmtKind::Continue
                }
            }
            "else" => {
                return Err(Diagnostic::error(start, "`else` without a matching `if`"));
            }
            _ if self.at_type_start() => self.declaration()?,
            _ if self.at_punct(Punct::LBrace) => StmtKind::Block(self.block()?),
            _ if self.eat_punct(Punct::Semi) => StmtKind::Empty,
            _ if self.at_unknown_type() => {
                return Err(
                    Diagnostic::error(start, format!("unknown type name `{word}`")).with_note(
                        format!("if `{word}` is a macro, define it (for example `-D{word}=float`)"),
                    ),
                );
            }
            _ => {
                let expr = self.expression()?;
                self.expect_punct(Punct::Semi, "`;` after expression")?;
                StmtKind::Expr(expr)
            }
        };
        Ok(Stmt {
            kind,
            span: start.to(self.prev_span()),
        })
    }

    /// `NAME x ...`, `NAME * x[...]`, `NAME * x = ...`: a declaration whose type
    /// is not a type (typically an undefined `TYPE` macro); as an expression it
    /// could not be valid anyway.
    fn at_unknown_type(&self) -> bool {
        let is_name = |t: &crate::front::token::Token| matches!(&t.kind, TokenKind::Ident(n) if !super::is_reserved(n));
        if !is_name(self.peek()) {
            return false;
        }
        if is_name(self.peek_at(1)) {
            return true;
        }
        self.peek_at(1).is_punct(Punct::Star)
            && is_name(self.peek_at(2))
            && (self.peek_at(3).is_punct(Punct::LBracket)
                || self.peek_at(3).is_punct(Punct::Assign))
    }

    /// `( expr )` after `if` / `while`.
    fn paren_condition(&mut self, after: &str) -> Result<crate::front::ast::Expr> {
        let open = self.expect_punct(Punct::LParen, &format!("`(` after {after}"))?;
        let cond = self.expression()?;
        self.expect_closing(Punct::RParen, &open)?;
        Ok(cond)
    }

    /// `if (c) s [else if (c) s]... [else s]`: the `else if` links are read
    /// in a loop, not one nesting level each, so a chain of any length is
    /// accepted; the tree is the nested `If`s it stands for.
    fn if_stmt(&mut self) -> Result<StmtKind> {
        // (start of the `if`, condition, then-branch) of each link.
        let mut links = Vec::new();
        let mut final_else = None;
        loop {
            let start = self.peek().span;
            self.bump();
            let cond = self.paren_condition("`if`")?;
            let then_branch = Box::new(self.statement()?);
            links.push((start, cond, then_branch));
            if !self.at_ident("else") {
                break;
            }
            self.bump();
            if !self.at_ident("if") {
                final_else = Some(Box::new(self.statement()?));
                break;
            }
            if links.len() >= MAX_ELSE_IF_LINKS {
                return Err(Diagnostic::error(
                    self.peek().span,
                    format!("an `else if` chain of more than {MAX_ELSE_IF_LINKS} links"),
                )
                .with_note("later stages still nest one level a link; split the chain"));
            }
        }
        let end = self.prev_span();
        let (_, cond, then_branch) = links.remove(0);
        // Innermost first: each later link is the else-branch of the one before.
        let else_branch =
            links
                .into_iter()
                .rev()
                .fold(final_else, |else_branch, (start, cond, then_branch)| {
                    Some(Box::new(Stmt {
                        kind: StmtKind::If {
                            cond,
                            then_branch,
                            else_branch,
                        },
                        span: start.to(end),
                    }))
                });
        Ok(StmtKind::If {
            cond,
            then_branch,
            else_branch,
        })
    }

    fn for_stmt(&mut self) -> Result<StmtKind> {
        self.bump();
        let open = self.expect_punct(Punct::LParen, "`(` after `for`")?;
        let init_start = self.peek().span;
        let init = if self.eat_punct(Punct::Semi) {
            None
        } else if self.at_type_start() {
            let kind = self.declaration()?;
            Some(Box::new(Stmt {
                kind,
                span: init_start.to(self.prev_span()),
            }))
        } else {
            let expr = self.expression()?;
            self.expect_punct(Punct::Semi, "`;` after the `for` initializer")?;
            Some(Box::new(Stmt {
                kind: StmtKind::Expr(expr),
                span: init_start.to(self.prev_span()),
            }))
        };
        let cond = if self.at_punct(Punct::Semi) {
            None
        } else {
            Some(self.expression()?)
        };
        self.expect_punct(Punct::Semi, "`;` after the `for` condition")?;
        let step = if self.at_punct(Punct::RParen) {
            None
        } else {
            Some(self.expression()?)
        };
        self.expect_closing(Punct::RParen, &open)?;
        let body = Box::new(self.statement()?);
        Ok(StmtKind::For {
            init,
            cond,
            step,
            body,
        })
    }

    /// `TYPE d1, d2, ...;` through the `;`.
    fn declaration(&mut self) -> Result<StmtKind> {
        let base = self.type_spec()?;
        let mut declarators = vec![self.declarator(&base)?];
        while self.eat_punct(Punct::Comma) {
            declarators.push(self.declarator(&base)?);
        }
        self.expect_punct(Punct::Semi, "`;` after declaration")?;
        Ok(StmtKind::Decl(declarators))
    }

    /// `*name[dims] = init`
    fn declarator(&mut self, base: &TypeSpec) -> Result<Declarator> {
        let start = self.peek().span;
        let mut ty: TypeSpec = base.clone();
        self.pointer_stars(&mut ty)?;
        let name = self.expect_ident("a name in the declaration")?;
        let shape = if self.at_punct(Punct::LBracket) {
            let open = self.bump();
            let mut dims = Vec::new();
            loop {
                if self.at_punct(Punct::RBracket) {
                    return Err(self.error_expected("a tile dimension"));
                }
                dims.push(self.conditional()?);
                if self.eat_punct(Punct::Comma) {
                    continue;
                }
                self.expect_closing(Punct::RBracket, &open)?;
                break;
            }
            Some(dims)
        } else {
            None
        };
        let init = if self.eat_punct(Punct::Assign) {
            Some(self.assignment()?)
        } else {
            None
        };
        Ok(Declarator {
            name,
            ty,
            shape,
            init,
            span: start.to(self.prev_span()),
        })
    }
}
