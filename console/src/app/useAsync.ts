// Loads data for a view: the value, the error (an ApiError with a readable message), and whether
// a load is under way. A newer load supersedes an older one (its result is dropped).
import { useEffect, useRef, useState } from 'preact/hooks';

export interface AsyncState<T> {
  value: T | undefined;
  error: Error | undefined;
  loading: boolean;
}

export function useAsync<T>(load: (() => Promise<T>) | undefined, deps: readonly unknown[]): AsyncState<T> & { reload: () => void } {
  const [state, setState] = useState<AsyncState<T>>({ value: undefined, error: undefined, loading: false });
  const [tick, setTick] = useState(0);
  const generation = useRef(0);
  useEffect(() => {
    if (!load) {
      setState({ value: undefined, error: undefined, loading: false });
      return;
    }
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true, error: undefined }));
    load().then(
      (value) => mine === generation.current && setState({ value, error: undefined, loading: false }),
      (error: Error) => mine === generation.current && setState({ value: undefined, error, loading: false }),
    );
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}
