//! Reads the `#pragma opgen <directive> ...` lines of a `.tc` file into an
//! [`OpSpec`]. Each directive is one line:
//!
//! ```text
//! #pragma opgen op triton::add
//! #pragma opgen kernel add
//! #pragma opgen dtype T in {float32: TYPE=float, float16: TYPE=half}
//! #pragma opgen input x: T[N] contiguous
//! #pragma opgen output z: T[N]
//! #pragma opgen attr alpha: float = 1.0   (float, int or bool; the default is optional)
//! #pragma opgen args N, x, y, z
//! #pragma opgen grid cdiv(N, SIZE)
//! #pragma opgen tune SIZE = [128, 256, 1024]
//! #pragma opgen define NEG_INF = -1e30f
//! #pragma opgen num_warps 4          (or [4, 8])
//! #pragma opgen num_stages 3         (or [3, 8]: pipeline buffers, 2 to 8)
//! #pragma opgen split_k [1, 4]       (programs sharing a dot loop, 1 to 8; sm_90+;
//!                                     also the tuning macro SPLIT_K, for `require`)
//! #pragma opgen backward dx = dz, dy = dz
//! ```

use super::active_lines;
use super::expr::parse_expr;
use super::lex::{lex, Cursor, Tok, Token};
use super::validate::validate;
use super::*;
use tritonc::diagnostics::Diagnostic;
use tritonc::driver::{Define, DefineValue};
use tritonc::span::{FileId, Span};

const PREFIX: &str = "#pragma";
const DIRECTIVES: &[&str] = &[
    "op",
    "kernel",
    "dtype",
    "input",
    "output",
    "attr",
    "args",
    "grid",
    "tune",
    "define",
    "num_warps",
    "num_stages",
    "split_k",
    "tma",
    "pad",
    "backward",
    "require",
];

/// Parses and validates the spec of `text` (file `file` of a SourceMap).
/// `Ok(None)` when the file has no `#pragma opgen` line.
pub fn parse_spec(file: FileId, text: &str) -> Result<Option<OpSpec>, Diagnostic> {
    let mut builder = Builder::default();
    let mut any = false;
    // Directives are read where the kernel's own text would be: not in
    // comments or `#if 0` blocks, and never under a macro condition.
    for line in active_lines::scan(file, text) {
        if !line.live {
            continue;
        }
        let (line_start, body) = (line.start, line.body);
        let trimmed = body.trim_start();
        let Some(rest) = trimmed.strip_prefix(PREFIX) else {
            continue;
        };
        let after_pragma = rest.trim_start();
        let Some(spec_text) = after_pragma.strip_prefix("opgen") else {
            continue;
        };
        if !spec_text.is_empty() && !spec_text.starts_with(char::is_whitespace) {
            continue;
        }
        if let Some(condition) = line.conditional {
            let at = Span::new(file, line_start, line_start + body.len());
            return Err(active_lines::conditional_directive(at, condition));
        }
        any = true;
        let base = line_start + (body.len() - spec_text.len());
        let end = Span::new(file, line_start + body.len(), line_start + body.len());
        builder.directive(file, base, spec_text, end)?;
    }
    if !any {
        return Ok(None);
    }
    let spec = builder.finish(Span::new(file, 0, 0))?;
    validate(&spec)?;
    Ok(Some(spec))
}

#[derive(Default)]
struct Builder {
    op: Option<(String, String, Span)>,
    kernel: Option<String>,
    dtypes: Vec<DtypeVar>,
    derived_dtypes: Vec<DerivedDtype>,
    inputs: Vec<TensorSpec>,
    outputs: Vec<TensorSpec>,
    attrs: Vec<AttrSpec>,
    args: Option<Vec<ArgSpec>>,
    grid: Option<Vec<GridDim>>,
    requires: Vec<Require>,
    tune: Vec<MacroSpec>,
    defines: Vec<MacroSpec>,
    num_warps: Option<Vec<u32>>,
    num_stages: Option<Vec<u32>>,
    split_k: Option<(Vec<u32>, Span)>,
    tma: Option<(Vec<u32>, Span)>,
    pad: Option<Pad>,
    backward: Option<Backward>,
}

