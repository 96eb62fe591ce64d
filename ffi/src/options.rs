//! `redlock_options`: every knob of the core's builder as a plain C struct, extensible
//! without an ABI break.
//!
//! The struct starts with `struct_size`, the `sizeof(redlock_options)` of the header the
//! caller was compiled with (set by the header's inline `redlock_options_default()` through
//! `redlock_options_init()`). The library reads only the fields that fit in that size and
//! uses the defaults for the others, so a program built against an older, shorter struct
//! keeps working with a newer library. Fields are only ever appended, and for each field
//! added later 0 means "the default": a newer, longer struct given to an older library is
//! accepted when the fields that library does not know are all 0, and refused (naming
//! `struct_size`) otherwise.

use std::mem::{offset_of, size_of, size_of_val};
use std::time::Duration;

use redlock_core::{
    ArgValue, FanOut, RedlockBuilder, DEFAULT_DRIFT_FACTOR, DEFAULT_INSTANCE_TIMEOUT,
    DEFAULT_MAX_EXTENSIONS, DEFAULT_RETRY_COUNT, DEFAULT_RETRY_DELAY,
};

use crate::boundary;
use crate::status::redlock_status;

/// How one operation reaches the masters (values of `redlock_options.fanout`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum redlock_fanout {
    /// All masters at once; the operation is decided as soon as its outcome is known.
    REDLOCK_FANOUT_CONCURRENT = 0,
    /// One master after another, in configured order.
    REDLOCK_FANOUT_SEQUENTIAL = 1,
}

/// Client configuration. Start from `redlock_options_default()` and change what you need:
/// it sets `struct_size` and the defaults of every field, including fields added in later
/// versions, so your code keeps working when the struct grows.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(non_camel_case_types)]
pub struct redlock_options {
    /// `sizeof(redlock_options)` as the caller's header has it. Set by
    /// `redlock_options_default()`; the library reads only the fields that fit in it.
    pub struct_size: usize,
    /// A `redlock_fanout` value (default `REDLOCK_FANOUT_CONCURRENT`).
    pub fanout: u32,
    /// Retries after the first attempt in `redlock_acquire()` (default 3).
    pub retry_count: u32,
    /// Upper bound of the random delay between attempts, drawn from [d/2, d] (default 200 ms).
    pub retry_delay_ms: u64,
    /// Clock-drift factor in [0, 1) (default 0.01): drift = ttl * factor + 2 ms.
    pub drift_factor: f64,
    /// Per-master request timeout in milliseconds, > 0 (default 50).
    pub instance_timeout_ms: u64,
    /// Votes needed to win, in [N/2+1, N]; 0 means the majority N/2+1 (default 0).
    pub quorum: u32,
    /// Maximum number of extensions of one lock (default 1000).
    pub max_extensions: u32,
    /// 0 (default): threads of this client waiting for the same resource take turns, and a
    /// release by this client wakes the next one at once instead of after its retry delay
    /// (the local hand-off). 1: off, every waiter sleeps its drawn delay. (0 is the default
    /// of every field added later, so this one is named for turning the hand-off off.)
    pub disable_local_handoff: u32,
    /// 1: every lock of this client carries a fencing token (`redlock_lock_fencing_token()`),
    /// at the cost of one more round trip per acquire; 0 (default): no fencing. The protected
    /// resource checks the token: see the fencing page of the book.
    pub fencing: u32,
}

/// The defaults of every option (the same as the Rust and Python surfaces), for Rust callers
/// of this crate. C and C++ get `redlock_options_default()` as an inline function of the
/// header (it calls `redlock_options_init()` with the caller's `sizeof(redlock_options)`).
pub fn redlock_options_default() -> redlock_options {
    DEFAULT_OPTIONS
}

/// Most bytes a `struct_size` may claim: far more than the struct will ever grow to; a larger
/// value is an uninitialized struct.
const MAX_STRUCT_SIZE: usize = 4096;

