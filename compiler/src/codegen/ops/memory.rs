//! Global loads and stores. Each thread groups `vec` consecutive registers
//! (contiguous addresses, by the layout and the alignment analysis) into one
//! access of at most 16 bytes: unmasked accesses are LLVM vector loads/stores
//! in `addrspace(1)` (`ld.global.v4.b32`), masked ones predicated PTX through
//! inline asm (`@p ld.global.v4.b32`), which first sets the destination to
//! `other`. Stores are also predicated off in threads holding replicas.
use crate::codegen::lower::misaligned_runs;
use crate::codegen::lower::staging::{from_memory, to_memory};
use crate::codegen::lower::types::vector_or_scalar_type;
use crate::codegen::lower::{int_type, Lowering, Result};
use crate::codegen::CodegenError;
use crate::ir::{Op, OpKind};
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{BasicValue, BasicValueEnum, IntValue, PointerValue};

pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op) -> Result<()> {
    match &op.kind {
        OpKind::Load { ptr, mask, other } => load(lw, op, *ptr, *mask, *other),
        OpKind::Store { ptr, value, mask } => store(lw, *ptr, *value, *mask),
        _ => lw.unsupported("this op as a memory access", op.span),
    }
}

/// Elements per access for `ptr` in `layout`: what the alignment analysis allows
/// and the layout keeps in consecutive registers.
fn access_width(
    lw: &Lowering<'_, '_>,
    ptr: crate::ir::ValueId,
    mask: Option<crate::ir::ValueId>,
    layout: &crate::ir::layout::Layout,
) -> usize {
    // Consecutive registers run along the layout's fastest axis, which need
    // not be the last one (a transpose's source is contiguous along axis 0).
    let Some((axis, run)) = layout.tile_map(&lw.shape(ptr)).fastest_run() else {
        return 1;
    };
    (lw.widths.vector_width_along(ptr, mask, axis, lw.func) as usize)
        .min(run)
        .max(1)
}

fn load(
    lw: &mut Lowering<'_, '_>,
    op: &Op,
    ptr: crate::ir::ValueId,
    mask: Option<crate::ir::ValueId>,
    other: Option<crate::ir::ValueId>,
) -> Result<()> {
    let result = lw.result(op)?;
    let layout = lw.assigned_layout(result);
    let scalar = lw.scalar_type(result);
    let vec = access_width(lw, ptr, mask, &layout);
    let addrs: Vec<PointerValue> = lw
        .value(ptr, &layout)?
        .iter()
        .map(|p| p.into_pointer_value())
        .collect();
    let masks: Option<Vec<IntValue>> = match mask {
        Some(m) => Some(
            lw.value(m, &layout)?
                .iter()
                .map(|v| v.into_int_value())
                .collect(),
        ),
        None => None,
    };
    let fills: Option<Vec<BasicValueEnum>> = match other {
        Some(o) => Some(
            lw.value(o, &layout)?
                .iter()
                .map(|v| to_memory(lw, *v, scalar))
                .collect::<Result<_>>()?,
        ),
        None => None,
    };
    let mem_ty = lw.mem_type(result);
    let (masks, fills) = (masks.as_deref(), fills.as_deref());
    let loaded = match misaligned_runs::run_width(lw, ptr, &layout, vec) {
        Some(runs) => misaligned_runs::load(lw, &addrs, masks, mem_ty, runs, |lw, addrs| {
            grouped_loads(lw, addrs, vec, masks, fills, mem_ty)
        })?,
        None => grouped_loads(lw, &addrs, vec, masks, fills, mem_ty)?,
    };
    let regs = loaded
        .into_iter()
        .map(|v| from_memory(lw, v, scalar))
        .collect::<Result<_>>()?;
    lw.define_tile(result, layout, regs);
    Ok(())
}

