// Every route answers bare, under /v2 and under /public/v2, as the hosted service does: the JS client
// appends bare routes to its API URL (which may end in /v2), the Python client writes /v2 itself.
export const PREFIXES = ['', '/v2', '/public/v2'] as const;
