//! GPU timing with CUDA events, for the autotuner.

use crate::autotune::KernelTimer;
use crate::driver::CallContext;
use crate::error::Result;
use crate::stream::Stream;
use cudarc::driver::{result, sys};

/// Records an event before and after a run on one stream and reads the
/// time between them (waiting for the second).
pub struct EventTimer<'s> {
    stream: &'s Stream,
    start: sys::CUevent,
    end: sys::CUevent,
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
        Ok(EventTimer { stream, start, end })
    }
}

impl KernelTimer for EventTimer<'_> {
    fn time_ms(&mut self, run: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        self.stream.device().bind()?;
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