impl Builder {
    fn directive(
        &mut self,
        file: FileId,
        base: usize,
        text: &str,
        end: Span,
    ) -> Result<(), Diagnostic> {
        let tokens = lex(file, base, text).or_else(|e| {
            // `define` and `tune` take raw macro text, `attr` a raw default.
            let first = text.split_whitespace().next().unwrap_or("");
            if first == "define" || first == "tune" || first == "attr" {
                Ok(Vec::new())
            } else {
                Err(e)
            }
        })?;
        let first_word = text.split_whitespace().next().unwrap_or("");
        let word_at = base + text.find(first_word).unwrap_or(0);
        let word_span = Span::new(file, word_at, word_at + first_word.len());
        if first_word.is_empty() {
            return Err(Diagnostic::error(end, "empty `#pragma opgen` line")
                .with_note(format!("directives: {}", DIRECTIVES.join(", "))));
        }
        let line_span = word_span.to(end);
        if first_word == "define" || first_word == "tune" {
            let rest = &text[word_at - base + first_word.len()..];
            let rest_span = Span::new(file, word_at + first_word.len(), end.end as usize);
            return self.macro_line(first_word == "tune", rest, rest_span, line_span);
        }
        if first_word == "attr" {
            let rest = &text[word_at - base + first_word.len()..];
            let rest_span = Span::new(file, word_at + first_word.len(), end.end as usize);
            let attr = parse_attr(rest, rest_span, line_span)?;
            if let Some(prev) = self.attrs.iter().find(|a| a.name == attr.name) {
                return Err(Diagnostic::error(
                    line_span,
                    format!("attribute `{}` is declared twice", attr.name),
                )
                .with_label(prev.span, "first declared here"));
            }
            self.attrs.push(attr);
            return Ok(());
        }
        let mut c = Cursor::new(&tokens[1..], end);
        match first_word {
            "op" => {
                if let Some((_, _, prev)) = &self.op {
                    return Err(Diagnostic::error(line_span, "the op is named twice")
                        .with_label(*prev, "first named here"));
                }
                let (ns, ns_span) = c.expect_ident("a namespace, as in `op triton::add`")?;
                c.expect_punct("::", "between the namespace and the op name")?;
                let (name, name_span) = c.expect_ident("the op name")?;
                c.expect_end()?;
                self.op = Some((ns, name, ns_span.to(name_span)));
            }
            "kernel" => {
                let (name, _) = c.expect_ident("the kernel's name")?;
                c.expect_end()?;
                self.kernel = Some(name);
            }
            "dtype" => match parse_dtype(&mut c, line_span)? {
                DtypeLine::Choices(d) => self.dtypes.push(d),
                DtypeLine::Derived(d) => self.derived_dtypes.push(d),
            },
            "input" => self.inputs.push(parse_tensor(&mut c, line_span, true)?),
            "output" => self.outputs.push(parse_tensor(&mut c, line_span, false)?),
            "args" => {
                once(&self.args, line_span, "args")?;
                self.args = Some(parse_args(&mut c)?);
            }
            "grid" => {
                once(&self.grid, line_span, "grid")?;
                self.grid = Some(parse_grid(&mut c, line_span)?);
            }
            "require" => self.requires.push(parse_require(&mut c, line_span)?),
            "num_warps" => {
                once(&self.num_warps, line_span, "num_warps")?;
                self.num_warps = Some(parse_counts(&mut c, "warps", |v| {
                    ((1..=32).contains(&v) && (v & (v - 1)) == 0)
                        .then_some(())
                        .ok_or_else(|| {
                            format!("num_warps must be a power of two from 1 to 32, got {v}")
                        })
                })?);
            }
            "num_stages" => {
                once(&self.num_stages, line_span, "num_stages")?;
                self.num_stages = Some(parse_counts(&mut c, "pipeline buffers", |v| {
                    (2..=8)
                        .contains(&v)
                        .then_some(())
                        .ok_or_else(|| format!("num_stages must be from 2 to 8, got {v}"))
                })?);
            }
            "split_k" => {
                once(&self.split_k, line_span, "split_k")?;
                let factors = parse_counts(&mut c, "split-K factors", |v| {
                    (1..=8)
                        .contains(&v)
                        .then_some(())
                        .ok_or_else(|| format!("split_k must be from 1 to 8, got {v}"))
                })?;
                self.split_k = Some((factors, line_span));
            }
            "tma" => {
                once(&self.tma, line_span, "tma")?;
                let values = parse_counts(&mut c, "TMA switches", |v| {
                    (v <= 4).then_some(()).ok_or_else(|| {
                        format!(
                            "tma takes 0 (off), 1 (on), 2 (on, `b` shared by the two \
                             programs of a cluster), 3 (on, issued by a producer \
                             warpgroup) and 4 (both), got {v}"
                        )
                    })
                })?;
                self.tma = Some((values, line_span));
            }
            "pad" => {
                once(&self.pad, line_span, "pad")?;
                self.pad = Some(parse_pad(&mut c, line_span)?);
            }
            "backward" => {
                once(&self.backward, line_span, "backward")?;
                self.backward = Some(parse_backward(&mut c, line_span)?);
            }
            other => {
                return Err(Diagnostic::error(
                    word_span,
                    format!("unknown opgen directive `{other}`"),
                )
                .with_note(format!("directives: {}", DIRECTIVES.join(", "))))
            }
        }
        Ok(())
    }

