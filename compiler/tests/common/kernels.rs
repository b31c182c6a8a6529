//! Hand-built Triton-IR kernels (the parser is written elsewhere): a thin
//! helper over `FunctionBuilder` and the kernels the codegen tests compile.
#![allow(dead_code)]
use tritonc::ir::*;
use tritonc::span::Span;

pub struct K {
    pub b: FunctionBuilder,
}

fn sp() -> Span {
    Span::default()
}

impl K {
    pub fn new(name: &str) -> K {
        K {
            b: FunctionBuilder::new(name, sp()),
        }
    }
    pub fn ptr(&mut self, name: &str, d: DType) -> ValueId {
        self.b.add_param(name, Type::ptr(d), ParamAttrs::default())
    }
    pub fn int(&mut self, name: &str) -> ValueId {
        self.b
            .add_param(name, Type::num(DType::I32), ParamAttrs::default())
    }
    pub fn int_multiple_of(&mut self, name: &str, m: u64) -> ValueId {
        let attrs = ParamAttrs {
            multiple_of: Some(m),
            ..Default::default()
        };
        self.b.add_param(name, Type::num(DType::I32), attrs)
    }
    pub fn ty(&self, v: ValueId) -> Type {
        self.b.ty(v).clone()
    }
    pub fn pid(&mut self, axis: u32) -> ValueId {
        self.b
            .push1(OpKind::ProgramId { axis }, Type::num(DType::I32), sp())
    }
    pub fn cint(&mut self, v: i64) -> ValueId {
        self.b.push1(
            OpKind::Constant {
                value: Const::Int(v),
            },
            Type::num(DType::I32),
            sp(),
        )
    }
    pub fn constant(&mut self, value: Const, ty: Type) -> ValueId {
        self.b.push1(OpKind::Constant { value }, ty, sp())
    }
    pub fn range(&mut self, n: usize) -> ValueId {
        self.b.push1(
            OpKind::MakeRange {
                start: 0,
                end: n as i64,
            },
            Type::tile(ScalarType::Num(DType::I32), vec![n]),
            sp(),
        )
    }
    pub fn splat(&mut self, src: ValueId, shape: &[usize]) -> ValueId {
        let t = Type::tile(self.ty(src).scalar, shape.to_vec());
        self.b.push1(OpKind::Splat { src }, t, sp())
    }
    pub fn bin(&mut self, op: BinOp, lhs: ValueId, rhs: ValueId) -> ValueId {
        let t = self.ty(lhs);
        self.b.push1(OpKind::Binary { op, lhs, rhs }, t, sp())
    }
    pub fn cmp(&mut self, pred: CmpPred, lhs: ValueId, rhs: ValueId) -> ValueId {
        let t = self.ty(lhs).with_scalar(ScalarType::Num(DType::I1));
        self.b.push1(OpKind::Cmp { pred, lhs, rhs }, t, sp())
    }
    pub fn unary(&mut self, op: UnOp, src: ValueId) -> ValueId {
        let t = self.ty(src);
        self.b.push1(OpKind::Unary { op, src }, t, sp())
    }
    pub fn cast(&mut self, src: ValueId, to: DType) -> ValueId {
        let t = self.ty(src).with_scalar(ScalarType::Num(to));
        self.b.push1(OpKind::Cast { src }, t, sp())
    }
    pub fn addptr(&mut self, ptr: ValueId, offset: ValueId) -> ValueId {
        let t = self.ty(offset).with_scalar(self.ty(ptr).scalar);
        self.b.push1(OpKind::AddPtr { ptr, offset }, t, sp())
    }
    pub fn reshape(&mut self, src: ValueId, shape: &[usize]) -> ValueId {
        let t = Type::tile(self.ty(src).scalar, shape.to_vec());
        self.b.push1(OpKind::Reshape { src }, t, sp())
    }
    pub fn broadcast(&mut self, src: ValueId, shape: &[usize]) -> ValueId {
        let t = Type::tile(self.ty(src).scalar, shape.to_vec());
        self.b.push1(OpKind::Broadcast { src }, t, sp())
    }
    /// `x[:, newaxis]` broadcast to `[n, m]` (axis 1) or `x[newaxis, :]` to `[m, n]` (axis 0).
    pub fn expand(&mut self, x: ValueId, axis: usize, shape: &[usize]) -> ValueId {
        let mut s = self.ty(x).shape.clone();
        s.insert(axis, 1);
        let r = self.reshape(x, &s);
        self.broadcast(r, shape)
    }
    pub fn load(&mut self, ptr: ValueId, mask: Option<ValueId>, other: Option<ValueId>) -> ValueId {
        let t = self
            .ty(ptr)
            .with_scalar(ScalarType::Num(self.ty(ptr).scalar.dtype()));
        self.b.push1(OpKind::Load { ptr, mask, other }, t, sp())
    }
    pub fn store(&mut self, ptr: ValueId, value: ValueId, mask: Option<ValueId>) {
        self.b
            .push(OpKind::Store { ptr, value, mask }, Vec::new(), sp());
    }
    pub fn reduce(&mut self, src: ValueId, axis: usize, kind: ReduceKind) -> ValueId {
        let mut t = self.ty(src);
        t.shape.remove(axis);
        self.b.push1(OpKind::Reduce { src, axis, kind }, t, sp())
    }
    pub fn trans(&mut self, src: ValueId) -> ValueId {
        let mut t = self.ty(src);
        t.shape.reverse();
        self.b.push1(OpKind::Trans { src }, t, sp())
    }
    pub fn finish(self) -> Function {
        self.b.finish()
    }
}

