// Option helpers shared by the CLI commands: environment variables (empty counts as unset), the
// data folder, and positive integers.
export const env = (name: string): string | undefined => process.env[name] || undefined;

export function dataDir(v: string | undefined): string {
  return v ?? env('TRACELAKE_DATA') ?? './.tracelake';
}

export function positiveInt(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`invalid ${name}: ${v}`);
  return n;
}
