//! Macro definitions and their expansion, with hide sets (Prosser's algorithm):
//! each token remembers which macros produced it, and a macro is never expanded
//! inside its own expansion, so `#define A A` or mutual recursion terminate.
use crate::diagnostics::{Diagnostic, Result};
use crate::front::lexer::{describe, spell, Lexer};
use crate::front::token::{Punct, Token, TokenKind};
use crate::span::Span;
use std::collections::HashMap;
use std::rc::Rc;

/// One `#define` (or `-D`).
#[derive(Clone, Debug)]
pub struct Macro {
    /// `None` for object-like macros; the parameter names otherwise
    /// (a variadic macro's last one is `__VA_ARGS__`).
    pub params: Option<Vec<String>>,
    pub variadic: bool,
    pub body: Vec<Token>,
    /// Where the macro name was written in its definition.
    pub def_span: Span,
}

pub type MacroTable = HashMap<String, Macro>;

const VA_ARGS: &str = "__VA_ARGS__";
/// Bounds the work one expansion may do: `#define B A A`, `#define C B B`, ...
/// grows exponentially, and must end in a diagnostic, not in exhausted memory.
const TOKEN_BUDGET: usize = 500_000;
/// Bounds recursion through nested macro arguments (`F(F(F(...)))`).
const MAX_ARG_DEPTH: usize = 200;

/// Parses a definition: `name_tok` then what follows it on the line
/// (`(params) body` for a function-like macro when `(` touches the name).
pub fn parse_definition(name_tok: &Token, rest: &[Token]) -> Result<(String, Macro)> {
    let name = match &name_tok.kind {
        TokenKind::Ident(name) if name == "defined" => {
            return Err(Diagnostic::error(
                name_tok.span,
                "`defined` cannot be used as a macro name",
            ))
        }
        TokenKind::Ident(name) => name.clone(),
        other => {
            return Err(Diagnostic::error(
                name_tok.span,
                format!(
                    "macro name must be an identifier, found {}",
                    describe(other)
                ),
            ))
        }
    };
    let mut params = None;
    let mut variadic = false;
    let mut body_start = 0;
    if let Some(open) = rest.first() {
        if open.is_punct(Punct::LParen) && !open.space_before {
            let (names, is_variadic, used) = parse_params(open, &rest[1..])?;
            params = Some(names);
            variadic = is_variadic;
            body_start = 1 + used;
        }
    }
    let body = rest[body_start..].to_vec();
    check_body(&body, params.as_deref())?;
    Ok((
        name,
        Macro {
            params,
            variadic,
            body,
            def_span: name_tok.span,
        },
    ))
}

/// Reads `a, b, ...)`; returns the names, whether variadic, and tokens used.
fn parse_params(open: &Token, tokens: &[Token]) -> Result<(Vec<String>, bool, usize)> {
    let mut names: Vec<String> = Vec::new();
    let mut i = 0;
    let unclosed =
        || Diagnostic::error(open.span, "expected `)` to close the macro parameter list");
    if tokens.first().is_some_and(|t| t.is_punct(Punct::RParen)) {
        return Ok((names, false, 1));
    }
    loop {
        let tok = tokens.get(i).ok_or_else(unclosed)?;
        match &tok.kind {
            TokenKind::Punct(Punct::Ellipsis) => {
                names.push(VA_ARGS.to_string());
                let close = tokens.get(i + 1).ok_or_else(unclosed)?;
                if !close.is_punct(Punct::RParen) {
                    return Err(Diagnostic::error(
                        close.span,
                        "expected `)` after `...` in macro parameters",
                    ));
                }
                return Ok((names, true, i + 2));
            }
            TokenKind::Ident(name) => {
                if names.contains(name) {
                    return Err(Diagnostic::error(
                        tok.span,
                        format!("duplicate macro parameter `{name}`"),
                    ));
                }
                names.push(name.clone());
            }
            other => {
                return Err(Diagnostic::error(
                    tok.span,
                    format!("expected a macro parameter name, found {}", describe(other)),
                ))
            }
        }
        let sep = tokens.get(i + 1).ok_or_else(unclosed)?;
        if sep.is_punct(Punct::RParen) {
            return Ok((names, false, i + 2));
        }
        if !sep.is_punct(Punct::Comma) {
            return Err(Diagnostic::error(
                sep.span,
                format!(
                    "expected `,` or `)` in macro parameters, found {}",
                    describe(&sep.kind)
                ),
            ));
        }
        i += 2;
    }
}