/// `z[i] = x[i] + y[i]` over `SIZE`-element tiles, masked with `i < n` when `masked`.
pub fn vector_add(dtype: DType, size: usize, masked: bool, n_multiple_of: Option<u64>) -> Function {
    let mut k = K::new("add");
    let (x, y, z) = (k.ptr("x", dtype), k.ptr("y", dtype), k.ptr("z", dtype));
    let n = match n_multiple_of {
        Some(m) => k.int_multiple_of("n", m),
        None => k.int("n"),
    };
    let pid = k.pid(0);
    let c = k.cint(size as i64);
    let start = k.bin(BinOp::Mul, pid, c);
    let start = k.splat(start, &[size]);
    let r = k.range(size);
    let offs = k.bin(BinOp::Add, start, r);
    let mask = if masked {
        let ns = k.splat(n, &[size]);
        Some(k.cmp(CmpPred::Lt, offs, ns))
    } else {
        None
    };
    let ptr_to = |k: &mut K, base: ValueId| {
        let b = k.splat(base, &[size]);
        k.addptr(b, offs)
    };
    let px = ptr_to(&mut k, x);
    let py = ptr_to(&mut k, y);
    let pz = ptr_to(&mut k, z);
    let a = k.load(px, mask, None);
    let b = k.load(py, mask, None);
    let s = k.bin(BinOp::Add, a, b);
    k.store(pz, s, mask);
    k.finish()
}

/// Pointers `base + rows[:, newaxis] * stride + cols[newaxis, :]` for a `[m, n]` tile.
pub fn tile_ptrs(
    k: &mut K,
    base: ValueId,
    rows: ValueId,
    cols: ValueId,
    stride: ValueId,
    m: usize,
    n: usize,
) -> ValueId {
    let st = k.splat(stride, &[m]);
    let r = k.bin(BinOp::Mul, rows, st);
    let r2 = k.expand(r, 1, &[m, n]);
    let c2 = k.expand(cols, 0, &[m, n]);
    let off = k.bin(BinOp::Add, r2, c2);
    let b = k.splat(base, &[m, n]);
    k.addptr(b, off)
}

/// `[m, n]` bounds mask `rows < m_lim && cols < n_lim`.
pub fn tile_mask(
    k: &mut K,
    rows: ValueId,
    cols: ValueId,
    ml: ValueId,
    nl: ValueId,
    m: usize,
    n: usize,
) -> ValueId {
    let mls = k.splat(ml, &[m]);
    let rm = k.cmp(CmpPred::Lt, rows, mls);
    let nls = k.splat(nl, &[n]);
    let cm = k.cmp(CmpPred::Lt, cols, nls);
    let rm2 = k.expand(rm, 1, &[m, n]);
    let cm2 = k.expand(cm, 0, &[m, n]);
    k.bin(BinOp::And, rm2, cm2)
}

/// Block `(pid0, pid1)` offsets along both axes: `pid * t + 0..t`.
pub fn block_range(k: &mut K, axis: u32, t: usize) -> ValueId {
    let pid = k.pid(axis);
    let c = k.cint(t as i64);
    let s = k.bin(BinOp::Mul, pid, c);
    let s = k.splat(s, &[t]);
    let r = k.range(t);
    k.bin(BinOp::Add, s, r)
}

