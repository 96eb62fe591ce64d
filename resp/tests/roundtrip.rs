//! Whatever the writer writes, the reader reads back whole, frame for frame, and at every cut
//! short of the end it waits for more rather than guessing.

use proptest::prelude::*;
use redlock_resp::{
    push_array_header, push_bulk, push_error, push_integer, push_nil, push_status, read_frame,
    read_reply, read_value, Frame, Limits, Reply,
};

/// An owned value, to generate and compare.
#[derive(Debug, Clone)]
enum Value {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Vec<u8>),
    Nil,
    Array(Vec<Value>),
}

fn value() -> impl Strategy<Value = Value> {
    let line = "[ -~]{0,40}";
    let leaf = prop_oneof![
        line.prop_map(Value::Status),
        line.prop_map(Value::Error),
        any::<i64>().prop_map(Value::Int),
        proptest::collection::vec(any::<u8>(), 0..80).prop_map(Value::Bulk),
        Just(Value::Nil),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        proptest::collection::vec(inner, 0..6).prop_map(Value::Array)
    })
}

fn write(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Status(s) => push_status(out, s.as_bytes()),
        Value::Error(s) => push_error(out, s.as_bytes()),
        Value::Int(n) => push_integer(out, *n),
        Value::Bulk(b) => push_bulk(out, b),
        Value::Nil => push_nil(out),
        Value::Array(items) => {
            push_array_header(out, items.len());
            items.iter().for_each(|item| write(item, out));
        }
    }
}

/// The frames `value` should be read as, in order.
fn expected<'a>(value: &'a Value, frames: &mut Vec<Frame<'a>>) {
    frames.push(match value {
        Value::Status(s) => Frame::Status(s.as_bytes()),
        Value::Error(s) => Frame::Error(s.as_bytes()),
        Value::Int(n) => Frame::Int(*n),
        Value::Bulk(b) => Frame::Bulk(b),
        Value::Nil => Frame::Nil,
        Value::Array(items) => Frame::Array(items.len()),
    });
    if let Value::Array(items) = value {
        items.iter().for_each(|item| expected(item, frames));
    }
}

const ROOMY: Limits = Limits {
    max_line: 64,
    max_bulk: 128,
    max_array: 8,
    max_depth: 5,
    max_value: 1 << 20,
};

proptest! {
    #[test]
    fn a_written_value_reads_back_whole_and_waits_at_every_cut(value in value()) {
        let mut bytes = Vec::new();
        write(&value, &mut bytes);
        let mut want = Vec::new();
        expected(&value, &mut want);

        let mut frames = Vec::new();
        let used = read_value(&bytes, &ROOMY, |f| frames.push(f)).unwrap();
        prop_assert_eq!(used, Some(bytes.len()));
        prop_assert_eq!(&frames, &want);

        for cut in 0..bytes.len() {
            prop_assert_eq!(read_value(&bytes[..cut], &ROOMY, |_| {}).unwrap(), None, "cut at {}", cut);
        }
    }

    #[test]
    fn the_lock_reader_reads_scalars_and_refuses_arrays(value in value()) {
        let mut bytes = Vec::new();
        write(&value, &mut bytes);
        match (&value, read_reply(&bytes)) {
            (Value::Array(_), Err(e)) => prop_assert!(e.to_string().starts_with("unexpected array reply")),
            (Value::Array(_), other) => prop_assert!(false, "an array read as {:?}", other),
            (_, Ok(Some((reply, used)))) => {
                prop_assert_eq!(used, bytes.len());
                let frame = read_frame(&bytes, &Limits::LOCK_REPLY).unwrap().unwrap().0;
                let same = match (reply, frame) {
                    (Reply::Status(a), Frame::Status(b)) | (Reply::Error(a), Frame::Error(b)) | (Reply::Bulk(a), Frame::Bulk(b)) => a == b,
                    (Reply::Int(a), Frame::Int(b)) => a == b,
                    (Reply::Nil, Frame::Nil) => true,
                    _ => false,
                };
                prop_assert!(same);
            }
            (_, other) => prop_assert!(false, "a scalar read as {:?}", other),
        }
    }

    #[test]
    fn garbage_never_panics_and_never_claims_more_than_it_was_given(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(Some(used)) = read_value(&bytes, &ROOMY, |_| {}) {
            prop_assert!(used <= bytes.len());
        }
        if let Ok(Some((_, used))) = read_reply(&bytes) {
            prop_assert!(used <= bytes.len());
        }
    }
}