fn param_index(params: Option<&[String]>, tok: &Token) -> Option<usize> {
    match &tok.kind {
        TokenKind::Ident(name) => params?.iter().position(|p| p == name),
        _ => None,
    }
}

/// `##` may not begin or end a body; `#` must precede a parameter.
fn check_body(body: &[Token], params: Option<&[String]>) -> Result<()> {
    for edge in [body.first(), body.last()].into_iter().flatten() {
        if edge.is_punct(Punct::HashHash) {
            return Err(Diagnostic::error(
                edge.span,
                "`##` cannot appear at either end of a macro body",
            ));
        }
    }
    if params.is_some() {
        for (i, tok) in body.iter().enumerate() {
            if tok.is_punct(Punct::Hash)
                && body
                    .get(i + 1)
                    .and_then(|t| param_index(params, t))
                    .is_none()
            {
                return Err(Diagnostic::error(
                    tok.span,
                    "`#` in a function-like macro must be followed by a parameter name",
                ));
            }
        }
    }
    Ok(())
}

/// The macros a token came from, as sorted ids (see [`Expander::id`]).
type HideSet = Rc<Vec<u32>>;

/// A token on its way through expansion, with the macros it came from.
#[derive(Clone, Debug)]
pub struct PpToken {
    pub tok: Token,
    hide: HideSet,
}

impl PpToken {
    pub fn new(tok: Token) -> Self {
        PpToken {
            tok,
            hide: Rc::default(),
        }
    }

    /// Internal marker for an empty argument next to `##` (C's placemarker).
    fn placemarker(span: Span) -> Self {
        PpToken::new(Token {
            kind: TokenKind::Eof,
            span,
            at_line_start: false,
            space_before: false,
        })
    }

    fn is_placemarker(&self) -> bool {
        self.tok.kind == TokenKind::Eof
    }
}

pub struct Expander<'m> {
    macros: &'m MacroTable,
    budget: usize,
    depth: usize,
    /// Macro names interned for cheap hide sets.
    ids: HashMap<String, u32>,
}

impl<'m> Expander<'m> {
    pub fn new(macros: &'m MacroTable) -> Self {
        Expander {
            macros,
            budget: TOKEN_BUDGET,
            depth: 0,
            ids: HashMap::new(),
        }
    }

    fn id(&mut self, name: &str) -> u32 {
        let next = self.ids.len() as u32;
        *self.ids.entry(name.to_string()).or_insert(next)
    }

    /// Expands every macro in `input` (which must hold whole invocations).
    pub fn expand(&mut self, input: Vec<PpToken>) -> Result<Vec<PpToken>> {
        let mut stack: Vec<PpToken> = input.into_iter().rev().collect();
        let mut out = Vec::new();
        while let Some(t) = stack.pop() {
            let TokenKind::Ident(name) = &t.tok.kind else {
                out.push(t);
                continue;
            };
            let macros = self.macros;
            let Some(mac) = macros.get(name) else {
                out.push(t);
                continue;
            };
            let name = name.clone();
            let id = self.id(&name);
            if t.hide.binary_search(&id).is_ok() {
                out.push(t);
                continue;
            }
            let expansion = match &mac.params {
                None => {
                    let hide = with(&t.hide, id);
                    self.substitute(mac, &[], &hide, &t)?
                }
                Some(params) => {
                    // A function-like macro name without `(` is an ordinary name.
                    if !stack.last().is_some_and(|n| n.tok.is_punct(Punct::LParen)) {
                        out.push(t);
                        continue;
                    }
                    stack.pop();
                    let (args, close) = collect_args(&mut stack, &t, &name)?;
                    let args = check_arg_count(args, params, mac, &name, &t, &close)?;
                    let common: Vec<u32> = t
                        .hide
                        .iter()
                        .filter(|id| close.hide.binary_search(id).is_ok())
                        .copied()
                        .collect();
                    let hide = with(&Rc::new(common), id);
                    let mut use_tok = t.clone();
                    use_tok.tok.span = t.tok.span.to(close.tok.span);
                    self.substitute(mac, &args, &hide, &use_tok)?
                }
            };
            self.spend(expansion.len(), t.tok.span)?;
            stack.extend(expansion.into_iter().rev());
        }
        Ok(out)
    }

