//! Short-hands over `FunctionBuilder` for writing kernels by hand in the
//! interpreter tests. Every op gets its own span so tests can check which op
//! an error points at.
#![allow(dead_code)]

use tritonc::ir::*;
use tritonc::span::Span;

pub struct Kernel {
    pub b: FunctionBuilder,
    ops: u32,
}

pub fn f32s() -> ScalarType {
    ScalarType::Num(DType::F32)
}

impl Kernel {
    pub fn new(name: &str) -> Self {
        Kernel {
            b: FunctionBuilder::new(name, Span::new(0, 0, 1)),
            ops: 0,
        }
    }

    /// The span the next op will get.
    fn span(&mut self) -> Span {
        self.ops += 1;
        let at = 10 * self.ops as usize;
        Span::new(0, at, at + 5)
    }

    /// The span of the op pushed last.
    pub fn last_span(&self) -> Span {
        let at = 10 * self.ops as usize;
        Span::new(0, at, at + 5)
    }

    pub fn ty(&self, v: ValueId) -> Type {
        self.b.ty(v).clone()
    }

    pub fn shape(&self, v: ValueId) -> Vec<usize> {
        self.b.ty(v).shape.clone()
    }

    pub fn push(&mut self, kind: OpKind, ty: Type) -> ValueId {
        let span = self.span();
        self.b.push1(kind, ty, span)
    }

    pub fn push0(&mut self, kind: OpKind) {
        let span = self.span();
        self.b.push(kind, vec![], span);
    }

    pub fn ptr_param(&mut self, name: &str, d: DType) -> ValueId {
        self.b.add_param(name, Type::ptr(d), ParamAttrs::default())
    }

    pub fn param(&mut self, name: &str, d: DType) -> ValueId {
        self.b.add_param(name, Type::num(d), ParamAttrs::default())
    }

    pub fn int(&mut self, v: i64, d: DType, shape: &[usize]) -> ValueId {
        self.push(
            OpKind::Constant {
                value: Const::Int(v),
            },
            Type::tile(ScalarType::Num(d), shape.to_vec()),
        )
    }

    pub fn i32(&mut self, v: i64) -> ValueId {
        self.int(v, DType::I32, &[])
    }

    pub fn float(&mut self, v: f64, d: DType, shape: &[usize]) -> ValueId {
        self.push(
            OpKind::Constant {
                value: Const::Float(v),
            },
            Type::tile(ScalarType::Num(d), shape.to_vec()),
        )
    }

    pub fn boolean(&mut self, v: bool) -> ValueId {
        self.push(
            OpKind::Constant {
                value: Const::Bool(v),
            },
            Type::num(DType::I1),
        )
    }

    pub fn pid(&mut self, axis: u32) -> ValueId {
        self.push(OpKind::ProgramId { axis }, Type::num(DType::I32))
    }

    pub fn nprog(&mut self, axis: u32) -> ValueId {
        self.push(OpKind::NumPrograms { axis }, Type::num(DType::I32))
    }

    pub fn range(&mut self, start: i64, end: i64) -> ValueId {
        let n = (end - start) as usize;
        self.push(
            OpKind::MakeRange { start, end },
            Type::tile(ScalarType::Num(DType::I32), vec![n]),
        )
    }

    pub fn splat(&mut self, src: ValueId, shape: &[usize]) -> ValueId {
        let ty = self.ty(src).with_shape(shape);
        self.push(OpKind::Splat { src }, ty)
    }

    pub fn broadcast(&mut self, src: ValueId, shape: &[usize]) -> ValueId {
        let ty = self.ty(src).with_shape(shape);
        self.push(OpKind::Broadcast { src }, ty)
    }

    pub fn reshape(&mut self, src: ValueId, shape: &[usize]) -> ValueId {
        let ty = self.ty(src).with_shape(shape);
        self.push(OpKind::Reshape { src }, ty)
    }

    /// `x[:, newaxis]` then broadcast to `[n, m]`.
    pub fn column(&mut self, x: ValueId, m: usize) -> ValueId {
        let n = self.shape(x)[0];
        let r = self.reshape(x, &[n, 1]);
        self.broadcast(r, &[n, m])
    }

    /// `x[newaxis, :]` then broadcast to `[n, m]`.
    pub fn row(&mut self, x: ValueId, n: usize) -> ValueId {
        let m = self.shape(x)[0];
        let r = self.reshape(x, &[1, m]);
        self.broadcast(r, &[n, m])
    }

    /// A scalar operand is splatted to the other's shape first (what sema does).
    fn match_shapes(&mut self, a: ValueId, b: ValueId) -> (ValueId, ValueId) {
        let (sa, sb) = (self.shape(a), self.shape(b));
        match (sa.is_empty(), sb.is_empty()) {
            (true, false) => (self.splat(a, &sb), b),
            (false, true) => (a, self.splat(b, &sa)),
            _ => (a, b),
        }
    }

    pub fn bin(&mut self, op: BinOp, lhs: ValueId, rhs: ValueId) -> ValueId {
        let (lhs, rhs) = self.match_shapes(lhs, rhs);
        let ty = self.ty(lhs);
        self.push(OpKind::Binary { op, lhs, rhs }, ty)
    }

    pub fn cmp(&mut self, pred: CmpPred, lhs: ValueId, rhs: ValueId) -> ValueId {
        let (lhs, rhs) = self.match_shapes(lhs, rhs);
        let ty = self.ty(lhs).with_scalar(ScalarType::Num(DType::I1));
        self.push(OpKind::Cmp { pred, lhs, rhs }, ty)
    }