/// `y[j, i] = x[i, j]` for an `m x n` matrix with row strides, in `t x t` tiles.
pub fn transpose(dtype: DType, t: usize) -> Function {
    let mut k = K::new("transpose");
    let (x, y) = (k.ptr("x", dtype), k.ptr("y", dtype));
    let (m, n) = (k.int("m"), k.int("n"));
    let (sx, sy) = (k.int("stride_x"), k.int("stride_y"));
    let rows = block_range(&mut k, 0, t);
    let cols = block_range(&mut k, 1, t);
    let px = tile_ptrs(&mut k, x, rows, cols, sx, t, t);
    let mask = tile_mask(&mut k, rows, cols, m, n, t, t);
    let v = k.load(px, Some(mask), None);
    let vt = k.trans(v);
    let py = tile_ptrs(&mut k, y, cols, rows, sy, t, t);
    let mt = tile_mask(&mut k, cols, rows, n, m, t, t);
    k.store(py, vt, Some(mt));
    k.finish()
}

/// Row softmax of an `m x n` matrix, one `bm x bn` tile (whole rows) per program.
pub fn softmax(bm: usize, bn: usize) -> Function {
    softmax_with(bm, bn, None)
}

/// [`softmax`] with `n` declared `__multipleof(n_multiple_of)` (vectorizes the masked accesses).
pub fn softmax_with(bm: usize, bn: usize, n_multiple_of: Option<u64>) -> Function {
    let mut k = K::new("softmax");
    let (x, y) = (k.ptr("x", DType::F32), k.ptr("y", DType::F32));
    let m = k.int("m");
    let n = match n_multiple_of {
        Some(d) => k.int_multiple_of("n", d),
        None => k.int("n"),
    };
    let stride = k.int_multiple_of("stride", 16);
    let rows = block_range(&mut k, 0, bm);
    let cols = k.range(bn);
    let px = tile_ptrs(&mut k, x, rows, cols, stride, bm, bn);
    let mask = tile_mask(&mut k, rows, cols, m, n, bm, bn);
    let ninf = k.constant(
        Const::Float(f64::NEG_INFINITY),
        Type::tile(ScalarType::Num(DType::F32), vec![bm, bn]),
    );
    let v = k.load(px, Some(mask), Some(ninf));
    let mx = k.reduce(v, 1, ReduceKind::Max);
    let mx2 = k.expand(mx, 1, &[bm, bn]);
    let d = k.bin(BinOp::Sub, v, mx2);
    let e = k.unary(UnOp::Exp, d);
    let s = k.reduce(e, 1, ReduceKind::Sum);
    let s2 = k.expand(s, 1, &[bm, bn]);
    let out = k.bin(BinOp::Div, e, s2);
    let py = tile_ptrs(&mut k, y, rows, cols, stride, bm, bn);
    k.store(py, out, Some(mask));
    k.finish()
}

/// Sums of an `m x n` tile along `axis` (0: column sums, 1: row sums), stored as a vector.
pub fn tile_sum(axis: usize, bm: usize, bn: usize) -> Function {
    let mut k = K::new(if axis == 0 { "col_sum" } else { "row_sum" });
    let (x, y) = (k.ptr("x", DType::F32), k.ptr("y", DType::F32));
    let stride = k.int_multiple_of("stride", 16);
    let rows = k.range(bm);
    let cols = k.range(bn);
    let px = tile_ptrs(&mut k, x, rows, cols, stride, bm, bn);
    let v = k.load(px, None, None);
    let s = k.reduce(v, axis, ReduceKind::Sum);
    let len = if axis == 0 { bn } else { bm };
    let idx = k.range(len);
    let yb = k.splat(y, &[len]);
    let py = k.addptr(yb, idx);
    k.store(py, s, None);
    k.finish()
}

