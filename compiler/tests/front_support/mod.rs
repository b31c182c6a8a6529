//! Helpers shared by the front-end tests: `source_support` (the front end on
//! text or on a kernel of `tests/kernels`), results that panic with the
//! rendered diagnostic, and AST parts printed as compact S-expressions so
//! tests can check structure in one readable string.
#![allow(dead_code)]

#[path = "../source_support/mod.rs"]
mod source_support;
pub use source_support::*;

use tritonc::diagnostics::Diagnostic;
use tritonc::front::ast::*;
use tritonc::span::SourceMap;

pub fn parse_ok(text: &str, defines: &[(&str, &str)]) -> TranslationUnit {
    let (sources, _, result) = parse_text("test.tc", text, &options(defines));
    result.unwrap_or_else(|d| panic!("unexpected error:\n{}", d.render(&sources)))
}

pub fn parse_err(text: &str, defines: &[(&str, &str)]) -> (SourceMap, Diagnostic) {
    let (sources, _, result) = parse_text("test.tc", text, &options(defines));
    match result {
        Ok(tu) => panic!("expected an error, got {tu:#?}"),
        Err(d) => (sources, d),
    }
}

pub fn parse_kernel(name: &str, defines: &[(&str, &str)]) -> TranslationUnit {
    let (sources, _, result) = parse_kernel_file(name, defines);
    result.unwrap_or_else(|d| panic!("{name}:\n{}", d.render(&sources)))
}

/// The single expression of `void f() { <expr>; }`.
pub fn expr_of(text: &str, defines: &[(&str, &str)]) -> String {
    let tu = parse_ok(&format!("void f() {{ {text}; }}"), defines);
    match &tu.functions[0].body.stmts[0].kind {
        StmtKind::Expr(e) => sexpr(e),
        other => panic!("not an expression statement: {other:?}"),
    }
}

pub fn binop(op: BinaryOp) -> &'static str {
    use BinaryOp::*;
    match op {
        Mul => "*",
        Div => "/",
        Rem => "%",
        Add => "+",
        Sub => "-",
        Shl => "<<",
        Shr => ">>",
        Lt => "<",
        Gt => ">",
        Le => "<=",
        Ge => ">=",
        Eq => "==",
        Ne => "!=",
        BitAnd => "&",
        BitXor => "xor",
        BitOr => "|",
        LogicalAnd => "&&",
        LogicalOr => "||",
        MatMul => "@",
    }
}

pub fn type_str(ty: &TypeSpec) -> String {
    let base = match ty.base {
        BaseType::Void => "void",
        BaseType::Bool => "bool",
        BaseType::Int8 => "i8",
        BaseType::Int16 => "i16",
        BaseType::Int32 => "int",
        BaseType::Int64 => "i64",
        BaseType::Half => "half",
        BaseType::BFloat16 => "bf16",
        BaseType::Float => "float",
        BaseType::Double => "double",
    };
    let konst = if ty.is_const { "const " } else { "" };
    format!("{konst}{base}{}", "*".repeat(ty.pointer_depth as usize))
}

