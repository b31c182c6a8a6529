//! Shorthands to write Triton-IR by hand in tests (through `FunctionBuilder`),
//! and the sample kernels several test files share.
#![allow(dead_code)]

use tritonc::ir::*;
use tritonc::span::Span;

pub fn i32t() -> Type {
    Type::num(DType::I32)
}
pub fn f32t() -> Type {
    Type::num(DType::F32)
}
pub fn tile(d: DType, shape: &[usize]) -> Type {
    Type::tile(ScalarType::Num(d), shape.to_vec())
}
pub fn ptr_tile(d: DType, shape: &[usize]) -> Type {
    Type::tile(ScalarType::Ptr(d), shape.to_vec())
}

/// A `FunctionBuilder` with one method per op; every op gets a distinct span
/// (`start` = its number) so tests can tell which op an error points at.
pub struct B {
    pub b: FunctionBuilder,
    next_span: usize,
}

impl B {
    pub fn new(name: &str) -> Self {
        B {
            b: FunctionBuilder::new(name, Span::new(0, 0, 1000)),
            next_span: 1,
        }
    }

    pub fn span(&mut self) -> Span {
        let s = Span::new(0, self.next_span, self.next_span + 1);
        self.next_span += 1;
        s
    }

    pub fn param(&mut self, name: &str, ty: Type) -> ValueId {
        self.b.add_param(name, ty, ParamAttrs::default())
    }

    pub fn param_attrs(&mut self, name: &str, ty: Type, attrs: ParamAttrs) -> ValueId {
        self.b.add_param(name, ty, attrs)
    }

    pub fn op(&mut self, kind: OpKind, ty: Type) -> ValueId {
        let s = self.span();
        self.b.push1(kind, ty, s)
    }

    pub fn op0(&mut self, kind: OpKind) {
        let s = self.span();
        self.b.push(kind, vec![], s);
    }

    pub fn ty(&self, v: ValueId) -> Type {
        self.b.ty(v).clone()
    }

    pub fn name(&mut self, v: ValueId, name: &str) -> ValueId {
        self.b.set_name(v, name);
        v
    }

    pub fn int(&mut self, v: i64, ty: Type) -> ValueId {
        self.op(
            OpKind::Constant {
                value: Const::Int(v),
            },
            ty,
        )
    }

    pub fn float(&mut self, v: f64, ty: Type) -> ValueId {
        self.op(
            OpKind::Constant {
                value: Const::Float(v),
            },
            ty,
        )
    }

    pub fn pid(&mut self, axis: u32) -> ValueId {
        self.op(OpKind::ProgramId { axis }, i32t())
    }

    pub fn range(&mut self, start: i64, end: i64) -> ValueId {
        self.op(
            OpKind::MakeRange { start, end },
            tile(DType::I32, &[(end - start) as usize]),
        )
    }

    pub fn splat(&mut self, src: ValueId, shape: &[usize]) -> ValueId {
        let t = Type::tile(self.b.ty(src).scalar, shape.to_vec());
        self.op(OpKind::Splat { src }, t)
    }

    pub fn broadcast(&mut self, src: ValueId, shape: &[usize]) -> ValueId {
        let t = Type::tile(self.b.ty(src).scalar, shape.to_vec());
        self.op(OpKind::Broadcast { src }, t)
    }

    pub fn reshape(&mut self, src: ValueId, shape: &[usize]) -> ValueId {
        let t = Type::tile(self.b.ty(src).scalar, shape.to_vec());
        self.op(OpKind::Reshape { src }, t)
    }

    pub fn bin(&mut self, op: BinOp, lhs: ValueId, rhs: ValueId) -> ValueId {
        let t = self.ty(lhs);
        self.op(OpKind::Binary { op, lhs, rhs }, t)
    }

    pub fn cmp(&mut self, pred: CmpPred, lhs: ValueId, rhs: ValueId) -> ValueId {
        let t = self.ty(lhs).with_scalar(ScalarType::Num(DType::I1));
        self.op(OpKind::Cmp { pred, lhs, rhs }, t)
    }

    pub fn unary(&mut self, op: UnOp, src: ValueId) -> ValueId {
        let t = self.ty(src);
        self.op(OpKind::Unary { op, src }, t)
    }

    pub fn addptr(&mut self, ptr: ValueId, offset: ValueId) -> ValueId {
        let t = self.ty(ptr);
        self.op(OpKind::AddPtr { ptr, offset }, t)
    }