    fn spend(&mut self, tokens: usize, span: Span) -> Result<()> {
        self.budget = self.budget.checked_sub(tokens).ok_or_else(|| {
            Diagnostic::error(span, "macro expansion is too large (runaway macro?)")
        })?;
        Ok(())
    }

    /// The body of `mac` with arguments substituted, `#` and `##` applied, and
    /// every token marked with `hide` and placed at the macro use.
    fn substitute(
        &mut self,
        mac: &Macro,
        args: &[Vec<PpToken>],
        hide: &HideSet,
        use_tok: &PpToken,
    ) -> Result<Vec<PpToken>> {
        let params = mac.params.as_deref();
        let use_span = use_tok.tok.span;
        let at_use = |tok: &Token| {
            let mut tok = tok.clone();
            tok.span = use_span;
            PpToken::new(tok)
        };
        let mut out: Vec<PpToken> = Vec::new();
        let body = &mac.body;
        let mut i = 0;
        while i < body.len() {
            let tok = &body[i];
            if tok.is_punct(Punct::Hash) && params.is_some() {
                if let Some(p) = body.get(i + 1).and_then(|t| param_index(params, t)) {
                    out.push(at_use(&Token {
                        kind: TokenKind::Str(stringize(&args[p])),
                        ..tok.clone()
                    }));
                    i += 2;
                    continue;
                }
            }
            if tok.is_punct(Punct::HashHash) {
                let Some(next) = body.get(i + 1) else {
                    break; // rejected at definition time
                };
                let rhs: Vec<PpToken> = match param_index(params, next) {
                    Some(p) => args[p].clone(),
                    None => vec![at_use(next)],
                };
                let lhs = out.pop().unwrap_or_else(|| PpToken::placemarker(use_span));
                let mut rhs = rhs.into_iter();
                match rhs.next() {
                    None => out.push(lhs),
                    Some(first) => {
                        out.push(paste(&lhs, &first, use_span)?);
                        out.extend(rhs);
                    }
                }
                i += 2;
                continue;
            }
            if let Some(p) = param_index(params, tok) {
                let pasted_next = body.get(i + 1).is_some_and(|t| t.is_punct(Punct::HashHash));
                if pasted_next {
                    if args[p].is_empty() {
                        out.push(PpToken::placemarker(use_span));
                    } else {
                        out.extend(args[p].iter().cloned());
                    }
                } else {
                    out.extend(self.expand_argument(&args[p], use_span)?);
                }
                i += 1;
                continue;
            }
            out.push(at_use(tok));
            i += 1;
        }
        out.retain(|t| !t.is_placemarker());
        for t in &mut out {
            t.hide = union(&t.hide, hide);
            t.tok.at_line_start = false;
        }
        if let Some(first) = out.first_mut() {
            first.tok.at_line_start = use_tok.tok.at_line_start;
            first.tok.space_before = use_tok.tok.space_before;
        }
        Ok(out)
    }

    /// Arguments are fully expanded before substitution (C 6.10.3.1).
    fn expand_argument(&mut self, arg: &[PpToken], span: Span) -> Result<Vec<PpToken>> {
        if self.depth >= MAX_ARG_DEPTH {
            return Err(Diagnostic::error(
                span,
                "macro arguments are nested too deeply",
            ));
        }
        // Each level copies its argument: `F(F(F(...)))` 100,000 deep would
        // copy the whole nest at every level, so the copies count too.
        self.spend(arg.len(), span)?;
        self.depth += 1;
        let result = self.expand(arg.to_vec());
        self.depth -= 1;
        result
    }
}

fn with(set: &HideSet, id: u32) -> HideSet {
    let mut set = (**set).clone();
    if let Err(at) = set.binary_search(&id) {
        set.insert(at, id);
    }
    Rc::new(set)
}

fn union(a: &HideSet, b: &HideSet) -> HideSet {
    if a.is_empty() {
        return b.clone();
    }
    if b.iter().all(|id| a.binary_search(id).is_ok()) {
        return a.clone();
    }
    let mut merged: Vec<u32> = a.iter().chain(b.iter()).copied().collect();
    merged.sort_unstable();
    merged.dedup();
    Rc::new(merged)
}

