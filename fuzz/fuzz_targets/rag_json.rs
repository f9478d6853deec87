//! rag's `json.loads`-compatible decoder (`rag::pyjson`): any text either parses or gives a
//! CPython-style error; streaming an array agrees with parsing it whole (and reports growing
//! element end offsets); the Python views of a
//! value (`str`, `repr`, JSON) never panic; `str.splitlines` never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use routeval_retrieval_metrics::rag::pyjson;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let whole = pyjson::parse(text);
    if let Ok(v) = &whole {
        let _ = v.py_str();
        let _ = v.py_repr();
        let _ = v.to_json_value();
        let _ = v.truthy();
        let _ = v.clone().into_owned();
    } else if let Err(e) = &whole {
        let _ = e.to_string();
    }
    let mut items = Vec::new();
    let mut ends: Vec<usize> = Vec::new();
    let streamed = pyjson::stream_array(text, |v, end| {
        items.push(v.into_owned());
        ends.push(end);
    });
    if let (Ok(true), Ok(pyjson::PyValue::List(list))) = (&streamed, &whole) {
        assert_eq!(list.len(), items.len());
        // Each element's end offset is past the previous one's, inside the text, at a
        // character boundary.
        assert!(ends.windows(2).all(|w| w[0] < w[1]));
        assert!(ends.iter().all(|&e| e <= text.len() && text.is_char_boundary(e)));
    }
    let _ = pyjson::split_lines(text);
});
