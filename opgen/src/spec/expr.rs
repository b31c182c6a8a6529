//! Integer expressions of kernel arguments and grids: dims, tuning macros,
//! `stride(x, 0)`, `size(x, 1)`, `numel(x)`, `cdiv(a, b)`, `min`, `max`,
//! `+ - * /` and parentheses. Tensors appear bare as their data pointer.

use super::lex::{Cursor, Tok, Token};
use tritonc::diagnostics::Diagnostic;
use tritonc::span::Span;

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Int(i64, Span),
    Name(String, Span),
    Call(String, Vec<Expr>, Span),
    Neg(Box<Expr>, Span),
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl BinOp {
    /// The operator as C++, Python and the spec write it.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
        }
    }
}

/// Functions an expression may call, with their arity.
pub const FUNCTIONS: &[(&str, usize)] = &[
    ("stride", 2),
    ("size", 2),
    ("numel", 1),
    ("cdiv", 2),
    ("min", 2),
    ("max", 2),
];

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Int(_, s) | Expr::Name(_, s) | Expr::Call(_, _, s) | Expr::Neg(_, s) => *s,
            Expr::Bin(_, l, r) => l.span().to(r.span()),
        }
    }

    /// Every name the expression mentions (not function names), with spans.
    pub fn names(&self) -> Vec<(&str, Span)> {
        let mut out = Vec::new();
        self.collect_names(&mut out);
        out
    }

    fn collect_names<'a>(&'a self, out: &mut Vec<(&'a str, Span)>) {
        match self {
            Expr::Int(..) => {}
            Expr::Name(n, s) => out.push((n, *s)),
            Expr::Call(_, args, _) => args.iter().for_each(|a| a.collect_names(out)),
            Expr::Neg(e, _) => e.collect_names(out),
            Expr::Bin(_, l, r) => {
                l.collect_names(out);
                r.collect_names(out);
            }
        }
    }

    /// C++ text of the expression (int64 arithmetic); `name` maps each name.
    pub fn to_cpp(&self, name: &dyn Fn(&str) -> String) -> String {
        match self {
            Expr::Int(v, _) => format!("int64_t({v})"),
            Expr::Name(n, _) => name(n),
            Expr::Neg(e, _) => format!("(-{})", e.to_cpp(name)),
            Expr::Bin(op, l, r) => {
                format!("({} {} {})", l.to_cpp(name), op.symbol(), r.to_cpp(name))
            }
            Expr::Call(f, args, _) => match (f.as_str(), args.as_slice()) {
                ("stride", [t, axis]) => {
                    format!("{}.stride({})", raw_name(t), axis_cpp(axis, name))
                }
                ("size", [t, axis]) => format!("{}.size({})", raw_name(t), axis_cpp(axis, name)),
                ("numel", [t]) => format!("{}.numel()", raw_name(t)),
                ("cdiv", [a, b]) => format!("opgen_cdiv({}, {})", a.to_cpp(name), b.to_cpp(name)),
                ("min", [a, b]) => format!("std::min({}, {})", a.to_cpp(name), b.to_cpp(name)),
                ("max", [a, b]) => format!("std::max({}, {})", a.to_cpp(name), b.to_cpp(name)),
                _ => "0".to_string(),
            },
        }
    }

    /// Python text of the expression over ints (`/` as `//`: the operands
    /// are sizes, never negative, where C++'s truncation is the floor too);
    /// `name` maps each name. Tensor functions are not rendered (`0`).
    pub fn to_py(&self, name: &dyn Fn(&str) -> String) -> String {
        match self {
            Expr::Int(v, _) => v.to_string(),
            Expr::Name(n, _) => name(n),
            Expr::Neg(e, _) => format!("(-{})", e.to_py(name)),
            Expr::Bin(op, l, r) => {
                let op = match op {
                    BinOp::Div => "//",
                    other => other.symbol(),
                };
                format!("({} {op} {})", l.to_py(name), r.to_py(name))
            }
            Expr::Call(f, args, _) => match (f.as_str(), args.as_slice()) {
                ("cdiv", [a, b]) => format!("(-(-{} // {}))", a.to_py(name), b.to_py(name)),
                ("min", [a, b]) => format!("min({}, {})", a.to_py(name), b.to_py(name)),
                ("max", [a, b]) => format!("max({}, {})", a.to_py(name), b.to_py(name)),
                _ => "0".to_string(),
            },
        }
    }

    /// Evaluates with `name` giving each name's value (`None`: unknown).
    pub fn eval(&self, name: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
        Some(match self {
            Expr::Int(v, _) => *v,
            Expr::Name(n, _) => name(n)?,
            Expr::Neg(e, _) => e.eval(name)?.checked_neg()?,
            Expr::Bin(op, l, r) => {
                let (a, b) = (l.eval(name)?, r.eval(name)?);
                match op {
                    BinOp::Add => a.checked_add(b)?,
                    BinOp::Sub => a.checked_sub(b)?,
                    BinOp::Mul => a.checked_mul(b)?,
                    BinOp::Div => a.checked_div(b)?,
                }
            }
            Expr::Call(f, args, _) => {
                let vals: Option<Vec<i64>> = args.iter().map(|a| a.eval(name)).collect();
                let v = vals?;
                match (f.as_str(), v.as_slice()) {
                    ("cdiv", [a, b]) if *b != 0 => a.checked_add(b - 1)?.div_euclid(*b),
                    ("min", [a, b]) => *a.min(b),
                    ("max", [a, b]) => *a.max(b),
                    _ => return None,
                }
            }
        })
    }
}