/// Reads the arguments of an invocation after its `(`; returns them and the `)`.
fn collect_args(
    stack: &mut Vec<PpToken>,
    name_tok: &PpToken,
    name: &str,
) -> Result<(Vec<Vec<PpToken>>, PpToken)> {
    let mut args = vec![Vec::new()];
    let mut depth = 0usize;
    while let Some(t) = stack.pop() {
        match &t.tok.kind {
            TokenKind::Punct(Punct::RParen) if depth == 0 => return Ok((args, t)),
            TokenKind::Punct(Punct::Comma) if depth == 0 => {
                args.push(Vec::new());
                continue;
            }
            TokenKind::Punct(Punct::LParen) => depth += 1,
            TokenKind::Punct(Punct::RParen) => depth -= 1,
            _ => {}
        }
        if let Some(arg) = args.last_mut() {
            arg.push(t);
        }
    }
    Err(Diagnostic::error(
        name_tok.tok.span,
        format!("unterminated invocation of macro `{name}`: missing `)`"),
    ))
}

/// Checks the count, and regroups the extra arguments of a variadic macro.
fn check_arg_count(
    mut args: Vec<Vec<PpToken>>,
    params: &[String],
    mac: &Macro,
    name: &str,
    name_tok: &PpToken,
    close: &PpToken,
) -> Result<Vec<Vec<PpToken>>> {
    // `F()` passes no argument to a macro without parameters.
    if params.is_empty() && args.len() == 1 && args[0].is_empty() {
        return Ok(Vec::new());
    }
    let named = params.len() - usize::from(mac.variadic);
    if mac.variadic && args.len() >= named {
        if args.len() == named {
            args.push(Vec::new());
        }
        let rest = args.split_off(named);
        let mut va = Vec::new();
        for (i, arg) in rest.into_iter().enumerate() {
            if i > 0 {
                va.push(PpToken::new(Token {
                    kind: TokenKind::Punct(Punct::Comma),
                    span: close.tok.span,
                    at_line_start: false,
                    space_before: false,
                }));
            }
            va.extend(arg);
        }
        args.push(va);
        return Ok(args);
    }
    if args.len() != params.len() {
        let expected = if mac.variadic {
            format!("at least {named}")
        } else {
            params.len().to_string()
        };
        return Err(Diagnostic::error(
            name_tok.tok.span.to(close.tok.span),
            format!(
                "macro `{name}` takes {expected} argument(s), but {} were given",
                args.len()
            ),
        )
        .with_label(mac.def_span, "macro defined here"));
    }
    Ok(args)
}

/// `#x`: the spelling of the argument as a string.
fn stringize(arg: &[PpToken]) -> String {
    let mut s = String::new();
    for (i, t) in arg.iter().enumerate() {
        if i > 0 && t.tok.space_before {
            s.push(' ');
        }
        match &t.tok.kind {
            TokenKind::Str(inner) => s.push_str(&format!("{inner:?}")),
            other => s.push_str(&spell(other)),
        }
    }
    s
}

/// `a ## b`: the one token spelled by both spellings together.
fn paste(lhs: &PpToken, rhs: &PpToken, span: Span) -> Result<PpToken> {
    if lhs.is_placemarker() {
        return Ok(rhs.clone());
    }
    if rhs.is_placemarker() {
        return Ok(lhs.clone());
    }
    let text = format!("{}{}", spell(&lhs.tok.kind), spell(&rhs.tok.kind));
    let invalid = || {
        Diagnostic::error(
            span,
            format!(
                "pasting {} and {} does not give a valid token",
                describe(&lhs.tok.kind),
                describe(&rhs.tok.kind)
            ),
        )
    };
    let mut lexer = Lexer::new(span.file, &text);
    let tok = lexer.next_token().map_err(|_| invalid())?;
    let end = lexer.next_token().map_err(|_| invalid())?;
    if tok.kind == TokenKind::Eof || end.kind != TokenKind::Eof {
        return Err(invalid());
    }
    let mut pasted = lhs.clone();
    pasted.tok.kind = tok.kind;
    pasted.tok.span = span;
    Ok(pasted)
}
