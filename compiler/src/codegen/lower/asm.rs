//! Inline PTX without operands (async-copy and warpgroup fences, commits
//! and waits).
use super::{Lowering, Result};

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
