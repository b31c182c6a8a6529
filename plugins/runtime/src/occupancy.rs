//! Occupancy from resource use, the formula of seed 002, for when the
//! driver's answer is not at hand (planning, tests). Launchers with a loaded
//! kernel should prefer [`crate::Kernel::max_active_blocks_per_sm`].

use crate::device::DeviceProperties;

/// Blocks per SM allowed by registers, shared memory and threads:
/// `min(NUM_REGS / (regs * 32 * warps), SMEM / smem, MAX_THREADS / threads)`.
/// Ignores allocation granularity, so it may overestimate by a little.
pub fn estimate_blocks_per_sm(
    props: &DeviceProperties,
    registers_per_thread: u32,
    shared_bytes_per_block: u32,
    num_warps: u32,
) -> u32 {
    let threads = num_warps.max(1) * props.warp_size.max(1);
    let by_threads = props.max_threads_per_sm / threads;
    let by_regs = match registers_per_thread {
        0 => u32::MAX,
        r => props.max_registers_per_sm / (r * threads),
    };
    let by_smem = match shared_bytes_per_block {
        0 => u32::MAX,
        s => props.max_shared_per_sm / s,
    };
    by_threads.min(by_regs).min(by_smem)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> DeviceProperties {
        DeviceProperties {
            name: "NVIDIA H100 80GB HBM3".into(),
            compute_capability: (9, 0),
            sm_count: 132,
            warp_size: 32,
            max_threads_per_block: 1024,
            max_threads_per_sm: 2048,
            max_registers_per_sm: 65536,
            max_shared_per_sm: 233472,
            max_shared_per_block_optin: 232448,
            l2_bytes: 50 * 1024 * 1024,
            max_grid: (2147483647, 65535, 65535),
        }
    }

    #[test]
    fn registers_limit_blocks() {
        // 8 warps at 64 regs: 65536 / (64 * 256) = 4 blocks.
        assert_eq!(estimate_blocks_per_sm(&h100(), 64, 0, 8), 4);
        // 4 warps at 32 regs: registers allow 16, threads 2048/128 = 16.
        assert_eq!(estimate_blocks_per_sm(&h100(), 32, 0, 4), 16);
    }

    #[test]
    fn shared_memory_and_threads_limit_blocks() {
        assert_eq!(estimate_blocks_per_sm(&h100(), 16, 64 * 1024, 4), 3);
        assert_eq!(estimate_blocks_per_sm(&h100(), 16, 0, 32), 2);
    }
}
