//! WAV files (hound).

/// Writes a stereo 32-bit float WAV.
pub fn write_wav(path: &std::path::Path, sample_rate: f32, channels: &[Vec<f32>; 2]) -> Result<(), hound::Error> {
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate: sample_rate.round() as u32,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut w = hound::WavWriter::create(path, spec)?;
    for (l, r) in channels[0].iter().zip(&channels[1]) {
        w.write_sample(*l)?;
        w.write_sample(*r)?;
    }
    w.finalize()
}
