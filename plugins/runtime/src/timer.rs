//! GPU timing with CUDA events, for the autotuner.

use crate::autotune::KernelTimer;
use crate::driver::CallContext;
use crate::error::Result;
use crate::memory::DeviceBuffer;
use crate::stream::Stream;
use cudarc::driver::{result, sys};

/// Records an event before and after a run on one stream and reads the
/// time between them (waiting for the second). Before each run it
/// overwrites a buffer twice the size of the L2 cache, so every config is
/// timed with its operands coming from memory, as in a network where the
/// weights of one layer are long gone from L2 when it runs again (and as
/// Triton's and torch's benchmarks time): with a warm L2, shallow pipelines
/// look as good as deep ones.
pub struct EventTimer<'s> {
    stream: &'s Stream,
    start: sys::CUevent,
    end: sys::CUevent,
    /// None where it could not be allocated (a framework holding all of the
    /// memory): the runs are then timed with whatever L2 holds.
    flush: Option<DeviceBuffer>,
}

impl<'s> EventTimer<'s> {
    pub fn new(stream: &'s Stream) -> Result<EventTimer<'s>> {
        stream.device().bind()?;
        let start = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
            .call("cuEventCreate", || "timer start".to_string())?;
        let end = match result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT) {
            Ok(end) => end,
            Err(e) => {
                // SAFETY: start was just created.
                let _ = unsafe { result::event::destroy(start) };
                return Err(e).call("cuEventCreate", || "timer end".to_string());
            }
        };
        let l2 = stream.device().properties().l2_bytes as usize;
        let flush = DeviceBuffer::alloc(stream.device(), 2 * l2.max(1 << 20)).ok();
        Ok(EventTimer {
            stream,
            start,
            end,
            flush,
        })
    }

    /// Whether runs are timed after flushing the L2 cache.
    pub fn flushes_l2(&self) -> bool {
        self.flush.is_some()
    }
}

impl KernelTimer for EventTimer<'_> {
    fn time_ms(&mut self, run: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        self.stream.device().bind()?;
        if let Some(flush) = &self.flush {
            // SAFETY: our buffer, its size, on the bound context's stream.
            unsafe {
                result::memset_d8_async(flush.addr(), 0, flush.len_bytes(), self.stream.raw())
            }
            .call("cuMemsetD8Async", || {
                "L2 flush before a timed run".to_string()
            })?;
        }
        // SAFETY: events and stream are live and of the bound context.
        unsafe { result::event::record(self.start, self.stream.raw()) }
            .call("cuEventRecord", || "timer start".to_string())?;
        run()?;
        unsafe {
            result::event::record(self.end, self.stream.raw())
                .call("cuEventRecord", || "timer end".to_string())?;
            result::event::synchronize(self.end)
                .call("cuEventSynchronize", || "timer end".to_string())?;
            let ms = result::event::elapsed(self.start, self.end)
                .call("cuEventElapsedTime", String::new)?;
            Ok(ms as f64)
        }
    }
}

impl Drop for EventTimer<'_> {
    fn drop(&mut self) {
        if self.stream.device().bind().is_ok() {
            // SAFETY: our events, destroyed once.
            unsafe {
                let _ = result::event::destroy(self.start);
                let _ = result::event::destroy(self.end);
            }
        }
    }
}
