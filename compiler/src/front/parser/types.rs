//! Types as written (`const float`, `long long`, `TYPE *`), parameter lists and
//! parameter attributes (`__multipleof(8)`, `__aligned(16)`, `__noalias`, ...).
use super::Parser;
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{BaseType, ParamAttr, ParamDecl, TypeSpec};
use crate::front::lexer::describe;
use crate::front::token::{Punct, Token, TokenKind};
use crate::span::Span;

/// Words that begin or continue a type.
pub(super) fn is_type_word(name: &str) -> bool {
    is_qualifier(name) || base_word(name).is_some() || is_modifier(name)
}

/// Qualifiers accepted and ignored (`const` is recorded).
fn is_qualifier(name: &str) -> bool {
    matches!(
        name,
        "const" | "restrict" | "__restrict__" | "__restrict" | "volatile"
    )
}

/// Words that combine with `int` (`long long int`, `signed char`, ...).
fn is_modifier(name: &str) -> bool {
    matches!(
        name,
        "short" | "long" | "signed" | "unsigned" | "int" | "char"
    )
}

/// Words that are a whole base type on their own.
fn base_word(name: &str) -> Option<BaseType> {
    Some(match name {
        "void" => BaseType::Void,
        "bool" => BaseType::Bool,
        "int8_t" => BaseType::Int8,
        "int16_t" => BaseType::Int16,
        "int32_t" => BaseType::Int32,
        "int64_t" => BaseType::Int64,
        "half" | "fp16" => BaseType::Half,
        "bf16" | "bfloat16" => BaseType::BFloat16,
        "float" => BaseType::Float,
        "double" => BaseType::Double,
        _ => return None,
    })
}

fn attr_word(name: &str) -> bool {
    matches!(
        name,
        "__multipleof" | "__aligned" | "__readonly" | "__writeonly" | "__noalias"
    )
}

/// The words of one type, gathered before they are resolved to a base type.
#[derive(Default)]
struct TypeWords {
    base: Option<(BaseType, Token)>,
    longs: Vec<Token>,
    short: Option<Token>,
    int: Option<Token>,
    char_: Option<Token>,
    signed: Option<Token>,
}

impl TypeWords {
    fn resolve(self, span: Span) -> Result<BaseType> {
        let integer_words: Vec<&Token> = self
            .longs
            .iter()
            .chain(&self.short)
            .chain(&self.int)
            .chain(&self.char_)
            .chain(&self.signed)
            .collect();
        if let Some((base, tok)) = &self.base {
            if let Some(other) = integer_words.first() {
                if *base == BaseType::Double && !self.longs.is_empty() {
                    return Err(Diagnostic::error(span, "`long double` is not supported"));
                }
                // Point at whichever specifier came second.
                return Err(if other.span.start > tok.span.start {
                    conflict(other, tok)
                } else {
                    conflict(tok, other)
                });
            }
            return Ok(*base);
        }
        if self.longs.len() > 2 {
            return Err(Diagnostic::error(
                self.longs[2].span,
                "`long long long` is too long",
            ));
        }
        if let Some(ch) = &self.char_ {
            if let Some(other) = self
                .longs
                .first()
                .or(self.short.as_ref())
                .or(self.int.as_ref())
            {
                return Err(conflict(other, ch));
            }
            return Ok(BaseType::Int8);
        }
        if let Some(short) = &self.short {
            if let Some(long) = self.longs.first() {
                return Err(conflict(long, short));
            }
            return Ok(BaseType::Int16);
        }
        if !self.longs.is_empty() {
            return Ok(BaseType::Int64);
        }
        if self.int.is_some() || self.signed.is_some() {
            return Ok(BaseType::Int32);
        }
        Err(Diagnostic::error(
            span,
            "expected a type after the qualifiers",
        ))
    }
}

fn conflict(a: &Token, b: &Token) -> Diagnostic {
    Diagnostic::error(
        a.span,
        format!(
            "conflicting type specifiers {} and {}",
            describe(&a.kind),
            describe(&b.kind)
        ),
    )
    .with_label(b.span, "first type specifier")
}

fn duplicate(tok: &Token) -> Diagnostic {
    Diagnostic::error(
        tok.span,
        format!("duplicate type specifier {}", describe(&tok.kind)),
    )
}