/// `acc = 0; i = 0; while (i < n) { acc += x[i*T + 0..T]; i += 1 }; y[0..T] = acc`.
pub fn while_accumulate(t: usize) -> Function {
    let mut k = K::new("while_acc");
    let (x, y) = (k.ptr("x", DType::F32), k.ptr("y", DType::F32));
    let n = k.int("n");
    let zero = k.constant(
        Const::Float(0.0),
        Type::tile(ScalarType::Num(DType::F32), vec![t]),
    );
    let i0 = k.cint(0);
    let carried_types = vec![k.ty(zero), k.ty(i0)];
    let cargs = k.b.open_region(carried_types.clone());
    let cond = k.cmp(CmpPred::Lt, cargs[1], n);
    let cond_region = k.b.close_region(vec![cond]);
    let bargs = k.b.open_region(carried_types.clone());
    let tc = k.cint(t as i64);
    let base = k.bin(BinOp::Mul, bargs[1], tc);
    let base = k.splat(base, &[t]);
    let r = k.range(t);
    let offs = k.bin(BinOp::Add, base, r);
    let xb = k.splat(x, &[t]);
    let px = k.addptr(xb, offs);
    let v = k.load(px, None, None);
    let acc = k.bin(BinOp::Add, bargs[0], v);
    let one = k.cint(1);
    let i1 = k.bin(BinOp::Add, bargs[1], one);
    let body_region = k.b.close_region(vec![acc, i1]);
    let res = k.b.push(
        OpKind::While {
            inits: vec![zero, i0],
            cond_region,
            body_region,
            pipeline: None,
            prefetch: None,
        },
        carried_types,
        sp(),
    );
    let r = k.range(t);
    let yb = k.splat(y, &[t]);
    let py = k.addptr(yb, r);
    k.store(py, res[0], None);
    k.finish()
}

/// `c[m, n] = a[m, k] @ b[k, n]` for one tile of each (row-major, strides as params).
pub fn dot(dtype: DType, m: usize, n: usize, kk: usize) -> Function {
    let mut k = K::new("dot");
    let (a, b, c) = (k.ptr("a", dtype), k.ptr("b", dtype), k.ptr("c", DType::F32));
    let (sa, sb, sc) = (k.int("stride_a"), k.int("stride_b"), k.int("stride_c"));
    let (rm, rn, rk) = (k.range(m), k.range(n), k.range(kk));
    let pa = tile_ptrs(&mut k, a, rm, rk, sa, m, kk);
    let pb = tile_ptrs(&mut k, b, rk, rn, sb, kk, n);
    let va = k.load(pa, None, None);
    let vb = k.load(pb, None, None);
    let acc = k.constant(
        Const::Float(0.0),
        Type::tile(ScalarType::Num(DType::F32), vec![m, n]),
    );
    let r = k.b.push1(
        OpKind::Dot { a: va, b: vb, acc },
        Type::tile(ScalarType::Num(DType::F32), vec![m, n]),
        sp(),
    );
    let pc = tile_ptrs(&mut k, c, rm, rn, sc, m, n);
    k.store(pc, r, None);
    k.finish()
}

