//! Test-only exports (feature `testing`, never in redlock.h or an installed library).

use crate::boundary::run;
use crate::status::redlock_status;

/// Panics inside the panic boundary, to prove that a panic becomes `REDLOCK_PANIC` (with a
/// message) instead of unwinding into C.
#[no_mangle]
pub extern "C" fn redlock_testing_trigger_panic() -> redlock_status {
    run("redlock_testing_trigger_panic", || {
        panic!("deliberate panic from the test trigger")
    })
}
