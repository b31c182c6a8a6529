//! Inline PTX: operand-less instructions (async-copy and warpgroup fences,
//! commits and waits) and i32 results over i32 inputs.
use super::{Lowering, Result};
use crate::codegen::CodegenError;
use inkwell::values::{BasicMetadataValueEnum, IntValue};

/// An operand-less instruction with a memory clobber (cp.async commit or
/// wait, wgmma fence, commit or wait, proxy fence).
pub(crate) fn async_asm(lw: &Lowering<'_, '_>, asm: &str) -> Result<()> {
    let fn_ty = lw.ctx.void_type().fn_type(&[], false);
    let asm_ptr = lw.ctx.create_inline_asm(
        fn_ty,
        asm.to_string(),
        "~{memory}".into(),
        true,
        false,
        None,
        false,
    );
    lw.builder.build_indirect_call(fn_ty, asm_ptr, &[], "")?;
    Ok(())
}

/// An i32 from inline PTX `text` over i32 inputs `$1 ..` (`$0` the result).
pub(crate) fn int_asm<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    text: &str,
    inputs: &[IntValue<'ctx>],
    side_effects: bool,
) -> Result<IntValue<'ctx>> {
    let i32t = lw.ctx.i32_type();
    let params: Vec<_> = inputs.iter().map(|_| i32t.into()).collect();
    let fn_ty = i32t.fn_type(&params, false);
    let mut constraints = vec!["=r".to_string()];
    constraints.extend(inputs.iter().map(|_| "r".to_string()));
    if side_effects {
        constraints.push("~{memory}".into());
    }
    let asm = lw.ctx.create_inline_asm(
        fn_ty,
        text.into(),
        constraints.join(","),
        side_effects,
        false,
        None,
        false,
    );
    let args: Vec<BasicMetadataValueEnum> = inputs.iter().map(|&v| v.into()).collect();
    lw.builder
        .build_indirect_call(fn_ty, asm, &args, "asm")?
        .try_as_basic_value()
        .basic()
        .map(|v| v.into_int_value())
        .ok_or_else(|| CodegenError::Llvm(format!("`{text}` returned nothing")))
}