    fn macro_line(
        &mut self,
        is_tune: bool,
        rest: &str,
        rest_span: Span,
        line_span: Span,
    ) -> Result<(), Diagnostic> {
        let (name, value) = match rest.split_once('=') {
            Some((n, v)) => (n.trim(), v.trim()),
            None => {
                return Err(Diagnostic::error(
                    line_span,
                    "expected `NAME = VALUE` (a tuning list is `NAME = [a, b]`)",
                ))
            }
        };
        let define = Define::parse(&format!("{name}={value}"))
            .map_err(|e| Diagnostic::error(rest_span, e.to_string()))?;
        let values = match (&define.value, is_tune) {
            (DefineValue::List(items), true) => items.clone(),
            (DefineValue::Code(_), true) => {
                return Err(Diagnostic::error(
                    rest_span,
                    format!("`tune {name}` needs a list of values, e.g. `tune {name} = [32, 64]`"),
                ))
            }
            (DefineValue::Code(v), false) => vec![v.clone()],
            (DefineValue::List(_), false) => {
                return Err(Diagnostic::error(
                    rest_span,
                    format!(
                        "`define {name}` takes one value; use `tune {name} = [...]` for a list"
                    ),
                ))
            }
        };
        let spec = MacroSpec {
            name: define.name,
            values,
            span: line_span,
        };
        if is_tune {
            self.tune.push(spec);
        } else {
            self.defines.push(spec);
        }
        Ok(())
    }

    fn finish(self, file_start: Span) -> Result<OpSpec, Diagnostic> {
        let Some((namespace, name, span)) = self.op else {
            return Err(
                Diagnostic::error(file_start, "the opgen spec does not name its op")
                    .with_note("add a line such as `#pragma opgen op triton::add`"),
            );
        };
        let args = self.args.ok_or_else(|| {
            Diagnostic::error(span, "the opgen spec has no `args` line")
                .with_note("list the kernel's arguments, e.g. `#pragma opgen args N, x, y, z`")
        })?;
        let grid = self.grid.ok_or_else(|| {
            Diagnostic::error(span, "the opgen spec has no `grid` line")
                .with_note("e.g. `#pragma opgen grid cdiv(N, SIZE)`")
        })?;
        if self.outputs.is_empty() {
            return Err(Diagnostic::error(span, "the op has no output")
                .with_note("add e.g. `#pragma opgen output z: T[N]`"));
        }
        let mut tune = self.tune;
        // `split_k` and `tma` lines are tuning macros of their own, after
        // the `tune` ones.
        let mut directive = |values: Option<(Vec<u32>, Span)>, name: &str, what: &str| {
            let Some((values, line)) = values else {
                return Ok(Vec::new());
            };
            if let Some(m) = tune.iter().chain(&self.defines).find(|m| m.name == name) {
                return Err(Diagnostic::error(
                    m.span,
                    format!("`{name}` is the macro of the `{what}` line (its values, which `require` lines may read): name this one otherwise"),
                )
                .with_label(line, format!("the `{what}` line")));
            }
            tune.push(MacroSpec {
                name: name.to_string(),
                values: values.iter().map(u32::to_string).collect(),
                span: line,
            });
            Ok(values)
        };
        let split_k = directive(self.split_k, SPLIT_K_MACRO, "split_k")?;
        let tma = directive(self.tma, TMA_MACRO, "tma")?;
        // Lines reading the warps of a launch (unless a macro takes the
        // name) are decided per variant when the op is generated.
        let warps_is_macro = tune
            .iter()
            .chain(&self.defines)
            .any(|m| m.name == NUM_WARPS_NAME);
        let reads_warps = |r: &Require| {
            !warps_is_macro
                && [&r.left, &r.right]
                    .iter()
                    .any(|e| e.names().iter().any(|(n, _)| *n == NUM_WARPS_NAME))
        };
        let (launch_requires, requires): (Vec<Require>, Vec<Require>) =
            self.requires.into_iter().partition(reads_warps);
        Ok(OpSpec {
            namespace,
            name,
            kernel: self.kernel,
            dtypes: self.dtypes,
            derived_dtypes: self.derived_dtypes,
            inputs: self.inputs,
            outputs: self.outputs,
            attrs: self.attrs,
            args,
            grid,
            requires,
            launch_requires,
            tune,
            defines: self.defines,
            num_warps: self.num_warps.unwrap_or_else(|| vec![4]),
            num_stages: self.num_stages.unwrap_or_default(),
            split_k,
            tma,
            pad: self.pad,
            backward: self.backward,
            span,
        })
    }
}

