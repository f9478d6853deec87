//! The Python `re` translation layer: any pattern either compiles or is rejected, and
//! searching any haystack never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use routeval_query_dsl::PyRegex;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (pattern, haystack) = text.split_once('\u{0}').unwrap_or((text, "abc \u{e9} 123\n"));
    if let Ok(re) = PyRegex::new(pattern) {
        let _ = re.search(haystack);
        let _ = re.search("");
    }
});
