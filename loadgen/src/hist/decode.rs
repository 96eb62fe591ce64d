//! Reading histograms within bounds: every HdrHistogram a result file holds is decoded here,
//! after its header and payload are checked, within the budget of the file being read (see
//! `crate::model::limits` for the file-level bounds and where they are stated).
//!
//! It sits with the histograms, below the result model, so that reading a histogram never
//! reaches up into the model.

use std::cell::Cell;
use std::io::Read as _;

use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

/// Significant decimal digits a stored histogram may keep (3 is what redlock-loadgen writes;
/// each more digit costs ten times the counters).
pub const MAX_SIGNIFICANT_DIGITS: u32 = 3;
/// The largest a histogram's V2 encoding may inflate to.
pub const MAX_DECODED_HISTOGRAM_BYTES: usize = 1 << 20;
/// Counters (8 bytes each) all the histograms of one file may decode to, together: 2^28, 2 GiB
/// zeroed over the whole reading, never held at once (a 1 s interval of a five-master run with
/// a p99 near 0.5 s decodes to about 42,000, so this is over an hour and a half of them).
pub const MAX_HISTOGRAM_COUNTERS: u64 = 1 << 28;

/// A histogram's total count and any single count (exact as a double, as in JSON).
const MAX_COUNT: u64 = (1 << 53) - 1;

const V2_COOKIE: u32 = 0x1c84_9313;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
/// Cookie, payload length, normalizing offset, digits, lowest, highest, conversion ratio.
const V2_HEADER_BYTES: usize = 40;

/// What the histograms of the file being read may still cost.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    counters: u64,
    inflated: u64,
}

thread_local! {
    static BUDGET: Cell<Option<Budget>> = const { Cell::new(None) };
}

/// Runs `read` (the reading of one file of `file_bytes` bytes) with the file's histogram
/// budget; the histograms it decodes draw from it.
pub fn with_budget<T>(file_bytes: usize, read: impl FnOnce() -> T) -> T {
    let budget = Budget {
        counters: MAX_HISTOGRAM_COUNTERS,
        inflated: (file_bytes as u64)
            .saturating_mul(8)
            .saturating_add(1 << 20),
    };
    let outer = BUDGET.with(|b| b.replace(Some(budget)));
    let result = read();
    BUDGET.with(|b| b.set(outer));
    result
}

/// Takes `n` of what the current file may still spend (unbounded outside [`with_budget`]).
fn spend(n: u64, what: impl Fn(&mut Budget) -> &mut u64, message: &str) -> Result<(), String> {
    BUDGET.with(|cell| {
        let Some(mut budget) = cell.get() else {
            return Ok(());
        };
        let left = what(&mut budget);
        *left = left.checked_sub(n).ok_or_else(|| message.to_string())?;
        cell.set(Some(budget));
        Ok(())
    })
}

fn be_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn be_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// Decodes an HdrHistogram V2 encoding (compressed or not) after checking everything it
/// declares: nothing is allocated or inflated from a declared size before it is checked.
pub fn decode_histogram(bytes: &[u8]) -> Result<Histogram<u64>, String> {
    decode_histogram_v2(bytes).map(|(h, _)| h)
}

/// [`decode_histogram`], and the histogram's uncompressed V2 encoding as read (what a packed
/// histogram keeps, so reading one does not encode it again).
pub fn decode_histogram_v2(bytes: &[u8]) -> Result<(Histogram<u64>, Vec<u8>), String> {
    if bytes.len() < 8 {
        return Err(format!(
            "{} bytes is too short for a histogram",
            bytes.len()
        ));
    }
    let v2 = match be_u32(bytes, 0) {
        V2_COOKIE => bytes.to_vec(),
        V2_COMPRESSED_COOKIE => {
            let declared = be_u32(bytes, 4) as usize;
            let compressed = &bytes[8..];
            if declared != compressed.len() {
                return Err(format!(
                    "the compressed histogram declares {declared} bytes but holds {}",
                    compressed.len()
                ));
            }
            inflate(compressed)?
        }
        cookie => return Err(format!("{cookie:#010x} is not an HdrHistogram V2 cookie")),
    };
    check_v2(&v2)?;
    let mut h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut &v2[..])
        .map_err(|e| format!("not a valid HdrHistogram V2 encoding: {e:?}"))?;
    spend(
        h.distinct_values() as u64,
        |b| &mut b.counters,
        &format!(
            "the file's histograms decode to more than {MAX_HISTOGRAM_COUNTERS} counters together"
        ),
    )?;
    h.auto(true);
    Ok((h, v2))
}