    pub fn load(&mut self, ptr: ValueId, mask: Option<ValueId>) -> ValueId {
        let p = self.ty(ptr);
        let t = p.with_scalar(ScalarType::Num(p.scalar.dtype()));
        self.op(
            OpKind::Load {
                ptr,
                mask,
                other: None,
            },
            t,
        )
    }

    pub fn store(&mut self, ptr: ValueId, value: ValueId, mask: Option<ValueId>) {
        self.op0(OpKind::Store { ptr, value, mask });
    }

    pub fn reduce(&mut self, src: ValueId, axis: usize, kind: ReduceKind) -> ValueId {
        let s = self.ty(src);
        let mut shape = s.shape.clone();
        shape.remove(axis);
        self.op(
            OpKind::Reduce { src, axis, kind },
            Type::tile(s.scalar, shape),
        )
    }

    pub fn finish(self) -> Function {
        self.b.finish()
    }
}

/// `Z[i] = X[i] + Y[i]` for `i < N`, one program per `SIZE` elements:
/// `int off[SIZE] = id * SIZE + 0 ... SIZE`. `n_attrs` are the attributes of `N`.
pub fn add_kernel(size: usize, n_attrs: ParamAttrs) -> Function {
    let mut k = B::new("add");
    let f32p = Type::ptr(DType::F32);
    let x = k.param("X", f32p.clone());
    let y = k.param("Y", f32p.clone());
    let z = k.param("Z", f32p);
    let n = k.param_attrs("N", i32t(), n_attrs);
    let id = k.pid(0);
    k.name(id, "id");
    let size_c = k.int(size as i64, i32t());
    let base = k.bin(BinOp::Mul, id, size_c);
    let base_t = k.splat(base, &[size]);
    let r = k.range(0, size as i64);
    let off = k.bin(BinOp::Add, base_t, r);
    k.name(off, "off");
    let n_t = k.splat(n, &[size]);
    let mask = k.cmp(CmpPred::Lt, off, n_t);
    k.name(mask, "mask");
    let mut ptrs = Vec::new();
    for (p, name) in [(x, "px"), (y, "py"), (z, "pz")] {
        let pt = k.splat(p, &[size]);
        let pp = k.addptr(pt, off);
        k.name(pp, name);
        ptrs.push(pp);
    }
    let xv = k.load(ptrs[0], Some(mask));
    let yv = k.load(ptrs[1], Some(mask));
    let zv = k.bin(BinOp::Add, xv, yv);
    k.store(ptrs[2], zv, Some(mask));
    k.finish()
}

/// `acc[128] = 0; for (i = 0; i < n; i++) acc += X[i * 128 + 0 ... 128]; *Y... = acc`:
/// a loop carrying a scalar and a tile.
pub fn sum_loop_kernel() -> Function {
    let mut k = B::new("sum_rows");
    let x = k.param("X", Type::ptr(DType::F32));
    let y = k.param("Y", Type::ptr(DType::F32));
    let n = k.param("n", i32t());
    let zero = k.int(0, i32t());
    k.name(zero, "i");
    let acc0 = k.float(0.0, tile(DType::F32, &[128]));
    k.name(acc0, "acc");
    let r = k.range(0, 128);
    let px = k.splat(x, &[128]);
    let px = k.addptr(px, r);
    // cond(i, acc): i < n
    let cargs = k.b.open_region(vec![i32t(), tile(DType::F32, &[128])]);
    let c = k.cmp(CmpPred::Lt, cargs[0], n);
    let cond = k.b.close_region(vec![c]);
    // body(i, acc)
    let args = k.b.open_region(vec![i32t(), tile(DType::F32, &[128])]);
    k.name(args[0], "i");
    k.name(args[1], "acc");
    let c128 = k.int(128, i32t());
    let row = k.bin(BinOp::Mul, args[0], c128);
    let row_t = k.splat(row, &[128]);
    let p = k.addptr(px, row_t);
    let v = k.load(p, None);
    let acc = k.bin(BinOp::Add, args[1], v);
    let one = k.int(1, i32t());
    let i = k.bin(BinOp::Add, args[0], one);
    let body = k.b.close_region(vec![i, acc]);
    let s = k.span();
    let res = k.b.push(
        OpKind::While {
            inits: vec![zero, acc0],
            cond_region: cond,
            body_region: body,
            pipeline: None,
            prefetch: None,
        },
        vec![i32t(), tile(DType::F32, &[128])],
        s,
    );
    k.name(res[1], "acc");
    let py = k.splat(y, &[128]);
    let py = k.addptr(py, r);
    k.store(py, res[1], None);
    k.finish()
}

