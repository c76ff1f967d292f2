//! gzip inputs for the tests that every analyzer reads gzip (issue 14): whole, cut short,
//! and corrupt.
#![allow(dead_code)]

use std::io::Write;

/// `bytes` gzip'd (fast compression: the tests only need a valid stream).
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// The first half of a gzip stream: what a copy cut short or a log still being written
/// leaves (the decoder ends at "incomplete deflate stream").
pub fn cut_in_half(gz: &[u8]) -> &[u8] {
    &gz[..gz.len() / 2]
}

/// The stream with bytes 20..60 (the start of the deflate data) overwritten: not a cut, a
/// corrupt stream, which must stay an error.
pub fn corrupt(gz: &[u8]) -> Vec<u8> {
    let mut bad = gz.to_vec();
    for b in &mut bad[20..60] {
        *b = 0xff;
    }
    bad
}
