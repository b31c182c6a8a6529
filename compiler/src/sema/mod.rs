//! Semantic analysis: AST -> Triton-IR (types, shapes, broadcasting, control flow).
//!
//! The language as sema reads it:
//! - **Variables** are SSA names (module `scope`): a declaration binds a value of the
//!   declared type and shape, assignment converts (casts, broadcasts) to that
//!   type and rebinds. Numbers declared without an initializer start at zero;
//!   pointers must be assigned before use.
//! - **Literals are weak** (`value::Operand`): `h * 2 + 0.5` stays `half` for a
//!   half tile `h`; a float literal next to ints gives `f32`; alone, an int
//!   literal is `i32` (`i64` if it does not fit) and a float literal `f32`.
//!   Literal arithmetic folds. Otherwise the usual C conversions apply, with
//!   `f16` + `bf16` = `f32`, and arithmetic on `bool` done in `i32`.
//! - **Broadcasting** is numpy's (trailing axes aligned, size-1 axes repeat) for
//!   operators, `?:`, masks, stores and assignments; sema emits the explicit
//!   `Splat`/`Reshape`/`Broadcast`/`Cast` ops the IR requires.
//! - **Memory**: `*p` loads, `*p = v` stores, `*?(m)` masks either. `c ? *p : x`
//!   is a load masked by `c` with `x` elsewhere; more generally every load,
//!   store and atomic inside an arm of `?:` or on the right of a tile `&&`/`||`
//!   is masked by the lanes that use it, so nothing is read out of bounds. With
//!   a scalar left operand, `&&`/`||` short-circuit when the right side has
//!   effects (an `If`).
//! - **Control flow** is structured: `if` is an `If` yielding every outer
//!   variable a branch assigns; `for`/`while`/`do` are `While` ops carrying every
//!   outer variable the loop assigns. `break`/`continue` set hidden flags (the
//!   break flag is carried and ends the loop; statements after a possible jump
//!   run under `if (!flags)`); not supported inside `do ... while`. Conditions
//!   must be scalars. `return;` is a `Return` op.
//! - Effects inside `?:` arms other than memory accesses (`c ? x++ : y`) are not
//!   conditional: both arms are evaluated.
//!
//! Every error is a [`Diagnostic`] with the span of the offending source;
//! [`lower_all`] keeps going after one and reports them all.

mod assign;
mod assigned;
mod binary;
mod builtins;
mod consteval;
mod control_flow;
mod convert;
mod dot;
mod expr;
mod logical;
mod loops;
mod memory;
mod scope;
mod shapes;
mod stmt;
mod subscript;
mod ternary;
mod types;
mod unary;
mod value;

use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{
    BaseType, FunctionDef, ParamAttr, ParamDecl, Stmt, StmtKind, TranslationUnit,
};
use crate::ir::{Function, FunctionBuilder, Module, ParamAttrs, Region, ScalarType, Type, ValueId};
use crate::span::Span;
use scope::{Scopes, Var};
use stmt::Flow;
use value::Val;

/// Checks and lowers every function of `tu`. The result passes `ir::verifier`.
/// Returns the first error; [`lower_all`] reports all of them.
pub fn lower(tu: &TranslationUnit) -> Result<Module> {
    lower_all(tu).map_err(|mut errors| errors.remove(0))
}

/// Like [`lower`], but reports every error it finds (never an empty list on
/// `Err`): after an error, lowering goes on with the next top-level statement
/// of the function, and names whose declaration failed stay quiet.
pub fn lower_all(tu: &TranslationUnit) -> std::result::Result<Module, Vec<Diagnostic>> {
    let mut module = Module::default();
    let mut errors = Vec::new();
    for (i, f) in tu.functions.iter().enumerate() {
        if let Some(prev) = tu.functions[..i]
            .iter()
            .find(|g| g.name.name == f.name.name)
        {
            errors.push(
                Diagnostic::error(
                    f.name.span,
                    format!("function `{}` is defined twice", f.name.name),
                )
                .with_label(prev.name.span, "first defined here"),
            );
            continue;
        }
        match lower_function_all(f) {
            Ok(func) => module.functions.push(func),
            Err(e) => errors.extend(e),
        }
    }
    if errors.is_empty() {
        Ok(module)
    } else {
        Err(errors)
    }
}

/// Lowers one kernel; the first error.
pub fn lower_function(f: &FunctionDef) -> Result<Function> {
    lower_function_all(f).map_err(|mut errors| errors.remove(0))
}

/// Lowers one kernel, reporting every error (see [`lower_all`]).
pub fn lower_function_all(f: &FunctionDef) -> std::result::Result<Function, Vec<Diagnostic>> {
    let rt = &f.return_type;
    if rt.base != BaseType::Void || rt.pointer_depth != 0 {
        return Err(vec![Diagnostic::error(
            rt.span,
            format!("kernel `{}` must return `void`", f.name.name),
        )]);
    }
    let mut cx = Lowerer {
        b: FunctionBuilder::new(f.name.name.clone(), f.span),
        scopes: Scopes::default(),
        loops: Vec::new(),
        guards: Vec::new(),
        param_values: Vec::new(),
        open_regions: 0,
    };
    cx.scopes.push();
    for p in &f.params {
        cx.declare_param(p).map_err(|e| vec![e])?;
    }
    // Parameters and the body's top-level declarations share one scope (C).
    let mut errors = Vec::new();
    let mut failed = false;
    for s in &f.body.stmts {
        let depth = cx.scopes.depth();
        match cx.lower_stmt(s) {
            Ok(Flow::Next) => {}
            Ok(_) => break,
            Err(e) => {
                failed = true;
                if !is_quiet(&e) {
                    errors.push(e);
                }
                cx.recover(depth, s);
            }
        }
    }
    if failed {
        if errors.is_empty() {
            errors.push(Diagnostic::error(
                f.span,
                "internal error: an error was lost",
            ));
        }
        return Err(errors);
    }
    cx.scopes.pop();
    Ok(cx.b.finish())
}