pub fn sexpr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::IntLit(v) => v.to_string(),
        ExprKind::FloatLit { value, is_f32 } => {
            format!("{value}{}", if *is_f32 { "f" } else { "" })
        }
        ExprKind::BoolLit(b) => b.to_string(),
        ExprKind::Ident(n) => n.clone(),
        ExprKind::Unary { op, operand } => {
            let op = match op {
                UnaryOp::Neg => "neg",
                UnaryOp::Plus => "plus",
                UnaryOp::Not => "!",
                UnaryOp::BitNot => "~",
                UnaryOp::Deref => "load",
                UnaryOp::Trans => "trans",
                UnaryOp::PreInc => "pre++",
                UnaryOp::PreDec => "pre--",
                UnaryOp::PostInc => "post++",
                UnaryOp::PostDec => "post--",
            };
            format!("({op} {})", sexpr(operand))
        }
        ExprKind::Binary { op, lhs, rhs } => {
            format!("({} {} {})", binop(*op), sexpr(lhs), sexpr(rhs))
        }
        ExprKind::Range { start, end } => format!("(range {} {})", sexpr(start), sexpr(end)),
        ExprKind::Assign { op, target, value } => {
            let op = op.map_or("=".to_string(), |o| format!("{}=", binop(o)));
            format!("({op} {} {})", sexpr(target), sexpr(value))
        }
        ExprKind::Ternary {
            cond,
            then_expr,
            else_expr,
        } => format!(
            "(? {} {} {})",
            sexpr(cond),
            sexpr(then_expr),
            sexpr(else_expr)
        ),
        ExprKind::Call { callee, args } => {
            let mut s = format!("({}", callee.name);
            for a in args {
                s.push(' ');
                s.push_str(&sexpr(a));
            }
            s.push(')');
            s
        }
        ExprKind::Cast { ty, expr } => format!("(cast {} {})", type_str(ty), sexpr(expr)),
        ExprKind::Subscript { base, items } => {
            let items: Vec<&str> = items
                .iter()
                .map(|(item, _)| match item {
                    SliceItem::All => ":",
                    SliceItem::NewAxis => "newaxis",
                    SliceItem::Reduce(ReduceOp::Sum) => "+",
                    SliceItem::Reduce(ReduceOp::Max) => "max",
                    SliceItem::Reduce(ReduceOp::Min) => "min",
                })
                .collect();
            format!("{}[{}]", sexpr(base), items.join(","))
        }
        ExprKind::MaskedDeref { mask, ptr } => format!("(load? {} {})", sexpr(mask), sexpr(ptr)),
    }
}

/// `float* pa[TM,TK] = (...)`
pub fn decl_str(d: &Declarator) -> String {
    let mut s = format!("{} {}", type_str(&d.ty), d.name.name);
    if let Some(shape) = &d.shape {
        let dims: Vec<String> = shape.iter().map(sexpr).collect();
        s.push_str(&format!("[{}]", dims.join(",")));
    }
    if let Some(init) = &d.init {
        s.push_str(&format!(" = {}", sexpr(init)));
    }
    s
}

/// One line per statement of a block, nested blocks indented.
pub fn stmt_lines(stmts: &[Stmt]) -> Vec<String> {
    let mut out = Vec::new();
    for s in stmts {
        push_stmt(s, 0, &mut out);
    }
    out
}

fn push_stmt(s: &Stmt, indent: usize, out: &mut Vec<String>) {
    let pad = "  ".repeat(indent);
    match &s.kind {
        StmtKind::Decl(ds) => {
            let ds: Vec<String> = ds.iter().map(decl_str).collect();
            out.push(format!("{pad}decl {}", ds.join("; ")));
        }
        StmtKind::Expr(e) => out.push(format!("{pad}{}", sexpr(e))),
        StmtKind::Block(b) => {
            out.push(format!("{pad}{{"));
            for s in &b.stmts {
                push_stmt(s, indent + 1, out);
            }
            out.push(format!("{pad}}}"));
        }
        StmtKind::If {
            cond,
            then_branch,
            else_branch,
        } => {
            out.push(format!("{pad}if {}", sexpr(cond)));
            push_stmt(then_branch, indent + 1, out);
            if let Some(e) = else_branch {
                out.push(format!("{pad}else"));
                push_stmt(e, indent + 1, out);
            }
        }
        StmtKind::For {
            init,
            cond,
            step,
            body,
        } => {
            let mut init_lines = Vec::new();
            if let Some(i) = init {
                push_stmt(i, 0, &mut init_lines);
            }
            out.push(format!(
                "{pad}for {} ; {} ; {}",
                init_lines.join(""),
                cond.as_ref().map(sexpr).unwrap_or_default(),
                step.as_ref().map(sexpr).unwrap_or_default()
            ));
            push_stmt(body, indent + 1, out);
        }
        StmtKind::While { cond, body } => {
            out.push(format!("{pad}while {}", sexpr(cond)));
            push_stmt(body, indent + 1, out);
        }
        StmtKind::DoWhile { body, cond } => {
            out.push(format!("{pad}do"));
            push_stmt(body, indent + 1, out);
            out.push(format!("{pad}while {}", sexpr(cond)));
        }
        StmtKind::Return(e) => out.push(format!(
            "{pad}return {}",
            e.as_ref().map(sexpr).unwrap_or_default()
        )),
        StmtKind::Break => out.push(format!("{pad}break")),
        StmtKind::Continue => out.push(format!("{pad}continue")),
        StmtKind::Empty => out.push(format!("{pad};")),
    }
}
