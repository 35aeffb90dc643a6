// Option helpers shared by the CLI commands: environment variables (empty counts as unset), the
// data folder, positive integers and JSON values.
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

/** A flag's JSON value (undefined when the flag is absent); `expected` says what the flag takes. */
export function jsonFlag(flag: string, text: string | undefined, expected = 'JSON'): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`${flag} is not JSON (${expected}): ${(err as Error).message}`);
  }
}
