//! Zipf(1) ranks: rank `r` drawn with weight `1 / (r + 1)`, the shape of
//! word frequencies in text. A cumulative table searched by bisection;
//! the weights are integers, so a draw is the same on every machine.

use crate::Rng;

/// Draws ranks `0..n` with probability proportional to `1 / (rank + 1)`.
pub struct Zipf {
    cum: Vec<u64>,
}

impl Zipf {
    /// The distribution over `n > 0` ranks.
    pub fn new(n: usize) -> Zipf {
        assert!(n > 0, "Zipf over no ranks");
        let mut acc = 0u64;
        let cum = (0..n as u64)
            .map(|r| {
                acc += 1_000_000_000_000 / (r + 1);
                acc
            })
            .collect();
        Zipf { cum }
    }

    /// One rank.
    pub fn sample(&self, rng: &mut Rng) -> usize {
        // `new` refuses an empty table.
        let total = *self.cum.last().expect("non-empty");
        let t = rng.u64(..total);
        self.cum.partition_point(|&c| c <= t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_zero_is_drawn_about_twice_as_often_as_rank_one() {
        let z = Zipf::new(100);
        let mut r = Rng::with_seed(3);
        let mut n = [0usize; 100];
        for _ in 0..50_000 {
            n[z.sample(&mut r)] += 1;
        }
        let ratio = n[0] as f64 / n[1] as f64;
        assert!((1.8..2.2).contains(&ratio), "{ratio}");
        assert!(n[99] > 0);
    }
}