fn once<T>(slot: &Option<T>, span: Span, what: &str) -> Result<(), Diagnostic> {
    if slot.is_some() {
        Err(Diagnostic::error(
            span,
            format!("`{what}` is given twice; write it on one line"),
        ))
    } else {
        Ok(())
    }
}

/// What a `dtype` line declares.
enum DtypeLine {
    Choices(DtypeVar),
    Derived(DerivedDtype),
}

/// `T in {float32: TYPE=float, float16: TYPE=half ACC=float}` or
/// `S from T {float16: float32, float64: float64}`.
fn parse_dtype(c: &mut Cursor, line: Span) -> Result<DtypeLine, Diagnostic> {
    let (var, _) = c.expect_ident("a dtype variable, as in `dtype T in {float32: TYPE=float}`")?;
    match c.expect_ident("`in` (or `from`)")? {
        (w, _) if w == "in" => {}
        (w, _) if w == "from" => return parse_derived_dtype(c, var, line).map(DtypeLine::Derived),
        (w, s) => {
            return Err(Diagnostic::error(
                s,
                format!("expected `in` or `from`, found `{w}`"),
            ))
        }
    }
    c.expect_punct("{", "to open the dtype choices")?;
    let mut choices = Vec::new();
    loop {
        let (dtype, span) = expect_dtype(c)?;
        c.expect_punct(":", "after the dtype")?;
        let mut macros = Vec::new();
        while let Some(Token {
            tok: Tok::Ident(_), ..
        }) = c.peek()
        {
            let (name, _) = c.expect_ident("a macro name")?;
            c.expect_punct("=", "after the macro name")?;
            let value = match c.next() {
                Some(Token {
                    tok: Tok::Ident(v), ..
                }) => v.clone(),
                Some(Token {
                    tok: Tok::Int(v), ..
                }) => v.to_string(),
                _ => {
                    return Err(Diagnostic::error(
                        c.here(),
                        "expected the macro's value (a name or a number)",
                    ))
                }
            };
            macros.push((name, value));
        }
        if macros.is_empty() {
            return Err(Diagnostic::error(
                c.here(),
                format!("`{dtype}` defines no macro; write e.g. `{dtype}: TYPE=float`"),
            ));
        }
        choices.push(DtypeChoice {
            dtype,
            macros,
            span,
        });
        if c.eat_punct("}") {
            break;
        }
        c.expect_punct(",", "between dtype choices (or `}` to close them)")?;
    }
    c.expect_end()?;
    Ok(DtypeLine::Choices(DtypeVar {
        var,
        choices,
        span: line,
    }))
}

/// The rest of `S from T {float16: float32, float64: float64}`.
fn parse_derived_dtype(
    c: &mut Cursor,
    var: String,
    line: Span,
) -> Result<DerivedDtype, Diagnostic> {
    let (source, _) =
        c.expect_ident("the dtype variable it follows, as in `dtype S from T {...}`")?;
    c.expect_punct(
        "{",
        "to open the map from the choices of the variable it follows",
    )?;
    let mut map = Vec::new();
    loop {
        let (from, _) = expect_dtype(c)?;
        c.expect_punct(":", "after the dtype")?;
        let (to, _) = expect_dtype(c)?;
        map.push((from, to));
        if c.eat_punct("}") {
            break;
        }
        c.expect_punct(",", "between entries (or `}` to close them)")?;
    }
    c.expect_end()?;
    Ok(DerivedDtype {
        var,
        source,
        map,
        span: line,
    })
}

