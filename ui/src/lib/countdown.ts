/**
 * What a sign-in's expiry says while the person looks at it: "Expires in 4:32", "Expires
 * in 1:02:05", "Expired"; nothing when the service gave no time or one we cannot read.
 */
export function expiresIn(expiresAt: string | undefined, nowMs: number): string | null {
  if (!expiresAt) return null;
  const at = Date.parse(expiresAt);
  if (Number.isNaN(at)) return null;
  const left = Math.ceil((at - nowMs) / 1000);
  if (left <= 0) return "Expired";
  const h = Math.floor(left / 3600);
  const m = Math.floor((left % 3600) / 60);
  const s = left % 60;
  const two = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `Expires in ${h}:${two(m)}:${two(s)}` : `Expires in ${m}:${two(s)}`;
}
