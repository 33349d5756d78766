//! The thin metal cup's nonlinear ring (Phya 7.3) and the buzzing of grains on a ringing
//! floor (Phya 6.3): the physics, the constants and the scalar functions that the modal
//! bank (`modal::ModalBank`) and its scalar reference both call.
//!
//! **Pitch glide (physics: tension modulation).** A plate or shell vibrating with a
//! displacement comparable to its thickness `h` stretches its middle surface; the membrane
//! force that stretching causes stiffens it, so its frequencies rise with amplitude (the
//! large-amplitude beam of Woinowsky-Krieger 1950, the plate of Chu & Herrmann 1956, the
//! Berger approximation). In the Berger form the in-plane force is proportional to the
//! stretching `sum_i k_i^2 a_i^2` over the modes (wavenumber `k_i`, peak displacement
//! `a_i`), and adds `N k_j^2` to mode `j`'s stiffness `D k_j^4`; with `w ~ k^2` for bending
//! waves, mode `j`'s frequency becomes
//!
//! `f_j = f0_j (1 + C_glide sum_i (w_i / w_j) (a_i / h)^2)`
//!
//! to first order, `C_glide` an order-one constant (a single hinged beam with immovable ends:
//! 9/8). The amplitudes come from the bank's state, the analytic signal `y_i` of the mode's
//! peak surface velocity (m/s): `a_i = |y_i| / w_i`, so `sum_i w_i a_i^2 = sum_i |y_i|^2 / w_i`
//! and `delta_j = C_glide / (w_j h^2) sum_i |y_i|^2 / w_i`. As the ring decays its pitch glides
//! down, more for the low modes (Phya 7.3 and its Figure 14 drive the frequencies from the
//! modes' energy, "greater for lower frequency modes"; here the sign and size come from the
//! stretching instead). Curved shells can also soften (a quadratic term from the curvature,
//! Amabili 2008); this model keeps the stretching only.
//!
//! **Mode coupling (Phya's structure, no physical derivation).** Phya Figure 13: the modes
//! are split into sections (here the bank's lane groups, lowest frequencies first); each
//! section's displacements are summed, `x_g = sum_{i in g} Im(y_i) / w_i` (m), fed through a
//! quadratic and fed forward as a force into the next section's modes (at their peaks):
//! `F_{g+1} = C_couple K_g x_g^2 / h`, `K_g = M w^2` the modal stiffness of section `g`'s
//! lowest mode, `x_g` clipped to `+-h` (beyond it the small-strain model is not valid). So the
//! coupling force reaches `C_couple` times the section's own elastic force when its
//! displacement is the wall thickness, where shell vibration turns nonlinear; below it falls
//! as the square. No feedback: the last section drives nothing, so the bank stays stable.
//!
//! **Buzzing (Phya 6.3).** Grains resting on the floor are held there by gravity only: while
//! the floor's acceleration (`sum_i w_i s_i Re(i y_i)`, `s_i` the mode's floor shape) exceeds
//! `g` away from them, they lift off, and they land again a moment later. Phya approximates
//! the chatter by clipping the ringing object's vibration and feeding the clipped part to the
//! objects that buzz. Here the part of the floor's acceleration beyond `+-g` (both signs: the
//! assets give the floor's RMS shape, not the sign of its normal) times the mass of the
//! grain layer in contact with the floor is the chatter's force, N; it feeds the cup's
//! diffuse resonator (Phya 7.2), which spreads the energy to the high bands as buzzing does,
//! and not the modes themselves (no feedback loop).
//!
//! Only the metal cups (steel, aluminium: thin walls, low loss) run this path; the others
//! stay linear and pay nothing for it.

use crate::base::materials::{CupMaterial, GRAVITY, PACKING_FRACTION};
use crate::derived::cups::{floor_coverage, CupState};
use std::f64::consts::PI;

/// `C_glide`: relative frequency rise of a mode vibrating alone at a peak displacement equal
/// to the wall thickness. Chosen: order one as the theory gives (a hinged beam with immovable
/// ends 9/8, plates 0.2-1 by edge condition and Poisson's ratio), halved for a shell, whose
/// curvature softens part of the stretching.
pub const GLIDE_COEFF: f64 = 0.5;
/// Largest relative frequency rise (the first-order law is not valid far beyond a / h ~ 1).
pub const MAX_GLIDE: f64 = 0.25;
/// `C_couple`: the coupling force, relative to the section's elastic force, at a displacement
/// of one wall thickness. Chosen.
pub const COUPLING_COEFF: f64 = 0.25;

/// What the nonlinear path needs to know about the cup.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Nonlinear {
    /// Wall thickness, m.
    pub wall_m: f64,
    /// Mass of the grain layer resting on the floor (coverage x floor area x one grain
    /// diameter x packing x density), kg; 0 with no grains on the floor.
    pub layer_kg: f64,
}

impl Nonlinear {
    /// The nonlinear path of `cup`, for the metal cups only.
    pub fn for_cup(cup: &CupState) -> Option<Nonlinear> {
        if !matches!(cup.material, CupMaterial::Steel | CupMaterial::Aluminium) {
            return None;
        }
        let c = &cup.cup;
        let pile = cup.fill.clamp(0.0, 1.0) as f64 * c.depth as f64;
        let d = cup.grain_diameter_m as f64;
        let coverage = floor_coverage(pile, d);
        let area = PI * (c.floor_radius as f64).powi(2);
        Some(Nonlinear {
            wall_m: (c.wall_thickness as f64).max(1e-5),
            layer_kg: coverage * area * d * PACKING_FRACTION as f64 * cup.grain_density.max(0.0) as f64,
        })
    }
}

/// `sum_i |y_i|^2 / w_i` over the modes (m^2/s), from their velocity states (m/s) and
/// angular frequencies (rad/s).
pub fn stretch(states: impl Iterator<Item = ((f32, f32), f64)>) -> f64 {
    states.fold(0.0, |s, ((re, im), w)| {
        s + ((re as f64).powi(2) + (im as f64).powi(2)) / w
    })
}

/// Relative frequency rise of a mode at `w` (rad/s) for the bank's `stretch` (m^2/s), with
/// wall thickness `h` (m): `C_glide / (w h^2) stretch`, at most `MAX_GLIDE`.
pub fn glide(stretch: f64, w: f64, h: f64) -> f64 {
    (GLIDE_COEFF * stretch / (w * h * h)).min(MAX_GLIDE)
}

/// Force on the next section from section displacement `x` (m): `kappa x^2`, `x` clipped to
/// `+-h`. `kappa = C_couple K / h`, N/m^2 (`coupling_gain`).
#[inline(always)]
pub fn coupling_force(x: f32, kappa: f32, h: f32) -> f32 {
    let x = x.clamp(-h, h);
    kappa * (x * x)
}

/// `kappa` of `coupling_force` for a section whose lowest mode has modal mass `m` (kg) and
/// angular frequency `w` (rad/s), wall thickness `h` (m).
pub fn coupling_gain(m: f64, w: f64, h: f64) -> f64 {
    COUPLING_COEFF * m * w * w / h
}

/// The chatter's force (N) for floor acceleration `a` (m/s^2) and grain layer mass `layer`
/// (kg): the acceleration beyond `+-g`, times the layer's mass.
#[inline(always)]
pub fn buzz_force(a: f32, layer: f32) -> f32 {
    let g = GRAVITY;
    let excess = if a > g {
        a - g
    } else if a < -g {
        a + g
    } else {
        0.0
    };
    layer * excess
}
