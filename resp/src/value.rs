//! One whole value, arrays included, walked frame by frame without allocating: the
//! foundation of owned decoders (a test server reading commands, a tool reading `KEYS`).

use crate::frame::{read_frame, Frame, Limits, RespError, MAX_DEPTH};

/// Walks the first whole value in `buf`, handing each of its frames to `frame` in order (an
/// array's header, then its elements). Returns `Ok(Some(consumed))` once the value is whole,
/// `Ok(None)` when more bytes are needed (the frames handed over so far were the start of it:
/// discard them and walk again once more bytes are there), or an error as soon as the value
/// breaks `limits`: an array longer than `max_array`, nested deeper than `max_depth`, a
/// value longer than `max_value` (also when only its start has arrived), or a frame
/// [`read_frame`] refuses.
pub fn read_value<'a>(
    buf: &'a [u8],
    limits: &Limits,
    mut frame: impl FnMut(Frame<'a>),
) -> Result<Option<usize>, RespError> {
    let max_depth = limits.max_depth.min(MAX_DEPTH);
    // Elements still to come in each open array, innermost last.
    let mut open = [0usize; MAX_DEPTH];
    let mut depth = 0;
    let mut at = 0;
    loop {
        let Some((next, used)) = read_frame(&buf[at..], limits)? else {
            if buf.len() >= limits.max_value {
                return Err(too_long(limits));
            }
            return Ok(None);
        };
        at += used;
        if at > limits.max_value {
            return Err(too_long(limits));
        }
        if let Frame::Array(n) = next {
            if n > limits.max_array {
                return Err(RespError::new(format!(
                    "an array of {n} elements (limit {})",
                    limits.max_array
                )));
            }
            if depth == max_depth {
                return Err(RespError::new(format!(
                    "arrays nested more than {max_depth} deep"
                )));
            }
            frame(next);
            if n > 0 {
                open[depth] = n;
                depth += 1;
                continue;
            }
        } else {
            frame(next);
        }
        // An element is whole: it may complete its array, and that one its parent.
        loop {
            let Some(innermost) = depth.checked_sub(1) else {
                return Ok(Some(at));
            };
            open[innermost] -= 1;
            if open[innermost] > 0 {
                break;
            }
            depth = innermost;
        }
    }
}

fn too_long(limits: &Limits) -> RespError {
    RespError::new(format!("a value longer than {} bytes", limits.max_value))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_line: 64,
        max_bulk: 64,
        max_array: 8,
        max_depth: 3,
        max_value: 256,
    };

    fn frames(buf: &[u8]) -> Result<Option<(Vec<Frame<'_>>, usize)>, RespError> {
        let mut seen = Vec::new();
        Ok(read_value(buf, &LIMITS, |f| seen.push(f))?.map(|used| (seen, used)))
    }

    #[test]
    fn a_scalar_is_one_frame() {
        assert_eq!(
            frames(b"+OK\r\n:1\r\n").unwrap(),
            Some((vec![Frame::Status(b"OK")], 5))
        );
        assert_eq!(frames(b"*-1\r\n").unwrap(), Some((vec![Frame::Nil], 5)));
    }

    #[test]
    fn an_array_hands_over_its_header_then_its_elements_in_order() {
        let bytes = b"*3\r\n:1\r\n*2\r\n$1\r\nx\r\n*0\r\n$-1\r\n+next\r\n";
        let (seen, used) = frames(bytes).unwrap().expect("whole");
        assert_eq!(
            seen,
            [
                Frame::Array(3),
                Frame::Int(1),
                Frame::Array(2),
                Frame::Bulk(b"x"),
                Frame::Array(0),
                Frame::Nil,
            ]
        );
        assert_eq!(used, bytes.len() - b"+next\r\n".len());
    }

    #[test]
    fn an_incomplete_value_waits_at_every_cut() {
        let whole = b"*3\r\n$3\r\nSET\r\n*1\r\n$1\r\nk\r\n$10\r\n0123456789\r\n";
        for cut in 0..whole.len() {
            assert_eq!(frames(&whole[..cut]).unwrap(), None, "cut at {cut}");
        }
        assert_eq!(
            frames(whole).unwrap().map(|(_, used)| used),
            Some(whole.len())
        );
    }

    #[test]
    fn a_hostile_array_length_is_refused_from_its_header() {
        let error = frames(b"*4000000000\r\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "an array of 4000000000 elements (limit 8)"
        );
        let error = frames(b"*1\r\n*9\r\n").unwrap_err();
        assert_eq!(error.to_string(), "an array of 9 elements (limit 8)");
        assert!(frames(b"*8\r\n").unwrap().is_none());
    }

    #[test]
    fn nesting_deeper_than_the_limit_is_refused_before_its_elements_arrive() {
        assert!(frames(b"*1\r\n*1\r\n*1\r\n:1\r\n").unwrap().is_some());
        let error = frames(b"*1\r\n*1\r\n*1\r\n*1\r\n").unwrap_err();
        assert_eq!(error.to_string(), "arrays nested more than 3 deep");
        let deep_empty = frames(b"*1\r\n*1\r\n*1\r\n*0\r\n").unwrap_err();
        assert!(deep_empty.to_string().contains("nested"), "{deep_empty}");
        // A flat run of arrays is not nesting: each one closes before the next opens.
        assert!(frames(b"*3\r\n*1\r\n:1\r\n*1\r\n:2\r\n*1\r\n:3\r\n")
            .unwrap()
            .is_some());
    }

    #[test]
    fn nesting_past_the_fixed_stack_is_refused_whatever_the_limits_say() {
        let unbounded = Limits {
            max_depth: usize::MAX,
            max_value: usize::MAX,
            ..LIMITS
        };
        let deep = b"*1\r\n".repeat(MAX_DEPTH + 1);
        let error = read_value(&deep, &unbounded, |_| {}).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("arrays nested more than {MAX_DEPTH} deep")
        );
    }

    #[test]
    fn no_arrays_at_all_when_the_depth_limit_is_zero() {
        let scalars_only = Limits {
            max_depth: 0,
            ..LIMITS
        };
        assert!(read_value(b"*0\r\n", &scalars_only, |_| {}).is_err());
        assert_eq!(
            read_value(b":1\r\n", &scalars_only, |_| {}).unwrap(),
            Some(4)
        );
    }

    #[test]
    fn a_value_longer_than_the_limit_is_refused_even_before_it_ends() {
        // Eight bulk strings of 40 bytes: 8 * 46 + 4 bytes, over 256.
        let mut long = b"*8\r\n".to_vec();
        for _ in 0..8 {
            long.extend_from_slice(b"$40\r\n");
            long.extend_from_slice(&[b'v'; 40]);
            long.extend_from_slice(b"\r\n");
        }
        let error = frames(&long).unwrap_err();
        assert_eq!(error.to_string(), "a value longer than 256 bytes");
        // Its start alone, once it reaches the limit, is refused too (a caller that buffers
        // until a value is whole stops there).
        let error = frames(&long[..256]).unwrap_err();
        assert_eq!(error.to_string(), "a value longer than 256 bytes");
        assert_eq!(frames(&long[..255]).unwrap(), None);
    }

    #[test]
    fn a_malformed_element_fails_the_value() {
        let error = frames(b"*2\r\n:1\r\n?\r\n").unwrap_err();
        assert!(error.to_string().contains("not a RESP value"), "{error}");
    }
}
