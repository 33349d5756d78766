//! Broadcast WAV files (EBU Tech 3285 v2) as Granary writes them, streamed: the head (`fmt `,
//! `bext`, `iXML`) before the first sample, the audio as it is rendered, and at the end the
//! cue points with their labels (`cue ` and `LIST`/`adtl`), a sampler loop (`smpl`) for
//! loops, and the figures only the end knows written back into their places (the sizes, the
//! `bext` loudness fields).
//!
//! The layout, in order:
//!
//! | chunk | content | when it is written |
//! |---|---|---|
//! | `RIFF`/`WAVE` | the file's size | head; size at the end |
//! | `fmt ` | WAVE_FORMAT_EXTENSIBLE, 2 channels, 32-bit IEEE float, front left/right | head |
//! | `fact` | frames per channel | head; the count at the end |
//! | `bext` | version 2: description, originator, reference, date, time, time reference 0, the EBU R 128 loudness fields, coding history (EBU R 98) | head; loudness at the end |
//! | `iXML` | the take (iXML 2.10 fields and Granary's own `GRANARY_TAKE`) | head |
//! | `data` | the audio, interleaved | streamed; size at the end |
//! | `cue `, `LIST`/`adtl` | markers, a `labl` each | end |
//! | `smpl` | one forward loop over the whole file (`--loop`) | end |
//!
//! Why by hand: `hound` (which wrote Granary's files before) writes no chunk of its own
//! choosing, and `bwavfile` 2.0.1, the one Rust crate that writes `bext` and `iXML`, seeks to
//! the file's end and rewrites both size fields on every write (each one a flush of a buffered
//! file), writes no cue points and depends on clap 2 at run time. The chunks here are a few
//! fixed layouts; `tests/wav_metadata.py` reads them back with an independent parser
//! (`wavinfo`) and libsndfile.

use std::io::{self, Read, Seek, SeekFrom, Write};

/// `bext` version written: 2 (EBU Tech 3285 v2, 2011: with the loudness fields).
pub const BEXT_VERSION: u16 = 2;
/// Size of the `bext` chunk before its coding history, bytes (EBU Tech 3285 v2, table 1).
pub const BEXT_FIXED: usize = 602;
/// Offset of LoudnessValue within the `bext` chunk's content: after Description (256),
/// Originator (32), OriginatorReference (32), OriginationDate (10), OriginationTime (8),
/// TimeReference (8), Version (2) and UMID (64).
const BEXT_LOUDNESS_OFFSET: u64 = 412;
/// A `bext` loudness field not computed (EBU Tech 3285 v2: 0x7FFF).
pub const NOT_COMPUTED: i16 = 0x7FFF;
/// `fmt ` of WAVE_FORMAT_EXTENSIBLE, bytes.
const FMT_SIZE: u32 = 40;
/// KSDATAFORMAT_SUBTYPE_IEEE_FLOAT, as stored (mmreg.h): 00000003-0000-0010-8000-00aa00389b71.
const SUBTYPE_FLOAT: [u8; 16] = [
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71,
];
/// Bytes per stereo frame of 32-bit float.
pub const FRAME_BYTES: u64 = 8;

/// The EBU R 128 figures a `bext` chunk carries (EBU Tech 3285 v2; EBU Tech 3341 and 3342
/// define them). A figure that is NaN is written as not computed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Loudness {
    /// Integrated loudness, LUFS.
    pub integrated_lufs: f64,
    /// Loudness range, LU.
    pub range_lu: f64,
    /// Maximum true peak, dBTP.
    pub true_peak_dbtp: f64,
    /// Maximum momentary loudness (400 ms), LUFS.
    pub max_momentary_lufs: f64,
    /// Maximum short-term loudness (3 s), LUFS.
    pub max_short_term_lufs: f64,
}

impl Loudness {
    /// Every field not computed.
    pub const UNKNOWN: Loudness = Loudness {
        integrated_lufs: f64::NAN,
        range_lu: f64::NAN,
        true_peak_dbtp: f64::NAN,
        max_momentary_lufs: f64::NAN,
        max_short_term_lufs: f64::NAN,
    };

    fn fields(&self) -> [f64; 5] {
        [
            self.integrated_lufs,
            self.range_lu,
            self.true_peak_dbtp,
            self.max_momentary_lufs,
            self.max_short_term_lufs,
        ]
    }
}

