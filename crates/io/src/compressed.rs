//! Compressed inputs: gzip and zstd files (and stdin) are recognised by their magic bytes, not
//! their names, and decompressed transparently: [`decoding_reader`] streams, [`decode_bytes`]
//! and [`decode_slice`] decompress into memory (a compressed file cannot be used in place).
//! The input functions of [`crate::input`] and [`crate::map::map_file`] go through them, so
//! every input of the CLI (qrels, runs, cases, banks, manifests, predictions, route data,
//! filter input) accepts `.gz`/`.zst` (also under any other name).
//!
//! gzip: `flate2` (pure-Rust miniz_oxide backend), concatenated members read as one stream
//! (as `gzip -d`). zstd: `ruzstd` (pure Rust); concatenated frames are read in order and
//! skippable frames are skipped (as `zstd -d`). Corrupt or truncated data is an
//! [`std::io::Error`] (kind `InvalidData` or `UnexpectedEof`), never a panic.

use std::io::{self, BufRead, BufReader, Read};

/// The compression of an input, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed (read as is).
    None,
    /// gzip (RFC 1952; magic `1f 8b`).
    Gzip,
    /// Zstandard (RFC 8878; frame magic `28 b5 2f fd`, or a skippable frame `5? 2a 4d 18`).
    Zstd,
    /// A compression routeval does not read, named (`bzip2`: magic `BZh1`..`BZh9`; `xz`:
    /// `fd 37 7a 58 5a 00`; `lz4`: frame magic `04 22 4d 18`; `lzip`: `LZIP`). Reading such an
    /// input is an error ([`UnsupportedCompression`]) instead of a parse error on its bytes.
    Unsupported(&'static str),
}

/// The error (inside an [`std::io::Error`] of kind [`io::ErrorKind::Unsupported`]) for an
/// input in a compression routeval does not read ([`Compression::Unsupported`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0}-compressed input is not supported (routeval reads gzip and zstd): decompress it first (e.g. `{0} -dc FILE | routeval ... -`)"
)]
pub struct UnsupportedCompression(pub &'static str);

impl UnsupportedCompression {
    /// The [`UnsupportedCompression`] inside `e`, when that is what `e` is.
    pub fn of(e: &io::Error) -> Option<&UnsupportedCompression> {
        e.get_ref()?.downcast_ref::<UnsupportedCompression>()
    }
}

fn unsupported(name: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, UnsupportedCompression(name))
}

impl Compression {
    /// Detect from the first bytes (at least 6 when the input has them: xz's magic is 6).
    pub fn sniff(head: &[u8]) -> Compression {
        match head {
            [0x1f, 0x8b, ..] => Compression::Gzip,
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
            [b0, 0x2a, 0x4d, 0x18, ..] if b0 & 0xf0 == 0x50 => Compression::Zstd,
            [b'B', b'Z', b'h', b'1'..=b'9', ..] => Compression::Unsupported("bzip2"),
            [0xfd, b'7', b'z', b'X', b'Z', 0x00, ..] => Compression::Unsupported("xz"),
            [0x04, 0x22, 0x4d, 0x18, ..] => Compression::Unsupported("lz4"),
            [b'L', b'Z', b'I', b'P', ..] => Compression::Unsupported("lzip"),
            _ => Compression::None,
        }
    }
}

/// One zstd frame being decoded: its 4 magic bytes (already read) put back in front of the
/// source, so the source can be taken back when the frame ends.
type Frame<R> = ruzstd::decoding::StreamingDecoder<
    io::Chain<io::Cursor<[u8; 4]>, R>,
    ruzstd::decoding::FrameDecoder,
>;

/// A zstd stream of one or more frames (skippable frames skipped).
struct ZstdFrames<R: BufRead> {
    current: Option<Frame<R>>,
    idle: Option<R>,
}

/// `28 b5 2f fd` read as a little-endian u32.
const ZSTD_MAGIC: u32 = 0xFD2F_B528;

impl<R: BufRead> ZstdFrames<R> {
    fn new(source: R) -> Self {
        ZstdFrames {
            current: None,
            idle: Some(source),
        }
    }

