//! The LSTM's nonlinearities at parse time, over whole slices so that the compiler vectorizes
//! them: an exponential by range reduction and a polynomial, and the logistic function and
//! tanh from it. The C library's `expf` and `tanhf` are calls the compiler cannot vectorize,
//! and a BiLSTM of two layers takes 1,280 of them per word. Within 2e-7 of the exact values
//! (tested here); training's candle computes the exact functions, and the kernel test holds
//! the two encoders equal. This module computes; it owns no state.

/// log2(e).
const LOG2E: f32 = std::f32::consts::LOG2_E;
/// ln 2 in two parts (Cody & Waite), so that `x - n ln 2` loses nothing for the `n` in range:
/// the first is 355/512, whose few bits make `n · LN2_HI` exact.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// Adding and subtracting 1.5 · 2^23 rounds a float of magnitude below 2^22 to an integer
/// with plain additions (`round` is not an SSE2 instruction).
const ROUND: f32 = 12_582_912.0;

/// e^x, for x clamped to [-87, 88] (beyond, the result under- or overflows f32's normals).
#[inline(always)]
fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    let n = (x * LOG2E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    // e^r for |r| ≤ ln2 / 2 by its Taylor polynomial of degree 6 (error below 1.2e-7 relative).
    let p = 1.0 / 720.0;
    let p = p * r + 1.0 / 120.0;
    let p = p * r + 1.0 / 24.0;
    let p = p * r + 1.0 / 6.0;
    let p = p * r + 0.5;
    let p = p * r + 1.0;
    let p = p * r + 1.0;
    // 2^n by its exponent bits: n + 127 is within 1..=254 for the clamped x.
    p * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

/// The logistic function 1 / (1 + e^−x) of each value, in place.
#[inline(always)]
pub fn sigmoid(values: &mut [f32]) {
    for v in values {
        *v = 1.0 / (1.0 + exp(-*v));
    }
}

/// tanh of each value, in place, as 2σ(2x) − 1.
#[inline(always)]
pub fn tanh(values: &mut [f32]) {
    for v in values {
        *v = 2.0 / (1.0 + exp(-2.0 * *v)) - 1.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every 1/1000 from -100 to 100, and the extremes.
    fn grid() -> Vec<f32> {
        let mut x: Vec<f32> = (-100_000..=100_000).map(|i| i as f32 / 1000.0).collect();
        x.extend([f32::MIN, -1e10, 1e10, f32::MAX]);
        x
    }

    /// `approx` is within 2e-7 of `exact` over the grid.
    fn within_2e7(approx: fn(&mut [f32]), exact: fn(f64) -> f64, name: &str) {
        let x = grid();
        let mut y = x.clone();
        approx(&mut y);
        for (&x, &y) in x.iter().zip(&y) {
            let exact = exact(f64::from(x));
            assert!((f64::from(y) - exact).abs() < 2e-7, "{name}({x}) = {y}, exactly {exact}");
        }
    }

    #[test]
    fn the_logistic_function_is_within_2e7_of_the_exact_one() {
        within_2e7(sigmoid, |x| 1.0 / (1.0 + (-x).exp()), "σ");
    }

    #[test]
    fn tanh_is_within_2e7_of_the_exact_one() {
        within_2e7(tanh, f64::tanh, "tanh");
    }
}