/// A figure in hundredths, as the `bext` loudness fields store it (−23.004 LUFS: −2300): a
/// figure that is not a number — NaN, or the −∞ of a silent file, which has no loudness — is
/// [`NOT_COMPUTED`]; anything below the field's range is its lowest value (−327.68), anything
/// above its highest computed value (327.66).
pub fn centi(x: f64) -> i16 {
    if !x.is_finite() {
        return NOT_COMPUTED;
    }
    (x * 100.0).round().clamp(i16::MIN as f64, (NOT_COMPUTED - 1) as f64) as i16
}

/// What a file says about itself before its first sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Head {
    /// `bext` Description (ASCII, at most 256 bytes: longer is cut, other characters are `?`).
    pub description: String,
    /// `bext` Originator (32 bytes).
    pub originator: String,
    /// `bext` OriginatorReference (32 bytes), unique per file.
    pub originator_reference: String,
    /// `bext` OriginationDate, `yyyy-mm-dd`.
    pub date: String,
    /// `bext` OriginationTime, `hh:mm:ss`.
    pub time: String,
    /// `bext` CodingHistory: lines of EBU R 98, each ending in CR LF.
    pub coding_history: String,
    /// The `iXML` document.
    pub ixml: String,
}

/// A cue point: a frame and its label.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub frame: u64,
    pub label: String,
}

/// What a file says about itself after its last sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Tail {
    pub loudness: Loudness,
    pub markers: Vec<Marker>,
    /// A forward loop over the whole file (`smpl`), for a loop's file.
    pub looped: bool,
}

/// `text` as a fixed-size ASCII field: cut to `n` bytes, characters outside printable ASCII
/// as `?`, the rest NUL.
fn ascii_field(text: &str, n: usize) -> Vec<u8> {
    let mut b: Vec<u8> = text
        .chars()
        .map(|c| if (' '..='~').contains(&c) { c as u8 } else { b'?' })
        .take(n)
        .collect();
    b.resize(n, 0);
    b
}

/// The content of a `bext` chunk (EBU Tech 3285 v2, table 1).
pub fn bext(head: &Head, loudness: &Loudness) -> Vec<u8> {
    let mut b = Vec::with_capacity(BEXT_FIXED + head.coding_history.len() + 1);
    b.extend(ascii_field(&head.description, 256));
    b.extend(ascii_field(&head.originator, 32));
    b.extend(ascii_field(&head.originator_reference, 32));
    b.extend(ascii_field(&head.date, 10));
    b.extend(ascii_field(&head.time, 8));
    // TimeReference: the first sample's count since midnight, 0
    b.extend(0u64.to_le_bytes());
    b.extend(BEXT_VERSION.to_le_bytes());
    // UMID: none
    b.extend([0u8; 64]);
    debug_assert_eq!(b.len() as u64, BEXT_LOUDNESS_OFFSET);
    for x in loudness.fields() {
        b.extend(centi(x).to_le_bytes());
    }
    b.extend([0u8; 180]);
    debug_assert_eq!(b.len(), BEXT_FIXED);
    b.extend(head.coding_history.bytes().filter(u8::is_ascii));
    b
}

/// The fields of a `bext` chunk, read back.
#[derive(Debug, Clone, PartialEq)]
pub struct BextFields {
    pub description: String,
    pub originator: String,
    pub originator_reference: String,
    pub date: String,
    pub time: String,
    pub version: u16,
    /// The loudness fields in hundredths, as stored.
    pub loudness: [i16; 5],
    pub coding_history: String,
}

impl BextFields {
    /// Parses a `bext` chunk's content.
    pub fn parse(b: &[u8]) -> Result<BextFields, String> {
        if b.len() < BEXT_FIXED {
            return Err(format!("bext chunk of {} bytes, shorter than {BEXT_FIXED}", b.len()));
        }
        let text = |r: std::ops::Range<usize>| {
            let f = &b[r];
            let end = f.iter().position(|&c| c == 0).unwrap_or(f.len());
            String::from_utf8_lossy(&f[..end]).into_owned()
        };
        let at = BEXT_LOUDNESS_OFFSET as usize;
        Ok(BextFields {
            description: text(0..256),
            originator: text(256..288),
            originator_reference: text(288..320),
            date: text(320..330),
            time: text(330..338),
            version: u16::from_le_bytes([b[346], b[347]]),
            loudness: std::array::from_fn(|i| i16::from_le_bytes([b[at + 2 * i], b[at + 2 * i + 1]])),
            coding_history: text(BEXT_FIXED..b.len()),
        })
    }
}

