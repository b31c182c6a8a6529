//! Runs front-end work on a thread with a large stack. The recursive-descent
//! parser and the macro expander cap their nesting (so no input recurses without
//! bound), but the cap must hold on any caller's thread, including 2 MiB worker
//! threads running unoptimized code; a private stack makes that independent of
//! the caller. The reservation is virtual: only touched pages cost memory.
//! The whole compile (`driver::compile_selected`) runs on one such thread, so
//! sema and codegen get the same room; front-end calls inside it run in place.
use std::sync::Mutex;

const STACK_BYTES: usize = 64 << 20;

thread_local! {
    /// Whether this thread is one `on_large_stack` started: the whole compile
    /// runs on one, and the front end's own calls inside it need no other.
    static ON_LARGE_STACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

pub(crate) fn on_large_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    if ON_LARGE_STACK.get() {
        return work();
    }
    let slot = Mutex::new(Some(work));
    let take = || slot.lock().ok().and_then(|mut w| w.take());
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("tritonc-front".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || {
                ON_LARGE_STACK.set(true);
                take().map(|work| work())
            });
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