/// A dtype name (`float32`), or an error listing the known ones.
fn expect_dtype(c: &mut Cursor) -> Result<(String, Span), Diagnostic> {
    let (dtype, span) = c.expect_ident("a dtype such as `float32`")?;
    if ir_elem_type(&dtype).is_none() {
        return Err(
            Diagnostic::error(span, format!("unknown dtype `{dtype}`")).with_note(format!(
                "known dtypes: {}",
                DTYPES
                    .iter()
                    .map(|(d, _)| *d)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        );
    }
    Ok((dtype, span))
}

/// `x: T[M, N] [contiguous]` (inputs) or `z: T[N]` (outputs).
/// `alpha: float = 1.0` (the text after `attr`).
fn parse_attr(rest: &str, rest_span: Span, line_span: Span) -> Result<AttrSpec, Diagnostic> {
    let usage = "expected `attr NAME: float|int|bool` with an optional `= DEFAULT`, as in `attr alpha: float = 1.0`";
    let (decl, default) = match rest.split_once('=') {
        Some((d, v)) => (d, Some(v.trim())),
        None => (rest, None),
    };
    let Some((name, ty)) = decl.split_once(':') else {
        return Err(Diagnostic::error(rest_span, usage));
    };
    let (name, ty) = (name.trim(), ty.trim());
    let is_ident = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !is_ident {
        return Err(Diagnostic::error(
            rest_span,
            format!("`{name}` is not a name for an attribute"),
        )
        .with_note(usage));
    }
    let ty = match ty {
        "float" => AttrType::Float,
        "int" => AttrType::Int,
        "bool" => AttrType::Bool,
        other => {
            return Err(Diagnostic::error(
                rest_span,
                format!(
                "attribute `{name}` has type `{other}`; attributes are `float`, `int` or `bool`"
            ),
            ))
        }
    };
    let default =
        match default {
            None => None,
            Some(text) => Some(parse_attr_value(ty, text).map_err(|why| {
                Diagnostic::error(rest_span, format!("attribute `{name}`: {why}"))
            })?),
        };
    Ok(AttrSpec {
        name: name.to_string(),
        ty,
        default,
        span: line_span,
    })
}

/// A value of an attribute of type `ty` as written: `1.0`, `-3`, `true`.
pub fn parse_attr_value(ty: AttrType, text: &str) -> Result<AttrValue, String> {
    match ty {
        AttrType::Float => match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(AttrValue::Float(v)),
            _ => Err(format!("the default `{text}` is not a finite float")),
        },
        AttrType::Int => text
            .parse::<i64>()
            .map(AttrValue::Int)
            .map_err(|_| format!("the default `{text}` is not a 64-bit integer")),
        AttrType::Bool => match text {
            "true" => Ok(AttrValue::Bool(true)),
            "false" => Ok(AttrValue::Bool(false)),
            _ => Err(format!("the default `{text}` is not `true` or `false`")),
        },
    }
}

fn parse_tensor(c: &mut Cursor, line: Span, is_input: bool) -> Result<TensorSpec, Diagnostic> {
    let (name, _) = c.expect_ident("the tensor's name")?;
    c.expect_punct(":", "after the tensor's name, as in `x: T[N]`")?;
    let (dtype, _) = c.expect_ident("the tensor's dtype (a dtype variable or e.g. `float32`)")?;
    c.expect_punct("[", "to open the tensor's shape")?;
    let mut dims = Vec::new();
    if !c.is_punct("]") {
        loop {
            match c.next() {
                Some(Token {
                    tok: Tok::Ident(s), ..
                }) => dims.push(Dim::Sym(s.clone())),
                Some(Token {
                    tok: Tok::Int(v), ..
                }) => dims.push(Dim::Lit(*v)),
                _ => {
                    return Err(Diagnostic::error(
                        c.here(),
                        "expected a dimension (a name such as `N` or a number)",
                    ))
                }
            }
            if !c.eat_punct(",") {
                break;
            }
        }
    }
    c.expect_punct("]", "to close the tensor's shape")?;
    let mut contiguous = false;
    while let Some(tok) = c.peek() {
        match &tok.tok {
            Tok::Ident(w) if w == "contiguous" && is_input => {
                contiguous = true;
                c.next();
            }
            _ => {
                return Err(Diagnostic::error(
                    tok.span,
                    format!(
                        "unexpected {} after the shape{}",
                        c.describe(),
                        if is_input {
                            " (only `contiguous` may follow it)"
                        } else {
                            ""
                        }
                    ),
                ))
            }
        }
    }
    Ok(TensorSpec {
        name,
        dtype,
        dims,
        contiguous,
        span: line,
    })
}

/// `N, a = x, ldx = stride(x, 0)`
fn parse_args(c: &mut Cursor) -> Result<Vec<ArgSpec>, Diagnostic> {
    let mut args = Vec::new();
    loop {
        let start = c.here();
        // `name = expr` when an identifier is followed by `=`.
        let mut param = None;
        if let (
            Some(Token {
                tok: Tok::Ident(n), ..
            }),
            true,
        ) = (c.peek(), peek2_is(c, "="))
        {
            param = Some(n.clone());
            c.next();
            c.next();
        }
        let value = parse_expr(c)?;
        let span = start.to(value.span());
        args.push(ArgSpec { param, value, span });
        if c.at_end() {
            return Ok(args);
        }
        c.expect_punct(",", "between kernel arguments")?;
    }
}

fn peek2_is(c: &Cursor, p: &str) -> bool {
    let mut probe = c.clone();
    probe.next();
    probe.is_punct(p)
}

/// `cdiv(M, TM), cdiv(N, TN)`, `persistent(M)` or `persistent(M, PERSIST)`.
fn parse_grid(c: &mut Cursor, line: Span) -> Result<Vec<GridDim>, Diagnostic> {
    let mut dims = Vec::new();
    loop {
        let start = c.here();
        let persistent = matches!(c.peek(), Some(Token { tok: Tok::Ident(n), .. }) if n == "persistent")
            && peek2_is(c, "(");
        let mut persistent_if = None;
        let value = if persistent {
            c.next();
            c.next();
            let inner = parse_expr(c)?;
            if c.eat_punct(",") {
                persistent_if = Some(parse_expr(c)?);
            }
            c.expect_punct(")", "to close `persistent(`")?;
            inner
        } else {
            parse_expr(c)?
        };
        let span = start.to(value.span());
        if persistent && !dims.is_empty() {
            return Err(Diagnostic::error(
                span,
                "only the first grid dimension may be `persistent(...)`",
            ));
        }
        dims.push(GridDim {
            value,
            persistent,
            persistent_if,
            span,
        });
        if c.at_end() {
            break;
        }
        c.expect_punct(",", "between grid dimensions")?;
    }
    if dims.len() > 3 {
        return Err(Diagnostic::error(
            line,
            format!("a grid has at most 3 dimensions, got {}", dims.len()),
        ));
    }
    Ok(dims)
}

/// `N, K to 8` or `N, K to 8 if M * N * K >= 1048576`
fn parse_pad(c: &mut Cursor, line: Span) -> Result<Pad, Diagnostic> {
    let mut dims = Vec::new();
    loop {
        dims.push(c.expect_ident("a dimension to pad, as in `pad N, K to 8`")?);
        if !c.eat_punct(",") {
            break;
        }
    }
    match c.expect_ident("`to` and the multiple, as in `pad N, K to 8`")? {
        (w, _) if w == "to" => {}
        (w, s) => return Err(Diagnostic::error(s, format!("expected `to`, found `{w}`"))),
    }
    let (multiple, span) = c.expect_int("the multiple to pad to")?;
    if !(2..=1024).contains(&multiple) {
        return Err(Diagnostic::error(
            span,
            format!("the multiple to pad to must be from 2 to 1024, got {multiple}"),
        ));
    }
    let conditions = if c.at_end() {
        Vec::new()
    } else {
        match c.expect_ident("`if` and a condition, or the line's end")? {
            (w, _) if w == "if" => {
                let mut all = vec![parse_comparison(c, line)?];
                while c.eat_punct("&&") {
                    all.push(parse_comparison(c, line)?);
                }
                all
            }
            (w, s) => {
                return Err(Diagnostic::error(
                    s,
                    format!("expected `if` or the line's end, found `{w}`"),
                ))
            }
        }
    };
    c.expect_end()?;
    Ok(Pad {
        dims,
        multiple: multiple as u32,
        conditions,
        span: line,
    })
}

/// `N <= TN`, the whole line.
fn parse_require(c: &mut Cursor, line: Span) -> Result<Require, Diagnostic> {
    let r = parse_comparison(c, line)?;
    if c.is_punct("&&") {
        return Err(Diagnostic::error(
            c.here(),
            "a `require` line takes one comparison: give each its own `require` line",
        ));
    }
    c.expect_end()?;
    Ok(r)
}

/// `N <= TN`
fn parse_comparison(c: &mut Cursor, line: Span) -> Result<Require, Diagnostic> {
    let left = parse_expr(c)?;
    let cmp = ["<=", ">=", "==", "!=", "<", ">"]
        .into_iter()
        .find(|p| c.is_punct(p))
        .ok_or_else(|| {
            Diagnostic::error(
                c.here(),
                format!(
                    "expected a comparison (`<=`, `<`, `>=`, `>`, `==`, `!=`), found {}",
                    c.describe()
                ),
            )
        })?;
    c.next();
    let right = parse_expr(c)?;
    Ok(Require {
        left,
        cmp,
        right,
        span: line,
    })
}

/// `4` or `[4, 8]`: counts of `what` that `check` accepts (else its message).
fn parse_counts(
    c: &mut Cursor,
    what: &str,
    check: impl Fn(i64) -> Result<(), String>,
) -> Result<Vec<u32>, Diagnostic> {
    let list = c.eat_punct("[");
    let mut values = Vec::new();
    loop {
        let (v, span) = c.expect_int(&format!("a number of {what}"))?;
        check(v).map_err(|message| Diagnostic::error(span, message))?;
        values.push(v as u32);
        if !list || !c.eat_punct(",") {
            break;
        }
    }
    if list {
        c.expect_punct("]", &format!("to close the list of {what}"))?;
    }
    c.expect_end()?;
    Ok(values)
}

/// `da = triton::dot_nt(dc, b), db = dc`
fn parse_backward(c: &mut Cursor, line: Span) -> Result<Backward, Diagnostic> {
    let mut grads = Vec::new();
    loop {
        let (grad, gspan) = c.expect_ident("a gradient such as `dx`")?;
        let Some(input) = grad.strip_prefix('d').filter(|s| !s.is_empty()) else {
            return Err(Diagnostic::error(
                gspan,
                format!("`{grad}` does not name an input's gradient: write `d<input>`, e.g. `dx`"),
            ));
        };
        let input = input.to_string();
        c.expect_punct("=", "after the gradient's name")?;
        let value = parse_grad_expr(c, 0)?;
        grads.push(GradSpec {
            input,
            value,
            span: gspan,
        });
        if c.at_end() {
            break;
        }
        c.expect_punct(",", "between gradients")?;
    }
    Ok(Backward { grads, span: line })
}

/// A gradient: a tensor or a call of another op; calls nest at most
/// `MAX_EXPR_DEPTH` deep (each pass over a gradient recurses over it).
fn parse_grad_expr(c: &mut Cursor, depth: usize) -> Result<GradExpr, Diagnostic> {
    if depth > super::expr::MAX_EXPR_DEPTH {
        return Err(Diagnostic::error(
            c.here(),
            format!(
                "the gradient nests calls deeper than {} levels",
                super::expr::MAX_EXPR_DEPTH
            ),
        ));
    }
    let (first, _) = c.expect_ident("a tensor or an op call such as `triton::dot(dy, b)`")?;
    if !c.eat_punct("::") {
        return Ok(GradExpr::Tensor(first));
    }
    let (op, _) = c.expect_ident("the op's name after `::`")?;
    c.expect_punct("(", "to open the op's arguments")?;
    let mut args = Vec::new();
    if !c.is_punct(")") {
        loop {
            args.push(parse_grad_expr(c, depth + 1)?);
            if !c.eat_punct(",") {
                break;
            }
        }
    }
    c.expect_punct(")", "to close the op's arguments")?;
    Ok(GradExpr::Call {
        namespace: first,
        op,
        args,
    })
}