/// A chunk: its id, then its size and content, padded to an even length.
fn chunk(out: &mut Vec<u8>, id: &[u8; 4], content: &[u8]) {
    out.extend(id);
    out.extend((content.len() as u32).to_le_bytes());
    out.extend(content);
    if content.len() % 2 == 1 {
        out.push(0);
    }
}

/// The `cue `, `LIST`/`adtl` and `smpl` chunks of `tail` for a file of `frames` frames at
/// `sample_rate` Hz.
pub fn tail_chunks(tail: &Tail, frames: u64, sample_rate: u32) -> Vec<u8> {
    let mut out = Vec::new();
    if !tail.markers.is_empty() {
        let mut cue = Vec::new();
        cue.extend((tail.markers.len() as u32).to_le_bytes());
        for (i, m) in tail.markers.iter().enumerate() {
            let frame = m.frame.min(u32::MAX as u64) as u32;
            cue.extend((i as u32 + 1).to_le_bytes()); // dwName: the cue's id
            cue.extend(frame.to_le_bytes()); // dwPosition (no playlist: the sample)
            cue.extend(b"data"); // fccChunk
            cue.extend(0u32.to_le_bytes()); // dwChunkStart
            cue.extend(0u32.to_le_bytes()); // dwBlockStart
            cue.extend(frame.to_le_bytes()); // dwSampleOffset
        }
        chunk(&mut out, b"cue ", &cue);
        let mut adtl = b"adtl".to_vec();
        for (i, m) in tail.markers.iter().enumerate() {
            let mut labl = (i as u32 + 1).to_le_bytes().to_vec();
            labl.extend(m.label.bytes().filter(|&c| c != 0));
            labl.push(0);
            chunk(&mut adtl, b"labl", &labl);
        }
        chunk(&mut out, b"LIST", &adtl);
    }
    if tail.looped && frames > 0 {
        let mut smpl = Vec::new();
        let period_ns = (1e9 / sample_rate as f64).round() as u32;
        for x in [0, 0, period_ns, 60, 0, 0, 0, 1, 0u32] {
            // manufacturer, product, sample period, MIDI unity note, pitch fraction, SMPTE
            // format and offset, one loop, no sampler data
            smpl.extend(x.to_le_bytes());
        }
        let end = (frames - 1).min(u32::MAX as u64) as u32;
        // cue point id 0, forward, from the first frame to the last (inclusive), endless
        for x in [0, 0, 0, end, 0, 0u32] {
            smpl.extend(x.to_le_bytes());
        }
        chunk(&mut out, b"smpl", &smpl);
    }
    out
}

/// A stereo 32-bit float Broadcast WAV file, streamed.
pub struct Writer<W: Write + Seek> {
    out: W,
    sample_rate: u32,
    /// Where the file starts in `out`.
    start: u64,
    /// Offsets from `start`: the `fact` frame count, the `bext` loudness fields, the `data`
    /// size field, the data.
    fact_at: u64,
    loudness_at: u64,
    data_size_at: u64,
    data_at: u64,
    frames: u64,
    /// Largest data chunk, bytes: what leaves room for the other chunks within 4 GiB.
    max_data: u64,
    /// Interleaved little-endian bytes of one block.
    bytes: Vec<u8>,
}

