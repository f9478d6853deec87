//! The Hugging Face normalisers the count-only fast path supports (none, NFC, NFKC), with the
//! `tokenizers` crate's own Unicode tables (`unicode-normalization-alignments`).

use unicode_normalization_alignments::UnicodeNormalization;

/// A `tokenizer.json` normalizer the fast path runs itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Norm {
    /// No normalizer (or an empty sequence).
    None,
    /// Unicode NFC.
    Nfc,
    /// Unicode NFKC.
    Nfkc,
}

/// `s` in `norm`'s normal form, borrowed when it already is (ASCII, or a text the UAX #15
/// quick check calls normalised).
pub(super) fn normalize_with(norm: Norm, s: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    // NFC and NFKC leave ASCII unchanged.
    if s.is_ascii() {
        return Cow::Borrowed(s);
    }
    // A text the quick check (UAX #15, the same crate's tables) calls normalized is its own
    // normal form: most non-ASCII text is already NFC, and the check reads each character once
    // where the normaliser decomposes and recomposes it.
    use unicode_normalization_alignments::{IsNormalized, is_nfc_quick, is_nfkc_quick};
    match norm {
        Norm::None => Cow::Borrowed(s),
        Norm::Nfc if is_nfc_quick(s.chars()) == IsNormalized::Yes => Cow::Borrowed(s),
        Norm::Nfkc if is_nfkc_quick(s.chars()) == IsNormalized::Yes => Cow::Borrowed(s),
        Norm::Nfc => Cow::Owned(s.nfc().map(|(c, _)| c).collect()),
        Norm::Nfkc => Cow::Owned(s.nfkc().map(|(c, _)| c).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::{Norm, normalize_with};
    use proptest::prelude::*;
    use unicode_normalization_alignments::UnicodeNormalization;

    /// Characters where NFC and NFKC act: combining marks (in and out of canonical order),
    /// precomposed and decomposed Latin, Hangul syllables and jamo, compatibility forms
    /// (ligatures, circled and full-width digits, superscripts), singletons (Ohm, Kelvin,
    /// Angstrom), CJK, an emoji and plain ASCII.
    const CHARS: &[char] = &[
        'a',
        'e',
        'A',
        ' ',
        '1',
        '\u{301}',
        '\u{300}',
        '\u{323}',
        '\u{308}',
        '\u{327}',
        '\u{e9}',
        '\u{c5}',
        '\u{212b}',
        '\u{2126}',
        '\u{212a}',
        '\u{1e0b}',
        '\u{1100}',
        '\u{1161}',
        '\u{11a8}',
        '\u{ac00}',
        '\u{d55c}',
        '\u{fb01}',
        '\u{2460}',
        '\u{ff11}',
        '\u{b2}',
        '\u{3000}',
        '\u{65e5}',
        '\u{1f916}',
        '\u{f900}',
        '\u{2000}',
        '\u{fdfa}',
        '\u{1d15e}',
        '\u{345}',
        '\u{3099}',
        '\u{304b}',
    ];

    fn full(norm: Norm, s: &str) -> String {
        match norm {
            Norm::None => s.to_string(),
            Norm::Nfc => s.nfc().map(|(c, _)| c).collect(),
            Norm::Nfkc => s.nfkc().map(|(c, _)| c).collect(),
        }
    }

    proptest! {
        /// The quick-check shortcut gives the normaliser's own output on every text.
        #[test]
        fn quick_checked_normalization_equals_the_full_one(
            picks in proptest::collection::vec(0..CHARS.len(), 0..24),
            any_text in "\\PC{0,16}",
        ) {
            let text: String = picks.iter().map(|&i| CHARS[i]).collect();
            for t in [text.as_str(), any_text.as_str()] {
                for norm in [Norm::Nfc, Norm::Nfkc, Norm::None] {
                    let fast = normalize_with(norm, t).into_owned();
                    prop_assert_eq!(fast, full(norm, t), "{:?}", t);
                }
            }
        }
    }

    #[test]
    fn normalized_texts_are_borrowed_others_rewritten() {
        use std::borrow::Cow;
        assert!(matches!(
            normalize_with(Norm::Nfc, "caf\u{e9} \u{65e5}"),
            Cow::Borrowed(_)
        ));
        assert_eq!(normalize_with(Norm::Nfc, "cafe\u{301}"), "caf\u{e9}");
        assert_eq!(normalize_with(Norm::Nfkc, "\u{fb01}\u{2460}"), "fi1");
        assert!(matches!(
            normalize_with(Norm::Nfkc, "\u{fb01}"),
            Cow::Owned(_)
        ));
    }
}
