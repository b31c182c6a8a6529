//! What one program may use on the target GPU: shared memory per block and
//! tile elements per thread (threads per block are checked with the warps).
//! A config over a limit is refused with what it needs and what the target
//! has, instead of becoming a kernel that fails at launch, or a compile that
//! takes minutes to unroll a tile no thread could hold in registers.

use crate::codegen::Arch;
use crate::codegen::CodegenError;
use crate::ir::Function;

pub use crate::arch::max_shared_bytes;

use crate::arch::MAX_TILE_ELEMENTS_PER_THREAD;

/// Every tile of `func` against [`MAX_TILE_ELEMENTS_PER_THREAD`] with
/// `num_warps` warps (checked before lowering: it is what makes lowering slow).
pub fn check_tiles(func: &Function, num_warps: usize) -> Result<(), CodegenError> {
    let threads = 32 * num_warps;
    let biggest = func
        .values
        .iter()
        .filter(|v| !v.ty.shape.is_empty())
        .max_by_key(|v| v.ty.shape.iter().product::<usize>());
    let Some(value) = biggest else {
        return Ok(());
    };
    let elements: usize = value.ty.shape.iter().product();
    if elements.div_ceil(threads) <= MAX_TILE_ELEMENTS_PER_THREAD {
        return Ok(());
    }
    Err(CodegenError::ResourceLimit {
        what: format!(
            "a tile of {} ({elements} elements) is {} elements a thread with {num_warps} warps; \
             a program may hold at most {MAX_TILE_ELEMENTS_PER_THREAD} a thread \
             (use smaller tiles or more warps)",
            value.ty,
            elements.div_ceil(threads)
        ),
        span: func.span,
    })
}

/// The shared memory the lowered kernel needs against the target's limit.
pub fn check_shared(func: &Function, bytes: usize, arch: Arch) -> Result<(), CodegenError> {
    let most = max_shared_bytes(arch);
    if bytes <= most {
        return Ok(());
    }
    Err(CodegenError::ResourceLimit {
        what: format!(
            "the kernel needs {bytes} bytes of shared memory per program; {} allows {most} \
             (use smaller tiles, or fewer pipeline buffers with --num-stages)",
            crate::codegen::target::cpu_name(arch)
        ),
        span: func.span,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_per_arch() {
        assert_eq!(max_shared_bytes(Arch::Sm80), 166_912);
        assert_eq!(max_shared_bytes(Arch::Sm90a), 232_448);
    }
}