impl<W: Write + Seek> Writer<W> {
    /// Writes the head (`RIFF`, `fmt `, `bext` with its loudness not yet known, `iXML`, the
    /// `data` chunk's header) into `out`.
    pub fn new(mut out: W, sample_rate: u32, head: &Head) -> io::Result<Writer<W>> {
        let start = out.stream_position()?;
        let mut h = Vec::new();
        h.extend(b"RIFF");
        h.extend(0u32.to_le_bytes());
        h.extend(b"WAVE");
        let mut fmt = Vec::with_capacity(FMT_SIZE as usize);
        fmt.extend(0xFFFEu16.to_le_bytes()); // WAVE_FORMAT_EXTENSIBLE
        fmt.extend(2u16.to_le_bytes());
        fmt.extend(sample_rate.to_le_bytes());
        fmt.extend((sample_rate * FRAME_BYTES as u32).to_le_bytes());
        fmt.extend((FRAME_BYTES as u16).to_le_bytes());
        fmt.extend(32u16.to_le_bytes());
        fmt.extend(22u16.to_le_bytes()); // cbSize
        fmt.extend(32u16.to_le_bytes()); // valid bits
        fmt.extend(3u32.to_le_bytes()); // SPEAKER_FRONT_LEFT | SPEAKER_FRONT_RIGHT
        fmt.extend(SUBTYPE_FLOAT);
        chunk(&mut h, b"fmt ", &fmt);
        // fact: frames per channel, as every format but integer PCM has (libsndfile asks)
        let fact_at = h.len() as u64 + 8;
        chunk(&mut h, b"fact", &0u32.to_le_bytes());
        let loudness_at = h.len() as u64 + 8 + BEXT_LOUDNESS_OFFSET;
        // both of even length, so that a reader that skips a chunk without its pad byte
        // (hound does) still finds the next: the coding history ends in a NUL, the XML in a
        // newline
        let mut b = bext(head, &Loudness::UNKNOWN);
        if b.len() % 2 == 1 {
            b.push(0);
        }
        chunk(&mut h, b"bext", &b);
        let mut x = head.ixml.as_bytes().to_vec();
        if x.len() % 2 == 1 {
            x.push(b'\n');
        }
        chunk(&mut h, b"iXML", &x);
        h.extend(b"data");
        let data_size_at = h.len() as u64;
        h.extend(0u32.to_le_bytes());
        let data_at = h.len() as u64;
        out.write_all(&h)?;
        // room for the tail's chunks (a few kB at most) within the 32-bit RIFF size
        let max_data = (u32::MAX as u64 - data_at - (1 << 16)) / FRAME_BYTES * FRAME_BYTES;
        Ok(Writer {
            out,
            sample_rate,
            start,
            fact_at,
            loudness_at,
            data_size_at,
            data_at,
            frames: 0,
            max_data,
            bytes: Vec::new(),
        })
    }

    /// Appends the frames `l[i], r[i]`.
    pub fn write(&mut self, l: &[f32], r: &[f32]) -> io::Result<()> {
        let n = l.len().min(r.len());
        if (self.frames + n as u64) * FRAME_BYTES > self.max_data {
            return Err(io::Error::other("the audio exceeds a WAV file's 4 GiB"));
        }
        self.bytes.clear();
        for (x, y) in l.iter().zip(r) {
            self.bytes.extend(x.to_le_bytes());
            self.bytes.extend(y.to_le_bytes());
        }
        self.out.write_all(&self.bytes)?;
        self.frames += n as u64;
        Ok(())
    }

    /// Frames written.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Writes the tail's chunks after the audio and the sizes and loudness into their places;
    /// the writer flushed, at the file's end.
    pub fn finish(mut self, tail: &Tail) -> io::Result<W> {
        let data = self.frames * FRAME_BYTES;
        self.out.write_all(&tail_chunks(tail, self.frames, self.sample_rate))?;
        let end = self.out.stream_position()?;
        let riff = end - self.start - 8;
        let riff = u32::try_from(riff).map_err(|_| io::Error::other("the file exceeds a WAV file's 4 GiB"))?;
        let mut patch = |at: u64, bytes: &[u8]| -> io::Result<()> {
            self.out.seek(SeekFrom::Start(self.start + at))?;
            self.out.write_all(bytes)
        };
        patch(4, &riff.to_le_bytes())?;
        patch(self.data_size_at, &(data as u32).to_le_bytes())?;
        patch(self.fact_at, &(self.frames as u32).to_le_bytes())?;
        let loudness: Vec<u8> = tail
            .loudness
            .fields()
            .iter()
            .flat_map(|&x| centi(x).to_le_bytes())
            .collect();
        patch(self.loudness_at, &loudness)?;
        self.out.seek(SeekFrom::Start(end))?;
        self.out.flush()?;
        debug_assert!(self.data_at + data <= end - self.start);
        Ok(self.out)
    }
}

/// A file's chunks: id and content, in file order.
pub type Chunks = Vec<([u8; 4], Vec<u8>)>;

/// Most chunks [`read_chunks`] reads, and most bytes of content in all.
const MAX_CHUNKS: usize = 4096;
const MAX_CONTENT_BYTES: u64 = 64 << 20;

