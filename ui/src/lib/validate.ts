// Checks a person sees as they type; Rust checks again before anything is used.

/** Why a base URL cannot be used, or null when it can: https, or http on this computer. */
export function validateBaseUrl(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return "Enter a full address, like https://api.example.com";
  }
  if (url.username || url.password) return "Leave the user name and password out of the address.";
  if (url.search || url.hash) return "Leave out the ? and # parts.";
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname) || url.hostname.startsWith("127.");
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && loopback) return null;
  if (url.protocol === "http:") return "Use https: plain http is allowed only for this computer.";
  return `Unsupported scheme ${url.protocol.replace(":", "")}: use https.`;
}

/** Why citation bounds are wrong, per field, or nulls when they are fine. */
export function validateBounds(min: string, max: string, limit = 5): { min: string | null; max: string | null } {
  const parse = (s: string) => (/^\d+$/.test(s.trim()) ? Number(s.trim()) : NaN);
  const lo = parse(min);
  const hi = parse(max);
  const out = { min: null as string | null, max: null as string | null };
  if (Number.isNaN(lo) || lo > limit) out.min = `A whole number from 0 to ${limit}.`;
  if (Number.isNaN(hi) || hi > limit) out.max = `A whole number from 0 to ${limit}.`;
  if (!out.min && !out.max && lo > hi) out.min = "Must not be more than the maximum.";
  return out;
}