/// Softmax of one row of 128 floats per program: max and sum reductions.
pub fn softmax_kernel() -> Function {
    let mut k = B::new("softmax");
    let x = k.param_attrs(
        "X",
        Type::ptr(DType::F32),
        ParamAttrs {
            readonly: true,
            ..Default::default()
        },
    );
    let y = k.param("Y", Type::ptr(DType::F32));
    let stride = k.param_attrs(
        "stride",
        i32t(),
        ParamAttrs {
            multiple_of: Some(16),
            ..Default::default()
        },
    );
    let row = k.pid(0);
    let base = k.bin(BinOp::Mul, row, stride);
    let base_t = k.splat(base, &[128]);
    let r = k.range(0, 128);
    let off = k.bin(BinOp::Add, base_t, r);
    let px = k.splat(x, &[128]);
    let px = k.addptr(px, off);
    let xv = k.load(px, None);
    k.name(xv, "x");
    let m = k.reduce(xv, 0, ReduceKind::Max);
    k.name(m, "m");
    let m_t = k.splat(m, &[128]);
    let d = k.bin(BinOp::Sub, xv, m_t);
    let e = k.unary(UnOp::Exp, d);
    let s = k.reduce(e, 0, ReduceKind::Sum);
    k.name(s, "s");
    let s_t = k.splat(s, &[128]);
    let out = k.bin(BinOp::Div, e, s_t);
    let py = k.splat(y, &[128]);
    let py = k.addptr(py, off);
    k.store(py, out, None);
    k.finish()
}

/// `if (pid == 0) { v = 1 } else { v = 2 }; *P = v; if (n < 0) return;`
pub fn if_kernel() -> Function {
    let mut k = B::new("branch");
    let p = k.param("P", Type::ptr(DType::I32));
    let n = k.param("n", i32t());
    let pid = k.pid(0);
    let zero = k.int(0, i32t());
    let c = k.cmp(CmpPred::Eq, pid, zero);
    k.b.open_region(vec![]);
    let one = k.int(1, i32t());
    let then_r = k.b.close_region(vec![one]);
    k.b.open_region(vec![]);
    let two = k.int(2, i32t());
    let else_r = k.b.close_region(vec![two]);
    let s = k.span();
    let v = k.b.push1(
        OpKind::If {
            cond: c,
            then_region: then_r,
            else_region: else_r,
        },
        i32t(),
        s,
    );
    k.store(p, v, None);
    let neg = k.cmp(CmpPred::Lt, n, zero);
    k.b.open_region(vec![]);
    k.op0(OpKind::Return);
    let then_r = k.b.close_region(vec![]);
    k.b.open_region(vec![]);
    let else_r = k.b.close_region(vec![]);
    k.op0(OpKind::If {
        cond: neg,
        then_region: then_r,
        else_region: else_r,
    });
    k.finish()
}