/// Inflates a zlib stream, stopping at [`MAX_DECODED_HISTOGRAM_BYTES`] (and at what the file's
/// budget has left) whatever the stream says.
fn inflate(compressed: &[u8]) -> Result<Vec<u8>, String> {
    let left = BUDGET.with(|b| b.get().map_or(u64::MAX, |b| b.inflated));
    let limit = (MAX_DECODED_HISTOGRAM_BYTES as u64).min(left);
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(compressed)
        .take(limit + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("the compressed histogram does not inflate: {e}"))?;
    if out.len() as u64 > limit {
        return Err(if limit < MAX_DECODED_HISTOGRAM_BYTES as u64 {
            "the file's histograms inflate to more than 8 times the file's size".to_string()
        } else {
            format!("the compressed histogram inflates to more than {MAX_DECODED_HISTOGRAM_BYTES} bytes")
        });
    }
    spend(
        out.len() as u64,
        |b| &mut b.inflated,
        "the file's histograms inflate to more than 8 times the file's size",
    )?;
    Ok(out)
}

/// Checks an uncompressed V2 encoding's header and walks its payload (zig-zag LEB128 counts,
/// negative: a run of zeros) without allocating anything.
fn check_v2(v2: &[u8]) -> Result<(), String> {
    if v2.len() < V2_HEADER_BYTES || be_u32(v2, 0) != V2_COOKIE {
        return Err("not an HdrHistogram V2 encoding (no V2 header)".into());
    }
    let payload_len = be_u32(v2, 4) as usize;
    let payload = &v2[V2_HEADER_BYTES..];
    if payload_len != payload.len() {
        return Err(format!(
            "the histogram declares a {payload_len}-byte payload but holds {}",
            payload.len()
        ));
    }
    let digits = be_u32(v2, 12);
    if !(1..=MAX_SIGNIFICANT_DIGITS).contains(&digits) {
        return Err(format!(
            "the histogram keeps {digits} significant digits (1 to {MAX_SIGNIFICANT_DIGITS} are read)"
        ));
    }
    let (lowest, highest) = (be_u64(v2, 16), be_u64(v2, 24));
    if lowest != 1 {
        return Err(format!(
            "the histogram's lowest discernible value is {lowest} (1 is read)"
        ));
    }
    if !(2..=u64::MAX / 2).contains(&highest) {
        return Err(format!(
            "the histogram's highest trackable value {highest} is out of range"
        ));
    }
    let (mut at, mut total) = (0, 0u64);
    while at < payload.len() {
        let (encoded, used) = varint(&payload[at..])?;
        at += used;
        // Zig-zag: 0, -1, 1, -2 … ; a negative number is a run of zeros.
        let value = (encoded >> 1) as i64 ^ -((encoded & 1) as i64);
        if value < 0 && value.checked_neg().is_none() {
            return Err("the histogram holds a run of zeros out of range".into());
        }
        if value > 0 {
            total = total
                .checked_add(value as u64)
                .filter(|&t| t <= MAX_COUNT)
                .ok_or_else(|| format!("the histogram counts more than {MAX_COUNT} values"))?;
        }
    }
    Ok(())
}

/// One LEB128 number of at most 9 bytes (as HdrHistogram writes them): (value, bytes used).
fn varint(bytes: &[u8]) -> Result<(u64, usize), String> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(9).enumerate() {
        if i == 8 {
            return Ok((value | u64::from(b) << 56, 9));
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err("the histogram's payload ends inside a number".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_stop_at_nine_bytes_and_a_cut_one_is_an_error() {
        assert_eq!(varint(&[0x05]).unwrap(), (5, 1));
        assert_eq!(varint(&[0x80, 0x01]).unwrap(), (128, 2));
        assert_eq!(varint(&[0xff; 9]).unwrap(), (u64::MAX, 9));
        assert!(varint(&[0x80]).is_err());
    }
}