fn axis_cpp(axis: &Expr, name: &dyn Fn(&str) -> String) -> String {
    match axis {
        Expr::Int(v, _) => v.to_string(),
        other => other.to_cpp(name),
    }
}

/// The tensor an argument of `stride`/`size`/`numel` names, as C++.
fn raw_name(e: &Expr) -> String {
    match e {
        Expr::Name(n, _) => n.clone(),
        _ => "/*not a tensor*/".to_string(),
    }
}

/// How deep an expression may nest: parentheses, calls, unary minus and
/// each chained operator count one level. Every pass over an expression
/// recurses over it, so input must not drive that recursion deep.
pub const MAX_EXPR_DEPTH: usize = 200;

fn too_deep(c: &Cursor) -> Diagnostic {
    Diagnostic::error(
        c.here(),
        format!("the expression nests deeper than {MAX_EXPR_DEPTH} levels"),
    )
    .with_note("parentheses, calls, unary minus and each chained operator count one level")
}

/// Parses `expr` at the cursor (lowest precedence: `+ -`).
pub fn parse_expr(c: &mut Cursor) -> Result<Expr, Diagnostic> {
    parse_sum(c, 0)
}

fn parse_sum(c: &mut Cursor, depth: usize) -> Result<Expr, Diagnostic> {
    let mut left = parse_term(c, depth)?;
    let mut level = depth;
    loop {
        let op = if c.eat_punct("+") {
            BinOp::Add
        } else if c.eat_punct("-") {
            BinOp::Sub
        } else {
            return Ok(left);
        };
        level += 1;
        if level > MAX_EXPR_DEPTH {
            return Err(too_deep(c));
        }
        let right = parse_term(c, level)?;
        left = Expr::Bin(op, Box::new(left), Box::new(right));
    }
}

fn parse_term(c: &mut Cursor, depth: usize) -> Result<Expr, Diagnostic> {
    let mut left = parse_unary(c, depth)?;
    let mut level = depth;
    loop {
        let op = if c.eat_punct("*") {
            BinOp::Mul
        } else if c.eat_punct("/") {
            BinOp::Div
        } else {
            return Ok(left);
        };
        level += 1;
        if level > MAX_EXPR_DEPTH {
            return Err(too_deep(c));
        }
        let right = parse_unary(c, level)?;
        left = Expr::Bin(op, Box::new(left), Box::new(right));
    }
}

fn parse_unary(c: &mut Cursor, depth: usize) -> Result<Expr, Diagnostic> {
    let start = c.here();
    if c.eat_punct("-") {
        if depth + 1 > MAX_EXPR_DEPTH {
            return Err(too_deep(c));
        }
        let inner = parse_unary(c, depth + 1)?;
        let span = start.to(inner.span());
        return Ok(Expr::Neg(Box::new(inner), span));
    }
    parse_atom(c, depth)
}

