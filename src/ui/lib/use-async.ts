// Loads data for a screen; a newer request aborts the older one, and the previous data stays on
// screen while the next loads (no flicker when paging or sorting).
import { useEffect, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | null;
  error: Error | null;
  loading: boolean;
}

export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({ data: null, error: null, loading: true });
  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(ctl.signal).then(
      (data) => {
        if (!ctl.signal.aborted) setState({ data, error: null, loading: false });
      },
      (error: Error) => {
        if (!ctl.signal.aborted) setState((s) => ({ data: s.data, error, loading: false }));
      },
    );
    return () => ctl.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  return state;
}
