// The shell: sign-in gate, top bar (theme, who is signed in, sign out) and the screen for the URL.
import { useEffect, useState } from 'preact/hooks';
import { api, onSignedOut, signOut, token } from './lib/api.js';
import { forgetProjects } from './lib/project-info.js';
import { Link, useRoute } from './lib/router.js';
import { setTheme, themeChoice, type ThemeChoice } from './lib/theme.js';
import { Compare } from './screens/compare.js';
import { Overview } from './screens/overview.js';
import { Project } from './screens/project.js';
import { Projects } from './screens/projects.js';
import { RecordsTable } from './screens/records-table.js';
import { RunScorers } from './screens/run-scorers.js';
import { SessionPage } from './screens/session.js';
import { SignIn } from './screens/sign-in.js';
import { TracePage } from './screens/trace.js';

function Screen() {
  const route = useRoute();
  switch (route.name) {
    case 'projects':
      return <Projects page={route.page} />;
    case 'project':
      return <Project projectId={route.projectId} />;
    case 'table':
      return <RecordsTable route={route} />;
    case 'compare':
      return <Compare route={route} />;
    case 'overview':
      return <Overview route={route} />;
    case 'scorers':
      return <RunScorers route={route} />;
    case 'trace':
      return <TracePage key={route.traceId} route={route} />;
    case 'session':
      return <SessionPage route={route} />;
    case 'not-found':
      return (
        <main class="page">
          <h1>Nothing here</h1>
          <p>
            No screen has the address <code>{route.path}</code>. <Link to={{ name: 'projects', page: 1 }}>Go to the projects</Link>.
          </p>
        </main>
      );
  }
}

function ThemePicker() {
  const [choice, setChoice] = useState<ThemeChoice>(themeChoice);
  return (
    <label class="theme">
      <span class="offscreen">Theme</span>
      <select
        aria-label="Theme"
        value={choice}
        onChange={(e) => {
          const v = e.currentTarget.value as ThemeChoice;
          setTheme(v);
          setChoice(v);
        }}
      >
        <option value="system">System theme</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}

export function App() {
  const [signedIn, setSignedIn] = useState(() => token() !== null);
  const [who, setWho] = useState<string | null>(null);
  useEffect(() => onSignedOut(() => setSignedIn(false)), []);
  useEffect(() => {
    if (!signedIn) return;
    api<{ email: string }>('GET', '/current_user').then(
      (u) => setWho(u.email),
      () => setWho(null),
    );
  }, [signedIn]);
  if (!signedIn) {
    return (
      <SignIn
        onSignedIn={() => {
          forgetProjects();
          setSignedIn(true);
        }}
      />
    );
  }
  return (
    <>
      <header class="topbar">
        <Link to={{ name: 'projects', page: 1 }} class="brand">
          <span class="logo" aria-hidden="true" />
          tracelake
        </Link>
        <span class="grow" />
        <ThemePicker />
        {who && <span class="who">{who}</span>}
        <button type="button" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <Screen />
    </>
  );
}