/// Fills the first `size` bytes of `*opts` with the defaults of every option that fits in
/// them (and zeroes any bytes beyond the fields this library knows: 0 is the default of every
/// field added later), and sets `opts->struct_size` to `size`. Pass
/// `sizeof(redlock_options)`; `redlock_options_default()` does. `REDLOCK_INVALID_ARGUMENT` for
/// a NULL `opts` or a `size` too small to hold `struct_size`.
///
/// # Safety
/// `opts` must be NULL or point to `size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn redlock_options_init(
    opts: *mut redlock_options,
    size: usize,
) -> redlock_status {
    boundary::call("redlock_options_init", || {
        boundary::non_null(opts, "opts")?;
        check_size(size, "size")?;
        let base = opts.cast::<u8>();
        let defaults = redlock_options {
            struct_size: size,
            ..DEFAULT_OPTIONS
        };
        let known = size.min(size_of::<redlock_options>());
        // SAFETY: `opts` points to `size` writable bytes; `known <= size` and `defaults` has
        // `size_of::<redlock_options>() >= known` bytes, with no padding (see the layout test).
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&defaults as *const redlock_options).cast::<u8>(),
                base,
                known,
            );
            std::ptr::write_bytes(base.add(known), 0, size - known);
        }
        Ok(())
    })
}

fn check_size(size: usize, name: &'static str) -> Result<(), redlock_core::Error> {
    if size < size_of::<usize>() || size > MAX_STRUCT_SIZE {
        return Err(redlock_core::Error::invalid_argument(
            name,
            ArgValue::Integer(size as u64),
            "not the size of a redlock_options (start from redlock_options_default(), \
             which sets struct_size)",
        ));
    }
    Ok(())
}

/// Reads a caller's `redlock_options` of any version: the fields that fit in its
/// `struct_size`, the defaults for the others.
///
/// # Safety
/// `opts` must point to a `redlock_options` of at least `opts->struct_size` readable bytes.
pub(crate) unsafe fn read_options(
    opts: *const redlock_options,
) -> Result<redlock_options, redlock_core::Error> {
    let base = opts.cast::<u8>();
    // SAFETY: every version starts with `struct_size`.
    let size = unsafe { base.cast::<usize>().read_unaligned() };
    check_size(size, "opts->struct_size")?;
    let mut options = DEFAULT_OPTIONS;
    /// Copies one field when it lies wholly within `size`.
    macro_rules! read_if_present {
        ($($field:ident),*) => {$(
            let offset = offset_of!(redlock_options, $field);
            if offset + size_of_val(&options.$field) <= size {
                // SAFETY: within the caller's `size` readable bytes.
                options.$field = unsafe { read_at(base, offset) };
            }
        )*};
    }
    read_if_present!(
        fanout,
        retry_count,
        retry_delay_ms,
        drift_factor,
        instance_timeout_ms,
        quorum,
        max_extensions,
        disable_local_handoff,
        fencing
    );
    options.struct_size = size_of::<redlock_options>();
    if size > size_of::<redlock_options>() {
        // SAFETY: the bytes past the fields this library knows are within the caller's `size`.
        let extra = unsafe {
            std::slice::from_raw_parts(
                base.add(size_of::<redlock_options>()),
                size - size_of::<redlock_options>(),
            )
        };
        if extra.iter().any(|&b| b != 0) {
            return Err(redlock_core::Error::invalid_argument(
                "opts->struct_size",
                ArgValue::Integer(size as u64),
                format!(
                    "the options set fields this libredlock (version {}, {} bytes of \
                     redlock_options) does not know; link against the library of the header \
                     you compiled with",
                    env!("CARGO_PKG_VERSION"),
                    size_of::<redlock_options>()
                ),
            ));
        }
    }
    Ok(options)
}

