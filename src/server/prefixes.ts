// Every route answers bare, under /v2 and under /public/v2 (COMPAT.md 1).
export const PREFIXES = ['', '/v2', '/public/v2'] as const;
