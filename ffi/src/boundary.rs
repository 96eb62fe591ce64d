//! The panic boundary every exported function runs in, the thread's last error message, and
//! the checks that turn raw C arguments into Rust values (or an `InvalidArgument` naming them).

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, CStr};
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};

use redlock_core::{DurationUnit, Error, InvalidArgument, Surface};

use crate::status::redlock_status;
use crate::unwind::infallible;

/// Bytes of a caller's string echoed in a message (escaped); the rest is summarized.
const MAX_ECHOED_BYTES: usize = 64;
/// Longest last-error message kept: a longer one (e.g. repeating a huge resource name) is cut.
const MAX_MESSAGE_BYTES: usize = 1024;

thread_local! {
    /// The message of the last fallible call on this thread, NUL-terminated. Reused in place,
    /// so a success (which empties it) never allocates.
    static LAST_ERROR: RefCell<Vec<u8>> = RefCell::new(vec![0]);
}

/// Runs `f` on the thread's message buffer. Never panics: during thread teardown (the
/// thread-local already destroyed) or re-entrance it does nothing.
fn with_last_error(f: impl FnOnce(&mut Vec<u8>)) {
    let _ = LAST_ERROR.try_with(|cell| {
        if let Ok(mut buf) = cell.try_borrow_mut() {
            f(&mut buf);
        }
    });
}

fn set_last_error(message: std::fmt::Arguments<'_>) {
    with_last_error(|buf| {
        buf.clear();
        let _ = buf.write_fmt(message);
        // A C string ends at the first NUL: keep the message whole by escaping any inside it.
        if buf.contains(&0) {
            let escaped = buf.escape_ascii().to_string();
            buf.clear();
            buf.extend_from_slice(escaped.as_bytes());
        }
        truncate_message(buf);
        buf.push(0);
    });
}

/// Cuts a message longer than [`MAX_MESSAGE_BYTES`] at a character boundary and says so.
fn truncate_message(buf: &mut Vec<u8>) {
    if buf.len() <= MAX_MESSAGE_BYTES {
        return;
    }
    let total = buf.len();
    let mut cut = MAX_MESSAGE_BYTES;
    // Back to the start of a UTF-8 character (continuation bytes are 0b10xxxxxx).
    while cut > 0 && buf[cut] & 0xC0 == 0x80 {
        cut -= 1;
    }
    buf.truncate(cut);
    let _ = write!(buf, "… (message cut, {total} bytes in all)");
}

fn clear_last_error() {
    with_last_error(|buf| {
        buf.clear();
        buf.push(0);
    });
}

