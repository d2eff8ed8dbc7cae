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

/**
 * Why an investigation API base cannot be used, or null when it can: a path of plain
 * segments (`/eve/v1`, `/eve/<agent>/v1`, `/eve/agents/<agent>/eve/v1`); empty is the default.
 * Core's `parse_api_base` checks again and says why in its own words.
 */
export function validateEveBase(raw: string): string | null {
  const s = raw.trim();
  if (s === "") return null;
  if (s.includes("://")) return "A path under the base URL, not a URL of its own: like /eve/researcher/v1.";
  if (!s.startsWith("/")) return "It must start with /, like /eve/v1 or /eve/researcher/v1.";
  if (s.length > 200) return "That path is too long.";
  const segments = s.replace(/\/+$/, "").slice(1).split("/");
  if (segments.length === 1 && segments[0] === "") return "Name a path, like /eve/v1.";
  for (const seg of segments) {
    if (seg === "" || seg === "." || seg === "..") return "No empty, . or .. parts.";
    if (!/^[A-Za-z0-9._~-]+$/.test(seg)) return "Only letters, digits, -, ., _ and ~ between the slashes.";
  }
  return null;
}

/** The largest count Casebook can send (the Rust side holds it in a u32). */
const MAX_COUNT = 4294967295;

/**
 * Why citation bounds are wrong, per field, or nulls when they are fine. The service's
 * contract shows no numeric bounds, so only 0 ≤ min ≤ max is required here.
 */
export function validateBounds(min: string, max: string): { min: string | null; max: string | null } {
  const check = (s: string): [number, string | null] => {
    if (!/^\d+$/.test(s.trim())) return [NaN, "A whole number, 0 or more."];
    const n = Number(s.trim());
    return n > MAX_COUNT ? [n, `At most ${MAX_COUNT}.`] : [n, null];
  };
  const [lo, minProblem] = check(min);
  const [hi, maxProblem] = check(max);
  const out = { min: minProblem, max: maxProblem };
  if (!out.min && !out.max && lo > hi) out.min = "Must not be more than the maximum.";
  return out;
}