/// The chunks of a RIFF/WAVE file: id and content, in file order (the `data` chunk's content
/// left out: empty). It stops, keeping what it read, at a chunk that is cut short or runs past
/// the file, after [`MAX_CHUNKS`], or before the content read would pass
/// [`MAX_CONTENT_BYTES`]: a file cut off in its tail still gives its head's chunks, and no
/// file makes it read without bound. An error only when it is not a RIFF/WAVE file.
pub fn read_chunks(mut r: impl Read + Seek) -> Result<Chunks, String> {
    let mut head = [0u8; 12];
    r.read_exact(&mut head)
        .map_err(|_| "not a WAV file (shorter than its header)".to_string())?;
    if &head[0..4] != b"RIFF" || &head[8..12] != b"WAVE" {
        return Err("not a WAV file (no RIFF/WAVE header)".into());
    }
    let riff_end = 8 + u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as u64;
    let file_end = r.seek(SeekFrom::End(0)).map_err(|e| e.to_string())?;
    let end = riff_end.min(file_end);
    let mut chunks = Vec::new();
    let mut at = 12u64;
    let mut content_bytes = 0u64;
    while at + 8 <= end && chunks.len() < MAX_CHUNKS {
        let mut h = [0u8; 8];
        if r.seek(SeekFrom::Start(at)).is_err() || r.read_exact(&mut h).is_err() {
            break;
        }
        let id = [h[0], h[1], h[2], h[3]];
        let size = u32::from_le_bytes([h[4], h[5], h[6], h[7]]) as u64;
        if at + 8 + size > end {
            break;
        }
        if &id == b"data" {
            chunks.push((id, Vec::new()));
        } else {
            content_bytes += size;
            if content_bytes > MAX_CONTENT_BYTES {
                break;
            }
            let mut content = vec![0u8; size as usize];
            if r.read_exact(&mut content).is_err() {
                break;
            }
            chunks.push((id, content));
        }
        at += 8 + size + size % 2;
    }
    Ok(chunks)
}

/// The markers of a file's `cue ` and `LIST`/`adtl` chunks: frame and label, in cue order.
pub fn markers(chunks: &[([u8; 4], Vec<u8>)]) -> Vec<Marker> {
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let mut cues: Vec<(u32, u64)> = Vec::new();
    let mut labels: Vec<(u32, String)> = Vec::new();
    for (id, c) in chunks {
        if id == b"cue " && c.len() >= 4 {
            let n = u32_at(c, 0) as usize;
            for k in 0..n {
                let at = 4 + 24 * k;
                if at + 24 <= c.len() {
                    cues.push((u32_at(c, at), u32_at(c, at + 20) as u64));
                }
            }
        }
        if id == b"LIST" && c.starts_with(b"adtl") {
            let mut at = 4;
            while at + 8 <= c.len() {
                let size = u32_at(c, at + 4) as usize;
                let body = &c[(at + 8).min(c.len())..(at + 8 + size).min(c.len())];
                if &c[at..at + 4] == b"labl" && body.len() >= 4 {
                    let text = &body[4..];
                    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
                    labels.push((u32_at(body, 0), String::from_utf8_lossy(&text[..end]).into_owned()));
                }
                at += 8 + size + size % 2;
            }
        }
    }
    cues.iter()
        .map(|&(id, frame)| Marker {
            frame,
            label: labels
                .iter()
                .find(|(i, _)| *i == id)
                .map(|(_, l)| l.clone())
                .unwrap_or_default(),
        })
        .collect()
}