/// An error already reported elsewhere (a use of a name whose declaration failed).
pub(crate) fn quiet_error(span: Span) -> Diagnostic {
    Diagnostic::error(span, "")
}

fn is_quiet(d: &Diagnostic) -> bool {
    d.message.is_empty()
}

/// State while lowering one function.
pub(crate) struct Lowerer {
    pub(crate) b: FunctionBuilder,
    pub(crate) scopes: Scopes,
    /// The loops being lowered, innermost last.
    pub(crate) loops: Vec<loops::LoopFlags>,
    /// Conditions under which the expression being lowered is actually
    /// evaluated (an arm of `?:`, the right side of a tile `&&`), innermost
    /// last and already combined: memory accesses there are masked by it.
    pub(crate) guards: Vec<Val>,
    /// Parameter values keep their own names when copied (`int x = N;`).
    param_values: Vec<ValueId>,
    /// Regions opened through [`Lowerer::open_region`] and not closed yet.
    open_regions: usize,
}

impl Lowerer {
    fn declare_param(&mut self, p: &ParamDecl) -> Result<()> {
        let scalar = types::scalar_of(&p.ty)?;
        let attrs = param_attrs(p, scalar)?;
        let value = self.b.add_param(&p.name.name, Type::scalar(scalar), attrs);
        self.param_values.push(value);
        self.declare(Var {
            name: p.name.name.clone(),
            ty: Type::scalar(scalar),
            value: Some(value),
            decl_span: p.name.span,
            poisoned: false,
        })
    }

    pub(crate) fn open_region(&mut self, arg_types: Vec<Type>) -> Vec<ValueId> {
        self.open_regions += 1;
        self.b.open_region(arg_types)
    }

    pub(crate) fn close_region(&mut self, yields: Vec<ValueId>) -> Region {
        self.open_regions -= 1;
        self.b.close_region(yields)
    }

    /// After an error in top-level statement `s`: drops the half-built regions
    /// and scopes, and declares the names `s` failed to declare as poisoned.
    fn recover(&mut self, scope_depth: usize, s: &Stmt) {
        while self.open_regions > 0 {
            self.close_region(vec![]);
        }
        self.scopes.truncate(scope_depth);
        self.loops.clear();
        self.guards.clear();
        if let StmtKind::Decl(decls) = &s.kind {
            for d in decls {
                // Fails (harmlessly) for the names that were declared.
                let _ = self.scopes.declare(Var {
                    name: d.name.name.clone(),
                    ty: Type::num(crate::ir::DType::I32),
                    value: None,
                    decl_span: d.name.span,
                    poisoned: true,
                });
            }
        }
    }

    /// Names `v` after the variable it is bound to, for printing; parameters
    /// keep theirs.
    pub(crate) fn name_value(&mut self, v: ValueId, name: &str) {
        if !self.param_values.contains(&v) {
            self.b.set_name(v, name);
        }
    }

    /// Declares in the innermost scope; a clash there is an error.
    pub(crate) fn declare(&mut self, var: Var) -> Result<()> {
        let (name, span) = (var.name.clone(), var.decl_span);
        self.scopes.declare(var).map(|_| ()).map_err(|prev| {
            Diagnostic::error(span, format!("redeclaration of `{name}` in the same scope"))
                .with_label(prev, "first declared here")
        })
    }
}

fn param_attrs(p: &ParamDecl, scalar: ScalarType) -> Result<ParamAttrs> {
    let mut attrs = ParamAttrs::default();
    let float_num = matches!(scalar, ScalarType::Num(d) if d.is_float());
    for (attr, span) in &p.attrs {
        match attr {
            ParamAttr::MultipleOf(n) => {
                if *n == 0 || float_num {
                    return Err(Diagnostic::error(
                        *span,
                        format!(
                            "`__multipleof({n})` needs a positive N on an integer or pointer \
                             parameter (`{}` is {scalar})",
                            p.name.name
                        ),
                    ));
                }
                attrs.multiple_of = Some(*n);
            }
            ParamAttr::Aligned(n) => {
                if !scalar.is_ptr() || !n.is_power_of_two() {
                    return Err(Diagnostic::error(
                        *span,
                        format!(
                            "`__aligned({n})` needs a power-of-two N on a pointer parameter \
                             (`{}` is {scalar})",
                            p.name.name
                        ),
                    ));
                }
                attrs.aligned = Some(*n);
            }
            ParamAttr::ReadOnly => attrs.readonly = true,
            ParamAttr::WriteOnly => attrs.writeonly = true,
            ParamAttr::NoAlias => attrs.noalias = true,
        }
    }
    Ok(attrs)
}
