//! Flush-to-zero for the audio path. A decaying resonator tail passes through subnormal
//! floats, which cost tens to hundreds of cycles per operation on x86 and can make a quiet
//! tail the most expensive part of a render. Hosts usually set the FPU's flush-to-zero mode
//! around `process` (nice-plug does); the engine sets it itself, so the command-line render,
//! the tests and every host compute the same samples.

/// Sets flush-to-zero (and denormals-are-zero on x86) while it lives; restores the caller's
/// floating-point mode on drop.
pub struct FlushDenormals {
    #[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
    saved: u64,
}

impl FlushDenormals {
    #[inline]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            let mut csr: u32 = 0;
            // SAFETY: stmxcsr/ldmxcsr read and write the SSE control/status register through a
            // valid 4-byte location; FTZ (bit 15) and DAZ (bit 6) only change how subnormals
            // are produced and read.
            unsafe {
                std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack, preserves_flags));
                let flushed = csr | 0x8040;
                std::arch::asm!("ldmxcsr [{}]", in(reg) &flushed, options(nostack, preserves_flags, readonly));
            }
            FlushDenormals { saved: csr as u64 }
        }
        #[cfg(target_arch = "aarch64")]
        {
            let fpcr: u64;
            // SAFETY: reading and writing FPCR; FZ (bit 24) only flushes subnormals to zero.
            unsafe {
                std::arch::asm!("mrs {}, fpcr", out(reg) fpcr, options(nomem, nostack, preserves_flags));
                std::arch::asm!("msr fpcr, {}", in(reg) fpcr | (1 << 24), options(nomem, nostack, preserves_flags));
            }
            FlushDenormals { saved: fpcr }
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        FlushDenormals { saved: 0 }
    }
}

impl Drop for FlushDenormals {
    #[inline]
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        {
            let csr = self.saved as u32;
            // SAFETY: restores the value read in `new`.
            unsafe {
                std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack, preserves_flags, readonly));
            }
        }
        #[cfg(target_arch = "aarch64")]
        // SAFETY: restores the value read in `new`.
        unsafe {
            std::arch::asm!("msr fpcr, {}", in(reg) self.saved, options(nomem, nostack, preserves_flags));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FlushDenormals;

    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn subnormal_results_flush_to_zero_inside_and_not_after() {
        let tiny = std::hint::black_box(f32::MIN_POSITIVE);
        let half = std::hint::black_box(0.5f32);
        {
            let _ftz = FlushDenormals::new();
            assert_eq!(std::hint::black_box(tiny * half), 0.0);
        }
        assert!(std::hint::black_box(tiny * half).is_subnormal());
    }
}