    /// Start the next frame; `Ok(false)` at the end of the input.
    fn next_frame(&mut self) -> io::Result<bool> {
        loop {
            let Some(mut src) = self.idle.take() else {
                return Ok(false);
            };
            if src.fill_buf()?.is_empty() {
                return Ok(false);
            }
            let mut magic = [0u8; 4];
            src.read_exact(&mut magic)?;
            let m = u32::from_le_bytes(magic);
            if m & 0xFFFF_FFF0 == 0x184D_2A50 {
                // A skippable frame: a 4-byte length, then that many bytes.
                let mut len = [0u8; 4];
                src.read_exact(&mut len)?;
                let n = u64::from(u32::from_le_bytes(len));
                let skipped = io::copy(&mut (&mut src).take(n), &mut io::sink())?;
                if skipped < n {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "zstd: truncated skippable frame",
                    ));
                }
                self.idle = Some(src);
                continue;
            }
            if m != ZSTD_MAGIC {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "zstd: data after the last frame is not a zstd frame",
                ));
            }
            let d = ruzstd::decoding::StreamingDecoder::new(io::Cursor::new(magic).chain(src))
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            self.current = Some(d);
            return Ok(true);
        }
    }
}

impl<R: BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if let Some(d) = self.current.as_mut() {
                let n = d.read(buf)?;
                if n > 0 {
                    return Ok(n);
                }
                // This frame is done: continue with what follows it.
                if let Some(d) = self.current.take() {
                    self.idle = Some(d.into_inner().into_inner().1);
                }
            }
            if !self.next_frame()? {
                return Ok(0);
            }
        }
    }
}

/// Wrap `reader` so that it yields decompressed bytes when its content is gzip or zstd.
/// Returns the compression found. Content in a compression routeval does not read is an
/// error ([`UnsupportedCompression`]).
pub fn decoding_reader(
    mut reader: Box<dyn BufRead + Send>,
) -> io::Result<(Box<dyn BufRead + Send>, Compression)> {
    // Read up to 6 bytes without losing them (a pipe may deliver fewer per read).
    let mut head = Vec::with_capacity(6);
    while head.len() < 6 {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let take = buf.len().min(6 - head.len());
        head.extend_from_slice(&buf[..take]);
        reader.consume(take);
    }
    let c = Compression::sniff(&head);
    let joined = io::Cursor::new(head).chain(reader);
    let out: Box<dyn BufRead + Send> = match c {
        Compression::None => Box::new(BufReader::with_capacity(1 << 16, joined)),
        Compression::Gzip => Box::new(BufReader::with_capacity(
            1 << 20,
            flate2::read::MultiGzDecoder::new(joined),
        )),
        Compression::Zstd => Box::new(BufReader::with_capacity(
            1 << 20,
            ZstdFrames::new(BufReader::with_capacity(1 << 16, joined)),
        )),
        Compression::Unsupported(name) => return Err(unsupported(name)),
    };
    Ok((out, c))
}

/// Decompress `bytes` when they are gzip or zstd (else return them as they are).
pub fn decode_bytes(bytes: Vec<u8>) -> io::Result<Vec<u8>> {
    let c = Compression::sniff(&bytes);
    if c == Compression::None {
        return Ok(bytes);
    }
    decode_slice(&bytes, c)
}