impl Parser<'_> {
    pub(super) fn at_type_start(&self) -> bool {
        matches!(&self.peek().kind, TokenKind::Ident(name) if is_type_word(name))
    }

    /// A base type with its qualifiers: `const float`, `long long int`, `TYPE`.
    pub(super) fn type_spec(&mut self) -> Result<TypeSpec> {
        let start = self.peek().span;
        let mut words = TypeWords::default();
        let mut is_const = false;
        while let TokenKind::Ident(name) = &self.peek().kind {
            let name = name.clone();
            if !is_type_word(&name) {
                break;
            }
            let tok = self.bump();
            if is_qualifier(&name) {
                is_const |= name == "const";
                continue;
            }
            let slot = match name.as_str() {
                "unsigned" => {
                    return Err(
                        Diagnostic::error(tok.span, "unsigned types are not supported")
                            .with_note("use a signed type (`int`, `long`, ...) instead"),
                    )
                }
                "long" => {
                    words.longs.push(tok);
                    continue;
                }
                "short" => &mut words.short,
                "int" => &mut words.int,
                "char" => &mut words.char_,
                "signed" => &mut words.signed,
                _ => {
                    let base = base_word(&name).unwrap_or(BaseType::Int32);
                    if let Some((_, first)) = &words.base {
                        return Err(if first.kind == tok.kind {
                            duplicate(&tok)
                        } else {
                            conflict(&tok, first)
                        });
                    }
                    words.base = Some((base, tok));
                    continue;
                }
            };
            if slot.is_some() {
                return Err(duplicate(&tok));
            }
            *slot = Some(tok);
        }
        let span = start.to(self.prev_span());
        let base = words.resolve(span)?;
        Ok(TypeSpec {
            base,
            pointer_depth: 0,
            is_const,
            span,
        })
    }

    /// `*`s (each optionally qualified: `* const`, `* restrict`) added to `ty`.
    pub(super) fn pointer_stars(&mut self, ty: &mut TypeSpec) -> Result<()> {
        while self.at_punct(Punct::Star) {
            let star = self.bump();
            ty.pointer_depth = ty
                .pointer_depth
                .checked_add(1)
                .ok_or_else(|| Diagnostic::error(star.span, "too many `*` in one type"))?;
            ty.span = ty.span.to(star.span);
            while matches!(&self.peek().kind, TokenKind::Ident(n) if is_qualifier(n)) {
                self.bump();
            }
        }
        Ok(())
    }

    /// A type in a cast: `float`, `TYPE*`, `const half **`.
    pub(super) fn type_name(&mut self) -> Result<TypeSpec> {
        let mut ty = self.type_spec()?;
        self.pointer_stars(&mut ty)?;
        Ok(ty)
    }

    /// The parameters after `(`, through the closing `)`.
    pub(super) fn params(&mut self, open: &Token) -> Result<Vec<ParamDecl>> {
        let mut params = Vec::new();
        if self.eat_punct(Punct::RParen) {
            return Ok(params);
        }
        if self.at_ident("void") && self.peek_at(1).is_punct(Punct::RParen) {
            self.bump();
            self.bump();
            return Ok(params);
        }
        loop {
            params.push(self.param()?);
            if self.eat_punct(Punct::Comma) {
                continue;
            }
            if self.at_punct(Punct::RParen) {
                self.bump();
                return Ok(params);
            }
            return Err(self
                .error_expected("`,` or `)` after a parameter")
                .with_label(open.span, "parameter list starts here"));
        }
    }

    /// `TYPE * A __noalias __readonly __aligned(16)`, `int lda __multipleof(8)`.
    fn param(&mut self) -> Result<ParamDecl> {
        let start = self.peek().span;
        let mut attrs = Vec::new();
        self.param_attrs(&mut attrs)?;
        if !self.at_type_start() {
            return Err(self.error_expected("a parameter type"));
        }
        let mut ty = self.type_spec()?;
        self.param_attrs(&mut attrs)?;
        self.pointer_stars(&mut ty)?;
        self.param_attrs(&mut attrs)?;
        let name = self.expect_ident("a parameter name")?;
        self.param_attrs(&mut attrs)?;
        if self.at_punct(Punct::LBracket) {
            return Err(Diagnostic::error(
                self.peek().span,
                "parameters cannot be tiles; pass a pointer instead",
            ));
        }
        Ok(ParamDecl {
            ty,
            name,
            attrs,
            span: start.to(self.prev_span()),
        })
    }

    /// Any run of attributes (and stray qualifiers like `restrict`).
    fn param_attrs(&mut self, attrs: &mut Vec<(ParamAttr, Span)>) -> Result<()> {
        loop {
            let TokenKind::Ident(name) = &self.peek().kind else {
                return Ok(());
            };
            let name = name.clone();
            if is_qualifier(&name) && name != "const" {
                self.bump();
                continue;
            }
            if !attr_word(&name) {
                return Ok(());
            }
            let tok = self.bump();
            let attr = match name.as_str() {
                "__readonly" => ParamAttr::ReadOnly,
                "__writeonly" => ParamAttr::WriteOnly,
                "__noalias" => ParamAttr::NoAlias,
                "__multipleof" => ParamAttr::MultipleOf(self.attr_argument(&tok)?),
                _ => ParamAttr::Aligned(self.attr_argument(&tok)?),
            };
            attrs.push((attr, tok.span.to(self.prev_span())));
        }
    }

    /// `(N)` after `__multipleof` / `__aligned`: a positive integer.
    fn attr_argument(&mut self, attr: &Token) -> Result<u64> {
        let name = describe(&attr.kind);
        let open = self.expect_punct(Punct::LParen, &format!("`(` after {name}"))?;
        let value = match self.peek().kind {
            TokenKind::Int(v) if v > 0 => v as u64,
            _ => return Err(self.error_expected(&format!("a positive integer in {name}"))),
        };
        self.bump();
        self.expect_closing(Punct::RParen, &open)?;
        Ok(value)
    }
}
