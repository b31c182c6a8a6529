//! The Triton-C syntax tree, as written (after preprocessing). Sema turns it into
//! Triton-IR; nothing here is typed or checked yet.

use crate::span::Span;

#[derive(Clone, Debug, PartialEq)]
pub struct TranslationUnit {
    pub functions: Vec<FunctionDef>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FunctionDef {
    pub name: Ident,
    /// Written with `__global__` (every function is a kernel today; kept for tools).
    pub is_global: bool,
    pub return_type: TypeSpec,
    pub params: Vec<ParamDecl>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BaseType {
    Void,
    Bool,
    /// `char`, `int8_t`
    Int8,
    /// `short`, `int16_t`
    Int16,
    /// `int`, `int32_t`
    Int32,
    /// `long`, `long long`, `int64_t`
    Int64,
    /// `half`, `fp16`
    Half,
    /// `bf16`, `bfloat16`
    BFloat16,
    Float,
    Double,
}

/// A type as written: base type, `*` count and qualifiers.
/// `TYPE* pa[TM, TK]` has `TypeSpec { base: Float, pointer_depth: 1 }`; the tile
/// shape belongs to the declarator.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeSpec {
    pub base: BaseType,
    pub pointer_depth: u8,
    pub is_const: bool,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ParamAttr {
    /// `__multipleof(N)`: the integer (or pointer address, in elements) is a multiple of N.
    MultipleOf(u64),
    /// `__aligned(N)`: the pointer is aligned to N bytes.
    Aligned(u64),
    /// `__readonly`
    ReadOnly,
    /// `__writeonly`
    WriteOnly,
    /// `__noalias`
    NoAlias,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParamDecl {
    pub ty: TypeSpec,
    pub name: Ident,
    pub attrs: Vec<(ParamAttr, Span)>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

/// One declared name: `pa[TM, TK] = init`. `ty` is the full type of this
/// declarator (declarator `*`s already added to the base).
#[derive(Clone, Debug, PartialEq)]
pub struct Declarator {
    pub name: Ident,
    pub ty: TypeSpec,
    /// Tile shape; `None` for scalars. Each dim is a constant expression.
    pub shape: Option<Vec<Expr>>,
    pub init: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `int a = 1, b[4] = 0;`
    Decl(Vec<Declarator>),
    Expr(Expr),
    Block(Block),
    If {
        cond: Expr,
        then_branch: Box<Stmt>,
        else_branch: Option<Box<Stmt>>,
    },
    For {
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        step: Option<Expr>,
        body: Box<Stmt>,
    },
    While {
        cond: Expr,
        body: Box<Stmt>,
    },
    DoWhile {
        body: Box<Stmt>,
        cond: Expr,
    },
    Return(Option<Expr>),
    Break,
    Continue,
    /// `;`
    Empty,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `+x`
    Plus,
    /// `!x`
    Not,
    /// `~x`
    BitNot,
    /// `*p`: load
    Deref,
    /// `^x`: transpose of a 2-D tile
    Trans,
    /// `++x`
    PreInc,
    /// `--x`
    PreDec,
    /// `x++`
    PostInc,
    /// `x--`
    PostDec,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    LogicalAnd,
    LogicalOr,
    /// `a @ b`: tile matrix product
    MatMul,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `x[:, +]`
    Sum,
    /// `x[:, max]`
    Max,
    /// `x[:, min]`
    Min,
}

/// One entry of a subscript `x[:, newaxis]`, `x[:, +]`.
#[derive(Clone, Debug, PartialEq)]
pub enum SliceItem {
    /// `:` keep this axis
    All,
    /// `newaxis` insert an axis of size 1 (broadcast later)
    NewAxis,
    /// `+`, `max`, `min`: reduce this axis
    Reduce(ReduceOp),
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    IntLit(i64),
    FloatLit {
        value: f64,
        is_f32: bool,
    },
    /// `true` / `false`
    BoolLit(bool),
    Ident(String),
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `start ... end`: an int tile `[start, start+1, ..., end-1]`.
    /// Binds tighter than `+`/`-` and looser than `*`, so `pm * TM + 0 ... TM`
    /// is `pm * TM + (0 ... TM)`.
    Range {
        start: Box<Expr>,
        end: Box<Expr>,
    },
    /// `target = value` or compound `target op= value` (`op` set).
    Assign {
        op: Option<BinaryOp>,
        target: Box<Expr>,
        value: Box<Expr>,
    },
    Ternary {
        cond: Box<Expr>,
        then_expr: Box<Expr>,
        else_expr: Box<Expr>,
    },
    Call {
        callee: Ident,
        args: Vec<Expr>,
    },
    Cast {
        ty: TypeSpec,
        expr: Box<Expr>,
    },
    Subscript {
        base: Box<Expr>,
        items: Vec<(SliceItem, Span)>,
    },
    /// `*?(mask) ptr`: masked load, or masked store when assigned to.
    MaskedDeref {
        mask: Box<Expr>,
        ptr: Box<Expr>,
    },
}