/// A mix of everything else: byte and bool memory, casts, math, selects, an
/// `if` yielding a tile, a 1-D reduction to a scalar stored by one thread,
/// integer arithmetic and atomics.
pub fn misc() -> Function {
    let t = 128;
    let mut k = K::new("misc");
    let bytes = k.ptr("bytes", DType::I8);
    let flags = k.ptr("flags", DType::I1);
    let halves = k.ptr("halves", DType::F16);
    let total = k.ptr("total", DType::F32);
    let counts = k.ptr("counts", DType::I32);
    let n = k.int("n");
    let offs = block_range(&mut k, 0, t);
    let ns = k.splat(n, &[t]);
    let mask = k.cmp(CmpPred::Lt, offs, ns);
    let bb = k.splat(bytes, &[t]);
    let pb = k.addptr(bb, offs);
    let v8 = k.load(pb, Some(mask), None);
    let vf = k.cast(v8, DType::F32);
    let e = k.unary(UnOp::Exp, vf);
    let a = k.unary(UnOp::Abs, vf);
    let l = k.unary(UnOp::Log, a);
    let s = k.unary(UnOp::Sqrt, a);
    let si = k.unary(UnOp::Sin, vf);
    let co = k.unary(UnOp::Cos, vf);
    let ng = k.unary(UnOp::Neg, vf);
    let m1 = k.bin(BinOp::Max, e, l);
    let m2 = k.bin(BinOp::Min, s, si);
    let m3 = k.bin(BinOp::Add, m1, m2);
    let m4 = k.bin(BinOp::Mul, co, ng);
    let zero = k.constant(Const::Float(0.0), k.ty(vf));
    let pos = k.cmp(CmpPred::Gt, vf, zero);
    let sel = k.b.push1(
        OpKind::Select {
            cond: pos,
            on_true: m3,
            on_false: m4,
        },
        k.ty(vf),
        Span::default(),
    );
    // if (n > 100) { sel * 2 } else { sel }
    let hundred = k.cint(100);
    let big = k.cmp(CmpPred::Gt, n, hundred);
    k.b.open_region(Vec::new());
    let two = k.constant(Const::Float(2.0), k.ty(vf));
    let doubled = k.bin(BinOp::Mul, sel, two);
    let then_region = k.b.close_region(vec![doubled]);
    k.b.open_region(Vec::new());
    let else_region = k.b.close_region(vec![sel]);
    let chosen = k.b.push1(
        OpKind::If {
            cond: big,
            then_region,
            else_region,
        },
        k.ty(vf),
        Span::default(),
    );
    let h = k.cast(chosen, DType::F16);
    let hb = k.splat(halves, &[t]);
    let ph = k.addptr(hb, offs);
    k.store(ph, h, Some(mask));
    let fb = k.splat(flags, &[t]);
    let pf = k.addptr(fb, offs);
    k.store(pf, pos, Some(mask));
    // integer ops on the bytes
    let vi = k.cast(v8, DType::I32);
    let three = k.constant(Const::Int(3), k.ty(vi));
    let q = k.bin(BinOp::Div, vi, three);
    let r = k.bin(BinOp::Rem, vi, three);
    let sh = k.bin(BinOp::Shl, q, three);
    let sr = k.bin(BinOp::Shr, sh, r);
    let x = k.bin(BinOp::Xor, sr, vi);
    let cb = k.splat(counts, &[t]);
    let pc = k.addptr(cb, offs);
    k.b.push(
        OpKind::AtomicRmw {
            op: AtomicOp::Max,
            ptr: pc,
            value: x,
            mask: Some(mask),
        },
        vec![k.ty(x)],
        Span::default(),
    );
    // scalar sum, stored by one thread and added atomically
    let sum = k.reduce(chosen, 0, ReduceKind::Sum);
    k.store(total, sum, None);
    let tb = k.splat(total, &[t]);
    let pt = k.addptr(tb, offs);
    k.b.push(
        OpKind::AtomicRmw {
            op: AtomicOp::Add,
            ptr: pt,
            value: chosen,
            mask: Some(mask),
        },
        vec![k.ty(chosen)],
        Span::default(),
    );
    // early exit
    let zero_i = k.cint(0);
    let none = k.cmp(CmpPred::Eq, n, zero_i);
    k.b.open_region(Vec::new());
    k.b.push(OpKind::Return, Vec::new(), Span::default());
    let then_region = k.b.close_region(Vec::new());
    k.b.open_region(Vec::new());
    let else_region = k.b.close_region(Vec::new());
    k.b.push(
        OpKind::If {
            cond: none,
            then_region,
            else_region,
        },
        Vec::new(),
        Span::default(),
    );
    let lv = k.load(total, None, None);
    let one = k.constant(Const::Float(1.0), Type::num(DType::F32));
    let lv1 = k.bin(BinOp::Add, lv, one);
    k.store(total, lv1, None);
    k.finish()
}