/// The content of the first chunk `id` among `chunks`.
pub fn find<'a>(chunks: &'a [([u8; 4], Vec<u8>)], id: &[u8; 4]) -> Option<&'a [u8]> {
    chunks.iter().find(|(i, _)| i == id).map(|(_, c)| c.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn head() -> Head {
        Head {
            description: "Sugar poured into a ceramic mug — 20 g/s".into(),
            originator: "Granary 0.1.0".into(),
            originator_reference: "GRANARY-TEST".into(),
            date: "2026-11-29".into(),
            time: "02:10:00".into(),
            coding_history: "A=PCM,F=48000,W=32,M=stereo,T=Granary\r\n".into(),
            ixml: "<BWFXML><IXML_VERSION>2.10</IXML_VERSION></BWFXML>".into(),
        }
    }

    #[test]
    fn a_file_reads_back_with_its_chunks_and_samples() {
        let mut w = Writer::new(Cursor::new(Vec::new()), 48_000, &head()).unwrap();
        let l: Vec<f32> = (0..1001).map(|i| (i as f32 * 0.01).sin()).collect();
        let r: Vec<f32> = l.iter().map(|x| -x).collect();
        w.write(&l[..500], &r[..500]).unwrap();
        w.write(&l[500..], &r[500..]).unwrap();
        let tail = Tail {
            loudness: Loudness {
                integrated_lufs: -23.004,
                range_lu: 4.2,
                true_peak_dbtp: f64::NEG_INFINITY,
                max_momentary_lufs: f64::NAN,
                max_short_term_lufs: -20.0,
            },
            markers: vec![
                Marker {
                    frame: 0,
                    label: "pour starts".into(),
                },
                Marker {
                    frame: 700,
                    label: "pour stops".into(),
                },
            ],
            looped: true,
        };
        let bytes = w.finish(&tail).unwrap().into_inner();
        // hound (another reader) reads the samples and the format
        let mut reader = hound::WavReader::new(Cursor::new(&bytes)).unwrap();
        assert_eq!(reader.spec().sample_rate, 48_000);
        assert_eq!(reader.spec().sample_format, hound::SampleFormat::Float);
        let s: Vec<f32> = reader.samples::<f32>().map(Result::unwrap).collect();
        assert_eq!(s.len(), 2002);
        assert_eq!((s[2 * 1000], s[2 * 1000 + 1]), (l[1000], r[1000]));
        // the chunks, the RIFF size, the fields
        assert_eq!(
            u32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize,
            bytes.len() - 8
        );
        let chunks = read_chunks(Cursor::new(&bytes)).unwrap();
        let ids: Vec<&[u8]> = chunks.iter().map(|(i, _)| &i[..]).collect();
        assert_eq!(
            ids,
            [
                &b"fmt "[..],
                b"fact",
                b"bext",
                b"iXML",
                b"data",
                b"cue ",
                b"LIST",
                b"smpl"
            ]
        );
        let b = BextFields::parse(find(&chunks, b"bext").unwrap()).unwrap();
        assert_eq!(b.description, "Sugar poured into a ceramic mug ? 20 g/s");
        assert_eq!(
            (b.originator.as_str(), b.date.as_str(), b.time.as_str()),
            ("Granary 0.1.0", "2026-11-29", "02:10:00")
        );
        assert_eq!(b.version, 2);
        assert_eq!(b.loudness, [-2300, 420, NOT_COMPUTED, NOT_COMPUTED, -2000]);
        assert!(b.coding_history.starts_with("A=PCM,F=48000"));
        assert_eq!(markers(&chunks), tail.markers,);
        let smpl = find(&chunks, b"smpl").unwrap();
        assert_eq!(
            u32::from_le_bytes(smpl[48..52].try_into().unwrap()),
            1000,
            "the loop ends on the last frame"
        );
    }

    #[test]
    fn fields_are_cut_and_figures_clamped() {
        assert_eq!(ascii_field("abc", 5), b"abc\0\0");
        assert_eq!(ascii_field("abcdef", 4), b"abcd");
        assert_eq!(centi(-23.456), -2346);
        assert_eq!(centi(1e9), NOT_COMPUTED - 1);
        assert_eq!(centi(f64::NEG_INFINITY), NOT_COMPUTED);
        assert_eq!(centi(-400.0), i16::MIN);
        assert_eq!(centi(f64::NAN), NOT_COMPUTED);
        assert!(read_chunks(Cursor::new(b"RIFX....WAVE"))
            .unwrap_err()
            .contains("not a WAV"));
    }

    #[test]
    fn a_file_cut_short_keeps_its_heads_chunks_and_no_size_reads_without_bound() {
        let mut w = Writer::new(Cursor::new(Vec::new()), 48_000, &head()).unwrap();
        w.write(&[0.5; 10], &[0.5; 10]).unwrap();
        let tail = Tail {
            loudness: Loudness::UNKNOWN,
            markers: vec![Marker {
                frame: 3,
                label: "x".into(),
            }],
            looped: false,
        };
        let mut bytes = w.finish(&tail).unwrap().into_inner();
        // cut inside the LIST chunk
        bytes.truncate(bytes.len() - 5);
        let ids: Vec<[u8; 4]> = read_chunks(Cursor::new(&bytes))
            .unwrap()
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        assert_eq!(ids, [*b"fmt ", *b"fact", *b"bext", *b"iXML", *b"data", *b"cue "]);
        // a chunk that claims 4 GiB in a small file: nothing read, nothing allocated
        let mut huge = b"RIFF\xff\xff\xff\xffWAVEjunk\xff\xff\xff\xff".to_vec();
        huge.extend([0u8; 64]);
        assert!(read_chunks(Cursor::new(&huge)).unwrap().is_empty());
    }
}