/// Loads `addrs` in groups of `vec` consecutive elements, one access each,
/// predicated by `masks` where given (a masked-off element reads its `fills`
/// entry, zero without). Values in memory types.
fn grouped_loads<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    addrs: &[PointerValue<'ctx>],
    vec: usize,
    masks: Option<&[IntValue<'ctx>]>,
    fills: Option<&[BasicValueEnum<'ctx>]>,
    mem_ty: BasicTypeEnum<'ctx>,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let mut out = Vec::with_capacity(addrs.len());
    for g in (0..addrs.len()).step_by(vec) {
        let loaded = match masks {
            None => plain_load(lw, addrs[g], mem_ty, vec)?,
            Some(m) => {
                let fill: Vec<BasicValueEnum> = match fills {
                    Some(f) => f[g..g + vec].to_vec(),
                    None => vec![mem_ty.const_zero(); vec],
                };
                predicated_load(lw, addrs[g], m[g], mem_ty, &fill)?
            }
        };
        out.extend(loaded);
    }
    Ok(out)
}

fn store(
    lw: &mut Lowering<'_, '_>,
    ptr: crate::ir::ValueId,
    value: crate::ir::ValueId,
    mask: Option<crate::ir::ValueId>,
) -> Result<()> {
    let layout = lw.assigned_layout(ptr);
    let shape = lw.shape(ptr);
    let scalar = lw.scalar_type(value);
    let vec = access_width(lw, ptr, mask, &layout);
    let ptrs = lw.value(ptr, &layout)?;
    let vals = lw.value(value, &layout)?;
    let masks = match mask {
        Some(m) => Some(lw.value(m, &layout)?),
        None => None,
    };
    let owner = lw.owner_pred(&layout, &shape)?;
    let mem_ty = lw.mem_type(value);
    for g in (0..ptrs.len()).step_by(vec) {
        let addr = ptrs[g].into_pointer_value();
        let data: Vec<BasicValueEnum> = vals[g..g + vec]
            .iter()
            .map(|v| to_memory(lw, *v, scalar))
            .collect::<Result<_>>()?;
        let pred = lw.and_preds(masks.as_ref().map(|m| m[g].into_int_value()), owner)?;
        match pred {
            None => plain_store(lw, addr, mem_ty, &data)?,
            Some(p) => predicated_store(lw, addr, p, mem_ty, &data)?,
        }
    }
    Ok(())
}

fn primitive_bytes(_lw: &Lowering<'_, '_>, t: BasicTypeEnum<'_>) -> usize {
    match t {
        BasicTypeEnum::IntType(i) => (i.get_bit_width() as usize).div_ceil(8),
        BasicTypeEnum::FloatType(f) => {
            let ctx = f.get_context();
            if f == ctx.f64_type() {
                8
            } else if f == ctx.f32_type() {
                4
            } else {
                2
            }
        }
        _ => 8,
    }
}

fn plain_load<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    addr: PointerValue<'ctx>,
    mem_ty: BasicTypeEnum<'ctx>,
    vec: usize,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let bytes = primitive_bytes(lw, mem_ty);
    let ty = vector_or_scalar_type(mem_ty, vec);
    let v = lw.builder.build_load(ty, addr, "ld")?;
    if let Some(inst) = v.as_instruction_value() {
        inst.set_alignment((bytes * vec) as u32)
            .map_err(|e| CodegenError::Llvm(e.to_string()))?;
    }
    if vec == 1 {
        return Ok(vec![v]);
    }
    let vv = v.into_vector_value();
    (0..vec)
        .map(|i| {
            Ok(lw
                .builder
                .build_extract_element(vv, lw.i32_const(i as u64), "")?)
        })
        .collect()
}

fn plain_store<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    addr: PointerValue<'ctx>,
    mem_ty: BasicTypeEnum<'ctx>,
    data: &[BasicValueEnum<'ctx>],
) -> Result<()> {
    let bytes = primitive_bytes(lw, mem_ty);
    let v = build_vector(lw, mem_ty, data)?;
    let inst = lw.builder.build_store(addr, v)?;
    inst.set_alignment((bytes * data.len()) as u32)
        .map_err(|e| CodegenError::Llvm(e.to_string()))?;
    Ok(())
}

/// `data` as one value: itself for one element, else a vector.
fn build_vector<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    mem_ty: BasicTypeEnum<'ctx>,
    data: &[BasicValueEnum<'ctx>],
) -> Result<BasicValueEnum<'ctx>> {
    if data.len() == 1 {
        return Ok(data[0]);
    }
    let ty = vector_or_scalar_type(mem_ty, data.len()).into_vector_type();
    let mut v = ty.get_undef();
    for (i, d) in data.iter().enumerate() {
        v = lw
            .builder
            .build_insert_element(v, *d, lw.i32_const(i as u64), "")?;
    }
    Ok(v.into())
}

/// How a group of elements travels through PTX registers: `count` words of
/// `bytes` bytes each.
struct Words {
    bytes: usize,
    count: usize,
}

