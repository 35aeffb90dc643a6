// Sign in with the API key `tracelake serve` printed (exchanged at /login/api_key for a bearer
// token), or with an email and password (/login).
import { useState } from 'preact/hooks';
import { loginWithApiKey, loginWithPassword } from '../lib/api.js';

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const attempt = (login: () => Promise<void>) => async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await login();
      onSignedIn();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <div class="card">
        <h1>
          <span class="logo" aria-hidden="true" /> tracelake
        </h1>
        <p class="muted">Sign in to read the traces stored by this server.</p>
        <form onSubmit={attempt(() => loginWithApiKey(key))}>
          <label for="api-key">API key</label>
          <input
            id="api-key"
            type="password"
            autocomplete="off"
            spellcheck={false}
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
            required
          />
          <p class="hint">
            <code>tracelake serve</code> prints a key the first time it starts and saves it in <code>.tracelake/api-key</code> (or the
            <code> --data</code> folder); <code>TRACELAKE_API_KEY</code> sets your own.
          </p>
          <button type="submit" class="primary" disabled={busy}>
            Sign in
          </button>
        </form>
        <details class="password-sign-in">
          <summary>Sign in with email and password</summary>
          <form onSubmit={attempt(() => loginWithPassword(email, password))}>
            <label for="email">Email</label>
            <input
              id="email"
              type="email"
              autocomplete="username"
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
              required
            />
            <label for="password">Password</label>
            <input
              id="password"
              type="password"
              autocomplete="current-password"
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
              required
            />
            <button type="submit" disabled={busy}>
              Sign in with password
            </button>
          </form>
        </details>
        {error && (
          <p class="error-note" role="alert">
            {error}
          </p>
        )}
      </div>
    </main>
  );
}
