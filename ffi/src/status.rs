//! `redlock_status`: the result of every fallible call, and the one mapping from the core's
//! error categories.

use std::ffi::{c_char, c_int};

use redlock_core::ErrorKind;

/// The result of every fallible `redlock_*` function.
///
/// The numbers are part of the ABI and never change; new statuses get new numbers. Use
/// `redlock_status_str()` for a stable name and `redlock_last_error_message()` for the human
/// message of the failure.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(non_camel_case_types)]
pub enum redlock_status {
    /// Success: the out-parameters were written.
    REDLOCK_OK = 0,
    /// Lost the vote to contention: someone else holds the resource. The vote is available
    /// from `redlock_last_vote()`.
    REDLOCK_NOT_ACQUIRED = 1,
    /// Fewer than a quorum of masters answered: Redis is down or unreachable. The vote is
    /// available from `redlock_last_vote()`.
    REDLOCK_UNAVAILABLE = 2,
    /// The lock could not be extended: it expired, was taken over, or reached the client's
    /// extension bound.
    REDLOCK_LOCK_LOST = 3,
    /// A bad argument: a NULL pointer, a resource that is not valid UTF-8, a ttl of 0, an
    /// unparsable URL, the same server listed twice, an out-of-range option, a client used in
    /// a process forked from the one that created it. The message names the value.
    REDLOCK_INVALID_ARGUMENT = 4,
    /// A bug or an environment failure (e.g. the OS random source or thread creation failed).
    REDLOCK_INTERNAL = 5,
    /// A Rust panic was caught at the boundary; the library state is unchanged where possible.
    /// Please report it with the message.
    REDLOCK_PANIC = 6,
    /// `redlock_last_vote()`: the last operation on this thread produced no vote (e.g. it
    /// failed with `REDLOCK_INVALID_ARGUMENT` before asking any master).
    REDLOCK_NO_VOTE = 7,
}

/// Every status, in number order.
const ALL_STATUSES: [redlock_status; 8] = [
    redlock_status::REDLOCK_OK,
    redlock_status::REDLOCK_NOT_ACQUIRED,
    redlock_status::REDLOCK_UNAVAILABLE,
    redlock_status::REDLOCK_LOCK_LOST,
    redlock_status::REDLOCK_INVALID_ARGUMENT,
    redlock_status::REDLOCK_INTERNAL,
    redlock_status::REDLOCK_PANIC,
    redlock_status::REDLOCK_NO_VOTE,
];

impl redlock_status {
    /// The status of a core error category: the C surface's one error mapping.
    pub fn from_kind(kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::NotAcquired => redlock_status::REDLOCK_NOT_ACQUIRED,
            ErrorKind::Unavailable => redlock_status::REDLOCK_UNAVAILABLE,
            ErrorKind::LockLost => redlock_status::REDLOCK_LOCK_LOST,
            ErrorKind::InvalidArgument => redlock_status::REDLOCK_INVALID_ARGUMENT,
            // `ErrorKind` is non-exhaustive: a category added later is internal until mapped.
            _ => redlock_status::REDLOCK_INTERNAL,
        }
    }

    /// The constant's name as a NUL-terminated static string.
    fn name(self) -> &'static std::ffi::CStr {
        match self {
            redlock_status::REDLOCK_OK => c"REDLOCK_OK",
            redlock_status::REDLOCK_NOT_ACQUIRED => c"REDLOCK_NOT_ACQUIRED",
            redlock_status::REDLOCK_UNAVAILABLE => c"REDLOCK_UNAVAILABLE",
            redlock_status::REDLOCK_LOCK_LOST => c"REDLOCK_LOCK_LOST",
            redlock_status::REDLOCK_INVALID_ARGUMENT => c"REDLOCK_INVALID_ARGUMENT",
            redlock_status::REDLOCK_INTERNAL => c"REDLOCK_INTERNAL",
            redlock_status::REDLOCK_PANIC => c"REDLOCK_PANIC",
            redlock_status::REDLOCK_NO_VOTE => c"REDLOCK_NO_VOTE",
        }
    }
}

/// A `redlock_status` as C passes it by value: the header declares the parameter with the enum
/// type (so C and C++ callers pass their `redlock_status` without a cast or a sign-conversion
/// warning), but C may pass any number, and a Rust enum must never hold one that is no variant:
/// the library receives the plain integer and checks it. (cbindgen.toml renames this type to
/// `redlock_status` in the header and does not emit it.)
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct redlock_status_value(pub c_int);

impl From<redlock_status> for redlock_status_value {
    fn from(status: redlock_status) -> Self {
        redlock_status_value(status as c_int)
    }
}

/// The name of a status (`"REDLOCK_NOT_ACQUIRED"`, ...), or `"REDLOCK_UNKNOWN_STATUS"` for a
/// number that is not a status (any value is safe to pass).
///
/// The returned string is static: never free it.
#[no_mangle]
pub extern "C" fn redlock_status_str(status: redlock_status_value) -> *const c_char {
    let unknown = c"REDLOCK_UNKNOWN_STATUS";
    crate::unwind::infallible(unknown.as_ptr(), || {
        ALL_STATUSES
            .iter()
            .find(|s| **s as c_int == status.0)
            .map_or(unknown, |s| s.name())
            .as_ptr()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn numbers_are_stable_and_names_match() {
        for (number, status) in ALL_STATUSES.iter().enumerate() {
            assert_eq!(*status as usize, number);
            // SAFETY: redlock_status_str returns a static NUL-terminated string.
            let name = unsafe { CStr::from_ptr(redlock_status_str((*status).into())) };
            assert_eq!(name.to_str().unwrap(), format!("{status:?}"));
        }
        // SAFETY: as above.
        let unknown = unsafe { CStr::from_ptr(redlock_status_str(redlock_status_value(-1))) };
        assert_eq!(unknown.to_str().unwrap(), "REDLOCK_UNKNOWN_STATUS");
    }

    #[test]
    fn every_error_kind_maps_to_its_status() {
        use redlock_status::*;
        let pairs = [
            (ErrorKind::NotAcquired, REDLOCK_NOT_ACQUIRED),
            (ErrorKind::Unavailable, REDLOCK_UNAVAILABLE),
            (ErrorKind::LockLost, REDLOCK_LOCK_LOST),
            (ErrorKind::InvalidArgument, REDLOCK_INVALID_ARGUMENT),
            (ErrorKind::Internal, REDLOCK_INTERNAL),
        ];
        for (kind, status) in pairs {
            assert_eq!(redlock_status::from_kind(kind), status);
        }
    }
}