/// `C = A @ B` (row-major, f16 or f32 inputs, f32 output) in `tm x tn` tiles,
/// `tk` at a time, pointer tiles carried through the loop, bounds masked
/// (the matmul of the Triton-C tour).
pub fn matmul(dtype: DType, tm: usize, tn: usize, tk: usize) -> Function {
    let mut k = K::new("matmul");
    let (a, b, c) = (k.ptr("A", dtype), k.ptr("B", dtype), k.ptr("C", DType::F32));
    let (m, n, kdim) = (k.int("M"), k.int("N"), k.int("K"));
    let lda = k.int_multiple_of("lda", 8);
    let ldb = k.int_multiple_of("ldb", 8);
    let ldc = k.int_multiple_of("ldc", 8);
    let rm = block_range(&mut k, 0, tm);
    let rn = block_range(&mut k, 1, tn);
    let rk = k.range(tk);
    let pa0 = tile_ptrs(&mut k, a, rm, rk, lda, tm, tk);
    let pb0 = tile_ptrs(&mut k, b, rk, rn, ldb, tk, tn);
    let f32_tile = Type::tile(ScalarType::Num(DType::F32), vec![tm, tn]);
    let acc0 = k.constant(Const::Float(0.0), f32_tile.clone());
    let types = vec![f32_tile.clone(), k.ty(pa0), k.ty(pb0), k.ty(kdim)];
    // while (kleft > 0)
    let cargs = k.b.open_region(types.clone());
    let zero = k.cint(0);
    let more = k.cmp(CmpPred::Gt, cargs[3], zero);
    let cond_region = k.b.close_region(vec![more]);
    let args = k.b.open_region(types.clone());
    let kl = k.splat(args[3], &[tk]);
    let in_k = k.cmp(CmpPred::Lt, rk, kl);
    let mka = k.expand(in_k, 0, &[tm, tk]);
    let mkb = k.expand(in_k, 1, &[tk, tn]);
    let va = k.load(args[1], Some(mka), None);
    let vb = k.load(args[2], Some(mkb), None);
    let acc = k.b.push1(
        OpKind::Dot {
            a: va,
            b: vb,
            acc: args[0],
        },
        f32_tile.clone(),
        Span::default(),
    );
    let step = k.constant(
        Const::Int(tk as i64),
        Type::tile(ScalarType::Num(DType::I32), vec![tm, tk]),
    );
    let pa = k.addptr(args[1], step);
    let tkc = k.cint(tk as i64);
    let stride_b = k.bin(BinOp::Mul, tkc, ldb);
    let sb = k.splat(stride_b, &[tk, tn]);
    let pb = k.addptr(args[2], sb);
    let kleft = k.bin(BinOp::Sub, args[3], tkc);
    let body_region = k.b.close_region(vec![acc, pa, pb, kleft]);
    let res = k.b.push(
        OpKind::While {
            inits: vec![acc0, pa0, pb0, kdim],
            cond_region,
            body_region,
            pipeline: None,
            prefetch: None,
        },
        types,
        Span::default(),
    );
    let pc = tile_ptrs(&mut k, c, rm, rn, ldc, tm, tn);
    let mc = tile_mask(&mut k, rm, rn, m, n, tm, tn);
    k.store(pc, res[0], Some(mc));
    k.finish()
}

/// `tickets[pid] = atomic_add(counter, 1) + sum(x[0..64] atomically exchanged)`:
/// a scalar atomic whose old value every thread needs, and a small tile
/// atomic with replicated threads.
pub fn scalar_atomic() -> Function {
    let mut k = K::new("scalar_atomic");
    let counter = k.ptr("counter", DType::I32);
    let tickets = k.ptr("tickets", DType::I32);
    let x = k.ptr("x", DType::I32);
    let one = k.cint(1);
    let old = k.b.push1(
        OpKind::AtomicRmw {
            op: AtomicOp::Add,
            ptr: counter,
            value: one,
            mask: None,
        },
        Type::num(DType::I32),
        Span::default(),
    );
    let r = k.range(64);
    let xb = k.splat(x, &[64]);
    let px = k.addptr(xb, r);
    let olds = k.b.push1(
        OpKind::AtomicRmw {
            op: AtomicOp::Exchange,
            ptr: px,
            value: r,
            mask: None,
        },
        k.ty(r),
        Span::default(),
    );
    let s = k.reduce(olds, 0, ReduceKind::Sum);
    let t = k.bin(BinOp::Add, old, s);
    let pid = k.pid(0);
    let pt = k.addptr(tickets, pid);
    k.store(pt, t, None);
    k.finish()
}

/// Loads an `[m, n]` tile of `dtype`, reduces it along `axis` with `kind`,
/// broadcasts the result back, subtracts, transposes and stores `[n, m]`.
pub fn reduce_broadcast_trans(
    dtype: DType,
    m: usize,
    n: usize,
    axis: usize,
    kind: ReduceKind,
) -> Function {
    let mut k = K::new("rbt");
    let (x, y) = (k.ptr("x", dtype), k.ptr("y", dtype));
    let stride = k.int_multiple_of("stride", 16);
    let (rm, rn) = (k.range(m), k.range(n));
    let px = tile_ptrs(&mut k, x, rm, rn, stride, m, n);
    let v = k.load(px, None, None);
    let r = k.reduce(v, axis, kind);
    let b = k.expand(r, axis, &[m, n]);
    let d = k.bin(BinOp::Sub, v, b);
    let t = k.trans(d);
    let py = tile_ptrs(&mut k, y, rn, rm, stride, n, m);
    k.store(py, t, None);
    k.finish()
}