/// Decompress a compressed slice (`c` from [`Compression::sniff`]).
pub fn decode_slice(bytes: &[u8], c: Compression) -> io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(4));
    match c {
        Compression::None => out.extend_from_slice(bytes),
        Compression::Gzip => {
            flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut out)?;
        }
        Compression::Zstd => {
            ZstdFrames::new(bytes).read_to_end(&mut out)?;
        }
        Compression::Unsupported(name) => return Err(unsupported(name)),
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// A zstd frame of raw (uncompressed) blocks, per RFC 8878 §3.1.1: enough to test the
    /// decoder's framing without a zstd encoder.
    fn zstd_raw(data: &[u8]) -> Vec<u8> {
        let mut out = vec![0x28, 0xb5, 0x2f, 0xfd];
        // Frame header descriptor: single segment, 8-byte content size (FCS flag 3).
        out.push(0b1110_0000);
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        let chunks: Vec<&[u8]> = if data.is_empty() {
            vec![&[][..]]
        } else {
            data.chunks(100_000).collect()
        };
        for (i, c) in chunks.iter().enumerate() {
            let last = u32::from(i + 1 == chunks.len());
            let header = last | ((c.len() as u32) << 3); // block type 0 = raw
            out.extend_from_slice(&header.to_le_bytes()[..3]);
            out.extend_from_slice(c);
        }
        out
    }

    #[test]
    fn sniff_by_magic_not_name() {
        assert_eq!(Compression::sniff(&gz(b"x")), Compression::Gzip);
        assert_eq!(Compression::sniff(&zstd_raw(b"x")), Compression::Zstd);
        assert_eq!(
            Compression::sniff(&[0x50, 0x2a, 0x4d, 0x18]),
            Compression::Zstd
        );
        assert_eq!(Compression::sniff(b"q1 0 d1 1\n"), Compression::None);
        assert_eq!(Compression::sniff(&[0x1f]), Compression::None);
        assert_eq!(Compression::sniff(b""), Compression::None);
    }

    #[test]
    fn unsupported_compressions_are_named_errors_not_bytes() {
        let cases: [(&[u8], &str); 4] = [
            (b"BZh91AY&SY\x00", "bzip2"),
            (&[0xfd, b'7', b'z', b'X', b'Z', 0x00, 0x00, 0x04], "xz"),
            (&[0x04, 0x22, 0x4d, 0x18, 0x64, 0x40], "lz4"),
            (b"LZIP\x01\x0c", "lzip"),
        ];
        for (bytes, name) in cases {
            assert_eq!(Compression::sniff(bytes), Compression::Unsupported(name));
            let e = decode_bytes(bytes.to_vec()).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::Unsupported);
            assert_eq!(
                UnsupportedCompression::of(&e),
                Some(&UnsupportedCompression(name))
            );
            assert!(
                e.to_string()
                    .starts_with(&format!("{name}-compressed input is not supported"))
            );
            // The streaming path, through a pipe-like reader that yields one byte per read.
            struct OneByte<'a>(&'a [u8]);
            impl Read for OneByte<'_> {
                fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                    if self.0.is_empty() || buf.is_empty() {
                        return Ok(0);
                    }
                    buf[0] = self.0[0];
                    self.0 = &self.0[1..];
                    Ok(1)
                }
            }
            let r: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(1, OneByte(bytes)));
            match decoding_reader(r) {
                Err(e) => assert_eq!(
                    UnsupportedCompression::of(&e),
                    Some(&UnsupportedCompression(name))
                ),
                Ok(_) => panic!("{name} was read as plain bytes"),
            }
        }
        // Text that merely starts like a magic is plain: "BZh" without a block-size digit.
        assert_eq!(Compression::sniff(b"BZhx q1 0 d1 1"), Compression::None);
    }

    #[test]
    fn gzip_members_and_zstd_frames_concatenate() {
        let mut g = gz(b"one\n");
        g.extend(gz(b"two\n"));
        assert_eq!(decode_bytes(g).unwrap(), b"one\ntwo\n");
        let mut z = zstd_raw(b"one\n");
        // A skippable frame between the two data frames.
        z.extend_from_slice(&[0x5a, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
        z.extend(zstd_raw(b"two\n"));
        assert_eq!(decode_bytes(z).unwrap(), b"one\ntwo\n");
    }

    #[test]
    fn streaming_reader_matches_whole_decode_on_a_slow_pipe() {
        /// Hands out one byte per read, as a slow pipe may.
        struct Trickle(Vec<u8>, usize);
        impl Read for Trickle {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.1 >= self.0.len() || buf.is_empty() {
                    return Ok(0);
                }
                buf[0] = self.0[self.1];
                self.1 += 1;
                Ok(1)
            }
        }
        let text: Vec<u8> = (0..300_000u32)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        for (bytes, want) in [
            (gz(&text), Compression::Gzip),
            (zstd_raw(&text), Compression::Zstd),
            (text.clone(), Compression::None),
        ] {
            let r: Box<dyn BufRead + Send> =
                Box::new(BufReader::with_capacity(1, Trickle(bytes, 0)));
            let (mut r, c) = decoding_reader(r).unwrap();
            assert_eq!(c, want);
            let mut out = Vec::new();
            r.read_to_end(&mut out).unwrap();
            assert_eq!(out, text, "{c:?}");
        }
    }

    #[test]
    fn corrupt_input_is_an_error_not_a_panic() {
        let mut g = gz(b"hello world\n");
        let n = g.len();
        g.truncate(n - 6);
        assert!(decode_bytes(g).is_err());
        let mut z = zstd_raw(b"hello world\n");
        z.truncate(z.len() - 3);
        assert!(decode_bytes(z).is_err());
        assert!(decode_bytes(vec![0x28, 0xb5, 0x2f, 0xfd, 0xff]).is_err());
    }
}
