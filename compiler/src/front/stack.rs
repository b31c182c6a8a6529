//! Runs front-end work on a thread with a large stack. The recursive-descent
//! parser and the macro expander cap their nesting (so no input recurses without
//! bound), but the cap must hold on any caller's thread, including 2 MiB worker
//! threads running unoptimized code; a private stack makes that independent of
//! the caller. The reservation is virtual: only touched pages cost memory.
use std::sync::Mutex;

const STACK_BYTES: usize = 64 << 20;

pub(crate) fn on_large_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    let slot = Mutex::new(Some(work));
    let take = || slot.lock().ok().and_then(|mut w| w.take());
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("tritonc-front".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || take().map(|work| work()));
        let result = match spawned {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => None,
        };
        // No thread could be started: do the work here.
        result.unwrap_or_else(|| match take() {
            Some(work) => work(),
            None => unreachable!("front-end work neither ran nor remained"),
        })
    })
}