impl Words {
    fn of(elem_bytes: usize, vec: usize) -> Words {
        let total = elem_bytes * vec;
        let bytes = if elem_bytes == 8 { 8 } else { total.min(4) };
        Words {
            bytes,
            count: total / bytes,
        }
    }

    /// Inline-asm constraint letter of one word register.
    fn constraint(&self) -> &'static str {
        match self.bytes {
            2 => "h",
            8 => "l",
            _ => "r",
        }
    }

    /// PTX register width of one word (a byte travels in a 32-bit register).
    fn reg_bits(&self) -> u32 {
        match self.bytes {
            2 => 16,
            8 => 64,
            _ => 32,
        }
    }

    /// PTX type suffix of one access (`.v4.b32`, `.b16`, `.u8`).
    fn ptx_type(&self) -> String {
        let base = match self.bytes {
            1 => "u8".to_string(),
            b => format!("b{}", b * 8),
        };
        if self.count > 1 {
            format!("v{}.{base}", self.count)
        } else {
            base
        }
    }
}

/// Packs elements (memory types) into word registers.
fn pack_words<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    mem_ty: BasicTypeEnum<'ctx>,
    data: &[BasicValueEnum<'ctx>],
    words: &Words,
) -> Result<Vec<IntValue<'ctx>>> {
    let b = &lw.builder;
    let word_ty = int_type(lw, (words.bytes * 8) as u32);
    let reg_ty = int_type(lw, words.reg_bits());
    let v = build_vector(lw, mem_ty, data)?;
    let v = if matches!(mem_ty, BasicTypeEnum::PointerType(_)) {
        // Pointers (one per 8-byte word) travel as integers.
        if data.len() == 1 {
            b.build_ptr_to_int(v.into_pointer_value(), lw.ctx.i64_type(), "")?
                .into()
        } else {
            b.build_ptr_to_int(
                v.into_vector_value(),
                lw.ctx.i64_type().vec_type(data.len() as u32),
                "",
            )?
            .into()
        }
    } else {
        v
    };
    let as_words: BasicValueEnum = if words.count == 1 {
        b.build_bit_cast(v, word_ty, "")?
    } else {
        b.build_bit_cast(v, word_ty.vec_type(words.count as u32), "")?
    };
    let mut out = Vec::with_capacity(words.count);
    for i in 0..words.count {
        let w = if words.count == 1 {
            as_words.into_int_value()
        } else {
            b.build_extract_element(as_words.into_vector_value(), lw.i32_const(i as u64), "")?
                .into_int_value()
        };
        out.push(if words.reg_bits() > words.bytes as u32 * 8 {
            b.build_int_z_extend(w, reg_ty, "")?
        } else {
            w
        });
    }
    Ok(out)
}

/// Unpacks word registers into `vec` elements of `mem_ty`.
fn unpack_words<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    mem_ty: BasicTypeEnum<'ctx>,
    vec: usize,
    regs: &[IntValue<'ctx>],
    words: &Words,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let b = &lw.builder;
    let word_ty = int_type(lw, (words.bytes * 8) as u32);
    let mut ws = Vec::with_capacity(regs.len());
    for r in regs {
        ws.push(if r.get_type() != word_ty {
            b.build_int_truncate(*r, word_ty, "")?
        } else {
            *r
        });
    }
    let is_ptr = matches!(mem_ty, BasicTypeEnum::PointerType(_));
    let elem_ty: BasicTypeEnum = if is_ptr {
        lw.ctx.i64_type().into()
    } else {
        mem_ty
    };
    let packed: BasicValueEnum = if ws.len() == 1 {
        ws[0].into()
    } else {
        build_vector(
            lw,
            word_ty.into(),
            &ws.iter().map(|w| (*w).into()).collect::<Vec<_>>(),
        )?
    };
    let target = vector_or_scalar_type(elem_ty, vec);
    let cast = b.build_bit_cast(packed, target, "")?;
    let mut out = Vec::with_capacity(vec);
    for i in 0..vec {
        let e = if vec == 1 {
            cast
        } else {
            b.build_extract_element(cast.into_vector_value(), lw.i32_const(i as u64), "")?
        };
        out.push(if is_ptr {
            b.build_int_to_ptr(e.into_int_value(), mem_ty.into_pointer_type(), "")?
                .into()
        } else {
            e
        });
    }
    Ok(out)
}