/// The human message of the last failed call on this thread (`""` after a success).
///
/// Every fallible function sets it: to `""` when it returns `REDLOCK_OK`, to the failure's
/// message otherwise (it names the bad value of an `REDLOCK_INVALID_ARGUMENT`; URL passwords
/// are always redacted). The vote queries (`redlock_last_vote()`, `redlock_lock_vote()`) are
/// the exception: they leave it alone unless they are called wrongly, so the vote and the
/// message of a failed operation can be read in either order. The string belongs to the
/// library and stays valid until the next `redlock_*` call on the same thread: copy it to keep
/// it. Never NULL.
#[no_mangle]
pub extern "C" fn redlock_last_error_message() -> *const c_char {
    infallible(c"".as_ptr(), || {
        LAST_ERROR
            .try_with(|cell| cell.try_borrow().map(|buf| buf.as_ptr().cast()))
            .ok()
            .and_then(Result::ok)
            .unwrap_or(c"".as_ptr())
    })
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// The C names of the core's parameters (durations are whole milliseconds here): the core
/// checks every value, and its `InvalidArgument` is put in these words once, in [`respond`].
const C_WORDS: Surface = Surface {
    names: &[
        ("ttl", "ttl_ms"),
        ("instance_timeout", "instance_timeout_ms"),
        ("retry_delay", "retry_delay_ms"),
    ],
    durations: DurationUnit::Millis,
};

/// Runs the body of a fallible exported function: a panic becomes `REDLOCK_PANIC`, an error
/// its status (and the thread's last error message), success `REDLOCK_OK` (and an empty
/// message).
pub(crate) fn call(function: &str, body: impl FnOnce() -> Result<(), Error>) -> redlock_status {
    respond(function, true, body)
}

/// Like [`call`], but a success leaves the thread's last error message alone (vote queries).
pub(crate) fn query(function: &str, body: impl FnOnce() -> Result<(), Error>) -> redlock_status {
    respond(function, false, body)
}

fn respond(
    function: &str,
    clear_on_success: bool,
    body: impl FnOnce() -> Result<(), Error>,
) -> redlock_status {
    // The error's message is formatted inside the boundary too.
    let outcome = catch_unwind(AssertUnwindSafe(|| match body() {
        Ok(()) => {
            if clear_on_success {
                clear_last_error();
            }
            redlock_status::REDLOCK_OK
        }
        Err(error) => {
            let error = error.for_surface(&C_WORDS);
            set_last_error(format_args!("{}", error.display_in(C_WORDS.durations)));
            redlock_status::from_kind(error.kind())
        }
    }));
    outcome.unwrap_or_else(|payload| {
        set_last_error(format_args!(
            "{function}: internal panic: {}",
            panic_message(payload.as_ref())
        ));
        redlock_status::REDLOCK_PANIC
    })
}

/// `Err(InvalidArgument)` naming `name` when `ptr` is NULL.
pub(crate) fn non_null<T>(ptr: *const T, name: &str) -> Result<(), Error> {
    if ptr.is_null() {
        return Err(Error::InvalidArgument(InvalidArgument::without_value(
            name.to_owned(),
            "is NULL",
        )));
    }
    Ok(())
}

/// Writes `value` through the out-parameter `out` (checked non-NULL by the caller).
///
/// # Safety
/// `out` must be valid for a write of `T`.
pub(crate) unsafe fn write_out<T>(out: *mut T, value: T) {
    // SAFETY: guaranteed by the caller.
    unsafe { out.write(value) }
}

/// Borrows a NUL-terminated UTF-8 string argument, or `InvalidArgument` naming it (and showing
/// the bytes, escaped, when they are not UTF-8).
///
/// # Safety
/// `ptr` must be NULL or point to a NUL-terminated string that outlives the returned borrow.
pub(crate) unsafe fn utf8_arg<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, Error> {
    non_null(ptr, name)?;
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|e| {
        // Echo the start only: a caller's string may be huge.
        let (shown, ellipsis, total) = if bytes.len() > MAX_ECHOED_BYTES {
            let total = format!("; {} bytes in all", bytes.len());
            (&bytes[..MAX_ECHOED_BYTES], "…", total)
        } else {
            (bytes, "", String::new())
        };
        Error::InvalidArgument(InvalidArgument::without_value(
            name.to_owned(),
            format!(
                "\"{}{ellipsis}\" is not valid UTF-8 (bad byte at offset {}{total})",
                shown.escape_ascii(),
                e.valid_up_to()
            ),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last_error() -> String {
        // SAFETY: the library's own NUL-terminated thread-local buffer.
        unsafe { CStr::from_ptr(redlock_last_error_message()) }
            .to_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let status = call("redlock_demo", || panic!("boom {}", 7));
        assert_eq!(status, redlock_status::REDLOCK_PANIC);
        assert_eq!(last_error(), "redlock_demo: internal panic: boom 7");
        assert_eq!(call("redlock_demo", || Ok(())), redlock_status::REDLOCK_OK);
        assert_eq!(last_error(), "");
        assert_eq!(infallible(5, || panic!("quiet")), 5);
    }

    #[test]
    fn errors_set_their_status_and_message() {
        let status = call("redlock_demo", || non_null(std::ptr::null::<u8>(), "out"));
        assert_eq!(status, redlock_status::REDLOCK_INVALID_ARGUMENT);
        assert_eq!(last_error(), "invalid argument: out is NULL");
    }

    #[test]
    fn a_huge_argument_is_echoed_in_part() {
        let mut bytes = vec![b'a'; 1 << 20];
        bytes[5] = 0xff;
        bytes.push(0);
        // SAFETY: a NUL-terminated buffer that outlives the call.
        let err = unsafe { utf8_arg(bytes.as_ptr().cast(), "resource") }.unwrap_err();
        let message = err.to_string();
        assert!(message.len() < 200, "{} bytes", message.len());
        assert!(
            message.contains("bad byte at offset 5; 1048576 bytes in all"),
            "{message}"
        );
    }

    #[test]
    fn a_huge_message_is_cut_at_a_character_boundary() {
        let long = "é".repeat(5000);
        let status = call("redlock_demo", || {
            Err(Error::InvalidArgument(InvalidArgument::without_value(
                "demo",
                long.clone(),
            )))
        });
        assert_eq!(status, redlock_status::REDLOCK_INVALID_ARGUMENT);
        let message = last_error();
        assert!(
            message.len() < MAX_MESSAGE_BYTES + 64,
            "{} bytes",
            message.len()
        );
        assert!(message.ends_with("bytes in all)"), "{message}");
    }

    #[test]
    fn non_utf8_is_named_and_escaped() {
        let bytes = c"fo\x80o";
        // SAFETY: a static C string.
        let err = unsafe { utf8_arg(bytes.as_ptr(), "resource") }.unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid argument: resource \"fo\\x80o\" is not valid UTF-8 (bad byte at offset 2)"
        );
    }

    /// The core names its own parameters; C callers read theirs (`ttl_ms`, in milliseconds).
    #[test]
    fn core_errors_speak_c() {
        let ttl = std::time::Duration::from_millis(1500);
        let status = call("redlock_demo", || {
            Err(Error::invalid_argument(
                "ttl",
                redlock_core::ArgValue::Duration(ttl),
                "too short",
            ))
        });
        assert_eq!(status, redlock_status::REDLOCK_INVALID_ARGUMENT);
        assert_eq!(last_error(), "invalid argument: ttl_ms 1500: too short");
    }
}