fn parse_atom(c: &mut Cursor, depth: usize) -> Result<Expr, Diagnostic> {
    let here = c.here();
    match c.peek() {
        Some(Token {
            tok: Tok::Int(v), ..
        }) => {
            let v = *v;
            c.next();
            Ok(Expr::Int(v, here))
        }
        Some(Token {
            tok: Tok::Ident(name),
            ..
        }) => {
            let name = name.clone();
            c.next();
            if !c.eat_punct("(") {
                return Ok(Expr::Name(name, here));
            }
            if depth + 1 > MAX_EXPR_DEPTH {
                return Err(too_deep(c));
            }
            let mut args = Vec::new();
            if !c.is_punct(")") {
                loop {
                    args.push(parse_sum(c, depth + 1)?);
                    if !c.eat_punct(",") {
                        break;
                    }
                }
            }
            let close = c.expect_punct(")", "to close the call")?;
            let span = here.to(close);
            match FUNCTIONS.iter().find(|(f, _)| *f == name) {
                None => Err(
                    Diagnostic::error(here, format!("unknown function `{name}`")).with_note(
                        format!(
                            "known functions: {}",
                            FUNCTIONS
                                .iter()
                                .map(|(f, n)| format!("{f}/{n}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ),
                ),
                Some((_, arity)) if *arity != args.len() => Err(Diagnostic::error(
                    span,
                    format!(
                        "`{name}` takes {arity} argument{}, got {}",
                        if *arity == 1 { "" } else { "s" },
                        args.len()
                    ),
                )),
                Some(_) => Ok(Expr::Call(name, args, span)),
            }
        }
        Some(Token {
            tok: Tok::Punct("("),
            ..
        }) => {
            c.next();
            if depth + 1 > MAX_EXPR_DEPTH {
                return Err(too_deep(c));
            }
            let inner = parse_sum(c, depth + 1)?;
            c.expect_punct(")", "to close the parenthesis")?;
            Ok(inner)
        }
        _ => Err(Diagnostic::error(
            here,
            format!("expected an expression, found {}", c.describe()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::lex::{lex, Cursor};

    #[test]
    fn deep_expressions_are_errors_not_stack_overflows() {
        let deep =
            |open: &str, close: &str, n: usize| format!("{}N{}", open.repeat(n), close.repeat(n));
        for text in [
            deep("(", ")", 100_000),
            deep("max(", ", 1)", 50_000),
            format!("{}N", "-".repeat(100_000)),
            vec!["N"; 100_000].join(" + "),
            vec!["N"; 100_000].join(" * "),
        ] {
            let err = parse(&text).unwrap_err();
            assert!(err.contains("nests deeper than 200 levels"), "{err}");
        }
        // At the limit it parses.
        assert!(parse(&deep("(", ")", 150)).is_ok());
        assert!(parse(&vec!["N"; 150].join(" + ")).is_ok());
    }

    fn parse(text: &str) -> Result<Expr, String> {
        let tokens = lex(0, 0, text).map_err(|d| d.message)?;
        let end = Span::new(0, text.len(), text.len());
        let mut c = Cursor::new(&tokens, end);
        let e = parse_expr(&mut c).map_err(|d| d.message)?;
        c.expect_end().map_err(|d| d.message)?;
        Ok(e)
    }

    fn value(name: &str) -> Option<i64> {
        match name {
            "N" => Some(1000),
            "TM" => Some(64),
            _ => None,
        }
    }

    #[test]
    fn python_text_divides_by_floor_and_names_through_the_map() {
        let py = |text: &str| parse(text).unwrap().to_py(&|n| format!("d[\"{n}\"]"));
        assert_eq!(
            py("N * 3 / TM - -1"),
            "(((d[\"N\"] * 3) // d[\"TM\"]) - (-1))"
        );
        assert_eq!(
            py("cdiv(N, TM) + min(N, 4) * max(TM, 2)"),
            "((-(-d[\"N\"] // d[\"TM\"])) + (min(d[\"N\"], 4) * max(d[\"TM\"], 2)))"
        );
    }

    #[test]
    fn precedence_and_evaluation() {
        assert_eq!(parse("1 + 2 * 3").unwrap().eval(&value), Some(7));
        assert_eq!(parse("(1 + 2) * 3").unwrap().eval(&value), Some(9));
        assert_eq!(parse("N - 10 - 20").unwrap().eval(&value), Some(970));
        assert_eq!(parse("-N / 10").unwrap().eval(&value), Some(-100));
        assert_eq!(parse("cdiv(N, TM)").unwrap().eval(&value), Some(16));
        assert_eq!(
            parse("min(N, TM) * max(2, 3)").unwrap().eval(&value),
            Some(192)
        );
        assert_eq!(parse("N / 0").unwrap().eval(&value), None);
        assert_eq!(parse("K + 1").unwrap().eval(&value), None);
    }

    #[test]
    fn renders_cpp() {
        let plain = |n: &str| n.to_string();
        assert_eq!(
            parse("cdiv(N, TM) * 2").unwrap().to_cpp(&plain),
            "(opgen_cdiv(N, TM) * int64_t(2))"
        );
        assert_eq!(parse("stride(x, 1)").unwrap().to_cpp(&plain), "x.stride(1)");
        assert_eq!(
            parse("numel(x) - size(x, 0)").unwrap().to_cpp(&plain),
            "(x.numel() - x.size(0))"
        );
        let e = parse("cdiv(N, TM) + stride(x, 0)").unwrap();
        let names: Vec<&str> = e.names().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, vec!["N", "TM", "x"]);
    }

    #[test]
    fn errors() {
        assert!(parse("cdiv(N)").unwrap_err().contains("takes 2 arguments"));
        assert!(parse("foo(N)")
            .unwrap_err()
            .contains("unknown function `foo`"));
        assert!(parse("N +").unwrap_err().contains("expected an expression"));
        assert!(parse("(N")
            .unwrap_err()
            .contains("to close the parenthesis"));
        assert!(parse("N N").unwrap_err().contains("unexpected `N`"));
        assert!(parse("99999999999999999999")
            .unwrap_err()
            .contains("too large"));
        assert!(parse("N $ 2")
            .unwrap_err()
            .contains("unexpected character `$`"));
    }
}