    pub fn unary(&mut self, op: UnOp, src: ValueId) -> ValueId {
        let ty = self.ty(src);
        self.push(OpKind::Unary { op, src }, ty)
    }

    pub fn cast(&mut self, src: ValueId, to: ScalarType) -> ValueId {
        let ty = self.ty(src).with_scalar(to);
        self.push(OpKind::Cast { src }, ty)
    }

    pub fn select(&mut self, cond: ValueId, on_true: ValueId, on_false: ValueId) -> ValueId {
        let ty = self.ty(on_true);
        self.push(
            OpKind::Select {
                cond,
                on_true,
                on_false,
            },
            ty,
        )
    }

    /// `ptr + offset`; a scalar pointer is splatted to the offset's shape.
    pub fn add_ptr(&mut self, ptr: ValueId, offset: ValueId) -> ValueId {
        let (ptr, offset) = self.match_shapes(ptr, offset);
        let ty = self.ty(ptr);
        self.push(OpKind::AddPtr { ptr, offset }, ty)
    }

    pub fn load(&mut self, ptr: ValueId, mask: Option<ValueId>, other: Option<ValueId>) -> ValueId {
        let t = self.ty(ptr);
        let ty = t.with_scalar(ScalarType::Num(t.scalar.dtype()));
        self.push(OpKind::Load { ptr, mask, other }, ty)
    }

    pub fn store(&mut self, ptr: ValueId, value: ValueId, mask: Option<ValueId>) {
        self.push0(OpKind::Store { ptr, value, mask });
    }

    pub fn trans(&mut self, src: ValueId) -> ValueId {
        let s = self.shape(src);
        let ty = self.ty(src).with_shape(&[s[1], s[0]]);
        self.push(OpKind::Trans { src }, ty)
    }

    pub fn reduce(&mut self, src: ValueId, axis: usize, kind: ReduceKind) -> ValueId {
        let mut s = self.shape(src);
        s.remove(axis);
        let ty = self.ty(src).with_shape(&s);
        self.push(OpKind::Reduce { src, axis, kind }, ty)
    }

    pub fn dot(&mut self, a: ValueId, b: ValueId, acc: ValueId) -> ValueId {
        let ty = self.ty(acc);
        self.push(OpKind::Dot { a, b, acc }, ty)
    }

    pub fn atomic(
        &mut self,
        op: AtomicOp,
        ptr: ValueId,
        value: ValueId,
        mask: Option<ValueId>,
    ) -> ValueId {
        let ty = self.ty(value);
        self.push(
            OpKind::AtomicRmw {
                op,
                ptr,
                value,
                mask,
            },
            ty,
        )
    }

    /// An `If` over regions built already, at the span of the op pushed last.
    pub fn push_if(
        &mut self,
        cond: ValueId,
        then_region: Region,
        else_region: Region,
        results: Vec<Type>,
    ) -> Vec<ValueId> {
        let span = self.last_span();
        let kind = OpKind::If {
            cond,
            then_region,
            else_region,
        };
        self.b.push(kind, results, span)
    }

    /// A `While` over regions built already, at the span of the op pushed last.
    pub fn push_while(
        &mut self,
        inits: Vec<ValueId>,
        cond_region: Region,
        body_region: Region,
        results: Vec<Type>,
    ) -> Vec<ValueId> {
        let span = self.last_span();
        let kind = OpKind::While {
            inits,
            cond_region,
            body_region,
            pipeline: None,
            prefetch: None,
        };
        self.b.push(kind, results, span)
    }

    /// `if (cond) return;`
    pub fn return_if(&mut self, cond: ValueId) {
        self.b.open_region(vec![]);
        self.push0(OpKind::Return);
        let then_region = self.b.close_region(vec![]);
        self.b.open_region(vec![]);
        let else_region = self.b.close_region(vec![]);
        self.push_if(cond, then_region, else_region, vec![]);
    }

    /// `base + rows * stride + cols`: the pointers of a row-major tile, `rows`
    /// a column of row indices and `cols` a row of column indices (both
    /// broadcast to the tile); a scalar `stride` is splatted.
    pub fn tile_ptrs(
        &mut self,
        base: ValueId,
        rows: ValueId,
        stride: ValueId,
        cols: ValueId,
    ) -> ValueId {
        let row_off = self.bin(BinOp::Mul, rows, stride);
        let off = self.bin(BinOp::Add, row_off, cols);
        self.add_ptr(base, off)
    }

    /// `(rows < row_end) & (cols < col_end)`: the lanes of a tile in bounds.
    pub fn in_bounds(
        &mut self,
        rows: ValueId,
        row_end: ValueId,
        cols: ValueId,
        col_end: ValueId,
    ) -> ValueId {
        let rows_ok = self.cmp(CmpPred::Lt, rows, row_end);
        let cols_ok = self.cmp(CmpPred::Lt, cols, col_end);
        self.bin(BinOp::And, rows_ok, cols_ok)
    }

    pub fn finish(self) -> Function {
        self.b.finish()
    }
}

pub trait WithShape {
    fn with_shape(&self, shape: &[usize]) -> Type;
}

impl WithShape for Type {
    fn with_shape(&self, shape: &[usize]) -> Type {
        Type::tile(self.scalar, shape.to_vec())
    }
}
