/// Split points drawn from the input's first bytes, so a crash reproduces from the file
/// alone: the same bytes always give the same chunks.
pub struct Splits(u64);

impl Splits {
    /// Takes up to 8 bytes of seed from the front of `data`; returns the rest.
    pub fn take(data: &[u8]) -> (Self, &[u8]) {
        let n = data.len().min(8);
        let mut seed = [0u8; 8];
        seed[..n].copy_from_slice(&data[..n]);
        (Self(u64::from_le_bytes(seed) | 1), &data[n..])
    }

    fn next(&mut self) -> u64 {
        // xorshift64: enough to spread cuts; never 0 because the seed is odd.
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `input` in chunks of 0 to 16 bytes, empty chunks included: a transport may
    /// deliver those too.
    pub fn chunks<'a>(&mut self, input: &'a [u8]) -> Vec<&'a [u8]> {
        let mut out = Vec::new();
        let mut rest = input;
        while !rest.is_empty() {
            let n = (self.next() % 17) as usize;
            let (a, b) = rest.split_at(n.min(rest.len()));
            out.push(a);
            rest = b;
        }
        out
    }
}