/// The matmul of the seed, pointer setup and loop:
/// `A + rk[newaxis, :] * 1 + rm[:, newaxis] * lda` (and B, C likewise),
/// with `lda`, `ldb`, `ldc` carrying `stride_attrs`.
pub fn matmul_kernel(tm: usize, tn: usize, tk: usize, stride_attrs: ParamAttrs) -> Function {
    let mut k = B::new("dot");
    let f16p = Type::ptr(DType::F16);
    let a = k.param("A", f16p.clone());
    let bp = k.param("B", f16p);
    let cp = k.param("C", Type::ptr(DType::F32));
    let _m = k.param("M", i32t());
    let _n = k.param("N", i32t());
    let kk = k.param("K", i32t());
    let lda = k.param_attrs("lda", i32t(), stride_attrs.clone());
    let ldb = k.param_attrs("ldb", i32t(), stride_attrs.clone());
    let ldc = k.param_attrs("ldc", i32t(), stride_attrs);
    let pm = k.pid(0);
    let pn = k.pid(1);
    let tm_c = k.int(tm as i64, i32t());
    let tn_c = k.int(tn as i64, i32t());
    let rm = {
        let b = k.bin(BinOp::Mul, pm, tm_c);
        let b = k.splat(b, &[tm]);
        let r = k.range(0, tm as i64);
        k.bin(BinOp::Add, b, r)
    };
    k.name(rm, "rm");
    let rn = {
        let b = k.bin(BinOp::Mul, pn, tn_c);
        let b = k.splat(b, &[tn]);
        let r = k.range(0, tn as i64);
        k.bin(BinOp::Add, b, r)
    };
    k.name(rn, "rn");
    let rk = k.range(0, tk as i64);
    k.name(rk, "rk");
    let c0 = k.float(0.0, tile(DType::F32, &[tm, tn]));
    // pa = A + rk[newaxis, :] * 1 + rm[:, newaxis] * lda
    let pa = {
        let rk_row = k.reshape(rk, &[1, tk]);
        let rk_b = k.broadcast(rk_row, &[tm, tk]);
        let one = k.int(1, tile(DType::I32, &[tm, tk]));
        let rk_1 = k.bin(BinOp::Mul, rk_b, one);
        let rm_col = k.reshape(rm, &[tm, 1]);
        let rm_b = k.broadcast(rm_col, &[tm, tk]);
        let lda_t = k.splat(lda, &[tm, tk]);
        let rm_l = k.bin(BinOp::Mul, rm_b, lda_t);
        let at = k.splat(a, &[tm, tk]);
        let p = k.addptr(at, rk_1);
        k.addptr(p, rm_l)
    };
    k.name(pa, "pa");
    // pb = B + rk[:, newaxis] * ldb + rn[newaxis, :]
    let pb = {
        let rk_col = k.reshape(rk, &[tk, 1]);
        let rk_b = k.broadcast(rk_col, &[tk, tn]);
        let ldb_t = k.splat(ldb, &[tk, tn]);
        let rk_l = k.bin(BinOp::Mul, rk_b, ldb_t);
        let rn_row = k.reshape(rn, &[1, tn]);
        let rn_b = k.broadcast(rn_row, &[tk, tn]);
        let bt = k.splat(bp, &[tk, tn]);
        let p = k.addptr(bt, rk_l);
        k.addptr(p, rn_b)
    };
    k.name(pb, "pb");
    let carried = vec![
        Type::num(DType::I32),
        tile(DType::F32, &[tm, tn]),
        ptr_tile(DType::F16, &[tm, tk]),
        ptr_tile(DType::F16, &[tk, tn]),
    ];
    let cargs = k.b.open_region(carried.clone());
    let zero = k.int(0, i32t());
    let c = k.cmp(CmpPred::Gt, cargs[0], zero);
    let cond = k.b.close_region(vec![c]);
    let args = k.b.open_region(carried.clone());
    k.name(args[0], "k");
    k.name(args[1], "c");
    k.name(args[2], "pa");
    k.name(args[3], "pb");
    let av = k.load(args[2], None);
    let bv = k.load(args[3], None);
    let c_ty = k.ty(args[1]);
    let cn = k.op(
        OpKind::Dot {
            a: av,
            b: bv,
            acc: args[1],
        },
        c_ty,
    );
    let tk_a = k.int(tk as i64, tile(DType::I32, &[tm, tk]));
    let pa_n = k.addptr(args[2], tk_a);
    let tk_s = k.int(tk as i64, i32t());
    let step_b = k.bin(BinOp::Mul, tk_s, ldb);
    let step_b = k.splat(step_b, &[tk, tn]);
    let pb_n = k.addptr(args[3], step_b);
    let k_n = k.bin(BinOp::Sub, args[0], tk_s);
    let body = k.b.close_region(vec![k_n, cn, pa_n, pb_n]);
    let s = k.span();
    let res = k.b.push(
        OpKind::While {
            inits: vec![kk, c0, pa, pb],
            cond_region: cond,
            body_region: body,
            pipeline: None,
            prefetch: None,
        },
        carried,
        s,
    );
    // pc = C + rn[newaxis, :] + rm[:, newaxis] * ldc
    let pc = {
        let rn_row = k.reshape(rn, &[1, tn]);
        let rn_b = k.broadcast(rn_row, &[tm, tn]);
        let rm_col = k.reshape(rm, &[tm, 1]);
        let rm_b = k.broadcast(rm_col, &[tm, tn]);
        let ldc_t = k.splat(ldc, &[tm, tn]);
        let rm_l = k.bin(BinOp::Mul, rm_b, ldc_t);
        let ct = k.splat(cp, &[tm, tn]);
        let p = k.addptr(ct, rn_b);
        k.addptr(p, rm_l)
    };
    k.name(pc, "pc");
    k.store(pc, res[1], None);
    k.finish()
}