/// A 3-D tile `[a, b, c]`: reduce the middle axis and store `[a, c]`.
pub fn reduce_3d(a: usize, b: usize, c: usize) -> Function {
    let mut k = K::new("reduce3d");
    let (x, y) = (k.ptr("x", DType::F32), k.ptr("y", DType::F32));
    let ra = k.range(a);
    let rb = k.range(b);
    let rc = k.range(c);
    let ra1 = k.reshape(ra, &[a, 1, 1]);
    let rb1 = k.reshape(rb, &[1, b, 1]);
    let rc1 = k.reshape(rc, &[1, 1, c]);
    let sa = k.constant(
        Const::Int((b * c) as i64),
        Type::tile(ScalarType::Num(DType::I32), vec![a, 1, 1]),
    );
    let sb = k.constant(
        Const::Int(c as i64),
        Type::tile(ScalarType::Num(DType::I32), vec![1, b, 1]),
    );
    let oa = k.bin(BinOp::Mul, ra1, sa);
    let ob = k.bin(BinOp::Mul, rb1, sb);
    let oa = k.broadcast(oa, &[a, b, c]);
    let ob = k.broadcast(ob, &[a, b, c]);
    let oc = k.broadcast(rc1, &[a, b, c]);
    let o = k.bin(BinOp::Add, oa, ob);
    let o = k.bin(BinOp::Add, o, oc);
    let xb = k.splat(x, &[a, b, c]);
    let px = k.addptr(xb, o);
    let v = k.load(px, None, None);
    let s = k.reduce(v, 1, ReduceKind::Sum);
    let cst = k.constant(Const::Int(c as i64), Type::num(DType::I32));
    let rows = k.range(a);
    let cols = k.range(c);
    let py = tile_ptrs(&mut k, y, rows, cols, cst, a, c);
    k.store(py, s, None);
    k.finish()
}

/// Element types beyond f32/f16: bf16 and f64 arithmetic, i64 offsets, an
/// i8 dot accumulating in i32, a scalar float parameter, `x[newaxis, :]`.
pub fn types_mix() -> Function {
    let mut k = K::new("types_mix");
    let pb = k.ptr("b16", DType::BF16);
    let pd = k.ptr("f64s", DType::F64);
    let pa = k.ptr("a8", DType::I8);
    let pc = k.ptr("c32", DType::I32);
    let scale =
        k.b.add_param("scale", Type::num(DType::F32), ParamAttrs::default());
    let r = k.range(64);
    let r64 = k.cast(r, DType::I64);
    // bf16: y = bf16(f32(x) * scale)
    let bb = k.splat(pb, &[64]);
    let p = k.addptr(bb, r64);
    let x = k.load(p, None, None);
    let xf = k.cast(x, DType::F32);
    let sc = k.splat(scale, &[64]);
    let y = k.bin(BinOp::Mul, xf, sc);
    let yb = k.cast(y, DType::BF16);
    k.store(p, yb, None);
    // f64: z = z * z + 1 (i64 offsets)
    let db = k.splat(pd, &[64]);
    let q = k.addptr(db, r64);
    let z = k.load(q, None, None);
    let zz = k.bin(BinOp::Mul, z, z);
    let one = k.constant(Const::Float(1.0), k.ty(z));
    let z1 = k.bin(BinOp::Add, zz, one);
    k.store(q, z1, None);
    // i8 dot: c[16,16] = a[16,16] @ a^T (via x[newaxis, :] offsets)
    let r16 = k.range(16);
    let sixteen = k.cint(16);
    let pa2 = tile_ptrs(&mut k, pa, r16, r16, sixteen, 16, 16);
    let a = k.load(pa2, None, None);
    let at = k.trans(a);
    let acc = k.constant(
        Const::Int(0),
        Type::tile(ScalarType::Num(DType::I32), vec![16, 16]),
    );
    let c = k.b.push1(
        OpKind::Dot { a, b: at, acc },
        Type::tile(ScalarType::Num(DType::I32), vec![16, 16]),
        Span::default(),
    );
    let pc2 = tile_ptrs(&mut k, pc, r16, r16, sixteen, 16, 16);
    k.store(pc2, c, None);
    k.finish()
}