fn predicated_load<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    addr: PointerValue<'ctx>,
    pred: IntValue<'ctx>,
    mem_ty: BasicTypeEnum<'ctx>,
    fill: &[BasicValueEnum<'ctx>],
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let vec = fill.len();
    let words = Words::of(primitive_bytes(lw, mem_ty), vec);
    let n = words.count;
    let fill_words = pack_words(lw, mem_ty, fill, &words)?;
    let reg_bits = words.reg_bits();
    let mut asm = String::new();
    for i in 0..n {
        asm.push_str(&format!("mov.b{reg_bits} ${i}, ${};\n\t", n + 2 + i));
    }
    let outs: Vec<String> = (0..n).map(|i| format!("${i}")).collect();
    let dst = if n > 1 {
        format!("{{ {} }}", outs.join(", "))
    } else {
        outs[0].clone()
    };
    asm.push_str(&format!(
        "@${} ld.global.{} {dst}, [ ${} ];",
        n + 1,
        words.ptx_type(),
        n
    ));
    let c = words.constraint();
    let mut constraints: Vec<String> = (0..n).map(|_| format!("={c}")).collect();
    constraints.push("l".into());
    constraints.push("b".into());
    constraints.extend((0..n).map(|_| c.to_string()));
    let reg_ty = int_type(lw, reg_bits);
    let ret: BasicTypeEnum = if n == 1 {
        reg_ty.into()
    } else {
        lw.ctx.struct_type(&vec![reg_ty.into(); n], false).into()
    };
    let mut params = vec![addr.get_type().into(), lw.ctx.bool_type().into()];
    params.extend((0..n).map(|_| inkwell::types::BasicMetadataTypeEnum::from(reg_ty)));
    let fn_ty = ret.fn_type(&params, false);
    let asm_ptr =
        lw.ctx
            .create_inline_asm(fn_ty, asm, constraints.join(","), true, false, None, false);
    let mut args: Vec<inkwell::values::BasicMetadataValueEnum> = vec![addr.into(), pred.into()];
    args.extend(
        fill_words
            .iter()
            .map(|w| inkwell::values::BasicMetadataValueEnum::from(*w)),
    );
    let call = lw
        .builder
        .build_indirect_call(fn_ty, asm_ptr, &args, "ld_pred")?;
    let value = call
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| CodegenError::Llvm("asm load returned nothing".into()))?;
    let regs: Vec<IntValue> = if n == 1 {
        vec![value.into_int_value()]
    } else {
        (0..n)
            .map(|i| {
                Ok(lw
                    .builder
                    .build_extract_value(value.into_struct_value(), i as u32, "")?
                    .into_int_value())
            })
            .collect::<Result<_>>()?
    };
    unpack_words(lw, mem_ty, vec, &regs, &words)
}

fn predicated_store<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    addr: PointerValue<'ctx>,
    pred: IntValue<'ctx>,
    mem_ty: BasicTypeEnum<'ctx>,
    data: &[BasicValueEnum<'ctx>],
) -> Result<()> {
    let words = Words::of(primitive_bytes(lw, mem_ty), data.len());
    let n = words.count;
    let data_words = pack_words(lw, mem_ty, data, &words)?;
    let ins: Vec<String> = (0..n).map(|i| format!("${}", i + 2)).collect();
    let src = if n > 1 {
        format!("{{ {} }}", ins.join(", "))
    } else {
        ins[0].clone()
    };
    let asm = format!("@$1 st.global.{} [ $0 ], {src};", words.ptx_type());
    let c = words.constraint();
    let mut constraints = vec!["l".to_string(), "b".to_string()];
    constraints.extend((0..n).map(|_| c.to_string()));
    let reg_ty = int_type(lw, words.reg_bits());
    let mut params = vec![addr.get_type().into(), lw.ctx.bool_type().into()];
    params.extend((0..n).map(|_| inkwell::types::BasicMetadataTypeEnum::from(reg_ty)));
    let fn_ty = lw.ctx.void_type().fn_type(&params, false);
    let asm_ptr =
        lw.ctx
            .create_inline_asm(fn_ty, asm, constraints.join(","), true, false, None, false);
    let mut args: Vec<inkwell::values::BasicMetadataValueEnum> = vec![addr.into(), pred.into()];
    args.extend(
        data_words
            .iter()
            .map(|w| inkwell::values::BasicMetadataValueEnum::from(*w)),
    );
    lw.builder.build_indirect_call(fn_ty, asm_ptr, &args, "")?;
    Ok(())
}