/// Reads a `T` at `offset` bytes from `base`.
///
/// # Safety
/// `base + offset` must begin `size_of::<T>()` readable bytes holding a valid `T`.
unsafe fn read_at<T: Copy>(base: *const u8, offset: usize) -> T {
    // SAFETY: guaranteed by the caller.
    unsafe { base.add(offset).cast::<T>().read_unaligned() }
}

const DEFAULT_OPTIONS: redlock_options = redlock_options {
    struct_size: size_of::<redlock_options>(),
    fanout: redlock_fanout::REDLOCK_FANOUT_CONCURRENT as u32,
    retry_count: DEFAULT_RETRY_COUNT,
    retry_delay_ms: DEFAULT_RETRY_DELAY.as_millis() as u64,
    drift_factor: DEFAULT_DRIFT_FACTOR,
    instance_timeout_ms: DEFAULT_INSTANCE_TIMEOUT.as_millis() as u64,
    quorum: 0,
    max_extensions: DEFAULT_MAX_EXTENSIONS,
    disable_local_handoff: 0,
    fencing: 0,
};

impl redlock_options {
    /// Applies every option to `builder`; the core validates the values (and names a bad one).
    pub(crate) fn apply(
        &self,
        builder: RedlockBuilder,
    ) -> Result<RedlockBuilder, redlock_core::Error> {
        let fanout = match self.fanout {
            f if f == redlock_fanout::REDLOCK_FANOUT_CONCURRENT as u32 => FanOut::Concurrent,
            f if f == redlock_fanout::REDLOCK_FANOUT_SEQUENTIAL as u32 => FanOut::Sequential,
            other => {
                return Err(redlock_core::Error::invalid_argument(
                    "fanout",
                    ArgValue::Integer(u64::from(other)),
                    "expected REDLOCK_FANOUT_CONCURRENT (0) or REDLOCK_FANOUT_SEQUENTIAL (1)",
                ))
            }
        };
        let local_handoff = match self.disable_local_handoff {
            0 => true,
            1 => false,
            other => {
                return Err(redlock_core::Error::invalid_argument(
                    "disable_local_handoff",
                    ArgValue::Integer(u64::from(other)),
                    "expected 0 (hand-off on, the default) or 1 (off)",
                ))
            }
        };
        let fencing = match self.fencing {
            0 => false,
            1 => true,
            other => {
                return Err(redlock_core::Error::invalid_argument(
                    "fencing",
                    ArgValue::Integer(u64::from(other)),
                    "expected 0 (no fencing, the default) or 1 (fencing tokens)",
                ))
            }
        };
        let builder = builder
            .local_handoff(local_handoff)
            .fencing(fencing)
            .fanout(fanout)
            .retry_count(self.retry_count)
            .retry_delay(Duration::from_millis(self.retry_delay_ms))
            .drift_factor(self.drift_factor)
            .instance_timeout(Duration::from_millis(self.instance_timeout_ms))
            .max_extensions(self.max_extensions);
        Ok(match self.quorum {
            0 => builder,
            q => builder.quorum(q as usize),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_core() {
        let o = redlock_options_default();
        assert_eq!(o.fanout, redlock_fanout::REDLOCK_FANOUT_CONCURRENT as u32);
        assert_eq!(o.retry_count, DEFAULT_RETRY_COUNT);
        assert_eq!(Duration::from_millis(o.retry_delay_ms), DEFAULT_RETRY_DELAY);
        assert_eq!(o.drift_factor, DEFAULT_DRIFT_FACTOR);
        assert_eq!(
            Duration::from_millis(o.instance_timeout_ms),
            DEFAULT_INSTANCE_TIMEOUT
        );
        assert_eq!((o.quorum, o.max_extensions), (0, DEFAULT_MAX_EXTENSIONS));
        assert_eq!((o.disable_local_handoff, o.fencing), (0, 0));
    }

    /// `redlock_options_init` copies the defaults byte for byte: no padding may hide in them.
    #[test]
    fn the_struct_has_no_padding() {
        let o = DEFAULT_OPTIONS;
        let fields = size_of_val(&o.struct_size)
            + size_of_val(&o.fanout)
            + size_of_val(&o.retry_count)
            + size_of_val(&o.retry_delay_ms)
            + size_of_val(&o.drift_factor)
            + size_of_val(&o.instance_timeout_ms)
            + size_of_val(&o.quorum)
            + size_of_val(&o.max_extensions)
            + size_of_val(&o.disable_local_handoff)
            + size_of_val(&o.fencing);
        assert_eq!(fields, size_of::<redlock_options>());
    }

    #[test]
    fn a_shorter_struct_gets_the_defaults_of_the_missing_fields() {
        let mut caller = redlock_options {
            quorum: 99,
            max_extensions: 7,
            retry_count: 9,
            ..DEFAULT_OPTIONS
        };
        caller.struct_size = offset_of!(redlock_options, quorum); // as if quorum came later
                                                                  // SAFETY: a whole struct, so every byte the size claims is readable.
        let read = unsafe { read_options(&caller) }.unwrap();
        assert_eq!(read.retry_count, 9);
        assert_eq!(
            (read.quorum, read.max_extensions),
            (0, DEFAULT_MAX_EXTENSIONS)
        );
        // A caller built before the hand-off existed gets it on, the default.
        assert_eq!(read.disable_local_handoff, 0);
    }

    #[test]
    fn a_longer_struct_is_accepted_only_with_its_unknown_fields_zero() {
        #[repr(C)]
        struct Newer {
            known: redlock_options,
            added: u64,
        }
        let mut newer = Newer {
            known: DEFAULT_OPTIONS,
            added: 0,
        };
        newer.known.struct_size = size_of::<Newer>();
        newer.known.retry_count = 5;
        // SAFETY: `Newer` holds `struct_size` readable bytes.
        let read = unsafe { read_options(&newer.known) }.unwrap();
        assert_eq!(read.retry_count, 5);
        newer.added = 1;
        // SAFETY: as above.
        let err = unsafe { read_options(&newer.known) }.unwrap_err();
        assert!(err.to_string().contains("opts->struct_size"), "{err}");
    }

    #[test]
    fn init_writes_only_what_fits_and_zeroes_the_rest() {
        let mut buffer = [0xAAu8; 64];
        // SAFETY: `buffer` holds 64 writable bytes, as many as any size given here.
        let status = unsafe { redlock_options_init(buffer.as_mut_ptr().cast(), 16) };
        assert_eq!(status, redlock_status::REDLOCK_OK);
        assert_eq!(usize::from_ne_bytes(buffer[..8].try_into().unwrap()), 16);
        assert!(buffer[16..].iter().all(|&b| b == 0xAA), "wrote past size");
        // SAFETY: as above.
        let status = unsafe { redlock_options_init(buffer.as_mut_ptr().cast(), 64) };
        assert_eq!(status, redlock_status::REDLOCK_OK);
        assert!(buffer[size_of::<redlock_options>()..]
            .iter()
            .all(|&b| b == 0));
        // SAFETY: as above.
        let status = unsafe { redlock_options_init(buffer.as_mut_ptr().cast(), 4) };
        assert_eq!(status, redlock_status::REDLOCK_INVALID_ARGUMENT);
    }

    #[test]
    fn bad_values_are_named() {
        let builder = || redlock_core::Redlock::builder(["redis://127.0.0.1:1"]);
        let bad_fanout = redlock_options {
            fanout: 7,
            ..redlock_options_default()
        };
        let err = bad_fanout.apply(builder()).unwrap_err();
        assert!(err.to_string().contains("fanout 7"), "{err}");
        let zero_timeout = redlock_options {
            instance_timeout_ms: 0,
            ..redlock_options_default()
        };
        // The core refuses it (the C words come with the status: see boundary.rs).
        let err = zero_timeout
            .apply(builder())
            .unwrap()
            .build_blocking()
            .unwrap_err();
        assert!(err.to_string().contains("instance_timeout 0ns"), "{err}");
    }
}
